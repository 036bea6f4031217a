package sim

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"steward/leases/leaserec"
	"steward/model"
	"steward/model/live"
)

// areas is what a supervisor would see at one moment: the model's snapshot of the demo
// workspace, built by live.Load, live.LoadGitea and model.Build — the same code that
// `steward status --json` prints.
type areas struct {
	liveClaims    int
	refused       int
	clarified     int
	orphanKinds   map[string]bool
	questionsSeen []string
}

func (a areas) all() bool {
	return a.liveClaims > 0 && a.refused > 0 && a.clarified > 0 && len(a.orphanKinds) >= 3
}

func observe(ctx context.Context, t *testing.T, d *Demo, now time.Time) areas {
	t.Helper()
	ws := live.Workspace{LocksDir: d.Workspace.LocksDir, DBPath: d.Workspace.DBPath, RepoRoot: d.Workspace.RepoRoot}
	cfg := model.Config{Policies: leaserec.LoadPolicies(d.Workspace.Env), Org: d.Owner, Repo: d.Repo}
	in := live.Load(ctx, ws, live.NewProbe(ws.RepoRoot), now)
	var claimed []model.Item
	for _, c := range model.Build(in, cfg, now).Claims {
		if c.Item != nil {
			claimed = append(claimed, *c.Item)
		}
	}
	in.Gitea, in.Clarifications, in.GiteaHealth = live.LoadGitea(ctx, d.Client, cfg, claimed, now)
	s := model.Build(in, cfg, now)
	if !s.Sources.Locks.Usable() || !s.Sources.DB.Usable() || !s.Sources.Gitea.Usable() {
		t.Fatalf("a source is not usable: %+v", s.Sources)
	}
	a := areas{orphanKinds: map[string]bool{}}
	for _, c := range s.Claims {
		if c.Freshness == "active" && c.OwnerLiveness == model.LivenessAlive {
			a.liveClaims++
		}
	}
	for _, c := range s.Contention {
		if c.Kind == model.ContentionClaimRefused {
			a.refused += c.Count
		}
	}
	for _, c := range s.Clarifications {
		if c.Question != "" {
			a.clarified++
			a.questionsSeen = append(a.questionsSeen, c.Question)
		}
	}
	for _, o := range s.Orphans {
		a.orphanKinds[string(o.Kind)] = true
	}
	return a
}

// TestDemoShowsEveryArea runs the demo at 6x the default speed for 15 s of its own time — 90
// s of default-speed activity — and checks, from the sources themselves, that every area of
// the workbench showed up: live claims within 6 minutes of supervised time (3 s of this
// run, 18 s of the default demo), a claim-refused contention, a clarification with its
// question, and at least three orphan kinds. Every instant is the fleet's own (the event's
// supervised time, the core's clock), never the test's wall clock: a loaded machine slows
// the run down (the scheduler slips) but changes no bound.
func TestDemoShowsEveryArea(t *testing.T) {
	const factor = 6
	ctx := context.Background()
	var (
		mu       sync.Mutex
		first    = map[string]time.Duration{}
		last     time.Time
		d        *Demo
		sampling bool
	)
	note := func(area string, at time.Duration) {
		if _, ok := first[area]; !ok {
			first[area] = at
		}
	}
	onEvent := func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		if !sampling || e.Wall.Sub(last) < 200*time.Millisecond {
			return
		}
		last = e.Wall
		a := observe(ctx, t, d, e.Wall)
		at := e.At
		if a.liveClaims > 0 {
			note("live claims", at)
		}
		if a.refused > 0 {
			note("claim-refused", at)
		}
		if a.clarified > 0 {
			note("clarification", at)
		}
		for k := range a.orphanKinds {
			note("orphan "+k, at)
		}
		if len(a.orphanKinds) >= 3 {
			note("three orphan kinds", at)
		}
		if a.all() {
			note("every area", at)
		}
	}
	var err error
	d, err = NewDemo(ctx, DemoOptions{Parent: t.TempDir(), Seed: 1, Speed: DefaultSpeed * factor, OnEvent: onEvent})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	mu.Lock()
	sampling = true
	mu.Unlock()
	sum, err := d.Run(ctx, 90*time.Second/factor)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("events: %v", sum.Counts)
	speed := DefaultSpeed * factor
	for k, v := range first {
		t.Logf("%-40s first seen after %8v supervised (%5.2fs of this run, %5.1fs at default speed)", k, v.Round(time.Second), v.Seconds()/speed, v.Seconds()/DefaultSpeed)
	}
	if at, ok := first["live claims"]; !ok || at > 6*time.Minute {
		t.Errorf("live claims first seen after %v of supervised time (seen: %v); want within 6 minutes", at, ok)
	}
	if _, ok := first["every area"]; !ok {
		t.Errorf("not every area showed up within 90 s of default-speed activity: %v", first)
	}
}

// TestSameSeedSameDecisions runs two fleets with one seed on virtual time and compares
// their decisions; a third run with another seed must decide differently.
func TestSameSeedSameDecisions(t *testing.T) {
	run := func(seed uint64) []string {
		d, err := NewDemo(context.Background(), DemoOptions{Parent: t.TempDir(), Seed: seed, Virtual: true})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		sum, err := d.Run(context.Background(), 60*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range sum.Events {
			out = append(out, fmt.Sprintf("%v %s %s #%d", e.At, e.Worker, e.Kind, e.Item))
		}
		if sum.Counts[eventClaim] == 0 {
			t.Fatalf("seed %d: no claims at all", seed)
		}
		return out
	}
	a, b, c := run(42), run(42), run(43)
	if !slices.Equal(a, b) {
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				t.Fatalf("same seed diverged at event %d: %q vs %q (of %d/%d)", i, a[i], b[i], len(a), len(b))
			}
		}
		t.Fatalf("same seed, %d vs %d events", len(a), len(b))
	}
	if slices.Equal(a, c) {
		t.Fatal("seeds 42 and 43 made the same decisions")
	}
	t.Logf("%d events, identical for the same seed", len(a))
}
