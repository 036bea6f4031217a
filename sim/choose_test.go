package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"steward/alloc"
	"steward/leases/leaserec"
)

var rules = Rules{Markers: []string{"status:blocked-pending-clarification"}, Blocked: "status:blocked"}

func TestChoosePrefersPriorityAndUnblocking(t *testing.T) {
	cs := []candidate{
		{Number: 1, Open: true, Labels: []string{"priority:low"}},
		{Number: 2, Open: true, Labels: []string{"priority:high"}},
		{Number: 3, Open: true, Labels: []string{"priority:critical"}, Claimed: true, HeldBy: "other"},
		{Number: 4, Open: true, Labels: []string{"priority:medium"}, Body: "depends on #2"},
		{Number: 5, Open: true, Labels: []string{"priority:high", "status:blocked-pending-clarification"}},
	}
	for seed := range uint64(50) {
		got, ok := choose(cs, rules, rand.New(rand.NewPCG(seed, 1)))
		if !ok || got.Number != 2 {
			t.Fatalf("seed %d: chose #%d (ok %v), want #2 (high priority, unblocks #4)", seed, got.Number, ok)
		}
	}
	hot, ok := Hot(cs, "me")
	if !ok || hot.Number != 3 {
		t.Fatalf("Hot = #%d %v, want #3 held by another session", hot.Number, ok)
	}
	if _, ok := Hot(cs, "other"); ok {
		t.Fatal("Hot offered a session its own item")
	}
	if _, ok := choose([]candidate{{Number: 1, Open: true, Claimed: true}}, rules, rand.New(rand.NewPCG(1, 1))); ok {
		t.Fatal("Choose offered a claimed item")
	}
}

func TestPolicyEnvCompressesEveryClass(t *testing.T) {
	env := PolicyEnv(20)
	set := leaserec.LoadPolicies(Lookup(env, nil))
	for _, o := range set.Overrides {
		if !o.Applied {
			t.Errorf("override %s=%s ignored: %s", o.Var, o.Value, o.Reason)
		}
	}
	for _, c := range leaserec.KnownTaskClasses() {
		p, d := set.For(c), leaserec.DefaultPolicy(c)
		if got, want := p.InitialTTL(), d.InitialTTL()/20; got != want {
			t.Errorf("%s: TTL %v, want %v", c, got, want)
		}
		if got, want := p.HeartbeatCadence(), d.HeartbeatCadence()/20; got != want {
			t.Errorf("%s: cadence %v, want %v", c, got, want)
		}
	}
	if len(PolicyEnv(1)) != 0 {
		t.Error("speed 1 should override nothing")
	}
	if v, ok := Lookup(env, func(string) (string, bool) { return "x", true })("OTHER"); !ok || v != "x" {
		t.Error("Lookup does not fall through to next")
	}
}

func TestSchedulerRunsInTimeThenSequenceOrder(t *testing.T) {
	s := newScheduler(time.Unix(0, 0), 10, true)
	var got []string
	add := func(at time.Duration, name string) { s.at(at, func() { got = append(got, name) }) }
	add(3*time.Second, "c")
	add(time.Second, "a")
	add(time.Second, "b")
	s.at(2*time.Second, func() {
		got = append(got, "x")
		if w := s.clock(); !w.Equal(time.Unix(0, 0).Add(200 * time.Millisecond)) {
			t.Errorf("clock at 2s virtual, speed 10 = %v", w)
		}
		s.after(0, func() { got = append(got, "x+0") })
	})
	add(time.Hour, "late")
	if err := s.run(t.Context(), time.Minute); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "x", "x+0", "c"}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	if s.now() != time.Minute {
		t.Fatalf("now after run = %v, want the limit", s.now())
	}
}

func TestBacklogIsSeededAndDependsBackwards(t *testing.T) {
	a, b := Backlog(7, 30), Backlog(7, 30)
	if !slices.EqualFunc(a, b, func(x, y SeedIssue) bool { return x.Title == y.Title && x.Body == y.Body }) {
		t.Fatal("same seed, different backlog")
	}
	deps, blocked := 0, 0
	for i, s := range a {
		for _, d := range alloc.Dependencies(s.Body) {
			deps++
			if d >= int64(i+1) {
				t.Errorf("issue %d depends on #%d, not an earlier one", i+1, d)
			}
		}
		if slices.Contains(s.Labels, rules.Blocked) {
			blocked++
		}
	}
	if deps == 0 || blocked != 1 {
		t.Fatalf("backlog has %d dependencies and %d blocked issues; want some and one", deps, blocked)
	}
}

// TestPacedSchedulerNeverRunsBehind: an event that runs past the next one's due time makes
// the fleet late; the next event's clock — the governed core's — is still the wall clock,
// not the past instant it was due at, and the lateness is kept as slip. Causal: the first
// event returns only once the wall clock has passed the second's due time.
func TestPacedSchedulerNeverRunsBehind(t *testing.T) {
	s := newScheduler(time.Now(), 1000, false)
	var released time.Time
	s.at(time.Second, func() {
		due := s.wallOf(2 * time.Second)
		<-time.After(time.Until(due) + 20*time.Millisecond) // make this event overrun the next
		released = time.Now()
	})
	var at2 time.Time
	s.at(2*time.Second, func() { at2 = s.clock() })
	if err := s.run(t.Context(), time.Minute); err != nil {
		t.Fatal(err)
	}
	if at2.Before(released) {
		t.Fatalf("the late event's clock %v is %v behind the wall clock it ran at", at2.Format(time.StampMicro), released.Sub(at2))
	}
	if s.slipped() < 20*time.Millisecond {
		t.Fatalf("slip %v, want at least the 20ms overrun", s.slipped())
	}
}
