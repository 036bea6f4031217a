package history_test

import (
	"database/sql"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"steward/history"
)

// row is what a timeline test checks of an entry.
type row struct {
	src     history.Source
	kind    history.Kind
	session string
	holder  string
	result  string
}

func rows(es []history.Entry) []row {
	var out []row
	for _, e := range es {
		out = append(out, row{e.Source, e.Kind, e.Session, e.Holder, e.Result})
	}
	return out
}

func gapKinds(gs []history.Gap) map[history.Source][]history.GapKind {
	m := map[history.Source][]history.GapKind{}
	for _, g := range gs {
		m[g.Source] = append(m[g.Source], g.Kind)
	}
	return m
}

// TestItemTimeline: the timeline of item #1, built through the governed core, merges the
// events, the lock generations and the audit attempts in time order, each naming its
// source; on the seed's DB the refused claim is known from the audit log only (the seed's
// events record no refusal), and the gaps say where each source begins.
func TestItemTimeline(t *testing.T) {
	const (
		E, L, A = history.SourceEvents, history.SourceLocks, history.SourceAudit
	)
	steward := []row{
		{E, history.KindClaim, "s1", "", ""}, {L, history.KindLock, "s1", "", ""}, {A, history.KindAttempt, "s1", "", "succeeded"},
		{E, history.KindRefused, "s2", "s1", ""}, {A, history.KindAttempt, "s2", "", "refused"},
		{E, history.KindHeartbeat, "s1", "", ""}, {A, history.KindAttempt, "s1", "", "succeeded"},
		{E, history.KindRelease, "s1", "", ""}, {L, history.KindLock, "s1", "", ""}, {A, history.KindAttempt, "s1", "", "succeeded"},
	}
	seed := slices.Clone(steward)
	seed = slices.Delete(seed, 3, 4) // no claim.refused event on the seed's schema
	for _, tc := range []struct {
		name string
		seed bool
		want []row
	}{{"steward DB", false, steward}, {"seed DB", true, seed}} {
		t.Run(tc.name, func(t *testing.T) {
			f := standard(t, tc.seed)
			ev := f.read(22*time.Minute, hitem(1))
			tl := ev.Timeline(history.Filter{Item: hitem(1)})
			if got := rows(tl.Entries); !slices.Equal(got, tc.want) {
				t.Fatalf("timeline\n got %v\nwant %v", got, tc.want)
			}
			for i := 1; i < len(tl.Entries); i++ {
				if tl.Entries[i].At.Before(tl.Entries[i-1].At) {
					t.Fatalf("entry %d is before entry %d", i, i-1)
				}
			}
			for _, e := range tl.Entries {
				if e.Ref == "" || !e.Item.Same(hitem(1)) {
					t.Fatalf("entry without provenance or of another item: %+v", e)
				}
			}
			if got := tl.Entries[len(tl.Entries)-1].At; !got.Equal(at(5 * time.Minute)) {
				t.Fatalf("the release is at %v, want +5m", got)
			}
			gk := gapKinds(tl.Gaps)
			if !slices.Contains(gk[history.SourceEvents], history.GapBegins) || !slices.Contains(gk[history.SourceAudit], history.GapBegins) ||
				!slices.Contains(gk[history.SourceLocks], history.GapLimit) || !slices.Contains(gk[history.SourceGitea], history.GapLimit) {
				t.Fatalf("gaps %v", tl.Gaps)
			}
		})
	}
}

// TestSessionTimeline: a worker's timeline is what it claimed, was refused, and how its
// lease ended; on the seed's DB, whose events record no session, the timeline says so.
func TestSessionTimeline(t *testing.T) {
	for _, tc := range []struct {
		name       string
		seed       bool
		kinds      []history.Kind
		sessionGap bool
	}{
		{"steward DB", false, []history.Kind{history.KindRefused, history.KindAttempt, history.KindClaim, history.KindLock, history.KindAttempt,
			history.KindReclaim, history.KindLock, history.KindAttempt}, false},
		// The seed's events record no refusal, and its reclaim event names neither the
		// session nor the lease: the refusal and the reclaim are known from the audit log.
		{"seed DB", true, []history.Kind{history.KindAttempt, history.KindClaim, history.KindLock, history.KindAttempt,
			history.KindLock, history.KindAttempt}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := standard(t, tc.seed)
			tl := f.read(22*time.Minute, history.Item{}).Timeline(history.Filter{Session: "s2"})
			var kinds []history.Kind
			for _, e := range tl.Entries {
				kinds = append(kinds, e.Kind)
			}
			if !slices.Equal(kinds, tc.kinds) {
				t.Fatalf("kinds %v, want %v\n%+v", kinds, tc.kinds, tl.Entries)
			}
			has := false
			for _, g := range tl.Gaps {
				has = has || (g.Kind == history.GapLimit && strings.Contains(g.Reason, "record no session"))
			}
			if has != tc.sessionGap {
				t.Fatalf("session gap shown %v, want %v: %v", has, tc.sessionGap, tl.Gaps)
			}
		})
	}
}

