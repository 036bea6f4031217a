package alloc

import (
	"slices"
	"strings"
	"testing"
)

var rules = Rules{Markers: []string{"status:blocked-pending-clarification"}, Blocked: "status:blocked"}

// TestContainer holds the seed's container cases (#844/#854): a container label or a
// child-only body marker excludes; a title prefix alone, a "tracker" label or an incidental
// word does not.
func TestContainer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		c      Candidate
		want   bool
		detail string
	}{
		{"type:epic label", Candidate{Title: "Web console", Labels: []string{"type:epic"}}, true, "label=type:epic"},
		{"bare roadmap label, upper case", Candidate{Labels: []string{"Roadmap"}}, true, "label=roadmap"},
		{"body marker without epic in the title", Candidate{Title: "Console", Body: "Implementation is delivered via child issues only."}, true,
			`body_marker="implementation is delivered via child issues only"`},
		{"title corroborates", Candidate{Title: "Epic: console", Labels: []string{"type:epic"}}, true, "title_epic_prefix; label=type:epic"},
		{"title prefix alone", Candidate{Title: "Epic: fake", Body: "Fix the button."}, false, ""},
		{"incidental word", Candidate{Title: "Update the roadmap link", Body: "mentions an epic"}, false, ""},
		{"tracker label", Candidate{Labels: []string{"tracker"}}, false, ""},
	} {
		got, detail := container(tc.c)
		if got != tc.want || detail != tc.detail {
			t.Errorf("%s: Container = %v %q, want %v %q", tc.name, got, detail, tc.want, tc.detail)
		}
	}
}

func TestDependencies(t *testing.T) {
	for _, tc := range []struct {
		body string
		want []int64
	}{
		{"", nil},
		{"Depends on #3.", []int64{3}},
		{"depends on #3 and depends  on #12; DEPENDS ON #3", []int64{3, 12}},
		{"depends on #0, depends on issue 4", nil},
	} {
		if got := Dependencies(tc.body); !slices.Equal(got, tc.want) {
			t.Errorf("Dependencies(%q) = %v, want %v", tc.body, got, tc.want)
		}
	}
}

func TestEligible(t *testing.T) {
	open := map[int64]bool{1: true, 2: false}
	for _, tc := range []struct {
		name string
		c    Candidate
		ok   bool
		why  string
	}{
		{"plain", Candidate{Number: 5, Open: true}, true, ""},
		{"closed", Candidate{Number: 5}, false, "closed"},
		{"claimed", Candidate{Number: 5, Open: true, Claimed: true}, false, "claimed"},
		{"blocked", Candidate{Number: 5, Open: true, Labels: []string{"status:blocked"}}, false, "blocked"},
		{"marked", Candidate{Number: 5, Open: true, Labels: []string{"status:blocked-pending-clarification"}}, false, "awaiting clarification"},
		{"open dependency", Candidate{Number: 5, Open: true, Body: "depends on #1"}, false, "depends on open #1"},
		{"done dependency", Candidate{Number: 5, Open: true, Body: "depends on #2"}, true, ""},
		{"unknown dependency", Candidate{Number: 5, Open: true, Body: "depends on #9"}, false, "depends on open #9"},
	} {
		ok, why := Eligible(tc.c, rules, open)
		if ok != tc.ok || why != tc.why {
			t.Errorf("%s: Eligible = %v %q, want %v %q", tc.name, ok, why, tc.ok, tc.why)
		}
	}
}

// TestOrder: priority first, then what an item unblocks, then the oldest; every other
// candidate is skipped with its code, the caller's exclusions first.
func TestOrder(t *testing.T) {
	cs := []Candidate{
		{Number: 1, Open: true, Labels: []string{"priority:low"}},
		{Number: 2, Open: true, Labels: []string{"priority:high"}},
		{Number: 3, Open: true, Labels: []string{"priority:critical"}, Claimed: true, HeldBy: "other"},
		{Number: 4, Open: true, Labels: []string{"priority:medium"}, Body: "depends on #2"},
		{Number: 5, Open: true, Labels: []string{"priority:high", "status:blocked-pending-clarification"}},
		{Number: 6, Open: true, Labels: []string{"priority:high"}, Body: "depends on #8"},
		{Number: 7, Open: true, Labels: []string{"priority:high"}},
		{Number: 8, Open: true, Labels: []string{"priority:low"}},
		{Number: 9, Open: false, Labels: []string{"priority:critical"}},
		{Number: 10, Open: true, Labels: []string{"priority:critical", "status:blocked"}},
		{Number: 11, Open: true, Labels: []string{"priority:critical", "type:epic"}},
		{Number: 12, Open: true},
		{Number: 13, Open: true, Labels: []string{"priority:critical"}},
	}
	ranked, skipped := Order(cs, rules, []int64{13})
	var got []int64
	for _, c := range ranked {
		got = append(got, c.Number)
	}
	// #2 and #7 are both high; #2 unblocks #4. #8 (low) unblocks #6 and beats #1 (low).
	if want := []int64{2, 7, 12, 8, 1}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	codes := map[int64]string{}
	for _, s := range skipped {
		codes[s.Number] = s.Code
		if s.Reason == "" {
			t.Errorf("skip of #%d has no reason", s.Number)
		}
	}
	want := map[int64]string{3: SkipClaimed, 4: SkipDependencyUnmet, 5: SkipAwaitingMaintainer, 6: SkipDependencyUnmet,
		9: SkipClosed, 10: SkipBlocked, 11: SkipContainer, 13: skipExcluded}
	if len(codes) != len(want) {
		t.Fatalf("skipped %v, want %v", codes, want)
	}
	for n, c := range want {
		if codes[n] != c {
			t.Errorf("#%d skipped %q, want %q", n, codes[n], c)
		}
	}
	for _, s := range skipped {
		if s.Number == 3 && !strings.Contains(s.Reason, "other") {
			t.Errorf("the claimed skip does not name the holder: %q", s.Reason)
		}
	}
	again, _ := Order(cs, rules, []int64{13})
	if !slices.EqualFunc(ranked, again, func(a, b Candidate) bool { return a.Number == b.Number }) {
		t.Fatal("the order is not a function of its inputs")
	}
}
