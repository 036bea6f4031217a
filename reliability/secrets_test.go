package reliability_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"steward/cli"
	"steward/gitea"
	"steward/gitea/fakegitea"
	"steward/gitea/gitearec"
	"steward/govern"
	"steward/govern/actionid"
	"steward/model"
	"steward/model/live"
	"steward/tui"
)

// echoingGitea is the fake Gitea behind a handler that, when told to, fails requests with
// a 500 whose body echoes the request's Authorization header and a URL with the token as
// userinfo: the worst a misbehaving server or proxy can do with steward's token.
func echoingGitea(t *testing.T) (srv *httptest.Server, issue int64, echo func(bool)) {
	t.Helper()
	fake := fakegitea.New()
	fake.AddUser("maint", rigToken)
	repo := fake.CreateRepo("acme", "widgets")
	repo.CreateLabel(gitearec.DefaultMarkerLabels[0], "e99695")
	issue = repo.CreateIssue("worker-1", "Fix the sweeper", "body", gitearec.DefaultMarkerLabels[0])
	repo.AddComment("worker-1", issue, "Which lease class should the sweeper skip?")
	var on = make(chan bool, 1)
	on <- false
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := <-on
		on <- e
		if e {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, `{"message":"auth %q rejected at http://maint:%s@gitea.internal/ (token=%s)"}`, r.Header.Get("Authorization"), rigToken, rigToken)
			return
		}
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	fake.SetBaseURL(srv.URL)
	return srv, issue, func(v bool) { <-on; on <- v }
}

// everyView renders the root at every view, with the detail pane open, and the help; it
// returns all the frames' text.
func everyView(root *tui.Root) string {
	var b strings.Builder
	for _, k := range []string{"1", "2", "3", "4", "5", "6", "7"} {
		root.Update(tea.KeyPressMsg{Code: rune(k[0]), Text: k})
		b.WriteString(ansi.Strip(root.Render()))
		root.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
		b.WriteString(ansi.Strip(root.Render()))
		root.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	}
	root.Update(tea.KeyPressMsg{Code: '?', Text: "?"})
	b.WriteString(ansi.Strip(root.Render()))
	root.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	return b.String()
}