type claimWant struct {
	item    int64
	session string
	state   history.ClaimState
	expires time.Duration // 0: unknown
	lock    bool
}

func claimsOf(fl history.Fleet) []claimWant {
	var out []claimWant
	for _, c := range fl.Claims {
		var exp time.Duration
		if !c.Expires.IsZero() {
			exp = c.Expires.Sub(T0)
		}
		out = append(out, claimWant{c.Item.Number, c.Session, c.State, exp, c.LockFile != ""})
	}
	return out
}

// TestFleetAt reconstructs the fleet at chosen instants: claims live then (a claim since
// released shows at an instant before its release and not after), expiries in force then
// (the renewal's on steward's DB; unknown on the seed's, whose renewals record no expiry,
// unless even the latest expiry had passed), orphans past their expiry, and the refused
// claims of the window.
func TestFleetAt(t *testing.T) {
	H, P, U := history.ClaimHeld, history.ClaimPastExpiry, history.ClaimExpiryUnknown
	m := time.Minute
	cases := []struct {
		at    time.Duration
		want  []claimWant
		seedW []claimWant
	}{
		{30 * time.Second, []claimWant{{1, "s1", H, 10 * m, true}}, []claimWant{{1, "s1", U, 0, true}}},
		{4 * m, []claimWant{{1, "s1", H, 12 * m, true}, {2, "s2", H, 13 * m, true}, {3, "s4", H, 11 * m, true}},
			[]claimWant{{1, "s1", U, 0, true}, {2, "s2", U, 0, true}, {3, "s4", U, 0, true}}},
		{6 * m, []claimWant{{2, "s2", H, 13 * m, true}, {3, "s4", H, 11 * m, true}},
			[]claimWant{{2, "s2", U, 0, true}, {3, "s4", U, 0, true}}},
		{15 * m, []claimWant{{2, "s2", P, 13 * m, true}, {3, "s4", P, 11 * m, true}},
			[]claimWant{{2, "s2", P, 13 * m, true}, {3, "s4", P, 11 * m, true}}},
		{21*m + 30*time.Second, []claimWant{{2, "s3", H, 31 * m, true}, {3, "s4", P, 11 * m, true}},
			[]claimWant{{2, "s3", U, 0, true}, {3, "s4", P, 11 * m, true}}},
	}
	for _, seed := range []bool{false, true} {
		f := standard(t, seed)
		ev := f.read(22*m, history.Item{})
		for _, tc := range cases {
			fl := ev.At(at(tc.at), 5*m)
			want := tc.want
			if seed {
				want = tc.seedW
			}
			if got := claimsOf(fl); !slices.Equal(got, want) {
				t.Errorf("seed=%v at +%v:\n got %v\nwant %v", seed, tc.at, got, want)
			}
			if len(fl.Collisions) != 0 {
				t.Errorf("seed=%v at +%v: collisions %v", seed, tc.at, fl.Collisions)
			}
			if len(fl.Unknown) == 0 {
				t.Errorf("seed=%v at +%v: nothing said to be unknown, yet lock heartbeats are never recorded", seed, tc.at)
			}
		}
		fl := ev.At(at(2*m), 5*m)
		if len(fl.Contention) != 1 || fl.Contention[0].Item.Number != 1 || fl.Contention[0].Refusals != 1 ||
			!slices.Equal(fl.Contention[0].Sessions, []string{"s2"}) {
			t.Errorf("seed=%v contention at +2m: %+v", seed, fl.Contention)
		}
		// Only the steward DB's refusal event names the holder.
		if holders := fl.Contention[0].Holders; seed != (len(holders) == 0) {
			t.Errorf("seed=%v holders %v", seed, holders)
		}
		if fl := ev.At(at(10*m), 5*m); len(fl.Contention) != 0 {
			t.Errorf("seed=%v: the refusal at +1m is outside the window before +10m: %+v", seed, fl.Contention)
		}
	}
}

