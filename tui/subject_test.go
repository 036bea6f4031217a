package tui

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"steward/govern"
	"steward/govern/actionid"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
	"steward/model"
)

// expiredOrphan is the orphan of lease id on item n, expired since age ago.
func expiredOrphan(id string, n int64, age time.Duration) *model.Orphan {
	return &model.Orphan{Kind: model.OrphanActiveLeasePastExpiry, Item: item(n), LeaseID: id, SessionID: "s-" + id,
		Evidence: []model.Evidence{{Source: model.SourceDB, Field: "leases.expires_at", Value: fixedNow.Add(-age).Format(time.RFC3339)}},
		Action:   &model.ActionRef{ID: actionid.ReclaimExpired, Target: model.ActionTarget{LeaseID: id}, Allowed: ptr(true)}}
}

func orphansSnap(os ...*model.Orphan) *model.Snapshot {
	return &model.Snapshot{GeneratedAt: fixedNow, Sources: okSources(), Orphans: os}
}

// TestSelectionFollowsTheRow: a row that arrives above the selected one between two key
// presses never takes the cursor — on the top row as below it — so the key acts on the row
// that was looked at (c asks for the recover plan of its item, not of the newcomer's).
func TestSelectionFollowsTheRow(t *testing.T) {
	for _, tc := range []struct {
		name  string
		moves []string
		want  string
	}{
		{"the top row", nil, "acme/widgets#7"},
		{"a row below the top", []string{"j"}, "acme/widgets#8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRoot(t, 120, 40, false)
			a, b := expiredOrphan("L7", 7, 10*time.Minute), expiredOrphan("L8", 8, 5*time.Minute)
			send(r, SnapshotMsg{orphansSnap(a, b)}, keyMsg("5"))
			for _, k := range tc.moves {
				send(r, keyMsg(k))
			}
			if got := r.list().tbl.selected().Item; got != tc.want {
				t.Fatalf("selected %s before the new row, want %s", got, tc.want)
			}
			// a new, older orphan sorts above both
			send(r, SnapshotMsg{orphansSnap(expiredOrphan("L6", 6, time.Hour), a, b)})
			p := r.list()
			if first := p.tbl.rows[p.tbl.view[0]].Item; first != "acme/widgets#6" {
				t.Fatalf("the new row is not on top: %s", first)
			}
			if got := p.tbl.selected().Item; got != tc.want {
				t.Errorf("after the new row the selection is %s, want %s", got, tc.want)
			}
			send(r, keyMsg("c"))
			f := plain(r)
			if !strings.Contains(f, tc.want+" has no active lease") || strings.Contains(f, "acme/widgets#6") {
				t.Errorf("c did not ask for the recover plan of %s:\n%s", tc.want, f)
			}
		})
	}
}

