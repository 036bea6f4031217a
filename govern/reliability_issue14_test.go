package govern

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"steward/leases"
	"steward/locks"
)

// TestRetireKeepsAWorkerInPlaceRewrite (defect 3 of issue 14, through the core): a worker
// rewrites its expired lock in place while lock.retire archives it. The retire refuses
// fence_moved, the live file holds the worker's write and retired/ holds no stale archive.
func TestRetireKeepsAWorkerInPlaceRewrite(t *testing.T) {
	f := newFixture(t, RoleOperator)
	name := f.lockFile(4, -time.Minute, deadPID(t))
	path := filepath.Join(f.ws.LocksDir, name)
	orig := mustRead(t, path)
	next := bytes.Replace(orig, []byte(`"heartbeat_count": 1`), []byte(`"heartbeat_count": 2`), 1)
	if bytes.Equal(next, orig) {
		t.Fatal("fixture lock has no heartbeat_count 1")
	}
	wfd, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer wfd.Close()
	core := New(f.ws, f.audit, Options{Actor: f.core.actor, Now: f.clock.Now, Step: func(s string) {
		if s == "lock-"+locks.StepDirSynced {
			_ = wfd.Truncate(0)
			_, _ = wfd.WriteAt(next, 0)
		}
	}})
	defer core.Close()
	_, out, err := core.Run(context.Background(), Request{Action: ActionRetireLock, Target: Target{LockFile: name}}, "retire acme/widgets#4")
	if err != nil || out.Result != ResultRefused || out.Code != CodeFenceMoved {
		t.Fatalf("retire during an in-place rewrite: %+v %v; want refused fence_moved", out, err)
	}
	if got := mustRead(t, path); !bytes.Equal(got, next) {
		t.Fatalf("live lock after the refused retire:\n%s", got)
	}
	snap, err := locks.LoadDir(f.ws.LocksDir, locks.LoadOptions{Retired: true})
	if err != nil || len(snap.Live) != 1 || len(snap.Retired) != 0 {
		t.Fatalf("locks after the refusal: %v, %d live, %d archived", err, len(snap.Live), len(snap.Retired))
	}
}

// activeLeases returns the non-terminal leases on item n.
func (f *fixture) activeLeases(n int64) []leases.Lease {
	f.t.Helper()
	r, err := leases.OpenReadOnly(f.ws.DBPath)
	if err != nil {
		f.t.Fatal(err)
	}
	defer r.Close()
	ls, err := r.LeasesForWorkItem(context.Background(), work(n))
	if err != nil {
		f.t.Fatal(err)
	}
	return ls
}

// TestClaimCompensatesAFailedLockWrite (defect 5 of issue 14): when writing the lock fails
// after the lease was inserted (here the flock path is occupied by a directory), the claim
// releases its lease again within the same attempt and records failed naming both effects.
// Before the fix the lease stayed active without a lock, the attempt was unknown although
// steward knew what happened, and a retry was refused already_held.
func TestClaimCompensatesAFailedLockWrite(t *testing.T) {
	f := newFixture(t, RoleOperator)
	name, _ := locks.Name(lockKey(work(7)))
	block := filepath.Join(f.ws.LocksDir, "."+name+".flock")
	if err := os.Mkdir(block, 0o700); err != nil {
		t.Fatal(err)
	}
	req := Request{Action: ActionClaim, Target: Target{Item: item(7), Session: "s1"}, Params: map[string]string{"pid": strconv.Itoa(os.Getpid())}}
	_, out, err := f.core.Run(context.Background(), req, "")
	if err != nil || out.Result != ResultFailed || out.Disposition != DispositionCompensated {
		t.Fatalf("claim with an unwritable lock: %+v %v; want failed/compensated", out, err)
	}
	eff := strings.Join(out.Effects, "\n")
	if !strings.Contains(eff, "created") || !strings.Contains(eff, "released again") {
		t.Errorf("effects %q: want the lease created and released again", out.Effects)
	}
	if ls := f.activeLeases(7); len(ls) != 0 {
		t.Fatalf("%d active leases after the failed claim; want none", len(ls))
	}
	a := Attempts(f.records())
	if len(a) != 1 || a[0].Outcomes != 1 || a[0].Outcome.Result != ResultFailed || len(a[0].Outcome.Effects) == 0 {
		t.Fatalf("audit: %+v", a)
	}
	// With the obstacle gone, the same worker's retry claims the item.
	if err := os.Remove(block); err != nil {
		t.Fatal(err)
	}
	if _, out, err := f.core.Run(context.Background(), req, ""); err != nil || out.Result != ResultSucceeded {
		t.Fatalf("retry: %+v %v", out, err)
	}
}

// TestHeartbeatRefusesALocklessLease (defect 5 of issue 14): a lease whose lock is missing
// is not renewed — before the fix heartbeat renewed it indefinitely, a claim the lock
// directory never showed.
func TestHeartbeatRefusesALocklessLease(t *testing.T) {
	f := newFixture(t, RoleOperator)
	out := f.claim("s1", 7)
	if err := os.Remove(filepath.Join(f.ws.LocksDir, out.Detail["lock_file"])); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(time.Minute)
	_, hb, err := f.core.Run(context.Background(), Request{Action: ActionHeartbeat, Target: Target{LeaseID: out.Detail["lease_id"], Session: "s1"}}, "")
	if err != nil || hb.Result != ResultRefused || hb.Code != CodeLockMissing {
		t.Fatalf("heartbeat of a lockless lease: %+v %v; want refused %s", hb, err, CodeLockMissing)
	}
	if l := f.lease(out.Detail["lease_id"]); l.ExpiresAt.Raw != out.Detail["expires_at"] || l.HeartbeatCount != 0 {
		t.Fatalf("the lockless lease was renewed: until %s, %d heartbeats", l.ExpiresAt.Raw, l.HeartbeatCount)
	}
	// Release still works: the worker gives the lease back and claims again.
	if _, rel, err := f.core.Run(context.Background(), Request{Action: ActionRelease, Target: Target{LeaseID: out.Detail["lease_id"], Session: "s1"}}, ""); err != nil || rel.Result != ResultSucceeded {
		t.Fatalf("release of the lockless lease: %+v %v", rel, err)
	}
	f.claim("s1", 7)
}
