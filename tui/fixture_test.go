package tui

import (
	"fmt"
	"time"

	"steward/govern/actionid"
	"steward/model"
)

func ptr[T any](v T) *T { return &v }

func item(n int64) *model.Item {
	return &model.Item{Kind: "issue", Number: n, Remote: "origin", Org: "acme", Repo: "widgets"}
}

func okSources() model.Sources {
	h := model.SourceHealth{Status: model.StatusOK, ScannedAt: fixedNow.Add(-3 * time.Second), ScanDuration: 12 * time.Millisecond}
	return model.Sources{Locks: h, DB: h, Gitea: h}
}

// populated is a snapshot with something in every area.
func populated() *model.Snapshot {
	at := func(d time.Duration) time.Time { return fixedNow.Add(d) }
	ev := func(src model.Source, f, v string) model.Evidence {
		return model.Evidence{Source: src, Field: f, Value: v, At: at(-10 * time.Second)}
	}
	s := &model.Snapshot{GeneratedAt: at(-2 * time.Second), Sources: okSources()}
	s.Claims = []*model.Claim{
		{Item: item(101), Role: "author", TaskClass: "author_issue_work", Claimant: &model.Claimant{Username: "bot-a", Profile: "author"},
			SessionID: "sess-a1", Phase: "implementing", LastHeartbeat: at(-40 * time.Second), ExpiresAt: at(8 * time.Minute),
			Contract: "canonical", Freshness: "active", OwnerLiveness: model.LivenessAlive, LockFile: "acme_widgets_101.json", LeaseID: "L-101", LeaseStatus: "active",
			Evidence: []model.Evidence{ev(model.SourceDB, "leases.expires_at", at(8*time.Minute).Format(time.RFC3339))}},
		{Item: item(102), Role: "author", TaskClass: "author_issue_work", Claimant: &model.Claimant{Username: "bot-b", Profile: "author"},
			SessionID: "sess-b2", Phase: "publishing", LastHeartbeat: at(-4 * time.Minute), ExpiresAt: at(3 * time.Minute),
			Contract: "canonical", Freshness: "active", OwnerLiveness: model.LivenessAlive, LockFile: "acme_widgets_102.json", LeaseID: "L-102", LeaseStatus: "active"},
		{Item: item(103), Role: "reviewer", TaskClass: "reviewer_pr_review", Claimant: &model.Claimant{Username: "bot-c", Profile: "reviewer"},
			SessionID: "sess-c3", Phase: "allocated", LastHeartbeat: at(-14 * time.Minute), ExpiresAt: at(-4 * time.Minute),
			Contract: "legacy", Freshness: "expired", OwnerLiveness: model.LivenessDead, LockFile: "acme_widgets_103.json", LeaseID: "L-103", LeaseStatus: "active"},
		{Item: item(104), Role: "author", Claimant: &model.Claimant{Username: "bot-d", Profile: "author"}, SessionID: "sess-d4",
			Contract: "incomplete", Freshness: "", OwnerLiveness: model.LivenessUnknown, LockFile: "acme_widgets_104.json"},
	}
	s.Contention = []*model.Contention{
		{Kind: model.ContentionClaimRefused, Item: item(101), Sessions: []string{"sess-a1", "sess-x9"}, Count: 4, WindowS: 3600},
		{Kind: model.ContentionDuplicateLiveLock, Item: item(105), Sessions: []string{"sess-e5", "sess-f6"}, LockFiles: []string{"acme_widgets_105.json", "acme_widgets_105.json.2"}, Count: 2,
			Evidence: []model.Evidence{ev(model.SourceLocks, "owner_session", "sess-e5"), ev(model.SourceLocks, "owner_session", "sess-f6")}},
	}
	s.Clarifications = []model.Clarification{{Item: *item(107), Title: "Which config format?", Marker: "status:blocked-pending-clarification",
		Question: "## Question\n\nShould the exporter write **YAML** or `JSON`?\n\n- YAML matches the docs\n- JSON matches the API",
		Rule:     "latest-worker-comment", AskedBy: "bot-a", AskedAt: at(-26 * time.Hour), URL: "https://gitea.example/acme/widgets/issues/107"}}
	s.Orphans = []*model.Orphan{
		{Kind: model.OrphanActiveLeasePastExpiry, Item: item(103), LeaseID: "L-103", LockFile: "acme_widgets_103.json", SessionID: "sess-c3",
			Evidence: []model.Evidence{ev(model.SourceDB, "leases.expires_at", at(-4*time.Minute).Format(time.RFC3339))},
			Action:   &model.ActionRef{ID: actionid.ReclaimExpired, Target: model.ActionTarget{LeaseID: "L-103"}, Allowed: ptr(true)}},
		{Kind: model.OrphanLiveLockDeadOwner, Item: item(106), LockFile: "acme_widgets_106.json",
			Evidence: []model.Evidence{ev(model.SourceLocks, "pid", "4242 (dead)")},
			Action:   &model.ActionRef{ID: actionid.RetireLock, Target: model.ActionTarget{LockFile: "acme_widgets_106.json"}, Allowed: ptr(false), Refusal: &model.Refusal{Code: "role_too_low", Message: "needs controller"}}},
		{Kind: model.OrphanExpiredLockLiveOwner, Item: item(108), LockFile: "acme_widgets_108.json",
			Evidence: []model.Evidence{ev(model.SourceLocks, "pid", "77 (alive)")}, InspectOnlyReason: "the owner process is alive; ask it to release"},
	}
	s.Sessions = []*model.Session{
		{SessionID: "sess-a1", Role: "author", Profile: "author", PID: 311, Host: "bench", Status: "active", Liveness: model.LivenessAlive, Live: true, LastHeartbeat: at(-40 * time.Second), Leases: []string{"L-101"}},
		{SessionID: "sess-c3", Role: "reviewer", Profile: "reviewer", PID: 312, Host: "bench", Status: "active", Liveness: model.LivenessDead, LastHeartbeat: at(-14 * time.Minute), Leases: []string{"L-103"}},
		{SessionID: "sess-z9", Role: "author", Profile: "author", PID: 9, Host: "elsewhere", Status: "active", Liveness: model.LivenessUnknown, LastHeartbeat: at(-2 * time.Minute)},
	}
	s.Items = []*model.ItemState{{Item: *item(101), Bucket: model.BucketLeased}, {Item: *item(107), Bucket: model.BucketBlocked}, {Item: *item(109), Bucket: model.BucketRunnable}}
	for i, typ := range []string{"claim.created", "claim.refused", "heartbeat", "lease.expired"} {
		s.Activity = append(s.Activity, model.Event{Key: fmt.Sprintf("cp:%d", 40+i), EventID: int64(40 + i), Type: typ, Item: item(101 + int64(i%3)),
			SessionID: "sess-a1", Message: typ + " recorded", At: at(-time.Duration(i+1) * 90 * time.Second)})
	}
	return s
}

// empty is a snapshot of a healthy, idle workspace.
func empty() *model.Snapshot {
	return &model.Snapshot{GeneratedAt: fixedNow.Add(-2 * time.Second), Sources: okSources()}
}

// unavailable is a snapshot whose sources could not be read.
func unavailable() *model.Snapshot {
	return &model.Snapshot{GeneratedAt: fixedNow.Add(-2 * time.Second), Sources: model.Sources{
		Locks: model.SourceHealth{Status: model.StatusUnavailable, Reason: "permission denied reading the locks directory", ScannedAt: fixedNow.Add(-2 * time.Second)},
		DB:    model.SourceHealth{Status: model.StatusUnavailable, Reason: "control-plane DB missing (missing authority)", ScannedAt: fixedNow.Add(-2 * time.Second)},
		Gitea: model.SourceHealth{Status: model.StatusNotConfigured, Reason: "no tea login configured"},
	}}
}
