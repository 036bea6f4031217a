package gitea_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"steward/gitea"
	"steward/gitea/fakegitea"
	"steward/gitea/gitearec"
)

const fakeToken = "fake-token-0123456789abcdef"

// newFake starts a fake with one repository holding n marked issues.
func newFake(t *testing.T, n int, wrap func(http.Handler) http.Handler) (*fakegitea.Server, *fakegitea.Repo, string) {
	t.Helper()
	f := fakegitea.New()
	var h http.Handler = f
	if wrap != nil {
		h = wrap(f)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	f.SetBaseURL(srv.URL)
	f.AddUser("maint", fakeToken)
	r := f.CreateRepo("o", "r")
	for i := range n {
		num := r.CreateIssue("worker", fmt.Sprintf("q %d", i), "")
		r.AddComment("worker", num, "question")
		r.AddLabel("worker", num, gitearec.DefaultMarkerLabels[0])
	}
	return f, r, srv.URL
}

func newClient(t testing.TB, url, token string, cfg gitea.Config) *gitea.Client {
	t.Helper()
	cfg.Login = gitea.Login{URL: url, Token: gitea.NewToken(token)}
	cfg.Owner, cfg.Repo = "o", "r"
	if cfg.PageSize == 0 {
		cfg.PageSize = 5
	}
	c, err := gitea.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPartialWhenAPageFails(t *testing.T) {
	t.Parallel()
	f, _, url := newFake(t, 12, nil)
	f.SetFault(func(r *http.Request) int {
		if strings.HasSuffix(r.URL.Path, "/issues") && r.URL.Query().Get("page") == "3" {
			return http.StatusInternalServerError
		}
		return 0
	})
	cls, h := newClient(t, url, fakeToken, gitea.Config{}).Clarifications(context.Background(), gitea.ClarificationOptions{})
	if h.State != gitea.HealthPartial || len(cls) != 10 || !strings.Contains(h.Reason, "page 3") {
		t.Fatalf("got %d items, health %s %q; want the 10 read before page 3, partial", len(cls), h.State, h.Reason)
	}
}

func TestPartialWhenATimelineFails(t *testing.T) {
	t.Parallel()
	f, _, url := newFake(t, 3, nil)
	f.SetFault(func(r *http.Request) int {
		if strings.HasSuffix(r.URL.Path, "/issues/2/timeline") {
			return http.StatusBadGateway
		}
		return 0
	})
	cls, h := newClient(t, url, fakeToken, gitea.Config{}).Clarifications(context.Background(), gitea.ClarificationOptions{})
	if h.State != gitea.HealthPartial || len(cls) != 3 || !strings.Contains(h.Reason, "#2") {
		t.Fatalf("got %d items, health %s %q", len(cls), h.State, h.Reason)
	}
	for _, cl := range cls {
		if (cl.Number == 2) != (cl.Question == "") {
			t.Errorf("#%d question %q", cl.Number, cl.Question)
		}
	}
}

func TestUnavailableWhenLabelsFail(t *testing.T) {
	t.Parallel()
	f, _, url := newFake(t, 3, nil)
	f.SetFault(func(r *http.Request) int {
		if strings.HasSuffix(r.URL.Path, "/labels") {
			return http.StatusServiceUnavailable
		}
		return 0
	})
	cls, h := newClient(t, url, fakeToken, gitea.Config{}).Clarifications(context.Background(), gitea.ClarificationOptions{})
	if h.State != gitea.HealthUnavailable || len(cls) != 0 || h.Reason == "" {
		t.Fatalf("got %d items, health %s %q", len(cls), h.State, h.Reason)
	}
}

func closedPortURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + l.Addr().String()
	_ = l.Close()
	return u
}

// TestServerDown checks that nothing listening reads as unavailable, never as an empty ok list,
// and that a write is classified not sent.
func TestServerDown(t *testing.T) {
	t.Parallel()
	c := newClient(t, closedPortURL(t), fakeToken, gitea.Config{RequestTimeout: 5 * time.Second})
	ctx := context.Background()
	checks := map[string]gitea.Health{}
	_, checks["clarifications"] = c.Clarifications(ctx, gitea.ClarificationOptions{})
	_, checks["blocked"] = c.Blocked(ctx)
	_, checks["version"] = c.Version(ctx)
	_, checks["open prs"] = c.OpenPullRequests(ctx)
	_, checks["open issues"] = c.OpenIssues(ctx)
	_, checks["pr"] = c.PullRequest(ctx, 1)
	_, checks["issue"] = c.IssueState(ctx, 1)
	_, checks["branch"] = c.BranchExists(ctx, "main")
	for name, h := range checks {
		if h.State != gitea.HealthUnavailable || h.Reason == "" || !errors.Is(h.Err, gitea.ErrNotSent) {
			t.Errorf("%s: health %s %q (%v)", name, h.State, h.Reason, h.Err)
		}
	}
	_, err := c.CreateComment(ctx, 1, "hello")
	if !errors.Is(err, gitea.ErrNotSent) || gitea.Classify(err) != gitea.OutcomeNotSent {
		t.Fatalf("CreateComment on a closed port: %v (outcome %q)", err, gitea.Classify(err))
	}
}

func TestHTTPRefusalAndServerError(t *testing.T) {
	t.Parallel()
	f, _, url := newFake(t, 1, nil)
	c := newClient(t, url, fakeToken, gitea.Config{})
	_, err := c.CreateComment(context.Background(), 999, "no such issue")
	var he *gitea.HTTPError
	if !errors.As(err, &he) || he.Status != 404 || gitea.Classify(err) != gitea.OutcomeRefused {
		t.Fatalf("comment on missing issue: %v (outcome %q)", err, gitea.Classify(err))
	}
	f.SetFault(func(*http.Request) int { return http.StatusInternalServerError })
	_, err = c.CreateComment(context.Background(), 1, "server fails")
	if !errors.Is(err, gitea.ErrOutcomeUnknown) || gitea.Classify(err) != gitea.OutcomeUnknown {
		t.Fatalf("5xx: %v (outcome %q)", err, gitea.Classify(err))
	}
}

// TestOpenIssues lists open issues across pages, without pull requests or closed issues; a
// listing that fails midway is partial and keeps what was read.
func TestOpenIssues(t *testing.T) {
	t.Parallel()
	f, r, url := newFake(t, 12, nil)
	r.CloseIssue(3)
	r.CreateBranch("feat")
	pr := r.CreatePR("worker", "a PR", "feat", "main")
	c := newClient(t, url, fakeToken, gitea.Config{})
	is, h := c.OpenIssues(context.Background())
	if !h.OK() || len(is) != 11 {
		t.Fatalf("open issues: %d, health %s %q", len(is), h.State, h.Reason)
	}
	for i, it := range is {
		if it.Number == 3 || it.Number == pr || it.Kind == gitearec.KindPR || (i > 0 && is[i-1].Number >= it.Number) {
			t.Fatalf("listing holds #%d (%s) at %d", it.Number, it.Kind, i)
		}
	}
	calls := 0
	f.SetFault(func(r *http.Request) int {
		if strings.HasSuffix(r.URL.Path, "/issues") {
			if calls++; calls > 1 {
				return http.StatusServiceUnavailable
			}
		}
		return 0
	})
	part, h := c.OpenIssues(context.Background())
	if h.State != gitea.HealthPartial || len(part) != 5 {
		t.Fatalf("listing cut after a page: %d issues, health %s %q", len(part), h.State, h.Reason)
	}
}
