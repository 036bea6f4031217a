package sim

import (
	"context"
	"os"
	"testing"
	"time"

	"steward/gitea"
	"steward/gitea/giteatest"
)

func TestMain(m *testing.M) { os.Exit(giteatest.Main(m)) }

// TestDemoAgainstRealGitea seeds a fresh repository on a real Gitea and runs the fleet on
// it: claims land, and a worker's question is on the item with the marker label.
func TestDemoAgainstRealGitea(t *testing.T) {
	srv := giteatest.Shared(t)
	ctx := context.Background()
	d, err := NewDemo(ctx, DemoOptions{Parent: t.TempDir(), Seed: 1, Speed: DefaultSpeed * 6,
		GiteaURL: srv.URL, GiteaToken: srv.AdminToken})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if len(d.Backlog) != 30 || d.Addr() != "" {
		t.Fatalf("backlog %d issues, listener %q; want 30 on the real server and no listener", len(d.Backlog), d.Addr())
	}
	sum, err := d.Run(ctx, 4*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Counts[eventClaim] == 0 || sum.Counts[EventQuestion] == 0 || sum.Counts[eventPR] != 0 {
		t.Fatalf("counts %v: want claims and questions, and no PRs (none can be opened on a real server)", sum.Counts)
	}
	cls, h := d.Client.Clarifications(ctx, gitea.ClarificationOptions{})
	if !h.OK() || len(cls) == 0 {
		t.Fatalf("clarifications on the real server: %d (%s)", len(cls), h.Reason)
	}
	t.Logf("%v; %d clarifications on %s/%s", sum.Counts, len(cls), d.Owner, d.Repo)
}