// TestSince: what changed after a mark, with the user's own actions apart from others'.
func TestSince(t *testing.T) {
	f := standard(t, false)
	ev := f.read(22*time.Minute, history.Item{})
	cats := func(r history.SinceReport) map[history.Category][]string {
		m := map[history.Category][]string{}
		for _, l := range r.Lines {
			m[l.Category] = append(m[l.Category], l.Item.String()+" "+l.Text)
		}
		return m
	}
	for _, tc := range []struct {
		name  string
		mark  time.Duration
		self  string
		check func(m map[history.Category][]string) string
	}{
		{"away from +4m, as maint", 4 * time.Minute, "maint", func(m map[history.Category][]string) string {
			switch {
			case len(m[history.CatNewOrphans]) != 1 || !strings.Contains(m[history.CatNewOrphans][0], "acme/widgets#3") || !strings.Contains(m[history.CatNewOrphans][0], "s4"):
				return "new orphans"
			case len(m[history.CatYours]) != 2 || len(m[history.CatRecoveries]) != 0:
				return "own recoveries"
			case len(m[history.CatClearedOrphans]) != 0 || len(m[history.CatSourcesLost]) != 0:
				return "cleared or lost"
			case len(m[history.CatRoutine]) != 1 || !strings.Contains(m[history.CatRoutine][0], "1 claim, 1 release, 1 reclaim"):
				return "routine"
			}
			return ""
		}},
		{"away from +4m, as someone else", 4 * time.Minute, "oncall", func(m map[history.Category][]string) string {
			if len(m[history.CatRecoveries]) != 2 || len(m[history.CatYours]) != 0 || !strings.Contains(m[history.CatRecoveries][0], "by maint") {
				return "recoveries by others"
			}
			return ""
		}},
		{"away from +15m", 15 * time.Minute, "maint", func(m map[history.Category][]string) string {
			switch {
			case len(m[history.CatNewOrphans]) != 0:
				return "new orphans"
			case len(m[history.CatClearedOrphans]) != 1 || !strings.Contains(m[history.CatClearedOrphans][0], "ended 2026-07-23 10:20:00Z (expired, reclaimed)"):
				return "cleared orphans"
			}
			return ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := cats(ev.Since(at(tc.mark), tc.self))
			if what := tc.check(m); what != "" {
				t.Fatalf("%s wrong: %v", what, m)
			}
		})
	}
}

// TestGapsAreShown: evidence lost is a gap at the instants it touches, never "nothing".
func TestGapsAreShown(t *testing.T) {
	t.Run("pruned events", func(t *testing.T) {
		f := standard(t, false)
		db, err := sql.Open("sqlite", f.ws.DBPath)
		if err != nil {
			t.Fatal(err)
		}
		// The supervised system pruning its oldest events (not a governed write: the test
		// plays the foreign writer).
		if _, err := db.Exec(`DELETE FROM events WHERE event_id <= 3`); err != nil {
			t.Fatal(err)
		}
		db.Close()
		ev := f.read(22*time.Minute, history.Item{})
		fl := ev.At(at(30*time.Second), 5*time.Minute)
		found := false
		for _, u := range fl.Unknown {
			found = found || strings.Contains(u, "were not retained (the first event kept is #4")
		}
		if !found {
			t.Fatalf("pruned events not said: %q", fl.Unknown)
		}
		if fl := ev.At(at(10*time.Minute), 5*time.Minute); slices.ContainsFunc(fl.Gaps, func(g history.Gap) bool { return g.Kind == history.GapNotRetained && g.Source == history.SourceEvents }) {
			t.Fatalf("the pruning gap touches only instants before the first kept event: %v", fl.Gaps)
		}
	})
	t.Run("torn audit line", func(t *testing.T) {
		f := standard(t, false)
		af, err := os.OpenFile(f.audit.Path(), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		af.WriteString(`{"v":1,"at":"2026-07-23T10:2`)
		af.Close()
		r := f.read(22*time.Minute, history.Item{}).Since(at(4*time.Minute), "maint")
		if !slices.ContainsFunc(r.Lines, func(l history.SinceLine) bool {
			return l.Category == history.CatSourcesLost && strings.Contains(l.Text, "audit") && strings.Contains(l.Text, "unreadable")
		}) {
			t.Fatalf("the torn line is not a lost source: %+v", r.Lines)
		}
	})
	t.Run("DB unreadable", func(t *testing.T) {
		f := standard(t, false)
		if err := os.Rename(f.ws.DBPath, f.ws.DBPath+".moved"); err != nil {
			t.Fatal(err)
		}
		ev := f.read(22*time.Minute, history.Item{})
		fl := ev.At(at(21*time.Minute+30*time.Second), 5*time.Minute)
		// Without the DB the live locks still tell who held what, marked lock-only.
		want := []claimWant{{2, "s3", history.ClaimLockOnly, 0, true}, {3, "s4", history.ClaimLockOnly, 0, true}}
		if got := claimsOf(fl); !slices.Equal(got, want) {
			t.Fatalf("claims %v, want %v", got, want)
		}
		gk := gapKinds(fl.Gaps)
		if !slices.Contains(gk[history.SourceEvents], history.GapUnread) || !slices.Contains(gk[history.SourceLeases], history.GapUnread) {
			t.Fatalf("gaps %v", fl.Gaps)
		}
		if tl := ev.Timeline(history.Filter{Item: hitem(2)}); !slices.ContainsFunc(tl.Gaps, func(g history.Gap) bool { return g.Lost() && g.Source == history.SourceEvents }) {
			t.Fatalf("timeline gaps %v", tl.Gaps)
		}
	})
}
