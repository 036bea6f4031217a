package realgitea_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"steward/gitea"
	"steward/gitea/contract"
	"steward/gitea/gitearec"
	"steward/gitea/giteatest"
	"steward/govern"
	"steward/govern/actionid"
)

const marker = "status:blocked-pending-clarification"

// backends are the two Gitea sides the clarification tests run against: the real server
// and the demo's in-process fake, behind the same assertions.
var backends = []contract.ContractEnv{
	{Name: "real", NewBackend: func(t testing.TB) contract.Backend { return contract.NewRealBackend(t, giteatest.Shared(t)) }},
	{Name: "fake", NewBackend: contract.NewFakeBackend},
}

// failPosts forwards every request to the server; while fail is set it answers a POST with
// HTTP 500 without forwarding it (a 5xx may have acted, so the core records unknown).
type failPosts struct {
	drop   *dropProxy
	fail   atomic.Bool
	failed atomic.Int64
}

func (p *failPosts) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && p.fail.Load() {
		p.failed.Add(1)
		http.Error(w, `{"message":"injected"}`, http.StatusInternalServerError)
		return
	}
	p.drop.ServeHTTP(w, r)
}

// clarifyEnv is a workspace whose core acts as the maintainer through a proxy to b.
type clarifyEnv struct {
	b     contract.Backend
	core  *govern.Core
	proxy *failPosts
	log   *govern.AuditLog
}

