package govern

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

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
