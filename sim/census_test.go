package sim

import (
	"context"
	"testing"
	"time"
)

// TestDemoStaysRepresentative: ten minutes of the demo at the default
// speed, on virtual time (a function of the seed), sampled every 10 s the way `steward
// status` reads the workspace. At every minute after the first: several live claims,
// refusals in the contention window, a clarification waiting whose answer the core would
// allow, and dead workers restarted; a real collision within 5 minutes; at least six orphan
// kinds seen within 5 minutes and at least three present in every sample after the second.
//
// Three seeds take about a minute each; under the race detector about four, so a -race run
// checks seed 1 and scripts/test runs all three without it.
func TestDemoStaysRepresentative(t *testing.T) {
	seeds := []uint64{1, 2, 3}
	if raceEnabled {
		seeds = seeds[:1]
		t.Log("under the race detector: seed 1 only (scripts/test runs seeds 1-3 without it)")
	}
	for _, seed := range seeds {
		d, err := NewDemo(context.Background(), DemoOptions{Parent: t.TempDir(), Seed: seed, Virtual: true, Census: true})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := d.Run(context.Background(), 10*time.Minute)
		d.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(sum.Minutes) < 10 {
			t.Fatalf("seed %d: %d minutes booked, want 10", seed, len(sum.Minutes))
		}
		collision, recoveries, answers := 0, 0, 0
		for _, m := range sum.Minutes[:10] {
			recoveries, answers = recoveries+m.Recoveries, answers+m.Answers
			t.Logf("seed %d minute %2d: live %d-%d, refused>=%d, pending %d answerable %v, restarts %d, kinds present>=%d seen %d %v, collisions %v",
				seed, m.Minute, m.LiveClaimsMin, m.LiveClaimsMax, m.RefusedMin, m.Pending, m.Answerable, m.Restarts, m.KindsPresentMin, m.KindsSeen, m.Kinds, m.Collisions)
			if m.Samples != 6 || m.Unread != 0 {
				t.Errorf("seed %d minute %d: %d samples, %d of them with a source unread; want 6 read", seed, m.Minute, m.Samples, m.Unread)
			}
			if m.Minute <= 5 && len(m.Collisions) > 0 && collision == 0 {
				collision = m.Minute
			}
			if m.Minute == 5 && m.KindsSeen < 6 {
				t.Errorf("seed %d: %d orphan kinds seen within 5 minutes, want 6", seed, m.KindsSeen)
			}
			if m.Minute > 2 && m.KindsPresentMin < 3 {
				t.Errorf("seed %d minute %d: a sample showed %d orphan kinds, want 3", seed, m.Minute, m.KindsPresentMin)
			}
			if m.Minute == 1 {
				continue
			}
			if m.LiveClaimsMin < 3 {
				t.Errorf("seed %d minute %d: a sample showed %d live claims, want several (3)", seed, m.Minute, m.LiveClaimsMin)
			}
			if m.RefusedMin < 1 {
				t.Errorf("seed %d minute %d: a sample showed no refusal in the window", seed, m.Minute)
			}
			if m.Pending < 1 || !m.Answerable {
				t.Errorf("seed %d minute %d: %d clarifications waiting, answerable %v", seed, m.Minute, m.Pending, m.Answerable)
			}
			if m.Restarts < 1 {
				t.Errorf("seed %d minute %d: no dead worker restarted", seed, m.Minute)
			}
		}
		if collision == 0 {
			t.Errorf("seed %d: no real collision within 5 minutes", seed)
		}
		// The staff are part of what keeps it representative: they must have acted.
		if recoveries == 0 || answers == 0 || sum.Counts[eventLegacyClaim] == 0 {
			t.Errorf("seed %d: %d recoveries by the on-call operator, %d answers by the maintainer, %d legacy claims; want each", seed, recoveries, answers, sum.Counts[eventLegacyClaim])
		}
		t.Logf("seed %d: first collision in minute %d; %d recoveries, %d answers, %d legacy claims, %d events", seed, collision, recoveries, answers, sum.Counts[eventLegacyClaim], len(sum.Events))
	}
}
