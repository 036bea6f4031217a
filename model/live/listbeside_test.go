package live

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"steward/leases/leasestest"
	"steward/locks"
	"steward/locks/lockrec"
	"steward/model"
)

// TestListingBesideTheLoop: the periodic listing of the lock directory (the names and an
// lstat of each) runs beside the loop. While it is held — taken, not yet applied — a lock
// file written meanwhile is read and published at once; when the held listing is applied
// it does not drop that file (absent from the listing, but read since); the snapshot is
// what a cold read derives. With the files read since the listing not kept, the new claim vanishes.
func TestListingBesideTheLoop(t *testing.T) {
	dir := t.TempDir()
	ws := Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: leasestest.NewDB(t, nil, nil), RepoRoot: filepath.Join(dir, "repo")}
	if err := os.MkdirAll(ws.LocksDir, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(n int64, exp time.Duration) string {
		lo := lock("", n, "s1", "", exp, model.LivenessUnknown)
		data, err := lockrec.Marshal(&lo.Entry.Record)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := locks.Name(lockrec.Key{Remote: lo.Entry.Record.Remote, Org: lo.Entry.Record.Org, Repo: lo.Entry.Record.Repo, Issue: n})
		tmp := filepath.Join(ws.LocksDir, ".tmp-"+name)
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(ws.LocksDir, name)); err != nil {
			t.Fatal(err)
		}
		return name
	}
	first := write(1, time.Hour)
	d := &liveDB{t: t, ws: ws, clock: &clock{t: leasestest.Now}, probe: Probe{Host: "here"}}
	held, again := make(chan struct{}, 1), make(chan struct{}, 1)
	release := make(chan struct{})
	var calls atomic.Int32
	d.live = New(ws, Options{Now: d.clock.Now, Probe: &d.probe, Resync: 20 * time.Millisecond, ProbeEvery: time.Hour})
	d.live.lsHook = func() {
		if calls.Add(1) == 1 {
			held <- struct{}{}
			select {
			case <-release:
			case <-time.After(time.Minute): // a hang detector
			}
			return
		}
		select {
		case again <- struct{}{}:
		default:
		}
	}
	if err := d.live.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer d.live.Close()
	select {
	case <-held:
	case <-time.After(time.Minute): // a hang detector
		t.Fatal("no listing beside the loop")
	}
	second := write(2, 2*time.Hour)
	both := func(s *model.Snapshot) bool {
		var a, b bool
		for _, c := range s.Claims {
			a = a || c.LockFile == first
			b = b || c.LockFile == second
		}
		return a && b
	}
	d.waitFor("the lock written while the listing is held", both)

	close(release)
	deadline := time.After(time.Minute) // a hang detector
	for calls.Load() < 2 {
		if s := d.live.Current(); !both(s) {
			t.Fatalf("the held listing dropped the lock written meanwhile: %d claims", len(s.Claims))
		}
		select {
		case <-d.live.Snapshots():
		case <-again:
		case <-deadline:
			t.Fatal("the held listing was never applied")
		}
	}
	if !both(d.live.Current()) {
		t.Fatal("the held listing dropped the lock written meanwhile")
	}
	d.sameAsCold()
}
