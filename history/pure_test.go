package history

import (
	"slices"
	"strings"
	"testing"
	"time"

	"steward/gitea/gitearec"
	"steward/leases/leaserec"
)

var t0 = time.Date(2026, 7, 23, 10, 0, 0, 0, time.UTC)

func it(n int64) Item { return Item{Org: "acme", Repo: "widgets", Number: n} }

func span(id, sess string, n int64, from, to time.Duration) LeaseSpan {
	sp := LeaseSpan{Lease: id, Session: sess, Item: it(n), Start: t0.Add(from), Source: SourceLeases, ExpiresAt: t0.Add(from + 10*time.Minute)}
	if to > 0 {
		sp.Ended, sp.End, sp.Status = true, t0.Add(to), "released"
	}
	return sp
}

func refused(ref, sess, holder string, n int64, d time.Duration) Entry {
	return Entry{At: t0.Add(d), Source: SourceEvents, Ref: ref, Kind: KindRefused, Item: it(n), Session: sess, Holder: holder}
}

// TestHeat: the heatmap counts claims, refusals and collisions per session and item, and
// sorts the hottest items and the most refused sessions first.
func TestHeat(t *testing.T) {
	m := time.Minute
	ev := &Evidence{Read: t0.Add(60 * m), States: []SourceState{{Source: SourceEvents, Read: true}, {Source: SourceLeases, Read: true}}}
	ev.Leases = []LeaseSpan{
		span("L1", "a", 1, 0, 5*m),
		span("L2", "b", 1, 2*m, 8*m), // overlaps L1: a collision of a and b on #1
		span("L3", "c", 2, 10*m, 0),
		span("L4", "a", 3, 70*m, 0), // after the window
	}
	ev.Entries = []Entry{
		refused("events#1", "c", "a", 1, m), refused("events#2", "c", "a", 1, 90*time.Second),
		refused("events#3", "b", "c", 2, 20*m), refused("events#4", "a", "c", 2, 21*m), refused("events#5", "c", "c", 2, 22*m),
		refused("events#6", "a", "x", 9, -m), // before the window
	}
	ev.Finish()
	h := ev.Heat(t0, t0.Add(60*m))
	var items []int64
	for _, x := range h.Items {
		items = append(items, x.Number)
	}
	if !slices.Equal(items, []int64{1, 2}) {
		t.Fatalf("items %v, want #1 (collision) then #2", items)
	}
	if !slices.Equal(h.Sessions, []string{"c", "a", "b"}) {
		t.Fatalf("sessions %v, want the most refused first", h.Sessions)
	}
	want := [][]Cell{
		{{Refusals: 2}, {Claims: 1, Refusals: 1}},   // c
		{{Claims: 1, Collisions: 1}, {Refusals: 1}}, // a
		{{Claims: 1, Collisions: 1}, {Refusals: 1}}, // b
	}
	for s := range want {
		if !slices.Equal(h.Cells[s], want[s]) {
			t.Fatalf("cells of %s %+v, want %+v", h.Sessions[s], h.Cells[s], want[s])
		}
	}
	if h.Max != 2 {
		t.Fatalf("max %d", h.Max)
	}
	f := h.CellFilter(0, 0)
	if f.Session != "c" || !f.Item.Same(it(1)) || !f.Since.Equal(t0) {
		t.Fatalf("cell filter %+v", f)
	}
	if got := ev.Timeline(f).Entries; len(got) != 2 || got[0].Ref != "events#1" {
		t.Fatalf("cell timeline %+v", got)
	}
}

