package gather

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"steward/history"
	"steward/leases"
)

// TestLocksNotObservedAreNotRead: the history of a workspace whose lock directory is on
// another host does not read the directory here (it may be a stale copy, or another
// host's path): the lock source is skipped with the reason — a standing limit, not a lost
// source — and no lock span comes from it; the DB is read as usual.
func TestLocksNotObservedAreNotRead(t *testing.T) {
	ws := "../../testdata/workspace"
	src := Sources{LocksDir: filepath.Join(ws, "locks"), DB: leases.Target{Loc: filepath.Join(ws, "control_plane.sqlite3")}, AuditPath: filepath.Join(t.TempDir(), "a.jsonl")}
	here := Read(context.Background(), src, Options{})
	if len(here.Locks) == 0 || !here.State(history.SourceLocks).Read {
		t.Fatalf("the sample's locks are not read here: %d spans, %+v", len(here.Locks), here.State(history.SourceLocks))
	}
	src.LocksNotObserved = "lock files not observed from this host: the lock directory is on build-02"
	ev := Read(context.Background(), src, Options{})
	st := ev.State(history.SourceLocks)
	if len(ev.Locks) != 0 || st.Read || !strings.Contains(st.Reason, "build-02") {
		t.Fatalf("lock directory on another host: %d spans, state %+v", len(ev.Locks), st)
	}
	for _, g := range ev.Gaps {
		if g.Source == history.SourceLocks && g.Kind != history.GapLimit {
			t.Fatalf("a lock directory on another host is a %s gap: %s", g.Kind, g.Reason)
		}
	}
	if !ev.State(history.SourceLeases).Read {
		t.Fatalf("the DB is not read: %+v", ev.State(history.SourceLeases))
	}
}
