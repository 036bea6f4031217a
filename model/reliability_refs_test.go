package model

import (
	"testing"

	"steward/locks/lockrec"
)

// TestEngineForgetsLeasesNoLockNames: a lease looked up because a lock named it is
// forgotten once no lock names it (the reliability load run found the long-running model
// holding 1.8× the memory of a fresh one on the same workspace: one entry per lease any lock
// had ever named).
func TestEngineForgetsLeasesNoLockNames(t *testing.T) {
	e := NewEngine(Config{})
	lock := func(lease string) *LockObs {
		n := int64(7)
		return &LockObs{Entry: lockrec.Entry{Name: "a.json", HasKey: true, Key: lockrec.Key{Remote: "origin", Org: "acme", Repo: "widgets", Issue: n},
			Record: lockrec.Record{Remote: "origin", Org: "acme", Repo: "widgets", IssueNumber: &n, LeaseID: lease}}}
	}
	e.SetLock("a.json", lock("L1"))
	e.refs["L1"] = &LeaseObs{}
	e.SetLock("a.json", lock("L1")) // rewritten, same lease: kept
	if _, ok := e.refs["L1"]; !ok {
		t.Fatal("a lease a lock still names was forgotten")
	}
	e.SetLock("a.json", lock("L2")) // now names another lease
	if _, ok := e.refs["L1"]; ok {
		t.Fatal("a lease no lock names any more is still held")
	}
	e.refs["L2"] = nil
	e.SetLock("a.json", nil) // the lock is gone
	if len(e.refs) != 0 || len(e.refUnits) != 0 {
		t.Fatalf("refs %v, refUnits %v after the lock went away", e.refs, e.refUnits)
	}
}
