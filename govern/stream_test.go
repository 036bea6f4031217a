package govern

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"steward/govern/actionid"
	"steward/model"
)

// The Annotator previews only orphans it has not seen: an orphan value seen in the
// previous snapshot keeps its annotation (the same value), a new one is previewed, and
// every annotation says what Annotate says.
func TestAnnotatorPreviewsOnlyNewOrphans(t *testing.T) {
	f := newFixture(t, RoleViewer)
	f.expiredLease("L1", 1)
	f.liveLease("L2", 2, int64(os.Getpid()), f.host())
	o1 := &model.Orphan{Kind: "active-lease-past-expiry", Action: &model.ActionRef{ID: actionid.ReclaimExpired, Target: model.ActionTarget{LeaseID: "L1"}}}
	o2 := &model.Orphan{Kind: "active-lease-past-expiry", Action: &model.ActionRef{ID: actionid.ReclaimExpired, Target: model.ActionTarget{LeaseID: "L2"}}}
	ctx := context.Background()
	a := f.core.NewAnnotator()
	first := a.Snapshot(ctx, &model.Snapshot{Orphans: []*model.Orphan{o1}})
	o2b := *o2
	second := a.Snapshot(ctx, &model.Snapshot{Orphans: []*model.Orphan{o1, &o2b}})
	if second.Orphans[0] != first.Orphans[0] {
		t.Fatal("an orphan seen before was annotated again")
	}
	if second.Orphans[1] == first.Orphans[0] || second.Orphans[1].Action.Allowed == nil {
		t.Fatal("a new orphan was not annotated")
	}
	want := f.core.Annotate(ctx, &model.Snapshot{Orphans: []*model.Orphan{o1, &o2b}})
	if g, w := mustJSON(t, second), mustJSON(t, want); g != w {
		t.Fatalf("annotator %s\nannotate %s", g, w)
	}
	// A value dropped from a snapshot is forgotten: it is previewed again if it returns.
	a.Snapshot(ctx, &model.Snapshot{})
	if again := a.Snapshot(ctx, &model.Snapshot{Orphans: []*model.Orphan{o1}}); again.Orphans[0] == first.Orphans[0] {
		t.Fatal("the annotator kept an orphan no snapshot holds any more")
	}
}

// The stream redacts what Redactor.Snapshot redacts, keeps clean entries as they are, and
// reuses its verdict for an entry seen before.
func TestSnapshotStreamRedactsLikeSnapshot(t *testing.T) {
	const secret = "tok-stream-0123456789abcdef"
	r := NewRedactor()
	r.Add(secret)
	clean := &model.Claim{LeaseID: "L-clean", SessionID: "s1"}
	dirty := &model.Claim{LeaseID: "L-dirty", SessionID: "pasted " + secret}
	sess := &model.Session{SessionID: "s1"}
	snap := &model.Snapshot{Claims: []*model.Claim{clean, dirty}, Sessions: []*model.Session{sess},
		Findings: []string{"note with " + secret}}
	st := r.NewStream()
	got := st.Snapshot(snap)
	if got == snap || got.Claims[0] != clean || got.Sessions[0] != sess {
		t.Fatal("clean entries were copied, or nothing was redacted")
	}
	if g, w := mustJSON(t, got), mustJSON(t, r.Snapshot(snap)); g != w || strings.Contains(g, secret) {
		t.Fatalf("stream %s\nsnapshot %s", g, w)
	}
	if snap.Claims[1].SessionID != "pasted "+secret {
		t.Fatal("the input snapshot was changed")
	}
	again := st.Snapshot(&model.Snapshot{Claims: []*model.Claim{clean, dirty}})
	if again.Claims[1] != got.Claims[1] {
		t.Fatal("an entry seen before was redacted again")
	}
	plain := &model.Snapshot{Claims: []*model.Claim{clean}}
	if st.Snapshot(plain) != plain {
		t.Fatal("a snapshot with no secret was copied")
	}
	if NewRedactor().NewStream().Snapshot(snap) != snap {
		t.Fatal("a redactor with no secret changed the snapshot")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