// TestCollisionAt: two live leases of different sessions on one item at an instant are a
// collision; the same at an instant when only one was live is not.
func TestCollisionAt(t *testing.T) {
	m := time.Minute
	ev := &Evidence{Read: t0.Add(60 * m), States: []SourceState{{Source: SourceLeases, Read: true}}}
	ev.Leases = []LeaseSpan{span("L1", "a", 1, 0, 5*m), span("L2", "b", 1, 2*m, 8*m)}
	if c := ev.At(t0.Add(3*m), m).Collisions; len(c) != 1 || !slices.Equal(c[0].Sessions, []string{"a", "b"}) {
		t.Fatalf("collisions at +3m: %+v", c)
	}
	if c := ev.At(t0.Add(6*m), m).Collisions; len(c) != 0 {
		t.Fatalf("collisions at +6m: %+v", c)
	}
	r := ev.Since(t0.Add(-m), "")
	if !slices.ContainsFunc(r.Lines, func(l SinceLine) bool { return l.Category == catCollisions && l.Item.Same(it(1)) }) {
		t.Fatalf("since: %+v", r.Lines)
	}
}

// TestEndUnknown: a lease ended at an unrecorded time may have been live at any later
// instant: it is said to be unknown, not left out silently.
func TestEndUnknown(t *testing.T) {
	ev := &Evidence{Read: t0.Add(time.Hour), States: []SourceState{{Source: SourceLeases, Read: true}}}
	ev.AddLeases([]leaserec.Lease{{LeaseID: "L1", SessionID: "a", Status: leaserec.StatusReleased, StatusRaw: "released",
		CreatedAt: leaserec.ParseTimestamp(t0.Format(time.RFC3339)), Work: leaserec.WorkRef{Org: "acme", Repo: "widgets", Number: 1}}},
		nil, leaserec.Health{Status: leaserec.HealthOK})
	fl := ev.At(t0.Add(time.Minute), time.Minute)
	if len(fl.Claims) != 0 || !slices.ContainsFunc(fl.Unknown, func(s string) bool { return strings.Contains(s, "ended at an unrecorded time") }) {
		t.Fatalf("claims %+v unknown %q", fl.Claims, fl.Unknown)
	}
}

// TestThreadEntries: an item's comments and label events join its timeline, named by
// their Gitea ids, with terminal control sequences stripped.
func TestThreadEntries(t *testing.T) {
	ev := &Evidence{Read: t0.Add(time.Hour)}
	ev.AddThread(it(1), gitearec.Thread{
		Comments: []gitearec.Comment{{ID: 5, Author: "worker", Body: "Which API?\x1b]0;pwn\x07\nmore", CreatedAt: t0.Add(2 * time.Minute)}},
		Labels:   []gitearec.LabelEvent{{ID: 4, Label: "status:blocked-pending-clarification", Added: true, By: "worker", At: t0.Add(time.Minute)}},
	})
	tl := ev.Timeline(Filter{Item: it(1)})
	if len(tl.Entries) != 2 || tl.Entries[0].Ref != "gitea:label/4" || tl.Entries[1].Ref != "gitea:comment/5" {
		t.Fatalf("%+v", tl.Entries)
	}
	if s := tl.Entries[1].Text; strings.ContainsAny(s, "\x1b\x07") || !strings.Contains(s, "Which API?") || strings.Contains(s, "more") {
		t.Fatalf("comment text %q", s)
	}
}

func TestParseItem(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Item
		ok   bool
	}{
		{"acme/widgets#7", it(7), true}, {"acme/widgets/7", it(7), true}, {" Acme/Widgets#7 ", Item{"Acme", "Widgets", 7}, true},
		{"acme#7", Item{}, false}, {"acme/widgets#x", Item{}, false}, {"acme/widgets#0", Item{}, false}, {"a/b/c#1", Item{}, false}, {"", Item{}, false},
	} {
		got, err := ParseItem(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseItem(%q) = %v, %v", tc.in, got, err)
		}
	}
}

func FuzzParseItem(f *testing.F) {
	for _, s := range []string{"acme/widgets#7", "a/b/3", "#", "/#1", "a/b#-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		it, err := ParseItem(s)
		if err != nil {
			return
		}
		if it.Number <= 0 || it.Org == "" || it.Repo == "" {
			t.Fatalf("%q parsed as %+v", s, it)
		}
		again, err := ParseItem(it.String())
		if err != nil || again != it {
			t.Fatalf("%q: %+v does not round-trip (%v, %v)", s, it, again, err)
		}
	})
}
