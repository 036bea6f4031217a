package tui

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"steward/model"
)

// withClaims is populated() with claims replaced.
func withClaims(claims ...*model.Claim) *model.Snapshot {
	s := populated()
	s.Claims = claims
	return s
}

func liveClaim(n int64, left time.Duration) *model.Claim {
	return &model.Claim{Item: item(n), Role: "author", Claimant: &model.Claimant{Username: "bot", Profile: "author"},
		SessionID: "sess", LastHeartbeat: fixedNow, ExpiresAt: fixedNow.Add(left), Contract: "canonical",
		Freshness: "active", OwnerLiveness: model.LivenessAlive, LeaseStatus: "active", LockFile: lockName(n), LeaseID: "L-" + itoa(n)}
}

func lockName(n int64) string { return "acme_widgets_" + itoa(n) + ".json" }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// The cursor and the open detail follow the selected row's identity
// across snapshots — rows inserted above it, a re-sort, a change of the row's kind — and
// when the row leaves, the cursor stays at its place on the neighbour and the screen says so.
func TestSelectionFollowsIdentity(t *testing.T) {
	r := newTestRoot(t, 160, 48, false)
	send(r, SnapshotMsg{withClaims(liveClaim(1, 5*time.Minute), liveClaim(2, 6*time.Minute), liveClaim(3, 7*time.Minute))}, keyMsg("2"))
	send(r, keyMsg("j"), keyMsg("enter"))
	if sel := r.list().tbl.selected(); sel.Item != "acme/widgets#2" {
		t.Fatalf("selected %s", sel.Item)
	}
	// Two rows more urgent than #2 arrive (they sort above it).
	send(r, SnapshotMsg{withClaims(liveClaim(1, 5*time.Minute), liveClaim(2, 6*time.Minute), liveClaim(3, 7*time.Minute),
		liveClaim(8, time.Minute), liveClaim(9, 2*time.Minute))})
	if sel := r.list().tbl.selected(); sel.Item != "acme/widgets#2" || r.list().tbl.cursor != 3 {
		t.Fatalf("after rows were inserted above: selected %s at %d", sel.Item, r.list().tbl.cursor)
	}
	if !contains(plain(r), "Claim on acme/widgets#2") {
		t.Fatal("the detail switched to another item")
	}
	// space marks the row the cursor is on, not the one that was there before (and moves
	// down, as in a file manager).
	send(r, keyMsg("space"), keyMsg("k"))
	if !r.list().tbl.marks["claim:"+lockName(2)] || len(r.list().tbl.marks) != 1 {
		t.Fatalf("marks %v", r.list().tbl.marks)
	}
	// #2 leaves: the cursor stays at its place, on the neighbour, and the screen says so.
	send(r, SnapshotMsg{withClaims(liveClaim(1, 5*time.Minute), liveClaim(3, 7*time.Minute), liveClaim(8, time.Minute), liveClaim(9, 2*time.Minute))})
	sel := r.list().tbl.selected()
	if sel.Item != "acme/widgets#3" {
		t.Fatalf("after #2 left: selected %s, want its neighbour #3", sel.Item)
	}
	f := plain(r)
	if !contains(f, "Claim on acme/widgets#2 left the snapshot") {
		t.Fatalf("the screen does not say the selected row left:\n%s", f)
	}
	if len(r.list().tbl.marks) != 0 {
		t.Fatalf("the mark of the row that left stays: %v", r.list().tbl.marks)
	}
	send(r, keyMsg("k"))
	if contains(plain(r), "left the snapshot") {
		t.Fatal("the notice stays after the cursor moved")
	}
}

