package model

import (
	"slices"
	"testing"
	"time"

	"steward/leases/leaserec"
)

// TestSessionWithAnEmptyIDIsListed: a sessions row whose session_id is empty is listed by
// Build, the live engine and the streamed read alike, and its heartbeat going stale is
// derived again like any other session's (it was dropped by Build and the engine: its
// dirty key was too short to read as a session's).
func TestSessionWithAnEmptyIDIsListed(t *testing.T) {
	in := baseInput()
	in.Sessions = []SessionObs{sess("", "active"), sess("s1", "active")}
	ids := func(ss []*Session) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.SessionID)
		}
		return out
	}
	want := []string{"", "s1"}
	if got := ids(Build(in, Config{}, now).Sessions); !slices.Equal(got, want) {
		t.Errorf("Build lists sessions %q, want %q", got, want)
	}
	var streamed []*Session
	for s := range NewStream(in, NewLeaseStore(), Config{}, now).Sessions {
		streamed = append(streamed, s)
	}
	if got := ids(streamed); !slices.Equal(got, want) {
		t.Errorf("Stream lists sessions %q, want %q", got, want)
	}

	e := NewEngine(Config{})
	e.load(in)
	e.Flush(now)
	before := e.Publish(now).Sessions
	if len(before) != 2 || !before[0].Live || !before[1].Live {
		t.Fatalf("before the heartbeat goes stale: %+v; want two live sessions", before)
	}
	later := now.Add(leaserec.SessionHeartbeatStale)
	if next := e.Next(); next.IsZero() || next.After(later) {
		t.Fatalf("next deadline %v, want the heartbeats' staleness at %v", next, later)
	}
	e.Tick(later)
	after := e.Publish(later).Sessions
	if got := ids(after); !slices.Equal(got, want) {
		t.Fatalf("after the tick: sessions %q, want %q", got, want)
	}
	for _, s := range after {
		if s.Live {
			t.Errorf("session %q still live after its heartbeat went stale at %v", s.SessionID, later)
		}
	}
}

// TestItemOfARemoteNamedSIsDerived: an item under a remote named "s" is a unit like any
// other; its key is never read as a session's (it was, and the item's claim was never
// derived).
func TestItemOfARemoteNamedSIsDerived(t *testing.T) {
	for _, remote := range []string{"s", "origin"} {
		in := baseInput()
		in.Sessions = []SessionObs{sess("s1", "active")}
		lo := lock("a.json", 7, "s1", "", time.Hour, LivenessAlive)
		lo.Entry.Record.Remote = remote
		k, _ := lo.Entry.Record.Key()
		lo.Entry.Key = k
		in.Locks = []LockObs{lo}
		s := Build(in, Config{}, now)
		if len(s.Claims) != 1 || s.Claims[0].Item == nil || s.Claims[0].Item.Remote != remote {
			t.Errorf("remote %q: claims %+v; want the lock's claim on %s/acme/widgets#7", remote, s.Claims, remote)
		}
	}
}
