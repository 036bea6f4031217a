package govern

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"steward/govern/actionid"
	"strings"
	"syscall"
	"testing"
)

// tornRecord is a record cut short: what a power loss or a full disk mid-append leaves.
const tornRecord = `{"v":1,"at":"2026-01-01T00:00:00Z","attempt":"att-torn","kind":"inte`

// tearTail appends a cut-short record (no newline) to the audit log.
func tearTail(t *testing.T, path string) {
	t.Helper()
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.WriteString(tornRecord); err != nil {
		t.Fatal(err)
	}
	fh.Close()
}

// checkTornLineAlone reads the log's bytes: every line is one whole record but the torn
// one, which stands alone on its line, exactly as it was cut; no line is empty and the log
// ends with a newline. The reader recovers a record glued to a torn line, so only the bytes
// tell whether Append ended the torn line first.
func checkTornLineAlone(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		t.Fatalf("the log does not end with a newline:\n%s", b)
	}
	torn := 0
	for i, line := range strings.Split(string(b[:len(b)-1]), "\n") {
		switch {
		case line == tornRecord:
			torn++
		case line == "":
			t.Errorf("line %d is empty", i+1)
		default:
			if _, err := decodeRecord([]byte(line)); err != nil {
				t.Errorf("line %d is not one whole record (%v): %s", i+1, err, line)
			}
		}
	}
	if torn != 1 {
		t.Errorf("the torn record stands alone on %d lines, want 1:\n%s", torn, b)
	}
}

// TestAppendAfterATornTailStartsAFreshLine (defect 7): after a torn last line, the next
// intent was appended onto it and both lines read as one undecodable line. A claim killed
// after its lease and lock were written then vanished from the audit log: `steward audit`
// did not list it and `audit verify` found nothing unknown, while its lease and lock
// existed. Append now starts every record on a fresh line, and the torn line is a finding.
func TestAppendAfterATornTailStartsAFreshLine(t *testing.T) {
	f := newFixture(t, RoleOperator)
	// One whole attempt before the tear.
	if _, out, err := f.core.Run(context.Background(), Request{Action: actionid.ReclaimExpired, Target: Target{LeaseID: "L-none"}}, ""); err != nil || out.Result != ResultRefused {
		t.Fatalf("first attempt: %+v %v", out, err)
	}
	tearTail(t, f.audit.Path())
	err := f.child("crash", "CHILD_ACTION="+actionid.Claim, "CHILD_ITEM=7", "CHILD_STEP=lock-"+"dir-synced").Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child was not killed: %v", err)
	}
	if st := claimStateOf(t, f, 7); st != "new" {
		t.Fatalf("claim state %s, want a lease and a lock", st)
	}
	recs, finds, err := ReadAudit(f.audit.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(finds) != 1 || !strings.Contains(finds[0].Reason, "torn") {
		t.Errorf("findings %+v: want exactly one, naming the torn line", finds)
	}
	checkTornLineAlone(t, f.audit.Path())
	atts := Attempts(recs)
	if len(atts) != 2 || atts[1].Intent == nil || atts[1].Outcome != nil || atts[1].Status() != ResultUnknown {
		t.Fatalf("attempts %+v: want the first claim and the killed one, unknown", atts)
	}
	vs, err := f.core.Verify(context.Background())
	if err != nil || len(vs) != 1 || vs[0].Result != ResultSucceeded {
		t.Fatalf("verify: %v %+v: want the killed claim settled succeeded", err, vs)
	}
	recs, _, _ = ReadAudit(f.audit.Path())
	for _, a := range Attempts(recs) {
		if a.Outcomes != 1 {
			t.Errorf("attempt %s has %d terminal records", a.ID, a.Outcomes)
		}
	}
	checkTornLineAlone(t, f.audit.Path())
}

// TestReadAuditRecoversAGluedRecord (defect 7): a log written before the fix holds a record
// glued to a torn line; the reader recovers the record and reports the torn part. Each
// finding names the line of the log it is about, counted from 1 as an editor counts them
// (blank lines included), so the operator can open the log there.
func TestReadAuditRecoversAGluedRecord(t *testing.T) {
	whole := `{"v":1,"at":"2026-01-01T00:00:01Z","attempt":"att-a","kind":"intent","action":"worker.claim","target":{},"actor":{"os_user":"u","host":"h","role":"operator"},"params":{"v":"x"}}`
	// A nested {"v": (a request parameter named v) must not be taken for a record start.
	inverse := `{"v":1,"at":"2026-01-01T00:00:02Z","attempt":"att-b","kind":"outcome","action":"undo","target":{},"actor":{"os_user":"u","host":"h","role":"operator"},"result":"succeeded","inverse":{"action":"x","target":{},"params":{"v":"1"}}}`
	cases := []struct {
		name     string
		log      string
		attempts []string
		lines    []int // the line each finding names
	}{
		{"glued", `{"v":1,"at":"2026-01-01T00:00:00Z","attempt":"att-torn","kind":"inte` + whole + "\n", []string{"att-a"}, []int{1}},
		{"glued twice", `{"v":1,"at":"20` + `{"v":1,"attempt":"x` + whole + "\n" + inverse + "\n", []string{"att-a", "att-b"}, []int{1}},
		{"torn alone", whole + "\n" + `{"v":1,"at":"2026-`, []string{"att-a"}, []int{2}},
		{"whole", whole + "\n" + inverse + "\n", []string{"att-a", "att-b"}, nil},
		{"garbage", "not json at all\n" + whole + "\n", []string{"att-a"}, []int{1}},
		{"glued after a blank line", whole + "\n\n" + `{"v":1,"at":"20` + inverse + "\nnot json\n", []string{"att-a", "att-b"},
			[]int{3, 4}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			recs, finds, err := decodeAudit(strings.NewReader(tc.log))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range recs {
				got = append(got, r.Attempt)
			}
			var lines []int
			for _, fd := range finds {
				lines = append(lines, fd.Line)
			}
			if strings.Join(got, ",") != strings.Join(tc.attempts, ",") || !slices.Equal(lines, tc.lines) {
				t.Fatalf("records %v findings %+v; want %v and findings on lines %v", got, finds, tc.attempts, tc.lines)
			}
		})
	}
}

// TestAppendOnDescriptorZeroEndsATornTail: a steward started with its standard input
// closed opens the audit log as descriptor 0; Append still takes the file's lock and ends a
// torn tail before its record, as on any other descriptor. The child process (this test
// run again) closes its standard input first; the parent reads the log's bytes.
func TestAppendOnDescriptorZeroEndsATornTail(t *testing.T) {
	const env = "STEWARD_GOVERN_AUDIT_FD0"
	if path := os.Getenv(env); path != "" {
		if err := syscall.Close(0); err != nil {
			t.Fatal(err)
		}
		l, err := OpenAudit(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if fd := l.f.Fd(); fd != 0 {
			t.Fatalf("the log was opened as descriptor %d, want 0", fd)
		}
		if err := l.Append(Record{Attempt: "att-fd0", Kind: KindIntent, Action: actionid.Claim}); err != nil {
			t.Fatal(err)
		}
		return
	}
	path := t.TempDir() + "/audit.jsonl"
	if err := os.WriteFile(path, []byte(tornRecord), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAppendOnDescriptorZeroEndsATornTail$", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"="+path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	checkTornLineAlone(t, path)
	recs, _, err := ReadAudit(path)
	if err != nil || len(recs) != 1 || recs[0].Attempt != "att-fd0" {
		t.Fatalf("records %+v %v: want the child's one", recs, err)
	}
}