// The cursor not moved by the person stays on the row it is on — the top row it was put on
// — when a more urgent row arrives above it (a key pressed next acts on the row looked at);
// an orphan whose kind changed is followed by its identity.
func TestSelectionTopAndKindChange(t *testing.T) {
	r := newTestRoot(t, 160, 48, false)
	send(r, SnapshotMsg{withClaims(liveClaim(1, 5*time.Minute), liveClaim(2, 6*time.Minute))}, keyMsg("2"))
	send(r, SnapshotMsg{withClaims(liveClaim(1, 5*time.Minute), liveClaim(2, 6*time.Minute), liveClaim(7, time.Minute))})
	if p := r.list(); p.tbl.rows[p.tbl.view[0]].Item != "acme/widgets#7" {
		t.Fatalf("the more urgent #7 is not on top")
	}
	if sel := r.list().tbl.selected(); sel.Item != "acme/widgets#1" {
		t.Fatalf("untouched cursor on %s, want #1, the row it was on", sel.Item)
	}
	s := populated()
	send(r, SnapshotMsg{s}, keyMsg("5"), keyMsg("j"))
	was := r.list().tbl.selected()
	s2 := populated()
	o := *s2.Orphans[1]
	o.Kind = model.OrphanStaleLockDeadOwner
	s2.Orphans[1] = &o
	send(r, SnapshotMsg{s2})
	if sel := r.list().tbl.selected(); sel.ID != was.ID || sel.Cells[0] != string(model.OrphanStaleLockDeadOwner) {
		t.Fatalf("after the kind changed: selected %v, was %v", sel.Cells, was.Cells)
	}
}

// Marks are keyed by identity, belong to their view, are named in the action dialog, and
// u clears them.
func TestMarksPerViewNamedAndCleared(t *testing.T) {
	r := newTestRoot(t, 160, 48, false)
	send(r, SnapshotMsg{populated()}, keyMsg("5"), keyMsg("space"), keyMsg("space"))
	orphans := r.list()
	if len(orphans.tbl.marks) != 2 {
		t.Fatalf("marked %d orphans", len(orphans.tbl.marks))
	}
	send(r, keyMsg("2"))
	if len(r.list().tbl.marks) != 0 || contains(plain(r), "marked") {
		t.Fatal("the orphans' marks show on Claims")
	}
	send(r, keyMsg("5"), keyMsg("a"))
	f := plain(r)
	for _, want := range []string{"Actions for 2 row(s)", "on: active-lease-past-expiry acme/widgets#103, live-lock-dead-owner acme/widgets#106"} {
		if !contains(f, want) {
			t.Fatalf("the action dialog does not say %q:\n%s", want, f)
		}
	}
	send(r, keyMsg("esc"), keyMsg("u"))
	if len(orphans.tbl.marks) != 0 || !contains(plain(r), "cleared 2 mark(s) in Orphans") {
		t.Fatalf("u left %d marks:\n%s", len(orphans.tbl.marks), plain(r))
	}
}

// p freezes the live view: snapshots that arrive meanwhile wait; the header says paused and
// how old the frozen snapshot is; p again shows the newest.
func TestPauseFreezesTheView(t *testing.T) {
	r := newTestRoot(t, 120, 40, false)
	now := fixedNow
	r.opts.Now = func() time.Time { return now }
	send(r, SnapshotMsg{populated()}, keyMsg("2"), keyMsg("p"))
	n := len(r.list().tbl.rows)
	send(r, SnapshotMsg{withClaims(liveClaim(1, time.Minute))})
	now = now.Add(90 * time.Second)
	r.Update(tickMsg{})
	h := strings.Split(plain(r), "\n")[0]
	if !contains(h, "PAUSED") || !contains(h, "frozen, 1m32s old") || !contains(h, "newer waiting") {
		t.Fatalf("header while paused: %q", h)
	}
	if len(r.list().tbl.rows) != n {
		t.Fatal("a snapshot changed the rows while paused")
	}
	send(r, keyMsg("p"))
	if len(r.list().tbl.rows) != 1 || contains(plain(r), "PAUSED") {
		t.Fatalf("after resuming: %d rows", len(r.list().tbl.rows))
	}
}
