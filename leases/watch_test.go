package leases_test

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"steward/leases"
	"steward/leases/leasestest"
)

func TestWatchDBSeesCommitAndDataVersionMoves(t *testing.T) {
	before := runtime.NumGoroutine()
	path := leasestest.NewDB(t, nil, nil)
	r, err := leases.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	v0, err := r.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w, err := leases.WatchDB(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	leasestest.Insert(t, path, []leasestest.Session{{SessionID: "s1"}}, nil)
	select {
	case _, ok := <-w.Changes():
		if !ok {
			t.Fatal("closed")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no change reported for a commit")
	}
	v1, err := r.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v1 == v0 {
		t.Fatalf("data_version did not move after a commit (%d)", v0)
	}
	w.Close()
	if _, ok := <-w.Changes(); ok {
		t.Fatal("channel open after Close")
	}
	r.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		t.Fatalf("goroutines: %d before, %d after Close", before, n)
	}
	_ = filepath.Base(path)
}
