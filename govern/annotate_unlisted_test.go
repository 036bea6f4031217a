package govern

import (
	"context"
	"os"
	"testing"

	"steward/govern/actionid"
	"steward/model"
)

// TestAnnotateWithAnUnlistableLockDirectory: when the lock directory cannot be listed,
// Annotate previews each orphan without a shared view of it (annotate.go:153) — each
// preview finds so itself — and still judges what does not rest on it: the reclaim of an
// expired lease is allowed.
func TestAnnotateWithAnUnlistableLockDirectory(t *testing.T) {
	f := newFixture(t, RoleOperator)
	f.expiredLease("L1", 1)
	if err := os.RemoveAll(f.ws.LocksDir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.ws.LocksDir, []byte("not a directory\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := &model.Orphan{Kind: "active-lease-past-expiry",
		Action: &model.ActionRef{ID: actionid.ReclaimExpired, Target: model.ActionTarget{LeaseID: "L1"}}}
	got := f.core.Annotate(context.Background(), &model.Snapshot{Orphans: []*model.Orphan{o}})
	a := got.Orphans[0].Action
	if a.Allowed == nil || !*a.Allowed || a.Refusal != nil {
		t.Fatalf("reclaim of an expired lease with the lock directory unlistable: allowed=%v %+v", a.Allowed, a.Refusal)
	}
}
