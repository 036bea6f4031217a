package live

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"steward/leases"
	"steward/leases/leasestest"
	"steward/model"
)

// TestFullReadBesideTheLoop: the periodic full read of the DB (after scoped reads) runs
// beside the loop. While it is held — its snapshot read, not yet applied — a claim and a
// heartbeat that land are applied and published at once (the loop used to run the full
// read itself: a change landing meanwhile waited for it, about a second at 50,000 claims).
// When the held read is applied, its older rows do not undo them: what the scoped reads
// applied meanwhile is read again before the next publish, and the snapshot is what a
// cold read derives. With that second read removed, the claim made meanwhile vanishes
// and the heartbeat's expiry goes back.
func TestFullReadBesideTheLoop(t *testing.T) {
	path := leasestest.NewDB(t, nil, nil)
	dir := t.TempDir()
	ws := Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: path, RepoRoot: filepath.Join(dir, "repo")}
	if err := os.MkdirAll(ws.LocksDir, 0o700); err != nil {
		t.Fatal(err)
	}
	d := &liveDB{t: t, ws: ws, clock: &clock{t: leasestest.Now}, probe: Probe{Host: "here"}}
	st, err := leases.OpenReadWrite(path, leases.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d.store = st
	held, again := make(chan struct{}, 1), make(chan struct{}, 1)
	release := make(chan struct{})
	var calls atomic.Int32
	d.live = New(ws, Options{Now: d.clock.Now, Probe: &d.probe, Resync: 20 * time.Millisecond, ProbeEvery: time.Hour})
	d.live.bgHook = func() {
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
	wait := func(what string, c <-chan struct{}) {
		t.Helper()
		select {
		case <-c:
		case <-time.After(time.Minute): // a hang detector
			t.Fatalf("no %s", what)
		}
	}

	a := d.claim("s1", 1) // a scoped read: the next resync reads in full, beside the loop
	if !a.OK() {
		t.Fatalf("claim: %+v", a)
	}
	d.waitFor("the first claim", func(s *model.Snapshot) bool { return claimOf(s, a.Lease.LeaseID) != nil })
	wait("background full read", held)

	b := d.claim("s2", 2)
	if !b.OK() {
		t.Fatalf("claim: %+v", b)
	}
	d.clock.Add(time.Minute)
	hb, err := d.store.Heartbeat(context.Background(), leases.FenceOf(*a.Lease), d.clock.Now())
	if err != nil || !hb.OK() {
		t.Fatalf("heartbeat: %v %+v", err, hb)
	}
	renewed := func(s *model.Snapshot) bool {
		c := claimOf(s, a.Lease.LeaseID)
		return claimOf(s, b.Lease.LeaseID) != nil && c != nil && c.ExpiresAt.Equal(hb.Lease.ExpiresAt.Time)
	}
	d.waitFor("the claim and heartbeat made while the full read is held", renewed)

	// Released, the held read is applied; the next one starts only after that. Every
	// snapshot published until then must still show what landed meanwhile.
	close(release)
	deadline := time.After(time.Minute) // a hang detector
	for calls.Load() < 2 {
		if s := d.live.Current(); !renewed(s) {
			t.Fatalf("the held full read undid what landed meanwhile: second claim %v, first claim expires %v (renewed to %v)",
				claimOf(s, b.Lease.LeaseID) != nil, claimOf(s, a.Lease.LeaseID).ExpiresAt, hb.Lease.ExpiresAt.Time)
		}
		select {
		case <-d.live.Snapshots():
		case <-again:
		case <-deadline:
			t.Fatal("the held full read was never applied")
		}
	}
	if !renewed(d.live.Current()) {
		t.Fatal("the held full read undid what landed meanwhile")
	}
	d.sameAsCold()
}
