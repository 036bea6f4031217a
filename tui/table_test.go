package tui

import "testing"

func TestFuzzy(t *testing.T) {
	cases := []struct {
		hay, term string
		want      bool
	}{
		{"active-lease-past-expiry acme/widgets#201", "past", true},
		{"active-lease-past-expiry acme/widgets#201", "pastexp", true},
		{"active-lease-past-expiry acme/widgets#202 2026-05-04t12:01:00z", "201", false},
		{"acme/widgets#201", "201", true},
		{"sess-a1 bot-a", "sa1", true},
		{"sess-a1 bot-a", "zz", false},
	}
	for _, c := range cases {
		if got := fuzzy(c.hay, c.term); got != c.want {
			t.Errorf("fuzzy(%q, %q) = %v, want %v", c.hay, c.term, got, c.want)
		}
	}
}

// TestMarksAndFilter: a bulk action covers the marked rows the filter shows and says how many
// marked rows it hides.
func TestMarksAndFilter(t *testing.T) {
	r := newTestRoot(t, 160, 48, false)
	send(r, SnapshotMsg{populated()}, keyMsg("2"))
	send(r, keyMsg("ctrl+a"))
	p := r.list()
	if len(p.tbl.marks) != 4 {
		t.Fatalf("marked %d, want 4", len(p.tbl.marks))
	}
	send(r, keyMsg("/"))
	send(r, typeText("#103")...)
	send(r, keyMsg("enter"))
	shown, hidden := p.tbl.marked()
	if len(shown) != 1 || hidden != 3 {
		t.Fatalf("shown %d hidden %d, want 1 and 3", len(shown), hidden)
	}
	if !contains(plain(r), "4 marked (3 hidden by the filter)") {
		t.Fatal("the status line does not say how many marked rows the filter hides")
	}
	send(r, keyMsg("a"))
	m, ok := r.stack.top().(*actionMenu)
	if !ok || len(m.names) != 1 || m.hidden != 3 {
		t.Fatalf("menu %#v", r.stack.top())
	}
	// Switching views and back keeps the filter.
	send(r, keyMsg("esc"), keyMsg("3"), keyMsg("2"))
	if p.filter.String() != "#103" || len(p.tbl.view) != 1 {
		t.Fatalf("filter not kept: %q, %d rows", p.filter.String(), len(p.tbl.view))
	}
}

// TestSortByTimeLeft: sorting by Left puts the expired claim first and unknown deadlines last.
func TestSortByTimeLeft(t *testing.T) {
	r := newTestRoot(t, 160, 48, false)
	send(r, SnapshotMsg{populated()}, keyMsg("2"))
	p := r.list()
	if !p.tbl.sortBy("Left") {
		t.Fatal("Left is not sortable")
	}
	var got []string
	for _, i := range p.tbl.view {
		got = append(got, p.tbl.rows[i].Item)
	}
	want := []string{"acme/widgets#103", "acme/widgets#102", "acme/widgets#101", "acme/widgets#104"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}
