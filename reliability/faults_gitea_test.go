package reliability_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"steward/gitea"
	"steward/gitea/fakegitea"
	"steward/gitea/gitearec"
	"steward/gitea/giteatest"
	"steward/govern"
	"steward/govern/actionid"
	"steward/model"
	"steward/model/live"
)

// giteaRig is an in-process Gitea (the fake subset) behind a fault proxy, with one issue
// carrying the clarification marker and a worker's question.
type giteaRig struct {
	fake   *fakegitea.Server
	proxy  *giteatest.Proxy
	client *gitea.Client // through the proxy, 1 s per request
	direct *gitea.Client // straight to the server, for reading back
	issue  int64
}

const rigToken = "fake-maintainer-token-0123456789"

func newGiteaRig(t *testing.T) *giteaRig {
	t.Helper()
	fake := fakegitea.New()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	fake.SetBaseURL(srv.URL)
	fake.AddUser("maint", rigToken)
	repo := fake.CreateRepo("acme", "widgets")
	repo.CreateLabel(gitearec.DefaultMarkerLabels[0], "e99695")
	n := repo.CreateIssue("worker-1", "Fix the sweeper", "body", gitearec.DefaultMarkerLabels[0])
	repo.AddComment("worker-1", n, "Which lease class should the sweeper skip?")
	proxy := giteatest.NewProxy(t, srv.URL)
	mk := func(url string) *gitea.Client {
		c, err := gitea.New(gitea.Config{Login: gitea.Login{URL: url, Token: gitea.NewToken(rigToken)}, Owner: "acme", Repo: "widgets",
			RequestTimeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}})
		must(t, err)
		return c
	}
	return &giteaRig{fake: fake, proxy: proxy, client: mk(proxy.URL), direct: mk(srv.URL), issue: n}
}

// TestGiteaFaultsOnScreen: the live model polls a Gitea that stops answering (every
// connection held, nothing forwarded, until released), answers 500, resets every connection
// after the request, and refuses connections. Each time the Gitea source leaves ok with a
// reason (the client's own 1 s limit reads "deadline exceeded" for the held one), the
// workbench keeps drawing and the lock directory is still followed, and Gitea recovers by
// itself. TestStuckGiteaHoldsUpNothing proves the not-waiting causally.
func TestGiteaFaultsOnScreen(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	rig := newGiteaRig(t)
	live := w.startLive(t, live.Options{Config: model.Config{Org: "acme", Repo: "widgets"}, Gitea: rig.client, GiteaEvery: 100 * time.Millisecond})
	scr := watch(t, live, nil)
	ok := func(s *model.Snapshot) bool {
		return s.Sources.Gitea.Status == model.StatusOK && len(s.Clarifications) == 1
	}
	scr.waitSnapshot(t, hangLimit, "Gitea ok with the question", ok)
	faults := []struct {
		name   string
		set    func()
		reason string
	}{
		{"held", func() { rig.proxy.SetMode(giteatest.Hold, 0) }, "deadline exceeded"},
		{"500", func() { rig.fake.SetFault(func(*http.Request) int { return http.StatusInternalServerError }) }, "500"},
		{"reset", func() { rig.proxy.SetMode(giteatest.DropResponse, 0) }, "gitea"},
		{"refused", func() { rig.proxy.SetMode(giteatest.Refuse, 0) }, "refused"},
	}
	for i, f := range faults {
		f.set()
		s := scr.waitSnapshot(t, hangLimit, f.name+": Gitea not ok", func(s *model.Snapshot) bool {
			return s.Sources.Gitea.Status != model.StatusOK && strings.Contains(strings.ToLower(s.Sources.Gitea.Reason), f.reason)
		})
		t.Logf("%s: gitea %s: %s", f.name, s.Sources.Gitea.Status, s.Sources.Gitea.Reason)
		// The other sources are not held up by a stuck Gitea.
		name := "g" + string(rune('a'+i)) + ".json"
		writeFile(t, filepath.Join(w.ws.LocksDir, name), hostileLock(t, 60+i))
		scr.waitSnapshot(t, hangLimit, f.name+": a new lock while Gitea is down", func(s *model.Snapshot) bool { return hasClaim(s, "", name) })
		scr.keepsDrawing(t, 10)
		rig.fake.SetFault(nil)
		rig.proxy.SetMode(giteatest.Forward, 0)
		scr.waitSnapshot(t, hangLimit, f.name+": Gitea back", ok)
	}
}

