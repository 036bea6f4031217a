package live

import (
	"time"

	"steward/locks/lockrec"
	"steward/model"
)

// The fixtures the live model's tests share with the pure model's classification tests
// (model/classify_test.go): one instant, one canonical lock, and finders over a snapshot.

var now = time.Date(2026, 7, 23, 10, 0, 0, 0, time.UTC)

// lock builds a canonical live lock on acme/widgets#n, expiring at exp.
func lock(name string, n int64, session, leaseID string, exp time.Duration, owner model.Liveness) model.LockObs {
	one := int64(1)
	created := lockrec.NewTimestamp(now.Add(-time.Hour))
	rec := lockrec.Record{Remote: "origin", Org: "acme", Repo: "widgets", IssueNumber: &n, BranchName: "feat/x", Branch: "feat/x",
		WorktreePath: "/repo/branches/x",
		WorkLease: &lockrec.WorkLease{OperationType: "author_issue_work", IssueNumber: &n, Branch: "feat/x", WorktreePath: "/repo/branches/x",
			Claimant: &lockrec.Claimant{Username: "bot", Profile: "p"}, CreatedAt: created, ExpiresAt: lockrec.NewTimestamp(now.Add(exp)),
			LastHeartbeatAt: created, HeartbeatCount: &one, TaskSessionID: "tsk-1", LifecycleVersion: "heartbeat-v1"},
		LockProvenance: &lockrec.Provenance{Source: "gitea_lock_issue", WrittenByTool: "steward"},
		OwnerSession:   session, LeaseID: leaseID}
	k, _ := rec.Key()
	return model.LockObs{Entry: lockrec.Entry{Name: name, Class: lockrec.ClassLive, Key: k, HasKey: true, Record: rec},
		PID: 42, Host: "here", Owner: owner, Worktree: model.WorktreePresent}
}

func orphansOf(s *model.Snapshot, k model.OrphanKind) []*model.Orphan {
	var out []*model.Orphan
	for _, o := range s.Orphans {
		if o.Kind == k {
			out = append(out, o)
		}
	}
	return out
}

func contentionOf(s *model.Snapshot, k model.ContentionKind) []*model.Contention {
	var out []*model.Contention
	for _, c := range s.Contention {
		if c.Kind == k {
			out = append(out, c)
		}
	}
	return out
}

func kinds(s *model.Snapshot) []model.OrphanKind {
	var out []model.OrphanKind
	for _, o := range s.Orphans {
		out = append(out, o.Kind)
	}
	return out
}