func newClarifyEnv(t *testing.T, b contract.Backend) *clarifyEnv {
	t.Helper()
	b.Seed.Label(t, marker)
	target, _ := url.Parse(b.URL)
	proxy := &failPosts{drop: &dropProxy{target: target}}
	front := httptest.NewServer(proxy)
	t.Cleanup(front.Close)
	cl, err := gitea.New(gitea.Config{Login: gitea.Login{URL: front.URL, Token: gitea.NewToken(b.MaintainerToken)},
		Owner: b.Owner, Repo: b.Repo, RequestTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ws := govern.Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: filepath.Join(dir, "cp.sqlite3"), RepoRoot: filepath.Join(dir, "repo"), Gitea: cl}
	if err := govern.InitWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	log, err := govern.OpenAudit(filepath.Join(dir, "audit.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	core := govern.New(ws, log, govern.Options{Actor: govern.LocalActor(govern.RoleOperator, b.Maintainer)})
	t.Cleanup(func() { core.Close() })
	return &clarifyEnv{b: b, core: core, proxy: proxy, log: log}
}

// ask is a worker asking as the supervised system's workers do: a comment, then the marker.
func (e *clarifyEnv) ask(t *testing.T, n int64, question string) {
	e.b.Seed.Comment(t, n, true, question)
	e.b.Seed.AddLabel(t, n, marker)
}

func (e *clarifyEnv) answerReq(n int64, body string) govern.Request {
	return govern.Request{Action: actionid.Answer, Target: govern.Target{Item: &govern.Item{Org: e.b.Owner, Repo: e.b.Repo, Kind: "issue", Number: n}},
		Params: govern.AnswerParams{Body: body}}
}

// answers counts the comments the maintainer (steward's login) posted with an answer marker.
func (e *clarifyEnv) answers(t *testing.T, n int64) int {
	t.Helper()
	cs, err := contract.Client(t, e.b, false, 50).ListComments(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, c := range cs {
		if c.Author == e.b.Maintainer && strings.Contains(c.Body, "steward:answer") {
			got++
		}
	}
	return got
}

func (e *clarifyEnv) marked(t *testing.T, n int64) bool {
	t.Helper()
	is, err := contract.Client(t, e.b, false, 50).GetIssue(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	return is.HasLabel(marker)
}

func markerOf(pv govern.Preview) string {
	for _, ev := range pv.Evidence {
		if id, ok := strings.CutPrefix(ev, "idempotency marker: "); ok {
			return id
		}
	}
	return ""
}

// TestAnswerIsNeverSwallowed: the answer's idempotency marker was a
// hash of the item and the answer text, and any comment containing it counted as "posted
// already", whoever wrote it. (a) A worker comment carrying the marker of a likely answer
// made `answer --body v2` report succeeded and remove the blocked label with no answer
// posted. (b) Answering "yes" to a worker's second question reported "posted already". Now
// the marker binds the answer to the question it answers, and only a comment steward's own
// login wrote counts.
func TestAnswerIsNeverSwallowed(t *testing.T) {
	for _, env := range backends {
		t.Run(env.Name, func(t *testing.T) {
			t.Run("a worker's comment carries the marker", func(t *testing.T) {
				e := newClarifyEnv(t, env.NewBackend(t))
				n := e.b.Seed.Issue(t, "which API")
				e.ask(t, n, "Should this use v1 or v2?")
				req := e.answerReq(n, "v2")
				pv, err := e.core.Preview(context.Background(), req)
				if err != nil || !pv.Allowed || markerOf(pv) == "" {
					t.Fatalf("preview: %+v %v", pv.Refusal, err)
				}
				// The worker writes the marker steward would write for "v2", as the last line.
				e.b.Seed.Comment(t, n, true, gitearec.WithMarker("v2", gitearec.AnswerMarker(markerOf(pv))))
				out := e.core.Apply(context.Background(), pv, "")
				if out.Result != govern.ResultSucceeded || strings.Contains(strings.Join(out.Effects, " "), "posted already") {
					t.Fatalf("answer: %+v", out)
				}
				if got := e.answers(t, n); got != 1 || e.marked(t, n) {
					t.Fatalf("%d answers by steward's login (want 1), marker still on: %v", got, e.marked(t, n))
				}
			})
			t.Run("the same words answer a second question", func(t *testing.T) {
				e := newClarifyEnv(t, env.NewBackend(t))
				n := e.b.Seed.Issue(t, "two questions")
				e.ask(t, n, "Can I delete the legacy table?")
				if _, out, err := e.core.Run(context.Background(), e.answerReq(n, "yes"), ""); err != nil || out.Result != govern.ResultSucceeded {
					t.Fatalf("first answer: %+v %v", out, err)
				}
				e.ask(t, n, "Should I also drop its index?")
				_, out, err := e.core.Run(context.Background(), e.answerReq(n, "yes"), "")
				if err != nil || out.Result != govern.ResultSucceeded || strings.Contains(strings.Join(out.Effects, " "), "posted already") {
					t.Fatalf("second answer: %+v %v", out, err)
				}
				if got := e.answers(t, n); got != 2 || e.marked(t, n) {
					t.Fatalf("%d answers by steward's login (want 2), marker still on: %v", got, e.marked(t, n))
				}
			})
			t.Run("verify counts only steward's own comment", func(t *testing.T) {
				e := newClarifyEnv(t, env.NewBackend(t))
				n := e.b.Seed.Issue(t, "verify")
				e.ask(t, n, "Which region?")
				pv, err := e.core.Preview(context.Background(), e.answerReq(n, "eu-west"))
				if err != nil || !pv.Allowed {
					t.Fatalf("preview: %+v %v", pv.Refusal, err)
				}
				e.proxy.fail.Store(true)
				out := e.core.Apply(context.Background(), pv, "")
				e.proxy.fail.Store(false)
				if out.Result != govern.ResultUnknown || e.proxy.failed.Load() != 1 {
					t.Fatalf("apply through a failing POST: %+v", out)
				}
				// Nothing of steward's landed; a worker writes the marker and takes the label off.
				e.b.Seed.Comment(t, n, true, gitearec.WithMarker("eu-west", gitearec.AnswerMarker(markerOf(pv))))
				if err := contract.Client(t, e.b, true, 50).RemoveLabel(context.Background(), n, marker); err != nil {
					t.Fatal(err)
				}
				vs, err := e.core.Verify(context.Background())
				if err != nil || len(vs) != 1 || vs[0].Result != govern.ResultFailed {
					t.Fatalf("verify: %v %+v; want failed (no answer by steward's login)", err, vs)
				}
			})
		})
	}
}