// TestStuckGiteaHoldsUpNothing: a Gitea that accepts the live model's request and never
// answers, proven causally, not timed. The client waits up to twice the test's hang limit, so
// once the proxy holds the model's Gitea read, that read cannot finish before the proxy lets
// it go; while it is held, a new lock file is read and drawn and the screen draws more
// frames. Nothing the screen or the lock directory needs waits on Gitea. Released, Gitea is
// read again.
func TestStuckGiteaHoldsUpNothing(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	rig := newGiteaRig(t)
	patient, err := gitea.New(gitea.Config{Login: gitea.Login{URL: rig.proxy.URL, Token: gitea.NewToken(rigToken)}, Owner: "acme", Repo: "widgets",
		RequestTimeout: 2 * hangLimit, Transport: &http.Transport{DisableKeepAlives: true}})
	must(t, err)
	live := w.startLive(t, live.Options{Config: model.Config{Org: "acme", Repo: "widgets"}, Gitea: patient, GiteaEvery: 50 * time.Millisecond})
	scr := watch(t, live, nil)
	scr.waitSnapshot(t, hangLimit, "Gitea ok with the question", func(s *model.Snapshot) bool {
		return s.Sources.Gitea.Status == model.StatusOK && len(s.Clarifications) == 1
	})
	rig.proxy.SetMode(giteatest.Hold, 0)
	waitFor(t, hangLimit, "the live model's Gitea read held", func() bool { return rig.proxy.Held() > 0 })
	writeFile(t, filepath.Join(w.ws.LocksDir, "held.json"), hostileLock(t, 70))
	scr.waitSnapshot(t, hangLimit, "a new lock while Gitea is held", func(s *model.Snapshot) bool { return hasClaim(s, "", "held.json") })
	scr.keepsDrawing(t, 20)
	if rig.proxy.Held() == 0 {
		t.Fatal("the proxy let a Gitea read go before the release: the proof needs a read held throughout")
	}
	scanned := scr.snapshot().Sources.Gitea.ScannedAt
	rig.proxy.SetMode(giteatest.Forward, 0)
	scr.waitSnapshot(t, hangLimit, "Gitea read again", func(s *model.Snapshot) bool {
		return s.Sources.Gitea.ScannedAt.After(scanned) && s.Sources.Gitea.Status == model.StatusOK && hasClaim(s, "", "held.json")
	})
}

