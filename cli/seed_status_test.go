package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"steward/leases/seedtest"
	"steward/locks"
	"steward/locks/lockrec"
)

// seedWorkspace builds a workspace around a control-plane DB shaped and written the way
// the supervised system writes it (leases/seedtest: the seed's names only, rollback
// journal, naive and +00:00 timestamps, statuses in mixed case, no host, no task_class,
// events without a session), with lock files beside it. It returns the dir and the pid
// of a process that has exited.
func seedWorkspace(t *testing.T, now time.Time) (dir string, dead int64) {
	t.Helper()
	dir = t.TempDir()
	for _, d := range []string{"locks", "repo/branches/issue-3", "repo/branches/review-31", "db"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead = int64(cmd.Process.Pid)
	me := int64(os.Getpid())
	branches, err := filepath.EvalSymlinks(filepath.Join(dir, "repo", "branches"))
	if err != nil {
		t.Fatal(err)
	}
	d := seedtest.NewAt(t, filepath.Join(dir, "db", "control_plane.sqlite3"), seedtest.Options{})
	d.AddSession(seedtest.Session{SessionID: "prgs-author-1-live", Role: "author", Profile: "prgs-author", PID: me,
		Status: "Active", LastHeartbeatAt: seedtest.ISO(now.Add(-time.Minute))})
	d.AddSession(seedtest.Session{SessionID: "prgs-reviewer-2", Role: "reviewer", Profile: "prgs-reviewer", PID: me,
		Status: "ACTIVE", LastHeartbeatAt: seedtest.Naive(now.Add(-2 * time.Minute))})
	d.AddSession(seedtest.Session{SessionID: "prgs-author-3-gone", Role: "author", Profile: "prgs-author", PID: dead,
		Status: "Ended", LastHeartbeatAt: seedtest.Naive(now.Add(-3 * time.Hour)), EndedAt: seedtest.Naive(now.Add(-3 * time.Hour))})
	add := func(id, session, role, status string, item seedtest.Item, created, exp time.Duration, pid int64, wt string) {
		d.AddLease(seedtest.Lease{LeaseID: id, SessionID: session, Role: role, Status: status, Item: item,
			Phase: "implementing", CreatedAt: seedtest.Naive(now.Add(created)), ExpiresAt: seedtest.ISO(now.Add(exp)),
			LastHeartbeatAt: seedtest.ISO(now.Add(-time.Minute)), OwnerPID: pid, WorktreePath: wt})
	}
	// A live author lease, heartbeating, its worktree present: a plain claim.
	add("lease-live", "prgs-author-1-live", "author", "active", seedtest.Issue(3), -5*time.Minute, 9*time.Minute, me,
		filepath.Join(branches, "issue-3"))
	// A reviewer lease nine hours old, heartbeating: the reviewer row has no cap.
	add("lease-review", "prgs-reviewer-2", "Reviewer", "Active", seedtest.PR(31), -9*time.Hour, 8*time.Minute, me,
		filepath.Join(branches, "review-31"))
	// Past its expiry (status written ACTIVE): reclaimable.
	add("lease-past", "prgs-author-1-live", "author", "ACTIVE", seedtest.Issue(4), -30*time.Minute, -5*time.Minute, me, "")
	// Its owner process has exited (no host recorded: judged on this host).
	add("lease-dead", "prgs-author-1-live", "author", "active", seedtest.Issue(5), -5*time.Minute, 9*time.Minute, dead, "")
	// Its worktree is gone.
	add("lease-nowt", "prgs-author-1-live", "author", "active", seedtest.Issue(6), -5*time.Minute, 9*time.Minute, me,
		filepath.Join(branches, "issue-6"))
	// Held by a session that ended.
	add("lease-orphan", "prgs-author-3-gone", "author", "active", seedtest.Issue(8), -5*time.Minute, 9*time.Minute, me, "")
	// Held by a session the sessions table has no row for.
	add("lease-nosession", "prgs-author-9-unrecorded", "author", "Active", seedtest.Issue(10), -5*time.Minute, 9*time.Minute, me, "")
	// Released, while its lock is still live.
	add("lease-released", "prgs-author-1-live", "author", "Released", seedtest.Issue(9), -20*time.Minute, 9*time.Minute, me, "")
	it := seedtest.Issue(3)
	d.AddEvent(seedtest.Event{Item: &it, Type: "lease.renew", Message: "lease renewed", CreatedAt: seedtest.Naive(now.Add(-time.Minute))})
	d.AddEvent(seedtest.Event{Item: &it, Type: "claim.refused", Message: "claimed_by_other_session", CreatedAt: seedtest.ISO(now.Add(-2 * time.Minute))})

	lock := func(name string, n int64, session, lease string) {
		one, num, pid := int64(1), n, me
		wt := filepath.Join(branches, "issue-"+strconv.FormatInt(n, 10))
		rec := lockrec.Record{Remote: "prgs", Org: "acme", Repo: "widgets", IssueNumber: &num, BranchName: "feat/issue-x", Branch: "feat/issue-x",
			WorktreePath: wt, OwnerSession: session, LeaseID: lease, PID: &pid, SessionPID: &pid,
			WorkLease: &lockrec.WorkLease{OperationType: "author_issue_work", IssueNumber: &num, Branch: "feat/issue-x", WorktreePath: wt,
				Claimant: &lockrec.Claimant{Username: "bot", Profile: "prgs-author"}, CreatedAt: lockrec.NewTimestamp(now.Add(-20 * time.Minute)),
				ExpiresAt: lockrec.NewTimestamp(now.Add(9 * time.Minute)), LastHeartbeatAt: lockrec.NewTimestamp(now.Add(-time.Minute)),
				HeartbeatCount: &one, TaskSessionID: "tsk-" + name, LifecycleVersion: "heartbeat-v1"},
			LockProvenance: &lockrec.Provenance{Source: "gitea_lock_issue", WrittenByTool: "gitea_mcp_server"}}
		if _, err := locks.WriteCAS(filepath.Join(dir, "locks"), name, locks.ExpectAbsent(), rec); err != nil {
			t.Fatal(err)
		}
	}
	lock("prgs__acme__widgets__issue-3.json", 3, "prgs-author-1-live", "lease-live")
	lock("prgs__acme__widgets__issue-9.json", 9, "prgs-author-1-live", "lease-released")
	lock("prgs__acme__widgets__issue-12.json", 12, "prgs-author-1-live", "lease-never-recorded")
	return dir, dead
}

// TestStatusJSONOnSeedDB is the golden of `steward status --json` on a control-plane DB
// the supervised system wrote (go test ./cli -run TestStatusJSONOnSeedDB -update rewrites
// it). The DB reads ok, not partial; what it lacks is in sources.db.notes; the dead owner,
// the missing worktree, the ended session's lease, the released lease under a live lock
// and the lock naming a lease the DB does not have all show; the nine-hour reviewer lease
// reads active; sessions written Active and ACTIVE are live. The temp path, this host's
// name and the pids are replaced by placeholders; scan durations by 0. The run also proves
// the DB's bytes did not change.
func TestStatusJSONOnSeedDB(t *testing.T) {
	now := time.Date(2026, 7, 23, 10, 0, 0, 0, time.UTC)
	dir, dead := seedWorkspace(t, now)
	db := filepath.Join(dir, "db", "control_plane.sqlite3")
	before := seedtest.Fingerprint(t, db, filepath.Join(dir, "locks"))
	var out, errb bytes.Buffer
	code := Main([]string{"status", "--json", "--no-gitea", "--now", now.Format(time.RFC3339),
		"--locks", filepath.Join(dir, "locks"), "--db", db, "--repo-root", filepath.Join(dir, "repo"),
		"--config", emptyConfig(t, dir)}, &out, &errb)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if seedtest.Fingerprint(t, db, filepath.Join(dir, "locks")) != before {
		t.Fatal("steward status changed the DB, its journal or the lock directory")
	}
	var s struct {
		Sources struct {
			DB struct {
				Status  string `json:"status"`
				Partial bool   `json:"partial"`
			} `json:"db"`
		} `json:"sources"`
	}
	if err := json.Unmarshal(out.Bytes(), &s); err != nil || s.Sources.DB.Status != "ok" || s.Sources.DB.Partial {
		t.Fatalf("db source %+v %v", s.Sources.DB, err)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, out.Bytes(), "", "  "); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	got := pretty.String()
	for _, r := range []struct{ old, new string }{
		{dir, "<ws>"}, {"pid " + strconv.FormatInt(dead, 10) + " ", "pid <dead-pid> "},
		{"kill(" + strconv.FormatInt(dead, 10) + ", 0)", "kill(<dead-pid>, 0)"},
		{"\"pid\": " + strconv.FormatInt(dead, 10), "\"pid\": \"<dead-pid>\""},
		{"pid " + strconv.Itoa(os.Getpid()) + " ", "pid <pid> "}, {"kill(" + strconv.Itoa(os.Getpid()) + ", 0)", "kill(<pid>, 0)"},
		{"\"pid\": " + strconv.Itoa(os.Getpid()), "\"pid\": \"<pid>\""},
	} {
		got = strings.ReplaceAll(got, r.old, r.new)
	}
	if host != "" {
		got = strings.ReplaceAll(got, `\"`+host+`\"`, `\"<host>\"`)
		got = strings.ReplaceAll(got, strconv.Quote(host), `"<host>"`)
	}
	got = regexp.MustCompile(`"scan_duration_ns": \d+`).ReplaceAllString(got, `"scan_duration_ns": 0`)
	golden.RequireEqual(t, []byte(got))
}
