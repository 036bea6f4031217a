package model

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"steward/leases/leaserec"
)

// leaseOn, workItemOn and lockOn move a lease, a work item or a lock onto the remote r, as
// the supervised system names them (the seed's rows say prgs).
func leaseOn(r string, l LeaseObs) LeaseObs { l.Lease.Work.Remote = r; return l }

func workItemOn(r string, n int64) leaserec.WorkItem {
	w := workItem(n)
	w.WorkRef.Remote = r
	return w
}

func lockOn(r string, lo LockObs) LockObs {
	lo.Entry.Record.Remote = r
	lo.Entry.Key, _ = lo.Entry.Record.Key()
	return lo
}

// openFact is what Gitea lists of an open issue: no remote (Gitea knows none).
func openFact(n int64, state string) GiteaFact {
	it := issueItem(n)
	it.Remote = ""
	return GiteaFact{Item: it, Found: true, State: state, Title: fmt.Sprint("issue ", n)}
}

func rowsOf(s *Snapshot, n int64) []*ItemState {
	var out []*ItemState
	for _, it := range s.Items {
		if it.Item.Number == n {
			out = append(out, it)
		}
	}
	return out
}

// TestGiteaFactsFiledUnderTheRowsRemote: Gitea's facts name no remote; the engine files
// them under the configured remote, else the one the DB's rows for the repository name,
// else the one its lock files name — and, when the rows name two, under none, saying why.
// A live engine files them again when a row naming another remote appears.
func TestGiteaFactsFiledUnderTheRowsRemote(t *testing.T) {
	base := func() *Input {
		in := baseInput()
		in.Sessions = []SessionObs{sess("s1", "active")}
		in.Leases = []LeaseObs{leaseOn("prgs", lease("L1", 1, "s1", leaserec.StatusActive, time.Hour, LivenessAlive))}
		in.WorkItems = []leaserec.WorkItem{workItemOn("prgs", 1)}
		in.Gitea = []GiteaFact{openFact(1, "open"), openFact(2, "open")}
		return in
	}
	cfg := Config{Org: "acme", Repo: "widgets"}
	t.Run("inferred from the DB", func(t *testing.T) {
		s := Build(base(), cfg, now)
		if r := rowsOf(s, 1); len(r) != 1 || r[0].Bucket != BucketLeased || r[0].Item.Remote != "prgs" || r[0].Title == "" {
			t.Fatalf("#1: %+v", r)
		}
		if r := rowsOf(s, 2); len(r) != 1 || r[0].Bucket != BucketRunnable || r[0].Item.Remote != "prgs" {
			t.Fatalf("#2: %+v", r)
		}
		if !strings.Contains(strings.Join(s.Sources.Gitea.Notes, ""), "remote prgs inferred from the control-plane DB") {
			t.Fatalf("notes %q", s.Sources.Gitea.Notes)
		}
	})
	t.Run("inferred from the locks", func(t *testing.T) {
		in := base()
		in.Leases, in.WorkItems = nil, nil
		in.Locks = []LockObs{lockOn("prgs", lock("a.json", 1, "s1", "", time.Hour, LivenessAlive))}
		s := Build(in, cfg, now)
		if r := rowsOf(s, 1); len(r) != 1 || r[0].Bucket != BucketLeased || r[0].Item.Remote != "prgs" {
			t.Fatalf("#1: %+v", r)
		}
		if !strings.Contains(strings.Join(s.Sources.Gitea.Notes, ""), "inferred from the lock files") {
			t.Fatalf("notes %q", s.Sources.Gitea.Notes)
		}
	})
	t.Run("configured, rows under another remote too", func(t *testing.T) {
		in := base()
		// A lock on #2 under origin: the same number, another remote name.
		in.Locks = []LockObs{lock("b.json", 2, "s1", "", time.Hour, LivenessAlive)}
		s := Build(in, Config{Org: "acme", Repo: "widgets", Remote: "prgs"}, now)
		if r := rowsOf(s, 1); len(r) != 1 || r[0].Bucket != BucketLeased {
			t.Fatalf("#1: %+v", r)
		}
		var gitea *ItemState
		for _, r := range rowsOf(s, 2) {
			if r.Item.Remote == "prgs" {
				gitea = r
			}
		}
		if gitea == nil || gitea.Bucket != BucketUnknown || !strings.Contains(strings.Join(gitea.Reasons, ""), "another remote name (origin)") {
			t.Fatalf("Gitea's #2 under prgs while a lock holds origin's #2: %+v", gitea)
		}
		if !strings.Contains(strings.Join(s.Sources.Gitea.Notes, ""), "under remote origin too") {
			t.Fatalf("notes %q", s.Sources.Gitea.Notes)
		}
	})
	t.Run("the rows disagree", func(t *testing.T) {
		in := base()
		in.WorkItems = append(in.WorkItems, workItem(9)) // origin
		s := Build(in, cfg, now)
		if s.Sources.Gitea.Status != StatusDegraded || !s.Sources.Gitea.Partial || len(s.Findings) != 1 ||
			!strings.Contains(s.Findings[0], "several remotes (origin, prgs)") {
			t.Fatalf("gitea %+v, findings %q", s.Sources.Gitea, s.Findings)
		}
		if r := rowsOf(s, 2); len(r) != 0 {
			t.Fatalf("Gitea's #2 was listed although its remote is not known: %+v", r)
		}
		if r := rowsOf(s, 1); len(r) != 1 || r[0].Title != "" || r[0].Bucket != BucketLeased {
			t.Fatalf("#1: %+v", r)
		}
		if s.ItemsInventory.Complete {
			t.Fatal("items_inventory complete while Gitea's items are not joined")
		}
	})
	t.Run("live: a row naming another remote arrives", func(t *testing.T) {
		e := NewEngine(cfg)
		e.load(base())
		e.Flush(now)
		if s := e.Publish(now); len(rowsOf(s, 2)) != 1 || rowsOf(s, 2)[0].Bucket != BucketRunnable {
			t.Fatalf("before: %+v", rowsOf(s, 2))
		}
		e.PutWorkItem(workItem(9))
		e.Flush(now)
		s := e.Publish(now)
		if len(rowsOf(s, 2)) != 0 || e.Remote().How != remoteAmbiguous || !slices.Equal(e.Remote().Named, []string{"origin", "prgs"}) {
			t.Fatalf("after a row under origin: #2 %+v, remote %+v", rowsOf(s, 2), e.Remote())
		}
		if r := rowsOf(s, 1); len(r) != 1 || r[0].Title != "" {
			t.Fatalf("#1 keeps Gitea's title: %+v", r)
		}
	})
}
