package govern

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/locks"
	"steward/model"
	"steward/model/live"
)

// fullDisk puts the fixture's lock directory on a filesystem of its own that the returned
// fill makes full and free gives room on again: a 512 KiB tmpfs mounted for the test (the
// suite runs as root), whose last bytes a file takes. Without the right to mount, the same
// write error comes from the lock store's boundary instead: fill puts a directory where the
// lock's flock file goes, so every lock write of the item fails before it writes anything
// (as a full disk fails it), and free removes it.
func (f *fixture) fullDisk(item int64) (fill, free func()) {
	f.t.Helper()
	mnt := filepath.Join(f.dir, "small-disk")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		f.t.Fatal(err)
	}
	locksDir := filepath.Join(mnt, "locks")
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=512k,mode=0700", "tmpfs", mnt).CombinedOutput(); err != nil {
		if os.Geteuid() == 0 {
			f.t.Fatalf("mount a tmpfs: %v: %s", err, out)
		}
		f.t.Logf("no tmpfs (%v): the lock writes fail at the lock store's boundary instead", err)
		if err := os.Mkdir(locksDir, 0o700); err != nil {
			f.t.Fatal(err)
		}
		f.moveLocks(locksDir)
		name, _ := locks.Name(lockKey(work(item)))
		block := filepath.Join(locksDir, "."+name+".flock")
		return func() {
				if err := os.Mkdir(block, 0o700); err != nil {
					f.t.Fatal(err)
				}
			}, func() {
				if err := os.Remove(block); err != nil {
					f.t.Fatal(err)
				}
			}
	}
	f.t.Cleanup(func() { _ = exec.Command("umount", "-l", mnt).Run() })
	if err := os.Mkdir(locksDir, 0o700); err != nil {
		f.t.Fatal(err)
	}
	f.moveLocks(locksDir)
	pad := filepath.Join(mnt, "pad")
	return func() {
			fh, err := os.Create(pad)
			if err != nil {
				f.t.Fatal(err)
			}
			defer fh.Close()
			b := make([]byte, 4096)
			for {
				if _, err := fh.Write(b); err != nil {
					if !errors.Is(err, syscall.ENOSPC) {
						f.t.Fatal(err)
					}
					return
				}
			}
		}, func() {
			if err := os.Remove(pad); err != nil {
				f.t.Fatal(err)
			}
		}
}

// moveLocks points the fixture's workspace at another lock directory.
func (f *fixture) moveLocks(dir string) {
	f.t.Helper()
	f.ws.LocksDir = dir
	f.core = f.newCore(f.core.actor.Role, false)
}

// TestHeartbeatOnAFullDiskIsNeverSettledSucceeded: a heartbeat on a full disk renews the
// lease (the DB is elsewhere) and cannot rewrite the lock; the attempt is unknown. The live
// model shows the disagreement — lock-lease-expiry-mismatch, with the lock's and the lease's
// expiries and its repair (the worker's next heartbeat) — and audit verify does not settle
// the attempt succeeded, not even once the lease has ended (the expire sweep) while the lock
// still records the earlier expiry. With room again, a heartbeat brings the lock along on a
// second claim and verify settles that one succeeded from the lock. Before the fix the live
// model showed nothing and verify settled the ended lease's attempt succeeded ("lock no
// longer names the lease (it has moved on since)") — as a full-disk run once found, with
// the lock still saying it expired 50 minutes before its lease.
func TestHeartbeatOnAFullDiskIsNeverSettledSucceeded(t *testing.T) {
	f := newFixture(t, RoleOperator)
	fill, free := f.fullDisk(7)
	out := f.claim("s1", 7)
	id, name := out.Detail["lease_id"], out.Detail["lock_file"]
	ctx := context.Background()

	fill()
	f.clock.Add(5 * time.Minute)
	_, hb, err := f.core.Run(ctx, Request{Action: actionid.Heartbeat, Target: Target{LeaseID: id, Session: "s1"}}, "")
	if err != nil || hb.Result != ResultUnknown {
		t.Fatalf("heartbeat on a full disk: %+v %v; want unknown", hb, err)
	}
	l := f.lease(id)
	lk := locks.ReadFile(f.ws.LocksDir, name)
	if lk.Missing || lk.Unreadable != nil || !lk.Record.WorkLease.ExpiresAt.Time.Before(l.ExpiresAt.Time) {
		t.Fatalf("after the failed lock write: lease until %s, lock %+v", l.ExpiresAt.Raw, lk)
	}

	// The live model shows the disagreement, with both expiries and the repair.
	in := live.Load(ctx, live.Workspace{LocksDir: f.ws.LocksDir, DBPath: f.ws.DBPath, RepoRoot: f.ws.RepoRoot, Host: f.ws.Host}, live.NewProbe(f.ws.RepoRoot), f.clock.Now())
	snap := model.Build(in, model.Config{}, f.clock.Now())
	var mm *model.Orphan
	for _, o := range snap.Orphans {
		if o.Kind == model.OrphanLockLeaseExpiryMismatch {
			mm = o
		}
	}
	if mm == nil {
		t.Fatalf("no %s orphan; orphans %v", model.OrphanLockLeaseExpiryMismatch, snap.Orphans)
	}
	evs := ""
	for _, e := range mm.Evidence {
		evs += e.Field + "=" + e.Value + "; "
	}
	if mm.LeaseID != id || mm.LockFile != name || !strings.Contains(evs, l.ExpiresAt.Raw) || !strings.Contains(evs, lk.Record.WorkLease.ExpiresAt.Text) ||
		!strings.Contains(evs, "5m00s behind") || !strings.Contains(mm.InspectOnlyReason, "next heartbeat") {
		t.Fatalf("the mismatch says %q / %q", evs, mm.InspectOnlyReason)
	}

	// The lease ends (the expire sweep, past its renewed expiry) with the lock still behind:
	// verify leaves the heartbeat unknown, saying what is missing.
	free()
	f.clock.Add(time.Hour)
	if _, sw, err := f.core.Run(ctx, Request{Action: actionid.ExpireSweep}, ""); err != nil || sw.Result != ResultSucceeded {
		t.Fatalf("expire sweep: %+v %v", sw, err)
	}
	v := f.verifyOne()
	if v.Attempt != hb.Attempt || v.Result != ResultUnknown || !strings.Contains(strings.Join(v.Evidence, " "), "still records work_lease.expires_at") {
		t.Fatalf("verify of the heartbeat whose lock write failed, its lease ended since: %s %v; want unknown, the lock behind", v.Result, v.Evidence)
	}

	// With room, a heartbeat whose lock follows is settled succeeded from the lock (here
	// an attempt left unknown by a lost reply after its last write: the crash matrix's kill).
	out2 := f.claim("s2", 8)
	f.clock.Add(time.Minute)
	f.crashChild("lock-"+locks.StepDirSynced, "CHILD_ACTION="+actionid.Heartbeat, "CHILD_LEASE="+out2.Detail["lease_id"], "CHILD_SESSION=s2")
	vs, err := f.core.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		switch {
		case v.Attempt == hb.Attempt && v.Result != ResultUnknown:
			t.Errorf("the full-disk heartbeat: %s; want unknown still", v.Result)
		case v.Attempt != hb.Attempt && (v.Action != actionid.Heartbeat || v.Result != ResultSucceeded):
			t.Errorf("the heartbeat whose lock followed: %s %s %v; want succeeded", v.Action, v.Result, v.Evidence)
		}
	}
	if len(vs) != 2 {
		t.Fatalf("verify: %+v", vs)
	}
}
