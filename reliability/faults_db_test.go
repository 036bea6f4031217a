package reliability_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"steward/govern"
	"steward/govern/actionid"
	"steward/leases"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
	"steward/model"
	"steward/model/live"
)

// liveLease gives the workspace one active lease L1 on item #5 that expires in an hour.
func (w *workspace) liveLease(t *testing.T, path, id string, issue int64) {
	t.Helper()
	now := time.Now()
	leasestest.Insert(t, path, []leasestest.Session{{SessionID: "s-" + id, Role: "author"}},
		[]leasestest.Lease{{LeaseID: id, SessionID: "s-" + id, Role: "author", TaskClass: "author_issue_work",
			Work: leasestest.Work(leaserec.KindIssue, issue), CreatedAt: leaserec.FormatTime(now),
			LastHeartbeatAt: leaserec.FormatTime(now), ExpiresAt: leaserec.FormatTime(now.Add(time.Hour))}})
}

// startLive starts a live model on w with opt and closes it when the test ends.
func (w *workspace) startLive(t *testing.T, opt live.Options) *live.Model {
	t.Helper()
	live := live.New(live.Workspace{LocksDir: w.ws.LocksDir, DBPath: w.ws.DBPath, RepoRoot: w.ws.RepoRoot}, opt)
	must(t, live.Start(context.Background()))
	t.Cleanup(func() { live.Close() })
	return live
}

func hasClaim(s *model.Snapshot, leaseID, lockFile string) bool {
	for _, c := range s.Claims {
		if (leaseID == "" || c.LeaseID == leaseID) && (lockFile == "" || c.LockFile == lockFile) {
			return true
		}
	}
	return false
}

// TestDBHeldByAnotherWriter: another process holds the DB's write lock (BEGIN EXCLUSIVE)
// until the test lets it go. With a rollback journal, readers are locked out: the DB source
// reads degraded ("database busy") with the last committed state still shown. Either way the
// proof that nothing waits on the DB is causal, not timed: while the writer still holds the
// lock (it has not said "released", and will not before the test writes to it), a new lock
// file is read and drawn and the screen draws more frames. When the writer commits, the
// source recovers by itself with the new rows. With WAL, readers are not locked out at all
// and the source stays ok.
func TestDBHeldByAnotherWriter(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"delete", "wal"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			w := newWorkspace(t)
			w.liveLease(t, w.ws.DBPath, "L1", 5)
			db := sqlDB(t, w.ws.DBPath)
			execAll(t, db, "PRAGMA journal_mode="+mode)
			db.Close()
			live := w.startLive(t, live.Options{})
			scr := watch(t, live, nil)
			scr.waitSnapshot(t, hangLimit, "the lease", func(s *model.Snapshot) bool { return hasClaim(s, "L1", "") })

			release, letGo := io.Pipe()
			t.Cleanup(func() { letGo.Close() })
			cmd, out := childIn(t, release, "hold-db", "CHILD_DB="+w.ws.DBPath)
			expectLine(t, out, "held")
			if mode == "delete" {
				s := scr.waitSnapshot(t, hangLimit, "the DB source degraded: busy", func(s *model.Snapshot) bool {
					return s.Sources.DB.Status == model.StatusDegraded && strings.Contains(s.Sources.DB.Reason, "database busy")
				})
				if !s.Sources.DB.Partial || !hasClaim(s, "L1", "") {
					t.Errorf("while busy: partial %v, claims %s (the last committed state stays shown, marked partial)", s.Sources.DB.Partial, claimsOf(s))
				}
			}
			writeFile(t, filepath.Join(w.ws.LocksDir, "while-held.json"), hostileLock(t, 80))
			scr.waitSnapshot(t, hangLimit, "a new lock while the DB is held", func(s *model.Snapshot) bool { return hasClaim(s, "", "while-held.json") })
			scr.keepsDrawing(t, 40)
			if mode == "wal" {
				if s := scr.snapshot(); s.Sources.DB.Status != model.StatusOK {
					t.Errorf("WAL readers are not locked out, yet the DB source reads %s: %s", s.Sources.DB.Status, s.Sources.DB.Reason)
				}
			}
			_, err := io.WriteString(letGo, "release\n")
			must(t, err)
			must(t, letGo.Close()) // Wait waits for the copy to the child's stdin to end
			expectLine(t, out, "released")
			must(t, cmd.Wait())
			scr.waitSnapshot(t, hangLimit, "recovery with the writer's commit", func(s *model.Snapshot) bool {
				return s.Sources.DB.Status == model.StatusOK && s.Sources.DB.Reason == "" && hasClaim(s, "L1", "")
			})
			scr.keepsDrawing(t, 5)
		})
	}
}

