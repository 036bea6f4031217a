package fleet

import (
	"context"
	"testing"
	"time"

	"steward/model"
	"steward/model/live"
)

// TestGenerate checks that a generated fleet reads back as the picture it is meant to be: one
// healthy claim per item, owned by a live local process, and the expired 1% as orphans.
func TestGenerate(t *testing.T) {
	t.Parallel()
	m, err := Generate(t.TempDir(), 120)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(m.RepoRoot + "/..")
	if err != nil || loaded.N != 120 || !loaded.Base.Equal(m.Base) {
		t.Fatalf("Load = %+v, %v", loaded, err)
	}
	now := m.Base.Add(5 * time.Second)
	ws := live.Workspace{LocksDir: m.LocksDir, DBPath: m.DBPath, RepoRoot: m.RepoRoot}
	s := model.Build(live.Load(context.Background(), ws, live.NewProbe(m.RepoRoot), now), model.Config{}, now)
	c := s.Count()
	if c.Claims != 120 || c.Sessions != 120 || c.Contention != 0 || len(s.Findings) != 0 {
		t.Fatalf("counts %+v, findings %v", c, s.Findings)
	}
	expired := 0
	for _, cl := range s.Claims {
		if Expired(cl.Item.Number) {
			expired++
			if cl.Freshness != "expired" {
				t.Errorf("claim %d: freshness %q, want expired", cl.Item.Number, cl.Freshness)
			}
			continue
		}
		if cl.Freshness != "active" || cl.OwnerLiveness != model.LivenessAlive || cl.Contract != "canonical" || cl.LockFile != LockName(cl.Item.Number) {
			t.Errorf("claim %d: freshness %q, owner %q, contract %q, lock %q", cl.Item.Number, cl.Freshness, cl.OwnerLiveness, cl.Contract, cl.LockFile)
		}
	}
	if expired != 1 || c.Orphans == 0 {
		t.Errorf("expired claims %d, orphans %d; want 1 and some", expired, c.Orphans)
	}
	for _, o := range s.Orphans {
		if !Expired(o.Item.Number) {
			t.Errorf("orphan %s on healthy claim %d", o.Kind, o.Item.Number)
		}
	}
}