// TestTokenNeverReachesAnOutput drives a Gitea that echoes steward's token back in its
// errors through every path steward has: the live model's Gitea health, every workbench
// view, the governed answer's outcome, the audit log, `steward audit verify`, and the
// command line's status and answer (text and JSON). The token appears in none of them.
func TestTokenNeverReachesAnOutput(t *testing.T) {
	srv, issue, echo := echoingGitea(t)
	w := newWorkspace(t)
	client, err := gitea.New(gitea.Config{Login: gitea.Login{URL: srv.URL, Token: gitea.NewToken(rigToken)}, Owner: "acme", Repo: "widgets",
		RequestTimeout: 2 * time.Second})
	must(t, err)
	var seen strings.Builder
	check := func(where, s string) {
		t.Helper()
		seen.WriteString(s)
		if strings.Contains(s, rigToken) {
			t.Errorf("the token reached %s:\n%s", where, s)
		}
	}

	// The live model and every view of the workbench, while the server echoes.
	echo(true)
	live := w.startLive(t, live.Options{Config: model.Config{Org: "acme", Repo: "widgets"}, Gitea: client, GiteaEvery: 100 * time.Millisecond})
	var snap *model.Snapshot
	waitFor(t, 10*time.Second, "the Gitea source to fail", func() bool {
		snap = live.Current()
		return snap.Sources.Gitea.Status != model.StatusOK && snap.Sources.Gitea.Reason != "" && snap.Sources.Gitea.Status != model.StatusNotConfigured
	})
	b, _ := json.Marshal(snap)
	check("the snapshot", string(b))
	if !strings.Contains(snap.Sources.Gitea.Reason, "500") || !strings.Contains(snap.Sources.Gitea.Reason, "[redacted]") {
		t.Errorf("the Gitea reason does not carry the server's (scrubbed) echo: %q", snap.Sources.Gitea.Reason)
	}
	log, err := govern.OpenAudit(w.audit, nil)
	must(t, err)
	defer log.Close()
	ws := w.ws
	ws.Gitea = client
	core := govern.New(ws, log, govern.Options{Actor: govern.LocalActor(govern.RoleOperator, "maint")})
	defer core.Close()
	root := tui.New(tui.Options{Core: core, AuditPath: w.audit})
	root.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	root.Update(tui.SnapshotMsg{Snapshot: snap})
	check("a workbench view", everyView(root))

	// The governed answer: preview while the server behaves, apply while it echoes.
	echo(false)
	ctx := context.Background()
	req := govern.Request{Action: actionid.Answer, Target: govern.Target{Item: &govern.Item{Org: "acme", Repo: "widgets", Kind: "issue", Number: issue}},
		Params: govern.AnswerParams{Body: "Skip reviewer leases."}}
	pv, err := core.Preview(ctx, req)
	must(t, err)
	echo(true)
	out := core.Apply(ctx, pv, "")
	ob, _ := json.Marshal(out)
	check("the outcome", string(ob))
	vs, _ := core.Verify(ctx)
	vb, _ := json.Marshal(vs)
	check("verify", string(vb))
	audit, err := os.ReadFile(w.audit)
	must(t, err)
	check("the audit log", string(audit))

	// The command line, token from the environment.
	t.Setenv(gitea.EnvToken, rigToken)
	flags := append(w.flags(), "--gitea-url", srv.URL, "--gitea-repo", "acme/widgets")
	for _, args := range [][]string{
		{"status"}, {"status", "--json"},
		{"answer", "--org", "acme", "--repo", "widgets", "--number", fmt.Sprint(issue), "--body", "Skip reviewer leases.", "--as-role", "operator"},
		{"answer", "--org", "acme", "--repo", "widgets", "--number", fmt.Sprint(issue), "--body", "Skip them.", "--as-role", "operator", "--json"},
		{"audit"}, {"audit", "--json"}, {"audit", "verify", "--as-role", "operator"},
	} {
		_, o, e := steward(t, append(args, flags...)...)
		check("steward "+strings.Join(args, " "), o+e)
	}
	if !strings.Contains(seen.String(), "[redacted]") && !strings.Contains(seen.String(), "500") {
		t.Fatalf("the faults never reached an output; the test proves nothing:\n%s", seen.String())
	}
}

// TestSecretFilesAreOwnerOnly: the audit log a command creates is 0600 in a 0700
// directory, and `steward config init` writes 0600; a config holding a token that others
// can read is reported by `steward config check`, one that only the owner can read is not.
func TestSecretFilesAreOwnerOnly(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	code, out, errs := steward(t, append([]string{"lease", "expire-sweep", "--as-role", "operator"}, w.flags()...)...)
	if code != cli.ExitRefused && code != cli.ExitOK {
		t.Fatalf("expire-sweep: %d\n%s%s", code, out, errs)
	}
	for p, want := range map[string]os.FileMode{w.audit: 0o600, filepath.Dir(w.audit): 0o700} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", p, fi.Mode().Perm(), err, want)
		}
	}
	cfg := filepath.Join(t.TempDir(), "steward", "config.yaml")
	if code, out, errs := steward(t, "config", "init", "--config", cfg); code != cli.ExitOK {
		t.Fatalf("config init: %d\n%s%s", code, out, errs)
	}
	if fi, err := os.Stat(cfg); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("config init wrote mode %v (%v)", fi.Mode().Perm(), err)
	}
	body := "workspaces:\n  w:\n    gitea: {url: 'http://g.test', token: " + rigToken + ", owner: o, repo: r}\n"
	for mode, warned := range map[os.FileMode]bool{0o644: true, 0o600: false} {
		p := filepath.Join(t.TempDir(), "config.yaml")
		writeFile(t, p, []byte(body))
		must(t, os.Chmod(p, mode))
		_, out, errs := steward(t, "config", "check", "--config", p)
		if strings.Contains(out, "config-permissions") != warned {
			t.Errorf("mode %v: permission warning %v, want %v\n%s", mode, !warned, warned, out)
		}
		if strings.Contains(out+errs, rigToken) {
			t.Errorf("config check printed the token")
		}
	}
}

