package reliability_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"steward/cli"
	"steward/govern"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
)

// canonicalLock is a readable canonical lock whose owner is proven dead on this host and
// whose expiry has passed at statusNow: everything a retire needs, except a safe path.
func canonicalLock(t *testing.T, issue int) []byte {
	t.Helper()
	rec := hostileRecord(t, "expiry-far-past.json")
	rec["issue_number"] = issue
	rec["work_lease"].(map[string]any)["issue_number"] = issue
	delete(rec, "host")
	rec["pid"] = deadPID(t)
	b, err := json.Marshal(rec)
	must(t, err)
	return b
}

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	must(t, err)
	_, err = p.Wait()
	must(t, err)
	return p.Pid
}

// TestRetireNeverLeavesTheLocksDirectory: lock.retire of a name that leaves the locks
// directory refuses path_outside in the preview and in the apply, and the file it names
// (a valid, retirable lock outside the directory) is untouched.
func TestRetireNeverLeavesTheLocksDirectory(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	outside := canonicalLock(t, 201)
	writeFile(t, filepath.Join(w.dir, "x.json"), outside)
	writeFile(t, filepath.Join(w.ws.LocksDir, "inside.json"), canonicalLock(t, 202))
	for _, name := range []string{"../x.json", filepath.Join(w.dir, "x.json"), "retired/../../x.json", "sub/../../x.json", "..", ".", "inside.json/../../x.json"} {
		code, out, errs := steward(t, append([]string{"lock", "retire", "--file", name, "--dry-run", "--as-role", "operator", "--json"}, w.flags()...)...)
		if code != cli.ExitRefused || !strings.Contains(out, govern.CodePathOutside) {
			t.Errorf("retire --dry-run %q: exit %d, want %d with %s\n%s%s", name, code, cli.ExitRefused, govern.CodePathOutside, out, errs)
		}
		code, out, errs = steward(t, append([]string{"lock", "retire", "--file", name, "--as-role", "operator", "--confirm", "retire acme/widgets#201"}, w.flags()...)...)
		if code != cli.ExitRefused || !strings.Contains(out+errs, govern.CodePathOutside) {
			t.Errorf("retire %q: exit %d, want %d with %s\n%s%s", name, code, cli.ExitRefused, govern.CodePathOutside, out, errs)
		}
	}
	if got, err := os.ReadFile(filepath.Join(w.dir, "x.json")); err != nil || !bytes.Equal(got, outside) {
		t.Fatalf("the lock outside the directory changed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "retired")); !os.IsNotExist(err) {
		t.Fatalf("something was archived next to the locks directory: %v", err)
	}
	// The same core retires the lock inside (so the refusals above are about the path).
	code, out, errs := steward(t, append([]string{"lock", "retire", "--file", "inside.json", "--dry-run", "--as-role", "operator", "--json"}, w.flags()...)...)
	if code != cli.ExitOK {
		t.Fatalf("retire of the lock inside: exit %d\n%s%s", code, out, errs)
	}
}

// TestRetireOfALinkOutIsInspectOnly: a link in the locks directory to a valid lock outside
// it is unreadable (symlink-escapes), so the core refuses to retire it, and neither the
// link nor its target is touched.
func TestRetireOfALinkOutIsInspectOnly(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	target := filepath.Join(w.dir, "elsewhere", "lock.json")
	body := canonicalLock(t, 203)
	writeFile(t, target, body)
	must(t, os.Symlink(target, filepath.Join(w.ws.LocksDir, "link.json")))
	code, out, errs := steward(t, append([]string{"lock", "retire", "--file", "link.json", "--as-role", "operator", "--confirm", "retire acme/widgets#203", "--json"}, w.flags()...)...)
	if code != cli.ExitRefused {
		t.Fatalf("retire of a link out: exit %d\n%s%s", code, out, errs)
	}
	if got, err := os.ReadFile(target); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("the link's target changed: %v", err)
	}
	if fi, err := os.Lstat(filepath.Join(w.ws.LocksDir, "link.json")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was moved or replaced: %v", err)
	}
}

// TestAbandonNeverStatsAWorktreeOutside: a lease whose worktree is ../../<missing> would
// read as stale_missing_worktree (and be abandoned) if steward stat'ed it. It does not:
// the preview says the worktree is unknown, not followed, and refuses.
func TestAbandonNeverStatsAWorktreeOutside(t *testing.T) {
	t.Parallel()
	host, _ := os.Hostname()
	for _, wt := range []string{"../../steward-no-such-dir", "/steward-no-such-dir/branches/x", "BRANCHES/../../../steward-no-such-dir"} {
		w := newWorkspace(t)
		wt = strings.Replace(wt, "BRANCHES", filepath.Join(w.ws.RepoRoot, "branches"), 1)
		leasestest.Insert(t, w.ws.DBPath, []leasestest.Session{{SessionID: "s1", Role: "author", Host: host, PID: int64(os.Getpid())}},
			[]leasestest.Lease{{LeaseID: "L1", SessionID: "s1", Role: "author", TaskClass: "author_issue_work", OwnerHost: host,
				OwnerPID: int64(os.Getpid()), Work: leasestest.Work(leaserec.KindIssue, 5), WorktreePath: wt,
				CreatedAt: leaserec.FormatTime(time.Now().Add(-time.Minute)), ExpiresAt: "2999-01-01T00:00:00Z", LastHeartbeatAt: leaserec.FormatTime(time.Now())}})
		code, out, errs := steward(t, append([]string{"lease", "abandon", "--lease", "L1", "--dry-run", "--as-role", "operator", "--json"}, w.flags()...)...)
		var pv govern.Preview
		if err := json.Unmarshal([]byte(out), &pv); err != nil {
			t.Fatalf("%s: preview: %v\n%s%s", wt, err, out, errs)
		}
		if code != cli.ExitRefused || pv.Allowed || pv.Refusal == nil {
			t.Errorf("%s: abandon allowed (exit %d): %+v", wt, code, pv)
		}
		ev := strings.Join(pv.Evidence, "\n")
		if strings.Contains(ev, "in -") {
			t.Errorf("%s: a far-future expiry rendered as a negative duration:\n%s", wt, ev)
		}
		if strings.Contains(ev, "missing") || !strings.Contains(ev, "unknown") {
			t.Errorf("%s: worktree evidence should be unknown, never missing:\n%s", wt, ev)
		}
	}
}
