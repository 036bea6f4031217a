package leases

import (
	"math"
	"os"
	"os/exec"
	"testing"

	"steward/leases/leaserec"
)

func TestLiveness(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		pid  int
		host string
		want leaserec.ProcessState
	}{
		{"self", os.Getpid(), host, leaserec.ProcessAlive},
		{"init is EPERM or alive", 1, host, leaserec.ProcessAlive},
		{"reaped child is dead", cmd.Process.Pid, host, leaserec.ProcessDead},
		{"foreign host", os.Getpid(), host + "-other", leaserec.ProcessUnknown},
		{"empty host", os.Getpid(), "", leaserec.ProcessUnknown},
		{"pid 0", 0, host, leaserec.ProcessUnknown},
		{"negative pid", -5, host, leaserec.ProcessUnknown},
		// The largest pid_t is probed: no process has it (Linux's pid_max is at most 2^22,
		// macOS's 99999), so it is dead. Past it kill(2) would see another pid: unknown.
		{"the largest pid_t", math.MaxInt32, host, leaserec.ProcessDead},
		{"past pid_t", math.MaxInt32 + 1, host, leaserec.ProcessUnknown},
		{"2^32-1, which kill(2) reads as -1", 1<<32 - 1, host, leaserec.ProcessUnknown},
	}
	for _, c := range cases {
		if got := Liveness(c.pid, c.host); got != c.want {
			t.Errorf("%s: %s", c.name, got)
		}
	}
}

// TestRowHost: a row that records its host is judged there; a hostless row (the seed's
// schema) on the DB's host — this one unless db_host names another.
func TestRowHost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ recorded, dbHost, want string }{
		{"h1", "", "h1"}, {"h1", "db", "h1"}, {"", "", "me"}, {"", "me", "me"}, {"", "db", "db"},
	} {
		if got, why := RowHost(tc.recorded, tc.dbHost, "me"); got != tc.want || (tc.recorded == "") == (why == "") {
			t.Errorf("RowHost(%q, %q) = %q (%q), want %q", tc.recorded, tc.dbHost, got, why, tc.want)
		}
	}
}