// TestGiteaFaultsInActions: the governed answer through the fault proxy. Nothing sent
// (refused connection) is not_attempted; a response lost after the comment was sent, a
// 5xx, and a timeout are unknown ("may have taken effect"); a retry after unknown never
// posts twice; audit verify settles what the evidence shows.
func TestGiteaFaultsInActions(t *testing.T) {
	t.Parallel()
	type fault struct {
		name string
		// at the step before the comment is posted
		set func(r *giteaRig)
		// want is the first apply's result and disposition.
		want govern.Result
		disp govern.Disposition
		// landed: the comment reached the server anyway.
		landed bool
	}
	post := func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/comments")
	}
	cases := []fault{
		{"refused-before-sending", func(r *giteaRig) { r.proxy.SetMode(giteatest.Refuse, 0) }, govern.ResultFailed, govern.DispositionNotAttempted, false},
		{"response-lost", func(r *giteaRig) { r.proxy.SetMode(giteatest.DropResponse, 0) }, govern.ResultUnknown, govern.DispositionOutcomeUnknown, true},
		{"http-500", func(r *giteaRig) {
			r.fake.SetFault(func(q *http.Request) int {
				if post(q) {
					return http.StatusInternalServerError
				}
				return 0
			})
		}, govern.ResultUnknown, govern.DispositionOutcomeUnknown, false},
		{"http-403", func(r *giteaRig) {
			r.fake.SetFault(func(q *http.Request) int {
				if post(q) {
					return http.StatusForbidden
				}
				return 0
			})
		}, govern.ResultRefused, govern.DispositionNotAttempted, false},
		{"slow-5s", func(r *giteaRig) { r.proxy.SetMode(giteatest.Delay, 5*time.Second) }, govern.ResultUnknown, govern.DispositionOutcomeUnknown, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorkspace(t)
			rig := newGiteaRig(t)
			ws := w.ws
			ws.Gitea = rig.client
			log, err := govern.OpenAudit(w.audit, nil)
			must(t, err)
			defer log.Close()
			var armed atomic.Bool
			core := govern.New(ws, log, govern.Options{Actor: govern.LocalActor(govern.RoleOperator, "maint"), Step: func(s string) {
				if s == "gitea-before-comment" && armed.CompareAndSwap(false, true) {
					c.set(rig)
				}
			}})
			defer core.Close()
			ctx := context.Background()
			req := govern.Request{Action: actionid.Answer, Target: govern.Target{Item: &govern.Item{Org: "acme", Repo: "widgets", Kind: "issue", Number: rig.issue}},
				Params: govern.AnswerParams{Body: "Skip reviewer leases."}}
			pv, err := core.Preview(ctx, req)
			must(t, err)
			if !pv.Allowed {
				t.Fatalf("preview refused: %+v", pv.Refusal)
			}
			out := core.Apply(ctx, pv, "")
			if out.Result != c.want || out.Disposition != c.disp {
				t.Fatalf("apply: %s/%s (%s %s), want %s/%s", out.Result, out.Disposition, out.Code, out.Message, c.want, c.disp)
			}
			if out.Result == govern.ResultUnknown && !strings.Contains(out.Message, "verify before retrying") {
				t.Errorf("unknown outcome does not say to verify: %q", out.Message)
			}
			marker := func() int {
				cs, err := rig.direct.ListComments(ctx, rig.issue)
				must(t, err)
				n := 0
				for _, cm := range cs {
					if strings.Contains(cm.Body, "steward:answer") {
						n++
					}
				}
				return n
			}
			if c.landed {
				// Read back past the proxy: the held request is still on its way.
				waitFor(t, hangLimit, "the comment that may have landed", func() bool { return marker() == 1 })
			} else if n := marker(); n != 0 {
				t.Fatalf("%d answers posted, want none", n)
			}
			rig.fake.SetFault(nil)
			rig.proxy.SetMode(giteatest.Forward, 0)
			if out.Result == govern.ResultUnknown {
				vs, err := core.Verify(ctx)
				must(t, err)
				if len(vs) != 1 {
					t.Fatalf("verify: %+v", vs)
				}
				if !c.landed && vs[0].Result != govern.ResultFailed {
					t.Errorf("nothing landed, verify says %s: %v", vs[0].Result, vs[0].Evidence)
				}
			}
			// The retry: previews again and applies; it never posts a second answer.
			_, again, err := core.Run(ctx, req, "")
			must(t, err)
			if again.Result != govern.ResultSucceeded {
				t.Fatalf("retry: %+v", again)
			}
			if n := marker(); n != 1 {
				t.Fatalf("%d answers after the retry, want exactly 1", n)
			}
			recs, finds, err := govern.ReadAudit(w.audit)
			must(t, err)
			for _, a := range govern.Attempts(recs) {
				if a.Outcomes != 1 {
					t.Errorf("attempt %s has %d terminal records", a.ID, a.Outcomes)
				}
			}
			if len(finds) > 0 {
				t.Errorf("audit findings: %+v", finds)
			}
		})
	}
}
