package model

import (
	"time"

	"steward/leases/leaserec"
	"steward/locks/lockrec"
)

var now = time.Date(2026, 7, 23, 10, 0, 0, 0, time.UTC)

func ts(d time.Duration) string { return leaserec.FormatTime(now.Add(d)) }

func okH() SourceHealth { return SourceHealth{Status: StatusOK, ScannedAt: now} }

func baseInput() *Input {
	return &Input{LocksHealth: okH(), DBHealth: okH(), GiteaHealth: okH(),
		DB: DBSections{Sessions: true, Leases: true, WorkItems: true, Events: true}}
}

// lock builds a canonical live lock on acme/widgets#n, expiring at exp.
func lock(name string, n int64, session, leaseID string, exp time.Duration, owner Liveness) LockObs {
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
	return LockObs{Entry: lockrec.Entry{Name: name, Class: lockrec.ClassLive, Key: k, HasKey: true, Record: rec},
		PID: 42, Host: "here", Owner: owner, Worktree: WorktreePresent}
}

func lease(id string, n int64, session string, status leaserec.Status, exp time.Duration, owner Liveness) LeaseObs {
	l := leaserec.Lease{LeaseID: id, WorkItemID: n, SessionID: session, Role: "author", TaskClass: leaserec.ClassAuthorIssueWork,
		Phase: "implementing", Status: status, CreatedAt: leaserec.ParseTimestamp(ts(-5 * time.Minute)),
		ExpiresAt: leaserec.ParseTimestamp(ts(exp)), LastHeartbeatAt: leaserec.ParseTimestamp(ts(-time.Minute)),
		OwnerPID: 42, OwnerHost: "here", WorktreePath: "/repo/branches/x",
		Work: leaserec.WorkRef{Remote: "origin", Org: "acme", Repo: "widgets", Kind: leaserec.KindIssue, Number: n}}
	return LeaseObs{Lease: l, Owner: owner, Worktree: WorktreePresent}
}

func sess(id, status string) SessionObs {
	return SessionObs{Session: leaserec.Session{SessionID: id, Role: "author", PID: 42, Host: "here", Status: status,
		LastHeartbeatAt: leaserec.ParseTimestamp(ts(-time.Minute))}, Owner: LivenessAlive}
}

func orphansOf(s *Snapshot, k OrphanKind) []*Orphan {
	var out []*Orphan
	for _, o := range s.Orphans {
		if o.Kind == k {
			out = append(out, o)
		}
	}
	return out
}

func contentionOf(s *Snapshot, k ContentionKind) []*Contention {
	var out []*Contention
	for _, c := range s.Contention {
		if c.Kind == k {
			out = append(out, c)
		}
	}
	return out
}