// replaceDB builds a new DB holding lease id on issue and renames it over w's DB path.
func (w *workspace) replaceDB(t *testing.T, id string, issue int64) {
	t.Helper()
	next := filepath.Join(filepath.Dir(w.ws.DBPath), "next-"+id+".sqlite3")
	must(t, leases.Migrate(next))
	w.liveLease(t, next, id, issue)
	db := sqlDB(t, next)
	execAll(t, db, "PRAGMA wal_checkpoint(TRUNCATE)", "PRAGMA journal_mode=DELETE")
	db.Close()
	must(t, os.Rename(next, w.ws.DBPath))
}

// TestDBReplacedAndRemoved: a new DB file renamed over the path (a new inode) is read —
// the live model reopens by path instead of reading the old file forever; a removed DB is
// missing authority; a DB put back is read again. The resync is an hour away, so the
// watchers do it.
func TestDBReplacedAndRemoved(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.liveLease(t, w.ws.DBPath, "L1", 5)
	db := sqlDB(t, w.ws.DBPath)
	execAll(t, db, "PRAGMA wal_checkpoint(TRUNCATE)", "PRAGMA journal_mode=DELETE")
	db.Close()
	live := w.startLive(t, live.Options{Resync: time.Hour})
	scr := watch(t, live, nil)
	scr.waitSnapshot(t, hangLimit, "L1", func(s *model.Snapshot) bool { return hasClaim(s, "L1", "") })

	w.replaceDB(t, "L2", 6)
	scr.waitSnapshot(t, hangLimit, "the replacing DB's lease L2 and no L1", func(s *model.Snapshot) bool {
		return hasClaim(s, "L2", "") && !hasClaim(s, "L1", "") && s.Sources.DB.Status == model.StatusOK
	})
	must(t, os.Remove(w.ws.DBPath))
	scr.waitSnapshot(t, hangLimit, "the DB unavailable: missing", func(s *model.Snapshot) bool {
		return s.Sources.DB.Status == model.StatusUnavailable && strings.Contains(s.Sources.DB.Reason, "missing authority")
	})
	w.replaceDB(t, "L3", 7)
	scr.waitSnapshot(t, hangLimit, "the DB back with L3", func(s *model.Snapshot) bool {
		return s.Sources.DB.Status == model.StatusOK && hasClaim(s, "L3", "") && !hasClaim(s, "L2", "")
	})
	scr.keepsDrawing(t, 3)
}

// hostileLock is a canonical lock of issue n whose owner is on another host.
func hostileLock(t *testing.T, n int) []byte {
	t.Helper()
	rec := hostileRecord(t, "expiry-far-future.json")
	rec["issue_number"] = n
	rec["work_lease"].(map[string]any)["issue_number"] = n
	b, err := jsonMarshal(rec)
	must(t, err)
	return b
}

