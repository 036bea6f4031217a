package contract

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"steward/gitea"
	"steward/gitea/gitearec"
)

// Marker is the clarification label the suite uses (the default marker).
const Marker = "status:blocked-pending-clarification"

// ContractEnv names a backend kind and makes fresh repositories of it.
type ContractEnv struct {
	Name       string
	NewBackend func(t testing.TB) Backend
}

// Client returns a steward client on b acting as the maintainer (or the worker) with pageSize.
func Client(t testing.TB, b Backend, asWorker bool, pageSize int) *gitea.Client {
	tok := b.MaintainerToken
	if asWorker {
		tok = b.WorkerToken
	}
	c, err := gitea.New(gitea.Config{Login: gitea.Login{URL: b.URL, Token: gitea.NewToken(tok)},
		Owner: b.Owner, Repo: b.Repo, PageSize: pageSize, RequestTimeout: 20 * time.Second})
	if err != nil {
		t.Fatalf("gitea.New: %v", err)
	}
	return c
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func wantOK(t testing.TB, what string, h gitea.Health) {
	t.Helper()
	if h.State != gitea.HealthOK {
		t.Fatalf("%s: health %s: %s", what, h.State, h.Reason)
	}
}

func find(cls []gitearec.Clarification, n int64) (gitearec.Clarification, bool) {
	for _, c := range cls {
		if c.Number == n {
			return c, true
		}
	}
	return gitearec.Clarification{}, false
}

// runContract runs every contract case against env.
func runContract(t *testing.T, env ContractEnv) {
	t.Run("MarkedItemsPaginate", func(t *testing.T) { testPaginate(t, env.NewBackend(t)) })
	t.Run("OpenItemsPaginate", func(t *testing.T) { testOpenItems(t, env.NewBackend(t)) })
	b := env.NewBackend(t)
	b.Seed.Label(t, Marker)
	b.Seed.Label(t, "status:blocked")
	t.Run("QuestionChoice", func(t *testing.T) { testQuestion(t, b) })
	t.Run("AnswerRoundTrip", func(t *testing.T) { testAnswer(t, b) })
	t.Run("AskRoundTrip", func(t *testing.T) { testAsk(t, b) })
	t.Run("ManyCommentsAndLongTimeline", func(t *testing.T) { testManyComments(t, b) })
	t.Run("PullRequestAndIssueFacts", func(t *testing.T) { testPRFacts(t, b) })
	t.Run("ThreadAndSelf", func(t *testing.T) { testThread(t, b) })
}

// testThread: the token's own login, and an item read back whole — its question, the
// marker label's events with who made them, and comments whose trailing marker counts as
// steward's evidence only when steward's login wrote them.
func testThread(t *testing.T, b Backend) {
	m, w := Client(t, b, false, 5), Client(t, b, true, 5)
	if got, err := m.Self(ctx(t)); err != nil || got != b.Maintainer {
		t.Fatalf("Self as the maintainer: %q %v", got, err)
	}
	if got, err := w.Self(ctx(t)); err != nil || got != b.Worker {
		t.Fatalf("Self as the worker: %q %v", got, err)
	}
	n := b.Seed.Issue(t, "thread")
	q := b.Seed.Comment(t, n, true, "Which version?")
	b.Seed.AddLabel(t, n, Marker)
	mark := gitearec.Mark{Kind: "answer", ID: "ans-1", Question: fmt.Sprint(q), Round: "9", Attempt: "att-1"}
	// The worker quotes the marker; only the maintainer's comment carries it as its own.
	b.Seed.Comment(t, n, true, gitearec.WithMarker("v2", mark.String()))
	answer, err := m.CreateComment(ctx(t), n, gitearec.WithMarker("Use v2.", mark.String()))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.RemoveLabel(ctx(t), n, Marker); err != nil {
		t.Fatal(err)
	}
	th, err := m.Thread(ctx(t), n)
	if err != nil {
		t.Fatal(err)
	}
	if th.Issue.Number != n || th.Clarification.QuestionCommentID != q || th.Clarification.LabelEventID <= q ||
		len(th.Comments) != 3 {
		t.Fatalf(
			"thread: question %d (want %d), label event %d, %d comments",
			th.Clarification.QuestionCommentID,
			q,
			th.Clarification.LabelEventID,
			len(th.Comments),
		)
	}
	var adds, removes int
	for _, e := range th.Labels {
		switch {
		case e.Label == Marker && e.Added && e.By == b.Worker && e.ID == th.Clarification.LabelEventID:
			adds++
		case e.Label == Marker && !e.Added && e.By == b.Maintainer && e.ID > answer:
			removes++
		}
	}
	if adds != 1 || removes != 1 {
		t.Fatalf("label events %+v: want the worker's addition and the maintainer's removal", th.Labels)
	}
	cm, got, ok := th.FindOwnMark(b.Maintainer, "answer", "ans-1")
	if !ok || cm.ID != answer || got != mark {
		t.Fatalf("FindOwnMark(maintainer): %v %+v %+v", ok, cm, got)
	}
	if _, _, ok := th.FindOwnMark(strings.ToUpper(b.Maintainer), "answer", "ans-1"); !ok {
		t.Fatal("FindOwnMark compares logins case-sensitively")
	}
	if cm, _, ok := th.FindOwnMark(b.Worker, "answer", "ans-1"); !ok || cm.ID == answer {
		t.Fatalf("FindOwnMark(worker) should find the worker's own copy only: %v %+v", ok, cm)
	}
	if _, _, ok := th.FindOwnMark(b.Maintainer, "ask", "ans-1"); ok {
		t.Fatal("FindOwnMark matched another kind")
	}
}

// testPaginate: 12 marked open issues + 1 marked PR + 1 marked closed issue + unmarked noise,
// read with page size 5; also the blocked list, first with no such label in the repository
// (Gitea would ignore the unknown filter and list everything).
func testPaginate(t *testing.T, b Backend) {
	b.Seed.Label(t, Marker)
	b.Seed.Label(t, "other")
	want := map[int64]gitearec.Kind{}
	for i := range 12 {
		want[b.Seed.Issue(t, fmt.Sprintf("marked %d", i), Marker)] = gitearec.KindIssue
	}
	b.Seed.Issue(t, "unmarked", "other")
	closed := b.Seed.Issue(t, "marked but closed", Marker)
	b.Seed.Close(t, closed)
	pr := b.Seed.PR(t, "feature-marked", "marked pr")
	b.Seed.AddLabel(t, pr, Marker)
	want[pr] = gitearec.KindPR

	c := Client(t, b, false, 5)
	blocked, h := c.Blocked(ctx(t))
	wantOK(t, "blocked without label", h)
	if len(blocked) != 0 {
		t.Fatalf("blocked without a status:blocked label in the repo: got %d items, want 0", len(blocked))
	}
	cls, h := c.Clarifications(ctx(t), gitea.ClarificationOptions{})
	wantOK(t, "clarifications", h)
	if len(cls) != len(want) {
		t.Fatalf("clarifications: got %d items, want %d", len(cls), len(want))
	}
	for _, cl := range cls {
		if k, ok := want[cl.Number]; !ok || k != cl.Kind || cl.Marker != Marker || cl.URL == "" || cl.Title == "" {
			t.Errorf("unexpected item %+v (want kind %q)", cl.Issue, k)
		}
	}
	b.Seed.Label(t, "status:blocked")
	bl := b.Seed.Issue(t, "needs controller", "status:blocked")
	blocked, h = c.Blocked(ctx(t))
	wantOK(t, "blocked", h)
	if len(blocked) != 1 || blocked[0].Number != bl {
		t.Fatalf("blocked: got %+v, want just #%d", blocked, bl)
	}
}

// testOpenItems: every open issue, and every open pull request, read with page size 5 across
// pages (12 issues: three pages), without the closed ones and without the PRs among the
// issues — the list the traffic view classifies, one bucket per open item.
func testOpenItems(t *testing.T, b Backend) {
	want := map[int64]bool{}
	for i := range 12 {
		want[b.Seed.Issue(t, fmt.Sprintf("open %d", i))] = true
	}
	closed := b.Seed.Issue(t, "closed")
	b.Seed.Close(t, closed)
	pr := b.Seed.PR(t, "feature-open", "an open pull request")
	c := Client(t, b, false, 5)
	issues, h := c.OpenIssues(ctx(t))
	wantOK(t, "open issues", h)
	got := map[int64]bool{}
	for _, is := range issues {
		if got[is.Number] || !want[is.Number] || is.Kind != gitearec.KindIssue || is.State != "open" || is.Title == "" {
			t.Errorf("open issues: unexpected %+v", is)
		}
		got[is.Number] = true
	}
	if len(got) != len(want) {
		t.Fatalf("open issues: %d of %d read across pages of 5", len(got), len(want))
	}
	prs, h := c.OpenPullRequests(ctx(t))
	wantOK(t, "open pull requests", h)
	if !containsPR(prs, pr) || len(prs) != 1 {
		t.Fatalf("open pull requests %+v: want just #%d", prs, pr)
	}
}

func testQuestion(t *testing.T, b Backend) {
	n := b.Seed.Issue(t, "worker asks")
	b.Seed.Comment(t, n, true, "first thoughts")
	qid := b.Seed.Comment(t, n, true, "Which API version should I target?")
	b.Seed.AddLabel(t, n, Marker)
	b.Seed.Comment(t, n, false, "maintainer chatter after the label")
	c := Client(t, b, false, 5)
	cls, h := c.Clarifications(ctx(t), gitea.ClarificationOptions{})
	wantOK(t, "clarifications", h)
	cl, ok := find(cls, n)
	if !ok {
		t.Fatalf("#%d not listed", n)
	}
	if cl.Question != "Which API version should I target?" || cl.QuestionCommentID != qid || cl.AskedBy != b.Worker ||
		cl.Rule != gitearec.RuleBeforeLabel {
		t.Fatalf("question: got %q (id %d, by %q, rule %s), want the worker's last comment before the label (id %d)",
			cl.Question, cl.QuestionCommentID, cl.AskedBy, cl.Rule, qid)
	}
	if cl.LabeledAt == nil || !cl.AskedAt.Equal(*cl.LabeledAt) || cl.LabeledBy != b.Worker {
		t.Fatalf(
			"asked at %v, labeled at %v by %q: want the label time by the worker",
			cl.AskedAt,
			cl.LabeledAt,
			cl.LabeledBy,
		)
	}
	follow := b.Seed.Comment(t, n, true, "Follow-up from the claimant")
	cls, h = c.Clarifications(ctx(t), gitea.ClarificationOptions{Claimant: func(int64) string { return b.Worker }})
	wantOK(t, "clarifications with claimant", h)
	if cl, _ = find(cls, n); cl.QuestionCommentID != follow || cl.Rule != gitearec.RuleClaimant {
		t.Fatalf("with claimant: got comment %d (rule %s), want %d", cl.QuestionCommentID, cl.Rule, follow)
	}
}

func testAnswer(t *testing.T, b Backend) {
	n := b.Seed.Issue(t, "to answer", Marker)
	b.Seed.Comment(t, n, true, "Question?")
	c := Client(t, b, false, 5)
	marker := gitearec.AnswerMarker("attempt-42")
	id, err := c.CreateComment(ctx(t), n, gitearec.WithMarker("Use v2.", marker))
	if err != nil || id == 0 {
		t.Fatalf("CreateComment: id %d, %v", id, err)
	}
	if err := c.RemoveLabel(ctx(t), n, Marker); err != nil {
		t.Fatalf("RemoveLabel: %v", err)
	}
	it, err := c.GetIssue(ctx(t), n)
	if err != nil || it.HasLabel(Marker) {
		t.Fatalf("GetIssue after answer: labels %v, %v", it.Labels, err)
	}
	found, cm, err := c.FindCommentWithMarker(ctx(t), n, marker)
	if err != nil || !found || cm.ID != id || !strings.HasPrefix(cm.Body, "Use v2.") || cm.Author != b.Maintainer {
		t.Fatalf("FindCommentWithMarker: found=%v %+v %v", found, cm, err)
	}
	if found, _, err := c.FindCommentWithMarker(ctx(t), n, gitearec.AnswerMarker("never-posted")); err != nil || found {
		t.Fatalf("FindCommentWithMarker(unposted): found=%v %v", found, err)
	}
	cls, h := c.Clarifications(ctx(t), gitea.ClarificationOptions{})
	wantOK(t, "clarifications", h)
	if _, ok := find(cls, n); ok {
		t.Fatalf("#%d still listed after its marker was removed", n)
	}
	err = c.RemoveLabel(ctx(t), n, "no-such-label")
	if !errors.Is(err, gitea.ErrLabelNotFound) || gitea.Classify(err) != gitea.OutcomeNotSent {
		t.Fatalf("RemoveLabel(unknown): %v (outcome %q)", err, gitea.Classify(err))
	}
}

func testAsk(t *testing.T, b Backend) {
	n := b.Seed.Issue(t, "worker will ask")
	w := Client(t, b, true, 5)
	if _, err := w.CreateComment(ctx(t), n, "Should the cache be per user?"); err != nil {
		t.Fatalf("CreateComment: %v", err)
	}
	if err := w.AddLabels(ctx(t), n, Marker); err != nil {
		t.Fatalf("AddLabels: %v", err)
	}
	cls, h := Client(t, b, false, 5).Clarifications(ctx(t), gitea.ClarificationOptions{})
	wantOK(t, "clarifications", h)
	cl, ok := find(cls, n)
	if !ok || cl.Question != "Should the cache be per user?" || cl.AskedBy != b.Worker || cl.AskedAt.IsZero() {
		t.Fatalf("asked item: listed=%v question %q by %q at %v", ok, cl.Question, cl.AskedBy, cl.AskedAt)
	}
}

func testManyComments(t *testing.T, b Backend) {
	n := b.Seed.Issue(t, "chatty")
	var ids []int64
	for i := range 7 {
		ids = append(ids, b.Seed.Comment(t, n, true, fmt.Sprintf("comment %d", i)))
	}
	b.Seed.AddLabel(t, n, Marker)
	c := Client(t, b, false, 5)
	cs, err := c.ListComments(ctx(t), n)
	if err != nil || len(cs) != 7 {
		t.Fatalf("ListComments: %d comments, %v; want 7", len(cs), err)
	}
	for i, cm := range cs {
		if cm.ID != ids[i] {
			t.Fatalf("comment %d: id %d, want %d (oldest first)", i, cm.ID, ids[i])
		}
	}
	cls, h := c.Clarifications(ctx(t), gitea.ClarificationOptions{})
	wantOK(t, "clarifications", h)
	if cl, _ := find(cls, n); cl.QuestionCommentID != ids[6] {
		t.Fatalf("question across timeline pages: got comment %d, want %d", cl.QuestionCommentID, ids[6])
	}
}

func testPRFacts(t *testing.T, b Backend) {
	open := b.Seed.PR(t, "feat-open", "open pr")
	merged := b.Seed.PR(t, "feat-merged", "merged pr")
	b.Seed.Merge(t, merged)
	closedPR := b.Seed.PR(t, "feat-closed", "closed pr")
	b.Seed.Close(t, closedPR)
	closedIssue := b.Seed.Issue(t, "done")
	b.Seed.Close(t, closedIssue)
	c := Client(t, b, false, 5)
	cases := []struct {
		n             int64
		state, branch string
		merged        bool
	}{
		{open, "open", "feat-open", false},
		{merged, "closed", "feat-merged", true},
		{closedPR, "closed", "feat-closed", false},
	}
	for _, tc := range cases {
		f, h := c.PullRequest(ctx(t), tc.n)
		wantOK(t, fmt.Sprintf("PR #%d", tc.n), h)
		if !f.Found || f.State != tc.state || f.Merged != tc.merged || (f.MergedAt != nil) != tc.merged ||
			f.HeadBranch != tc.branch || f.Base != "main" || len(f.HeadSHA) != 40 || f.UpdatedAt.IsZero() {
			t.Errorf("PR #%d facts: %+v", tc.n, f)
		}
	}
	prs, h := c.OpenPullRequests(ctx(t))
	wantOK(t, "open PRs", h)
	for _, p := range prs {
		if p.Number == merged || p.Number == closedPR || p.State != "open" {
			t.Errorf("open PRs lists #%d (%s)", p.Number, p.State)
		}
	}
	if len(prs) == 0 || !containsPR(prs, open) {
		t.Errorf("open PRs %v does not list #%d", prs, open)
	}
	for branch, want := range map[string]bool{"feat-open": true, "main": true, "no-such-branch": false} {
		got, h := c.BranchExists(ctx(t), branch)
		wantOK(t, "branch "+branch, h)
		if got != want {
			t.Errorf("BranchExists(%q) = %v, want %v", branch, got, want)
		}
	}
	f, h := c.IssueState(ctx(t), closedIssue)
	wantOK(t, "issue state", h)
	if !f.Found || f.State != "closed" || f.ClosedAt == nil || f.Kind != gitearec.KindIssue {
		t.Errorf("closed issue: %+v", f)
	}
	if f, h := c.IssueState(ctx(t), 99999); !h.OK() || f.Found {
		t.Errorf("missing issue: found=%v health %v", f.Found, h)
	}
	if f, h := c.PullRequest(ctx(t), 99999); !h.OK() || f.Found {
		t.Errorf("missing PR: found=%v health %v", f.Found, h)
	}
}

func containsPR(prs []gitearec.PullRequest, n int64) bool {
	for _, p := range prs {
		if p.Number == n {
			return true
		}
	}
	return false
}