// fillStrings puts s into every string reachable from v (allocating nil pointers to
// structs and extending empty slices by one element, so every field is covered).
func fillStrings(v reflect.Value, s string) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(v.String() + " " + s)
		}
	case reflect.Pointer:
		if v.IsNil() && v.CanSet() && v.Type().Elem().Kind() == reflect.Struct {
			v.Set(reflect.New(v.Type().Elem()))
		}
		if !v.IsNil() {
			fillStrings(v.Elem(), s)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillStrings(v.Field(i), s)
			}
		}
	case reflect.Slice:
		if v.Len() == 0 && v.CanSet() {
			v.Set(reflect.Append(v, reflect.New(v.Type().Elem()).Elem()))
		}
		for i := range v.Len() {
			fillStrings(v.Index(i), s)
		}
	case reflect.Map:
		if v.IsNil() && v.CanSet() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		if v.Type().Key().Kind() == reflect.String && v.Type().Elem().Kind() == reflect.Interface {
			v.SetMapIndex(reflect.ValueOf("detail "+s), reflect.ValueOf("value "+s))
		}
	}
}

// TestTokenInEverySnapshotFieldIsRedactedOnScreen: a snapshot with steward's token in every
// string field (as if a worker had pasted it into a lock, a DB row and a Gitea comment)
// is drawn on every view — with the token shown when nothing redacts it (so the test can
// fail), and nowhere once it passes the redactor the command line puts between the live
// model and the workbench (`steward ui`, `steward status`).
func TestTokenInEverySnapshotFieldIsRedactedOnScreen(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.liveLease(t, w.ws.DBPath, "L1", 5)
	writeFile(t, filepath.Join(w.ws.LocksDir, "a.json"), hostileLock(t, 9))
	s, _ := w.status(t)
	fillStrings(reflect.ValueOf(s), "tok="+rigToken+" https://maint:"+rigToken+"@gitea.example/")
	s.Sources.Gitea.Status = model.StatusDegraded
	draw := func(s *model.Snapshot) string {
		root := tui.New(tui.Options{})
		root.Update(tea.WindowSizeMsg{Width: 240, Height: 60})
		root.Update(tui.SnapshotMsg{Snapshot: s})
		return everyView(root)
	}
	if !strings.Contains(draw(s), rigToken) {
		t.Fatal("the unredacted snapshot never shows the token: the test proves nothing")
	}
	red := govern.NewRedactor()
	red.AddScrubber(gitea.NewToken(rigToken).Scrub)
	clean := red.Snapshot(s)
	if f := draw(clean); strings.Contains(f, rigToken) || !strings.Contains(f, "[redacted]") {
		t.Fatalf("the token reached the screen through the redactor (or nothing was redacted):\n%s", f)
	}
	b, _ := json.Marshal(clean)
	if strings.Contains(string(b), rigToken) {
		t.Fatal("the redacted snapshot's JSON holds the token")
	}
	if b0, _ := json.Marshal(s); !strings.Contains(string(b0), rigToken) {
		t.Fatal("Snapshot changed the snapshot it was given (published snapshots are shared)")
	}
}

// TestStatusRedactsTheConfiguredToken: a lock file and a lease row carrying steward's own
// token (a worker pasted it) are printed by `steward status` with the token redacted, in
// text and JSON, when steward knows the token (here from the environment).
func TestStatusRedactsTheConfiguredToken(t *testing.T) {
	srv, _, _ := echoingGitea(t)
	w := newWorkspace(t)
	rec := hostileRecord(t, "expiry-far-future.json")
	rec["owner_session"] = "session-" + rigToken
	b, err := json.Marshal(rec)
	must(t, err)
	writeFile(t, filepath.Join(w.ws.LocksDir, "a.json"), b)
	w.liveLease(t, w.ws.DBPath, "L-"+rigToken, 5)
	t.Setenv(gitea.EnvToken, rigToken)
	flags := append(w.flags(), "--gitea-url", srv.URL, "--gitea-repo", "acme/widgets")
	for _, args := range [][]string{{"status"}, {"status", "--json"}} {
		code, out, errs := steward(t, append(args, flags...)...)
		if code != cli.ExitOK || strings.Contains(out+errs, rigToken) || !strings.Contains(out, "[redacted]") {
			t.Errorf("steward %s: exit %d, token shown %v, redacted %v\n%s%s", strings.Join(args, " "), code,
				strings.Contains(out+errs, rigToken), strings.Contains(out, "[redacted]"), strings.ReplaceAll(out+errs, rigToken, "<TOKEN>"), "")
		}
	}
}