// TestLocksDirRemovedAndRecreated: the locks directory is removed (the source reads
// unavailable, never "no locks") and made again with a new lock, which is read through the
// re-attached watch — the resync is an hour away.
func TestLocksDirRemovedAndRecreated(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	writeFile(t, filepath.Join(w.ws.LocksDir, "a.json"), hostileLock(t, 31))
	live := w.startLive(t, live.Options{Resync: time.Hour, Poll: 50 * time.Millisecond})
	scr := watch(t, live, nil)
	scr.waitSnapshot(t, hangLimit, "a.json", func(s *model.Snapshot) bool { return hasClaim(s, "", "a.json") })
	must(t, os.RemoveAll(w.ws.LocksDir))
	scr.waitSnapshot(t, hangLimit, "locks unavailable", func(s *model.Snapshot) bool {
		return s.Sources.Locks.Status == model.StatusUnavailable && strings.Contains(s.Sources.Locks.Reason, "no such file")
	})
	must(t, os.Mkdir(w.ws.LocksDir, 0o700))
	writeFile(t, filepath.Join(w.ws.LocksDir, "b.json"), hostileLock(t, 32))
	scr.waitSnapshot(t, hangLimit, "b.json read through the re-attached watch", func(s *model.Snapshot) bool {
		return s.Sources.Locks.Status == model.StatusOK && hasClaim(s, "", "b.json") && !hasClaim(s, "", "a.json")
	})
	// inotify again: a further change is seen at once, and the note is gone.
	writeFile(t, filepath.Join(w.ws.LocksDir, "c.json"), hostileLock(t, 33))
	scr.waitSnapshot(t, hangLimit, "c.json", func(s *model.Snapshot) bool {
		return hasClaim(s, "", "c.json") && s.Sources.Locks.Reason == ""
	})
}

// limitReached fails as the kernel does when fs.inotify.max_user_watches is exhausted.
func limitReached(string) (*fsnotify.Watcher, error) {
	return nil, fmt.Errorf("inotify_add_watch: %w", syscall.ENOSPC)
}

// TestInotifyLimitFallsBackToPolling: with every inotify watch refused (ENOSPC), the live
// model polls the locks directory and the DB, says so on the Overview's source lines, and
// still sees a new lock and a new lease (the resync is an hour away).
func TestInotifyLimitFallsBackToPolling(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	live := w.startLive(t, live.Options{Resync: time.Hour, Poll: 50 * time.Millisecond, Notify: limitReached})
	scr := watch(t, live, nil)
	scr.waitSnapshot(t, hangLimit, "both sources saying they poll", func(s *model.Snapshot) bool {
		return strings.Contains(s.Sources.Locks.Reason, "polling") && strings.Contains(s.Sources.Locks.Reason, "no space left on device") &&
			s.Sources.Locks.Status == model.StatusOK
	})
	waitFor(t, hangLimit, "the Overview saying it polls", func() bool {
		return strings.Contains(scr.text(), "polling every 50ms: inotify unavailable")
	})
	writeFile(t, filepath.Join(w.ws.LocksDir, "p.json"), hostileLock(t, 41))
	scr.waitSnapshot(t, hangLimit, "the new lock, by polling", func(s *model.Snapshot) bool { return hasClaim(s, "", "p.json") })

	log, err := govern.OpenAudit(w.audit, nil)
	must(t, err)
	defer log.Close()
	core := govern.New(w.ws, log, govern.Options{Actor: govern.LocalActor(govern.RoleOperator, "")})
	defer core.Close()
	_, out, err := core.Run(context.Background(), govern.Request{Action: actionid.Claim,
		Target: govern.Target{Session: "s-poll", Item: &govern.Item{Org: "acme", Repo: "widgets", Number: 42}}}, "")
	must(t, err)
	if out.Result != govern.ResultSucceeded {
		t.Fatalf("claim: %+v", out)
	}
	s := scr.waitSnapshot(t, hangLimit, "the new lease, by polling the DB", func(s *model.Snapshot) bool {
		return hasClaim(s, out.Detail["lease_id"], out.Detail["lock_file"])
	})
	if !strings.Contains(s.Sources.DB.Reason, "polling") {
		t.Errorf("DB source reason %q does not say it polls", s.Sources.DB.Reason)
	}
}
