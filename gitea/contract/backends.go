package contract

import (
	"encoding/base64"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	sdk "code.gitea.io/sdk/gitea"

	"steward/gitea/fakegitea"
	"steward/gitea/giteatest"
)

// Backend is one fresh repository and the two logins that act on it.
type Backend struct {
	URL             string
	Owner, Repo     string
	Maintainer      string // login of the maintainer (repository owner)
	MaintainerToken string
	Worker          string // login of a worker (write collaborator)
	WorkerToken     string
	Seed            Seeder
}

// Seeder creates state in a Backend's repository; it fails t on error.
type Seeder interface {
	// Label makes sure the repository has the label.
	Label(t testing.TB, name string)
	// Issue opens an issue as the maintainer with existing labels.
	Issue(t testing.TB, title string, labels ...string) int64
	// Comment comments as the worker (asWorker) or the maintainer and returns the comment id.
	Comment(t testing.TB, number int64, asWorker bool, body string) int64
	// AddLabel adds an existing label as the worker.
	AddLabel(t testing.TB, number int64, name string)
	// Close closes an issue or pull request without merging.
	Close(t testing.TB, number int64)
	// PR pushes a commit on a new branch and opens a pull request from it into main.
	PR(t testing.TB, branch, title string) int64
	// Merge merges a pull request.
	Merge(t testing.TB, number int64)
}

// ---- fake ----

type fakeSeeder struct {
	r                  *fakegitea.Repo
	maintainer, worker string
}

// NewFakeBackend starts an in-process fake on a loopback httptest server for t.
func NewFakeBackend(t testing.TB) Backend {
	f := fakegitea.New()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	f.SetBaseURL(srv.URL)
	b := Backend{URL: srv.URL, Owner: "steward-admin", Repo: "fake",
		Maintainer: "steward-admin", MaintainerToken: "fake-maintainer-token-0123456789",
		Worker: "worker-one", WorkerToken: "fake-worker-token-0123456789"}
	f.AddUser(b.Maintainer, b.MaintainerToken)
	f.AddUser(b.Worker, b.WorkerToken)
	b.Seed = &fakeSeeder{r: f.CreateRepo(b.Owner, b.Repo), maintainer: b.Maintainer, worker: b.Worker}
	return b
}

func (s *fakeSeeder) Label(_ testing.TB, name string) { s.r.CreateLabel(name, "d93f0b") }
func (s *fakeSeeder) Issue(_ testing.TB, title string, labels ...string) int64 {
	return s.r.CreateIssue(s.maintainer, title, "body of "+title, labels...)
}
func (s *fakeSeeder) Comment(_ testing.TB, n int64, asWorker bool, body string) int64 {
	who := s.maintainer
	if asWorker {
		who = s.worker
	}
	return s.r.AddComment(who, n, body)
}
func (s *fakeSeeder) AddLabel(_ testing.TB, n int64, name string) { s.r.AddLabel(s.worker, n, name) }
func (s *fakeSeeder) Close(_ testing.TB, n int64)                 { s.r.CloseIssue(n) }
func (s *fakeSeeder) PR(_ testing.TB, branch, title string) int64 {
	return s.r.CreatePR(s.maintainer, title, branch, "main")
}
func (s *fakeSeeder) Merge(_ testing.TB, n int64) { s.r.MergePR(n) }

// ---- real ----

type realSeeder struct {
	admin, worker *sdk.Client
	owner, repo   string
	labels        map[string]int64
}

// NewRealBackend makes a fresh repository on a running real Gitea.
func NewRealBackend(t testing.TB, srv *giteatest.Server) Backend {
	repo := srv.NewRepo(t, "contract")
	mk := func(tok string) *sdk.Client {
		c, err := sdk.NewClient(srv.URL, sdk.SetToken(tok), sdk.SetGiteaVersion(""))
		if err != nil {
			t.Fatalf("sdk client: %v", err)
		}
		return c
	}
	return Backend{URL: srv.URL, Owner: srv.Admin, Repo: repo, Maintainer: srv.Admin, MaintainerToken: srv.AdminToken,
		Worker: srv.Worker, WorkerToken: srv.WorkerToken,
		Seed: &realSeeder{
			admin:  mk(srv.AdminToken),
			worker: mk(srv.WorkerToken),
			owner:  srv.Admin,
			repo:   repo,
			labels: map[string]int64{},
		}}
}

func must(t testing.TB, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("seed %s: %v", what, err)
	}
}

func (s *realSeeder) Label(t testing.TB, name string) {
	if _, ok := s.labels[name]; ok {
		return
	}
	l, _, err := s.admin.CreateLabel(s.owner, s.repo, sdk.CreateLabelOption{Name: name, Color: "#d93f0b"})
	must(t, "label "+name, err)
	s.labels[name] = l.ID
}

func (s *realSeeder) ids(t testing.TB, names []string) []int64 {
	var ids []int64
	for _, n := range names {
		id, ok := s.labels[n]
		if !ok {
			t.Fatalf("seed: label %q not created", n)
		}
		ids = append(ids, id)
	}
	return ids
}

func (s *realSeeder) Issue(t testing.TB, title string, labels ...string) int64 {
	it, _, err := s.admin.CreateIssue(
		s.owner,
		s.repo,
		sdk.CreateIssueOption{Title: title, Body: "body of " + title, Labels: s.ids(t, labels)},
	)
	must(t, "issue", err)
	return it.Index
}

func (s *realSeeder) Comment(t testing.TB, n int64, asWorker bool, body string) int64 {
	c := s.admin
	if asWorker {
		c = s.worker
	}
	cm, _, err := c.CreateIssueComment(s.owner, s.repo, n, sdk.CreateIssueCommentOption{Body: body})
	must(t, "comment", err)
	return cm.ID
}

func (s *realSeeder) AddLabel(t testing.TB, n int64, name string) {
	_, _, err := s.worker.AddIssueLabels(s.owner, s.repo, n, sdk.IssueLabelsOption{Labels: s.ids(t, []string{name})})
	must(t, "add label", err)
}

func (s *realSeeder) Close(t testing.TB, n int64) {
	closed := sdk.StateClosed
	_, _, err := s.admin.EditIssue(s.owner, s.repo, n, sdk.EditIssueOption{State: &closed})
	must(t, "close", err)
}

func (s *realSeeder) PR(t testing.TB, branch, title string) int64 {
	_, _, err := s.admin.CreateFile(s.owner, s.repo, "work/"+branch+".txt", sdk.CreateFileOptions{
		FileOptions: sdk.FileOptions{Message: "work on " + branch, BranchName: "main", NewBranchName: branch},
		Content:     base64.StdEncoding.EncodeToString([]byte("change for " + branch + "\n"))})
	must(t, "branch commit", err)
	pr, _, err := s.admin.CreatePullRequest(
		s.owner,
		s.repo,
		sdk.CreatePullRequestOption{Head: branch, Base: "main", Title: title},
	)
	must(t, "pull request", err)
	return pr.Index
}

// Merge retries while Gitea is still computing mergeability (the SDK then reports false
// without an error); it polls with a deadline.
func (s *realSeeder) Merge(t testing.TB, n int64) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, resp, err := s.admin.MergePullRequest(s.owner, s.repo, n, sdk.MergePullRequestOption{Style: sdk.MergeStyleMerge})
		must(t, fmt.Sprintf("merge #%d", n), err)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("seed merge #%d: not merged after 30s (last status %d)", n, resp.StatusCode)
		}
		time.Sleep(200 * time.Millisecond) // poll interval, bounded by the deadline
	}
}
