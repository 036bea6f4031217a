package sim

import (
	"context"
	"fmt"
	"math/rand/v2"

	"steward/gitea/fakegitea"
	"steward/gitea/gitearec"
)

// SeedIssue is one backlog issue of the demo.
type SeedIssue struct {
	Title  string
	Body   string
	Labels []string
}

// seedPR is one pull request of the demo; Merged ones are merged right away.
type seedPR struct {
	Title, Head string
	Merged      bool
}

var subjects = []string{
	"lock-file decoder", "lease sweeper", "heartbeat scheduler", "audit log rotation",
	"Gitea pagination", "worktree cleanup", "claim contention report", "session pointers",
	"clarification SLA", "status JSON", "expire sweep", "retired locks index",
	"config loader", "token redaction", "timeline view", "PR head fencing",
}

var verbs = []string{"Fix", "Add tests for", "Speed up", "Document", "Refactor", "Harden"}

// Backlog returns n demo issues, the same ones for the same seed: titles, priority labels
// and a few "depends on #N" links (always to an earlier issue, so numbers match when the
// issues are created in order into an empty repository). One is blocked.
func Backlog(seed uint64, n int) []SeedIssue {
	rng := rand.New(rand.NewPCG(seed, 0xdeadbeef))
	prios := []string{
		"priority:critical",
		"priority:high",
		"priority:high",
		"priority:medium",
		"priority:medium",
		"priority:medium",
		"priority:low",
		"priority:low",
		"",
	}
	out := make([]SeedIssue, 0, n)
	for i := range n {
		s := SeedIssue{Title: fmt.Sprintf("%s the %s", verbs[rng.IntN(len(verbs))], subjects[rng.IntN(len(subjects))])}
		s.Body = fmt.Sprintf("Demo issue %d.\n\nWhat: %s.\n", i+1, s.Title)
		if p := prios[rng.IntN(len(prios))]; p != "" {
			s.Labels = append(s.Labels, p)
		}
		if i >= 4 && rng.IntN(5) == 0 {
			s.Body += fmt.Sprintf("\nDepends on #%d.\n", 1+rng.IntN(i))
		}
		if i == n/2 {
			s.Labels = append(s.Labels, gitearec.DefaultBlockedLabel)
			s.Body += "\nBlocked: waits for a controller decision.\n"
		}
		out = append(out, s)
	}
	return out
}

// demoPRs are the pull requests the demo starts with.
var demoPRs = []seedPR{
	{Title: "Speed up the lock-file decoder", Head: "perf/decoder"},
	{Title: "Document the lease policy", Head: "docs/policy", Merged: true},
	{Title: "WIP: rework the sweeper", Head: "wip/sweeper"},
}

// labels are the labels the demo repository carries, with their colours.
var labels = map[string]string{
	"priority:critical":             "b60205",
	"priority:high":                 "d93f0b",
	"priority:medium":               "fbca04",
	"priority:low":                  "0e8a16",
	gitearec.DefaultBlockedLabel:    "5319e7",
	gitearec.DefaultMarkerLabels[0]: "e99695",
}

// SeedFake fills an empty in-process repository with the labels, issues and pull requests
// of the demo (fixture set-up of the fake server, not a governed mutation) and returns the
// issue numbers in order.
func SeedFake(r *fakegitea.Repo, author string, issues []SeedIssue, prs []seedPR) []int64 {
	for name, color := range labels {
		r.CreateLabel(name, color)
	}
	nums := make([]int64, 0, len(issues))
	for _, s := range issues {
		nums = append(nums, r.CreateIssue(author, s.Title, s.Body, s.Labels...))
	}
	for _, p := range prs {
		n := r.CreatePR(author, p.Title, p.Head, "main")
		if p.Merged {
			r.MergePR(n)
		}
	}
	return nums
}

// FakePRs returns a PRMaker that opens pull requests in the in-process repository r: a
// worker's own git work, done through the fake's seeding helpers.
func FakePRs(r *fakegitea.Repo) PRMaker {
	return func(_ context.Context, author, head, title string) (int64, error) {
		return r.CreatePR(author, title, head, "main"), nil
	}
}
