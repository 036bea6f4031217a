package govern

import (
	"testing"

	"steward/govern/actionid"
	"steward/model"
)

// TestAnnotateNextCopiesTheOrphansVerdict: a contention entry's way-out actions are its
// losing claims' orphan actions, so they carry the same verdict (allowed, refusal) — in a
// copy: the published entry is not changed.
func TestAnnotateNextCopiesTheOrphansVerdict(t *testing.T) {
	no := false
	tgt := model.ActionTarget{LockFile: "acme_widgets_7.json.2"}
	orphan := &model.Orphan{Kind: model.OrphanLiveLockDeadOwner, LockFile: tgt.LockFile,
		Action: &model.ActionRef{ID: actionid.RetireLock, Target: tgt, Allowed: &no, Refusal: &model.Refusal{Code: CodeFenceMoved, Message: "moved"}}}
	c := &model.Contention{Kind: model.ContentionDuplicateLiveLock, Next: &model.Resolution{Who: model.ResolveOperator,
		Actions: []model.ActionRef{{ID: actionid.RetireLock, Target: tgt}}}}
	s := &model.Snapshot{Orphans: []*model.Orphan{orphan}, Contention: []*model.Contention{c}}
	annotateNext(s)
	got := s.Contention[0].Next.Actions[0]
	if got.Allowed == nil || *got.Allowed || got.Refusal == nil || got.Refusal.Code != CodeFenceMoved {
		t.Fatalf("the way out's action is not annotated: %+v", got)
	}
	if c.Next.Actions[0].Allowed != nil || s.Contention[0] == c {
		t.Fatal("the published entry was changed")
	}
}