// TestDialogSaysItsRowLeft: the action menu is open on an orphan when another steward
// reclaims its lease and the next snapshot has no such row: the menu says the row left and
// that the action will be previewed against the current state; choosing the action asks the
// core again — its answer now is a refusal — and never offers the stale preview's Apply. A
// confirm dialog open over a row that leaves says so too. Nothing is applied from the
// dialog.
func TestDialogSaysItsRowLeft(t *testing.T) {
	c, ws, audit := testCore(t, false, time.Now)
	exp := leaserec.FormatTime(time.Now().Add(-time.Hour))
	leasestest.Insert(t, ws.DBPath, []leasestest.Session{{SessionID: "s-L7", Role: "author"}},
		[]leasestest.Lease{{LeaseID: "L7", SessionID: "s-L7", Role: "author", TaskClass: "author_issue_work",
			Work: leasestest.Work(leaserec.KindIssue, 7), CreatedAt: exp, ExpiresAt: exp}})
	r := New(Options{Core: c, Now: func() time.Time { return fixedNow }})
	r.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	orphan := expiredOrphan("L7", 7, time.Hour)
	orphan.Item = &model.Item{Kind: "issue", Number: 7, Org: leasestest.Work(leaserec.KindIssue, 7).Org, Repo: leasestest.Work(leaserec.KindIssue, 7).Repo}
	send(r, SnapshotMsg{orphansSnap(orphan)}, keyMsg("5"), keyMsg("a"))
	name := itemStr(orphan.Item)
	if f := plain(r); !strings.Contains(f, "Reclaim an expired lease (end it; the item returns to the pool)  (1 of 1 allowed)") || strings.Contains(f, "left this view") {
		t.Fatalf("the action menu:\n%s", f)
	}

	// another steward reclaims the lease; the next snapshot has no such orphan
	req := govern.Request{Action: actionid.ReclaimExpired, Target: govern.Target{LeaseID: "L7"}}
	pv, err := c.Preview(context.Background(), req)
	if err != nil || !pv.Allowed {
		t.Fatalf("the other steward's preview: %+v %v", pv, err)
	}
	if out := c.Apply(context.Background(), pv, pv.ConfirmPhrase); out.Result != govern.ResultSucceeded {
		t.Fatalf("the other steward's reclaim: %+v", out)
	}
	before, _ := os.ReadFile(audit)
	send(r, SnapshotMsg{orphansSnap()})
	notice := name + " left this view: the action will be previewed against the current state"
	if f := plain(r); !strings.Contains(f, notice) {
		t.Fatalf("the menu does not say its row left:\n%s", f)
	}
	checkFrame(t, frame(r), 120, 30)

	send(r, keyMsg("enter")) // choose the reclaim
	f := plain(r)
	if !strings.Contains(f, name+" left this view: this plan was previewed against the current state") {
		t.Errorf("the confirm dialog does not say its plan is the current state's:\n%s", f)
	}
	if !strings.Contains(f, "refused") {
		t.Errorf("the stale preview was offered, not the core's answer now:\n%s", f)
	}
	if d, ok := r.stack.top().(*confirmDialog); !ok {
		t.Errorf("no confirm dialog: %T", r.stack.top())
	} else if n := len(d.allowedPreviews()); n != 0 {
		t.Errorf("the confirm dialog offers an Apply of %d preview(s) on a lease that was reclaimed", n)
	}
	if after, _ := os.ReadFile(audit); string(after) != string(before) {
		t.Errorf("the dialog wrote to the audit log:\n%s", after[len(before):])
	}

	// a confirm dialog whose row leaves says so, and its Apply asks the core again
	exp8 := leaserec.FormatTime(time.Now().Add(-time.Hour))
	leasestest.Insert(t, ws.DBPath, []leasestest.Session{{SessionID: "s-L8", Role: "author"}},
		[]leasestest.Lease{{LeaseID: "L8", SessionID: "s-L8", Role: "author", TaskClass: "author_issue_work",
			Work: leasestest.Work(leaserec.KindIssue, 8), CreatedAt: exp8, ExpiresAt: exp8}})
	send(r, keyMsg("esc"), SnapshotMsg{orphansSnap(expiredOrphan("L8", 8, time.Hour))}, keyMsg("a"), keyMsg("enter"))
	if d, ok := r.stack.top().(*confirmDialog); !ok || len(d.allowedPreviews()) != 1 {
		t.Fatalf("no confirm dialog with the allowed reclaim of L8:\n%s", plain(r))
	}
	req8 := govern.Request{Action: actionid.ReclaimExpired, Target: govern.Target{LeaseID: "L8"}}
	if pv, err := c.Preview(context.Background(), req8); err != nil || c.Apply(context.Background(), pv, pv.ConfirmPhrase).Result != govern.ResultSucceeded {
		t.Fatalf("the other steward's reclaim of L8: %v", err)
	}
	before, _ = os.ReadFile(audit)
	send(r, SnapshotMsg{orphansSnap()})
	if f := plain(r); !strings.Contains(f, "acme/widgets#8 left this view: the action will be previewed against the current state") {
		t.Errorf("the confirm dialog does not say its row left:\n%s", f)
	}
	send(r, keyMsg("tab"), keyMsg("enter")) // Apply
	if d, ok := r.stack.top().(*confirmDialog); !ok || len(d.allowedPreviews()) != 0 || !strings.Contains(plain(r), "this plan was previewed against the current state") {
		t.Errorf("Apply did not show the plan read again (refused now):\n%s", plain(r))
	}
	if after, _ := os.ReadFile(audit); string(after) != string(before) {
		t.Errorf("Apply of a plan whose row left applied it:\n%s", after[len(before):])
	}

	// a confirm dialog open when its row leaves says so too
	send(r, keyMsg("esc"), SnapshotMsg{orphansSnap(expiredOrphan("L9", 9, time.Hour))}, keyMsg("c"))
	if _, ok := r.stack.top().(*confirmDialog); !ok {
		t.Fatalf("c opened no confirm dialog:\n%s", plain(r))
	}
	send(r, SnapshotMsg{orphansSnap()})
	if f := plain(r); !strings.Contains(f, "acme/widgets#9 left this view: the action will be previewed against the current state") {
		t.Errorf("the confirm dialog does not say its row left:\n%s", f)
	}
	checkFrame(t, frame(r), 120, 30)
}
