package sim

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"steward/gitea"
	"steward/leases"
	"steward/locks"
)

// areas is what a supervisor would see at one moment, read back from the sources through
// their read APIs. TODO(model): assert on `steward status --json` (model.Snapshot's claims,
// contention, clarifications and orphan kinds) once the status command lands; until then
// this reads the sources directly and classifies the orphan kinds the sim produces.
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

func observe(ctx context.Context, t *testing.T, d *Demo, r *leases.Reader, now time.Time) areas {
	t.Helper()
	a := areas{orphanKinds: map[string]bool{}}
	host, _ := os.Hostname()
	snap, err := r.Snapshot(ctx, leases.ReadOptions{RecentTerminal: -1})
	if err != nil {
		t.Fatalf("read DB: %v", err)
	}
	for _, l := range snap.Leases {
		if l.Status != leases.StatusActive {
			continue
		}
		dead := leases.Liveness(int(l.OwnerPID), l.OwnerHost) == leases.ProcessDead
		if l.ExpiresAt.OK() && !l.ExpiresAt.Time.After(now) {
			a.orphanKinds["active-lease-past-expiry"] = true
		}
		if dead {
			a.orphanKinds["stale-lease-dead-owner"] = true
		}
		if _, err := os.Stat(l.WorktreePath); os.IsNotExist(err) && l.WorktreePath != "" {
			a.orphanKinds["stale-lease-missing-worktree"] = true
		}
	}
	evs, _, err := r.EventsSince(ctx, 0, 100000)
	if err != nil {
		t.Fatalf("read events: %v", err)
	}
	for _, e := range evs {
		if e.EventType == "claim.refused" {
			a.refused++
		}
	}
	ls, err := locks.LoadDir(d.Workspace.LocksDir, locks.LoadOptions{})
	if err != nil {
		t.Fatalf("read locks: %v", err)
	}
	for _, e := range ls.Live {
		if e.Unreadable != nil || e.Record.WorkLease == nil {
			continue
		}
		rec := e.Record
		exp := locks.ExpirationOf(&rec, now).Expired
		if exp == nil {
			continue
		}
		expired := *exp
		var pid int64
		if rec.PID != nil {
			pid = *rec.PID
		}
		live := leases.Liveness(int(pid), host)
		switch {
		case !expired && live == leases.ProcessAlive:
			a.liveClaims++
		case !expired && live == leases.ProcessDead:
			a.orphanKinds["live-lock-dead-owner"] = true
		case expired && live == leases.ProcessDead:
			a.orphanKinds["stale-lock-dead-owner"] = true
		case expired && live == leases.ProcessAlive:
			a.orphanKinds["expired-lock-live-owner"] = true
		}
		if _, err := os.Stat(rec.WorktreePath); os.IsNotExist(err) {
			a.orphanKinds["lock-without-worktree"] = true
		}
	}
	cls, h := d.Client.Clarifications(ctx, gitea.ClarificationOptions{})
	if !h.OK() {
		t.Fatalf("read clarifications: %s", h.Reason)
	}
	for _, c := range cls {
		if c.Question != "" && len(c.AskedBy) > 0 {
			a.clarified++
			a.questionsSeen = append(a.questionsSeen, c.Question)
		}
	}
	return a
}

// TestDemoShowsEveryArea runs the demo at 6x the default speed for 15 s of wall time — 90 s
// of default-speed activity — and checks, from the sources themselves, that every area of
// the workbench showed up: live claims (within 3 s of the start), a claim-refused
// contention, a clarification with its question, and at least three orphan kinds.
func TestDemoShowsEveryArea(t *testing.T) {
	const factor = 6
	began := time.Now()
	ctx := context.Background()
	var (
		mu       sync.Mutex
		first    = map[string]time.Duration{}
		last     time.Time
		reader   *leases.Reader
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
		a := observe(ctx, t, d, reader, e.Wall)
		at := time.Since(began)
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
	reader, err = leases.OpenReadOnly(d.Workspace.DBPath)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
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
	for k, v := range first {
		t.Logf("%-40s first seen after %6.2fs wall (%5.1fs at default speed)", k, v.Seconds(), v.Seconds()*factor)
	}
	if at, ok := first["live claims"]; !ok || at > 3*time.Second {
		t.Errorf("live claims first seen after %v (seen: %v); want within 3s of the start", at, ok)
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
		if sum.Counts[EventClaim] == 0 {
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
