package live

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"steward/leases/leasestest"
	"steward/locks/lockrec"
	"steward/model"
)

// TestResyncReadsWhatLoadReads: the live model's listing of the locks directory takes
// the names `steward status` reads (locks.List is locks.LoadDir's set of lock files).
// The live model listed the directory itself and skipped every name starting with
// "session-" and every directory, where the cold read shows a "session-<not a pid>.json"
// lock record as a claim and a directory under a lock's name as an unreadable lock: a
// file event showed them, the next resync dropped them again.
func TestResyncReadsWhatLoadReads(t *testing.T) {
	d := newLiveDB(t, leasestest.NewDB(t, nil, nil), time.Hour)
	write := func(name string, n int64) {
		lo := lock(name, n, "s1", "", time.Hour, model.LivenessUnknown)
		data, err := lockrec.Marshal(&lo.Entry.Record)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d.ws.LocksDir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a.json", 1)
	write("session-abc.json", 2) // not a session pointer: no pid in the name
	write("session-42.json", 3)  // a session pointer: not a lock
	write(".tmp-b.json", 4)      // a writer's temp file
	if err := os.Mkdir(filepath.Join(d.ws.LocksDir, "d.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	d.live.Refresh()
	d.sameAsCold()
	s := d.live.Current()
	if len(s.Claims) != 2 {
		t.Fatalf("%d claims, want a.json and session-abc.json", len(s.Claims))
	}
	if len(orphansOf(s, model.OrphanUnreadableLock)) != 1 {
		t.Fatalf("orphans %v, want the directory d.json as an unreadable lock", kinds(s))
	}
}
