package realgitea_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"steward/gitea"
	"steward/gitea/contract"
	"steward/gitea/giteatest"
	"steward/govern"
	"steward/govern/actionid"
)

func TestMain(m *testing.M) { os.Exit(giteatest.Main(m)) }

// dropProxy forwards every request to the server; while drop is set it lets a POST reach
// the server and then closes the client's connection without an answer: the request
// landed, the response was lost.
type dropProxy struct {
	target  *url.URL
	drop    atomic.Bool
	dropped atomic.Int64
}

func (p *dropProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	out, _ := http.NewRequestWithContext(r.Context(), r.Method, p.target.String()+r.URL.RequestURI(), strings.NewReader(string(body)))
	out.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	if r.Method == http.MethodPost && p.drop.Load() {
		p.dropped.Add(1)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
		}
		return
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

func TestAnswerWithLostResponseIsUnknownThenVerifiedWithoutDuplicate(t *testing.T) {
	srv := giteatest.Shared(t)
	b := contract.NewRealBackend(t, srv)
	const marker = "status:blocked-pending-clarification"
	b.Seed.Label(t, marker)
	n := b.Seed.Issue(t, "Which storage engine?", marker)
	b.Seed.Comment(t, n, true, "Should this use SQLite or Postgres?")

	target, _ := url.Parse(b.URL)
	proxy := &dropProxy{target: target}
	front := httptest.NewServer(proxy)
	t.Cleanup(front.Close)
	cl, err := gitea.New(gitea.Config{Login: gitea.Login{URL: front.URL, Token: gitea.NewToken(b.MaintainerToken)},
		Owner: b.Owner, Repo: b.Repo, RequestTimeout: 10 * time.Second})
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
	defer log.Close()
	core := govern.New(ws, log, govern.Options{Actor: govern.LocalActor(govern.RoleOperator, b.Maintainer)})
	req := govern.Request{Action: actionid.Answer, Target: govern.Target{Item: &govern.Item{Org: b.Owner, Repo: b.Repo, Kind: "issue", Number: n}},
		Params: govern.AnswerParams{Body: "Use **SQLite**; the control plane is single-writer."}}
	ctx := context.Background()

	pv, err := core.Preview(ctx, req)
	if err != nil || !pv.Allowed {
		t.Fatalf("preview: %v %+v", err, pv.Refusal)
	}
	proxy.drop.Store(true)
	out := core.Apply(ctx, pv, "")
	proxy.drop.Store(false)
	if out.Result != govern.ResultUnknown || out.Disposition != govern.DispositionOutcomeUnknown || proxy.dropped.Load() != 1 {
		t.Fatalf("lost response: %+v (dropped %d), want unknown/outcome_unknown", out, proxy.dropped.Load())
	}
	if !strings.Contains(out.Message, "verify before retrying") {
		t.Errorf("unknown outcome message: %q", out.Message)
	}
	// Read back: the comment landed, the label did not move, so the evidence cannot settle it yet.
	vs, err := core.Verify(ctx)
	if err != nil || len(vs) != 1 || vs[0].Result != govern.ResultUnknown {
		t.Fatalf("verify after the lost response: %v %+v", err, vs)
	}
	// The retry finds the marker and does not post again; it finishes the label change.
	_, retry, err := core.Run(ctx, req, "")
	if err != nil || retry.Result != govern.ResultSucceeded || !strings.Contains(strings.Join(retry.Effects, " "), "not posted again") {
		t.Fatalf("retry: %+v %v", retry, err)
	}
	comments, err := cl.ListComments(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	answers := 0
	for _, c := range comments {
		if strings.Contains(c.Body, "steward:answer") {
			answers++
		}
	}
	if answers != 1 {
		t.Fatalf("%d answer comments on the real server, want exactly 1", answers)
	}
	// Now the evidence settles the first attempt: comment posted, label off.
	vs, err = core.Verify(ctx)
	if err != nil || len(vs) != 1 || vs[0].Result != govern.ResultSucceeded {
		t.Fatalf("verify after the retry: %v %+v", err, vs)
	}
	recs, _, _ := govern.ReadAudit(log.Path())
	data, _ := os.ReadFile(log.Path())
	if strings.Contains(string(data), b.MaintainerToken) {
		t.Fatal("token in the audit log")
	}
	for _, a := range govern.Attempts(recs) {
		if a.Outcomes != 1 {
			t.Errorf("attempt %s has %d terminal records", a.ID, a.Outcomes)
		}
	}
}
