package tui

import (
	"net/http/httptest"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"steward/gitea"
	"steward/gitea/fakegitea"
	"steward/govern"
	"steward/govern/actionid"
	"steward/model"
)

// TestFlowAnswerClarification: select the question, write the answer, preview it through the
// core, apply, and watch the item leave the Clarifications view — against the in-process
// Gitea subset.
func TestFlowAnswerClarification(t *testing.T) {
	_, cl := clarificationGitea(t)
	tm, src, audit := answerUpToApply(t, cl)
	pressAll(tm, "tab", "enter")
	waitText(t, tm, "SUCCEEDED")
	waitText(t, tm, "Clarifications · 0 of 0")

	tm.Send(tea.QuitMsg{})
	r := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Root)
	if len(r.tabs[pageClarifications].list().tbl.rows) != 0 {
		t.Fatal("the answered clarification is still listed")
	}
	recs, _, _ := govern.ReadAudit(audit)
	var answered bool
	for _, a := range govern.Attempts(recs) {
		answered = answered || (a.Intent != nil && a.Intent.Action == actionid.Answer && a.Status() == govern.ResultSucceeded)
	}
	if !answered {
		t.Fatal("no succeeded clarification.answer in the audit log")
	}
	// The answer is durable in Gitea: the worker's question is no longer the latest word and the
	// marker is gone, so a fresh read finds no clarification.
	if got := src.build(); len(got.Clarifications) != 0 || got.Sources.Gitea.Status != model.StatusOK {
		t.Fatalf("Gitea still shows %d clarifications (gitea %s %s)", len(got.Clarifications), got.Sources.Gitea.Status, got.Sources.Gitea.Reason)
	}
}

// clarificationGitea serves the in-process Gitea subset with one issue blocked on a worker's
// question, and a client for it.
func clarificationGitea(t *testing.T) (*fakegitea.Server, *gitea.Client) {
	fake, cl, _ := clarificationGiteaRepo(t)
	return fake, cl
}

// clarificationGiteaRepo is clarificationGitea with the repository, to change it later.
func clarificationGiteaRepo(t *testing.T) (*fakegitea.Server, *gitea.Client, *fakegitea.Repo) {
	t.Helper()
	fake := fakegitea.New()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	fake.SetBaseURL(srv.URL)
	fake.AddUser("maint", "tok-maint-0123456789")
	repo := fake.CreateRepo("acme", "widgets")
	repo.CreateLabel("status:blocked-pending-clarification", "d93f0b")
	n := repo.CreateIssue("maint", "Which API?", "body", "status:blocked-pending-clarification")
	repo.AddComment("worker", n, "Should this use the **v2** API?")
	cl, err := gitea.New(gitea.Config{Login: gitea.Login{URL: srv.URL, Token: gitea.NewToken("tok-maint-0123456789")}, Owner: "acme", Repo: "widgets", RequestTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return fake, cl, repo
}

// answerUpToApply starts the workbench on real files and cl, selects the question, writes
// the answer and opens the core's preview with Apply focused next: the caller presses it.
func answerUpToApply(t *testing.T, cl *gitea.Client) (*teatest.TestModel, *diskSource, string) {
	t.Helper()
	clk := &clock{t: time.Now().UTC()}
	c, ws, audit := testCoreGitea(t, cl, clk.Now)
	src := &diskSource{ws: ws, now: clk.Now, ch: make(chan *model.Snapshot, 4), gitea: cl}
	tm := startFlow(t, Options{Core: c, Source: src, AuditPath: audit, Now: clk.Now}, src)
	src.ch <- src.build()
	pressAll(tm, "4")
	waitText(t, tm, "Which API?")
	pressAll(tm, "a")
	waitText(t, tm, "Answer a clarification")
	pressAll(tm, "enter")
	waitText(t, tm, "Your answer (Markdown)")
	for _, m := range typeText("Use **v2**.") {
		tm.Send(m)
	}
	pressAll(tm, "ctrl+s")
	waitText(t, tm, "Apply", "effect")
	return tm, src, audit
}
