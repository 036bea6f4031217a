package model

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"steward/leases/leaserec"
	"steward/locks/lockrec"
)

// TestEngineLooksUpTheLeasesReadableLocksName: a readable lock naming a lease no row
// holds asks for it to be looked up; a lock naming none, or one that could not be read,
// asks for nothing.
func TestEngineLooksUpTheLeasesReadableLocksName(t *testing.T) {
	unreadable := lock("a.json", 7, "s1", "L1", time.Hour, LivenessAlive)
	unreadable.Entry.Unreadable = &lockrec.Unreadable{}
	for _, tc := range []struct {
		name string
		lo   LockObs
		want []string
	}{
		{"readable, naming L1", lock("a.json", 7, "s1", "L1", time.Hour, LivenessAlive), []string{"L1"}},
		{"naming no lease", lock("a.json", 7, "s1", "", time.Hour, LivenessAlive), nil},
		{"unreadable", unreadable, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEngine(Config{})
			e.SetLock(tc.lo.Entry.Name, &tc.lo)
			if got := e.PendingRefs(); !slices.Equal(got, tc.want) {
				t.Fatalf("pending %q, want %q", got, tc.want)
			}
		})
	}
}

// TestEngineActivityNewOnlyWithEvents: ActivityNew reports events added since the last
// Publish, and none when a read brought none.
func TestEngineActivityNewOnlyWithEvents(t *testing.T) {
	e := NewEngine(Config{})
	e.AddEvents(nil)
	if e.ActivityNew() {
		t.Fatal("no event added, yet activity is new")
	}
	e.AddEvents([]leaserec.Event{refused(1, 7, "s2", "s1", time.Minute)})
	if !e.ActivityNew() {
		t.Fatal("an event added, yet activity is not new")
	}
	if e.Publish(now); e.ActivityNew() {
		t.Fatal("still new after Publish")
	}
}

// TestRefusedClaimNamesTheRequestingSession: a refused claim names the session its detail
// says requested the claim, and the event's own session when the detail names none.
func TestRefusedClaimNamesTheRequestingSession(t *testing.T) {
	for _, tc := range []struct {
		name   string
		detail map[string]any
		want   []string
	}{
		{"named in the detail", map[string]any{"requesting_session_id": "s2", "holding_session_id": "s1"},
			[]string{"s1", "s2"}},
		{"not named in the detail", map[string]any{"holding_session_id": "s1"}, []string{"s1", "s9"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := baseInput()
			in.WorkItems = []leaserec.WorkItem{workItem(7)}
			ev := refused(1, 7, "", "", time.Minute)
			ev.SessionID, ev.Detail = "s9", tc.detail
			in.Events = []leaserec.Event{ev}
			cs := contentionOf(Build(in, Config{}, now), ContentionClaimRefused)
			if len(cs) != 1 || !slices.Equal(cs[0].Sessions, tc.want) {
				t.Fatalf("refused claims %+v, want sessions %q", cs, tc.want)
			}
		})
	}
}

// TestEngineFlushCountsWhatItDerives: Flush returns how many units and sessions it derived:
// none when nothing changed, none for a source whose health changed but not its status
// or partialness, every unit when its status changed.
func TestEngineFlushCountsWhatItDerives(t *testing.T) {
	e := NewEngine(Config{})
	e.SetHealth(SourceLocks, okH())
	for i, n := range []int64{7, 8} {
		lo := lock(string(rune('a'+i))+".json", n, "s1", "", time.Hour, LivenessAlive)
		e.SetLock(lo.Entry.Name, &lo)
	}
	e.SetSession("s1", &[]SessionObs{sess("s1", "active")}[0])
	for _, step := range []struct {
		name   string
		change func()
		want   int
	}{
		{"two locks and a session", func() {}, 3},
		{"nothing changed", func() {}, 0},
		{"the reason alone changed", func() {
			h := okH()
			h.Reason = "rescanned"
			e.SetHealth(SourceLocks, h)
		}, 0},
		{"partial", func() {
			h := okH()
			h.Partial = true
			e.SetHealth(SourceLocks, h)
		}, 2},
		{"unavailable", func() { e.SetHealth(SourceLocks, SourceHealth{Status: StatusUnavailable, Partial: true}) }, 2},
	} {
		step.change()
		if got := e.Flush(now); got != step.want {
			t.Fatalf("%s: Flush derived %d, want %d", step.name, got, step.want)
		}
	}
}

