package attention

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/model"
)

// deadWorker is the orphans one dead worker leaves per item it held: its lease
// (stale-lease-dead-owner) and its lock file (live-lock-dead-owner).
func deadWorker(session string, items ...int64) []*model.Orphan {
	var out []*model.Orphan
	for _, n := range items {
		it := &model.Item{Kind: "issue", Number: n, Org: "acme", Repo: "widgets"}
		lease := fmt.Sprintf("L-%s-%d", session, n)
		out = append(out,
			&model.Orphan{Kind: model.OrphanStaleLeaseDeadOwner, Item: it, LeaseID: lease, SessionID: session,
				Action: &model.ActionRef{ID: actionid.AbandonStale, Target: model.ActionTarget{LeaseID: lease}}},
			&model.Orphan{Kind: model.OrphanLiveLockDeadOwner, Item: it, LeaseID: lease, SessionID: session, LockFile: fmt.Sprintf("acme__widgets__%d.json", n),
				Action: &model.ActionRef{ID: actionid.RetireLock, Target: model.ActionTarget{LockFile: fmt.Sprintf("acme__widgets__%d.json", n)}}})
	}
	return out
}

// TestOneEntryPerDeadWorker: a dead worker is one entry, however many orphans it left — 100
// dead workers holding one item each are 100 entries, not 200 — in plain words, with its
// parts' kinds, leases and lock files kept (the JSON of watch and attention list).
func TestOneEntryPerDeadWorker(t *testing.T) {
	s := &model.Snapshot{GeneratedAt: t0}
	for i := range 100 {
		s.Orphans = append(s.Orphans, deadWorker(fmt.Sprintf("S%03d", i), int64(i+1))...)
	}
	// one live worker's orphan stays an orphan entry of its own
	s.Orphans = append(s.Orphans, &model.Orphan{Kind: model.OrphanActiveLeasePastExpiry, LeaseID: "L-live", SessionID: "live",
		Item: &model.Item{Kind: "issue", Number: 500, Org: "acme", Repo: "widgets"}, Action: &model.ActionRef{ID: actionid.ReclaimExpired}})
	es, _ := FromSnapshot(s, SLAs{})
	if len(es) != 101 {
		t.Fatalf("%d entries, want 101 (100 dead workers and one orphan)", len(es))
	}
	n := 0
	for _, e := range es {
		if e.Kind != KindIncident {
			if e.Key != "orphan:active-lease-past-expiry:L-live" {
				t.Errorf("unexpected entry %q", e.Key)
			}
			continue
		}
		n++
		if !strings.HasPrefix(e.Key, "incident:dead-worker:S") || e.Sub != "dead-worker" || e.Need != model.NeedOperator || e.SLA != DefaultSLAs.Orphan {
			t.Errorf("entry %+v: key, sub, need or SLA wrong", e)
		}
		if len(e.Parts) != 2 || e.Parts[0].Sub != "stale-lease-dead-owner" || e.Parts[1].Sub != "live-lock-dead-owner" || e.Parts[1].LockFile == "" ||
			e.Parts[0].Key != OrphanKey(e.Parts[0].Sub, e.Parts[0].LeaseID, "") {
			t.Errorf("entry %s: parts %+v", e.Key, e.Parts)
		}
		if strings.Contains(e.Title, "dead-owner") || !strings.Contains(e.Title, " died holding acme/widgets#") {
			t.Errorf("title %q is not in plain words", e.Title)
		}
	}
	if n != 100 {
		t.Errorf("%d incidents, want 100", n)
	}
}

// TestIncidentGroupsItsItems: the items of one dead worker group under its one entry; its
// evidence is its parts' — a further item held, or a part gone, is a new entry to the person.
func TestIncidentGroupsItsItems(t *testing.T) {
	es, _ := FromSnapshot(&model.Snapshot{GeneratedAt: t0, Orphans: deadWorker("S1", 9, 7, 8, 10)}, SLAs{})
	if len(es) != 1 {
		t.Fatalf("%d entries, want 1", len(es))
	}
	e := es[0]
	if want := "worker S1 died holding 4 items: acme/widgets#7, acme/widgets#8, acme/widgets#9, …"; e.Title != want {
		t.Errorf("title %q, want %q", e.Title, want)
	}
	if strings.Join(e.Items, " ") != "acme/widgets#7 acme/widgets#8 acme/widgets#9 acme/widgets#10" || e.Item != "acme/widgets#7" || len(e.Parts) != 8 {
		t.Errorf("items %v, item %q, %d parts", e.Items, e.Item, len(e.Parts))
	}
	fewer, _ := FromSnapshot(&model.Snapshot{GeneratedAt: t0, Orphans: deadWorker("S1", 9, 7, 8)}, SLAs{})
	same, _ := FromSnapshot(&model.Snapshot{GeneratedAt: t0, Orphans: deadWorker("S1", 10, 9, 8, 7)}, SLAs{})
	if fewer[0].Key != e.Key || fewer[0].Evidence == e.Evidence {
		t.Errorf("one item fewer: key %q evidence %q, want the same key and other evidence", fewer[0].Key, fewer[0].Evidence)
	}
	if same[0].Evidence != e.Evidence {
		t.Errorf("the same parts in another order changed the evidence")
	}
	if one, _ := FromSnapshot(&model.Snapshot{GeneratedAt: t0, Orphans: deadWorker("S1", 7)}, SLAs{}); one[0].Title != "worker S1 died holding acme/widgets#7" {
		t.Errorf("title %q", one[0].Title)
	}
}

// TestIncidentAckCoversItsParts: an acknowledgement of the incident keeps it — lease and lock
// alike — out of the inbox until its evidence changes; the parts raise nothing of their own.
func TestIncidentAckCoversItsParts(t *testing.T) {
	tr := NewTracker(Config{})
	snap := func(items ...int64) ([]Entry, Unread) {
		return FromSnapshot(&model.Snapshot{GeneratedAt: t0, Orphans: deadWorker("S1", items...)}, SLAs{})
	}
	es, un := snap(7)
	evs := tr.Observe(Frame{Now: t0, Entries: es, Unread: un})
	if got := render(evs); len(got) != 1 || got[0] != "entered incident:dead-worker:S1  0" {
		t.Fatalf("first frame: %v, want one entered", got)
	}
	m := ack(es[0], 0, t0.Add(time.Minute))
	tr.Observe(Frame{Now: t0.Add(time.Minute), Entries: es, Unread: un, Marks: []Mark{m}})
	if in := tr.Inbox(t0.Add(2*time.Minute), false); len(in) != 0 {
		t.Errorf("acknowledged incident still in the inbox: %+v", in)
	}
	es2, un2 := snap(7, 8) // the same worker's second item: new evidence
	evs = tr.Observe(Frame{Now: t0.Add(3 * time.Minute), Entries: es2, Unread: un2, Marks: []Mark{m}})
	if got := render(evs); len(got) != 1 || got[0] != "entered incident:dead-worker:S1  0" {
		t.Errorf("a further item: %v, want the incident entered anew", got)
	}
	if in := tr.Inbox(t0.Add(3*time.Minute), false); len(in) != 1 {
		t.Errorf("the incident with new evidence is not back in the inbox: %+v", in)
	}
}