// TestPRReDerivedWhenALockNamesItsHeadBranch: an open PR quiet for long is stale while no
// claim names it or its head branch; a lock on another item naming its head branch
// appearing, and going, re-derives it.
func TestPRReDerivedWhenALockNamesItsHeadBranch(t *testing.T) {
	e := NewEngine(Config{Org: "acme", Repo: "widgets", Remote: "origin"})
	in := baseInput()
	in.Gitea = []GiteaFact{{Item: prItem(5), Found: true, State: "open", Title: "a PR",
		UpdatedAt: now.Add(-100 * time.Hour), HeadBranch: "feat/x"}}
	e.load(in)
	lo := lock("a.json", 1, "s1", "", time.Hour, LivenessAlive) // branch feat/x
	for _, step := range []struct {
		name  string
		lock  *LockObs
		stale int
	}{
		{"no claim", nil, 1},
		{"a lock names the head branch", &lo, 0},
		{"the lock gone", nil, 1},
	} {
		e.SetLock("a.json", step.lock)
		e.Flush(now)
		if got := len(orphansOf(e.Publish(now), OrphanStalePRNoClaim)); got != step.stale {
			t.Fatalf("%s: %d stale-PR orphans, want %d", step.name, got, step.stale)
		}
	}
}

// TestItemUnderOtherRemoteReDerivedWithItsAlias: Gitea's item under the configured remote
// is re-derived when a lease on the same number under another remote comes or goes (it
// is not free while that one is claimed), and a unit gone is no longer derived with it.
func TestItemUnderOtherRemoteReDerivedWithItsAlias(t *testing.T) {
	e := NewEngine(Config{Org: "acme", Repo: "widgets", Remote: "prgs"})
	in := baseInput()
	in.Sessions = []SessionObs{sess("s1", "active")}
	in.Gitea = []GiteaFact{openFact(2, "open")}
	e.load(in)
	e.Flush(now)
	origin := lease("L2", 2, "s1", leaserec.StatusActive, time.Hour, LivenessAlive)
	bucket := func() (Bucket, string) {
		for _, r := range rowsOf(e.Publish(now), 2) {
			if r.Item.Remote == "prgs" {
				return r.Bucket, strings.Join(r.Reasons, " ")
			}
		}
		return "", ""
	}
	if b, _ := bucket(); b != BucketRunnable {
		t.Fatalf("before: prgs #2 %s", b)
	}
	e.SetLease("L2", &origin)
	e.Flush(now)
	if b, why := bucket(); b != BucketUnknown || !strings.Contains(why, "another remote name (origin)") {
		t.Fatalf("with origin's #2 leased: prgs #2 %s (%s)", b, why)
	}
	e.SetLease("L2", nil)
	e.Flush(now)
	if b, _ := bucket(); b != BucketRunnable {
		t.Fatalf("after: prgs #2 %s", b)
	}
	// Gitea read again: its item alone is derived, not the unit of origin's #2, gone.
	e.SetGitea(in.Gitea, nil, okH())
	if n := e.Flush(now); n != 1 {
		t.Fatalf("re-reading Gitea derived %d units, want 1", n)
	}
}

// TestEngineActivityHeldUpToTwiceTheLimit: the engine holds up to twice ActivityLimit
// events and, past that, the newest ActivityLimit; a snapshot lists the newest
// ActivityLimit, newest first.
func TestEngineActivityHeldUpToTwiceTheLimit(t *testing.T) {
	e := NewEngine(Config{ActivityLimit: 2})
	ev := func(id int64) []leaserec.Event {
		return []leaserec.Event{{EventID: id, EventType: "lease.heartbeat", CreatedAt: leaserec.ParseTimestamp(ts(0))}}
	}
	for id, want := range []int{1, 2, 3, 4, 2, 3, 4, 2} {
		e.AddEvents(ev(int64(id + 1)))
		if got := e.Stats().Activity; got != want {
			t.Fatalf("after event %d: %d held, want %d", id+1, got, want)
		}
		var keys []string
		for _, a := range e.Publish(now).Activity {
			keys = append(keys, a.Key)
		}
		if newest := fmt.Sprintf("cp:%d", id+1); len(keys) != min(id+1, 2) || keys[0] != newest {
			t.Fatalf("after event %d: activity %q", id+1, keys)
		}
	}
}
