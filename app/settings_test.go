package app_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"steward/app"
	"steward/attention"
	"steward/config"
	"steward/gitea/fakegitea"
	"steward/govern"
	"steward/govern/actionid"
	"steward/leases/leaserec"
	"steward/model"
	"steward/tui"
)

// sampleNow is the instant the committed sample workspace (testdata/workspace) is read at.
var sampleNow = time.Date(2026, 7, 23, 10, 5, 0, 0, time.UTC)

// world is one row's workspace: a copy of the sample workspace, a fake Gitea repository
// (acme/fleet) with a question under a custom marker, an item under a custom blocked
// label and a pull request with no claim, and a config file.
type world struct {
	dir, url, token string
	env             map[string]string
	now             time.Time
	// base, when set, is the config file the rows start from instead of file's.
	base string
	fake *fakegitea.Server
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{dir: t.TempDir(), token: "fake-settings-token-0123456789", env: map[string]string{"HOME": t.TempDir()}, now: sampleNow}
	if err := os.CopyFS(w.dir, os.DirFS("../testdata/workspace")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(w.dir, "repo", "branches"), 0o755); err != nil {
		t.Fatal(err)
	}
	fake := fakegitea.New()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	fake.SetBaseURL(srv.URL)
	fake.AddUser("maintainer", w.token)
	r := fake.CreateRepo("acme", "fleet")
	q := r.CreateIssue("worker", "Which API?", "body", "needs-answer")
	r.AddComment("worker", q, "Which API should I use?")
	r.CreateIssue("worker", "Stuck", "body", "stuck")
	r.CreateBranch("feature")
	r.CreatePR("worker", "A quiet PR", "feature", "main")
	w.url, w.fake = srv.URL, fake
	return w
}

// file is the base config file: the sample workspace, the fake Gitea, and extra.
func (w *world) file(extra string) string {
	if w.base != "" {
		return w.base + extra
	}
	return fmt.Sprintf(`default_workspace: w
workspaces:
  w:
    locks_dir: %[1]s/locks
    db_path: %[1]s/control_plane.sqlite3
    repo_root: %[1]s/repo
    audit_log: %[1]s/audit.jsonl
    gitea:
      url: %[2]s
      token: %[3]s
      owner: acme
      repo: fleet
%[4]s`, w.dir, w.url, w.token, extra)
}

// open resolves the config file text (and the row's variables) the way every command
// does and opens the session on it.
func (w *world) open(t *testing.T, text string) *app.Session {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) (string, bool) { v, ok := w.env[k]; return v, ok }
	r, err := config.Load(config.Inputs{Path: path, Getenv: env, SystemPaths: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Problems {
		if p.Severity == config.SevError {
			t.Fatalf("config: %s", p.Message)
		}
	}
	s, err := app.FromConfig(r, env)
	if err != nil {
		t.Fatal(err)
	}
	s.Now = func() time.Time { return w.now }
	s.Audit = app.AuditWrite
	sess, err := app.Open(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

func (w *world) snap(t *testing.T, extra string) *model.Snapshot {
	return w.open(t, w.file(extra)).Snapshot(context.Background())
}

func refusedCount(s *model.Snapshot) int {
	for _, c := range s.Contention {
		if c.Kind == model.ContentionClaimRefused {
			return c.Count
		}
	}
	return 0
}

func hasOrphan(s *model.Snapshot, k model.OrphanKind) bool {
	for _, o := range s.Orphans {
		if o.Kind == k {
			return true
		}
	}
	return false
}

// screen draws the workbench of sess on s at 200x50, on the Clarifications page with the
// first row's detail open.
func screen(sess *app.Session, s *model.Snapshot, bg tea.Msg) string {
	o := sess.Workbench
	o.Source = nil
	r := tui.New(o)
	r.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	if bg != nil {
		r.Update(bg)
	}
	r.Update(tui.SnapshotMsg{Snapshot: s})
	r.Update(tea.KeyPressMsg{Code: '4', Text: "4"})
	r.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	return r.Render()
}

// TestEverySettingHasAnEffect: one row per configuration key (config.Keys: a key added
// without a row fails) and per environment override; each row changes the key from the
// base and asserts what a user sees change: a status field, a verdict of the core, what is
// read from the Gitea, the workbench's screen. Six of these settings were parsed and
// shown by `config check` and used by nothing, and `status` ignored the policy overrides.
func TestEverySettingHasAnEffect(t *testing.T) {
	type row struct {
		key    string
		effect func(t *testing.T, w *world)
	}
	rows := []row{
		{config.KeyLocksDir, func(t *testing.T, w *world) {
			if s := w.snap(t, ""); s.Sources.Locks.Status != model.StatusOK || len(s.Claims) != 5 {
				t.Fatalf("the sample's locks: %s, %d claims", s.Sources.Locks.Status, len(s.Claims))
			}
			other := strings.Replace(w.file(""), w.dir+"/locks", w.dir+"/nope", 1)
			if s := w.open(t, other).Snapshot(context.Background()); s.Sources.Locks.Status != model.StatusUnavailable {
				t.Fatalf("locks_dir naming no directory: %s", s.Sources.Locks.Status)
			}
		}},
		{config.KeyDBPath, func(t *testing.T, w *world) {
			other := strings.Replace(w.file(""), "control_plane.sqlite3", "missing.sqlite3", 1)
			if s := w.open(t, other).Snapshot(context.Background()); s.Sources.DB.Status != model.StatusUnavailable {
				t.Fatalf("db_path naming no DB: %s", s.Sources.DB.Status)
			}
			if s := w.snap(t, ""); s.Sources.DB.Status != model.StatusOK || refusedCount(s) != 2 {
				t.Fatalf("the sample's DB: %s, %d refused", s.Sources.DB.Status, refusedCount(s))
			}
		}},
		{config.KeyRepoRoot, func(t *testing.T, w *world) {
			a, b := worktrees(w.snap(t, "")), worktrees(w.open(t, strings.Replace(w.file(""), w.dir+"/repo", w.dir+"/elsewhere", 1)).Snapshot(context.Background()))
			if a == b {
				t.Fatalf("the claims' worktrees read the same under two repo roots: %s", a)
			}
		}},
		{config.KeyDBHost, func(t *testing.T, w *world) {
			// The seed's rows record no host (its control plane is single-host): forget the
			// sample's, so the rows are judged on the DB's host.
			db, err := sql.Open("sqlite", filepath.Join(w.dir, "control_plane.sqlite3"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = db.Exec("UPDATE sessions SET host = ''")
			db.Close()
			if err != nil {
				t.Fatal(err)
			}
			a := liveness(w.snap(t, ""))
			b := liveness(w.open(t, strings.Replace(w.file(""), "    audit_log:", "    db_host: another-host\n    audit_log:", 1)).Snapshot(context.Background()))
			if a == b {
				t.Fatalf("db_host another-host: liveness %s, on this host %s", b, a)
			}
		}},
		{config.KeyHost, func(t *testing.T, w *world) {
			// The lock directory on another host: its lock files are not observed from this
			// one (never "none", never unavailable); the DB's verdicts still show.
			here := w.snap(t, "")
			s := w.open(t, strings.Replace(w.file(""), "    audit_log:", "    host: another-host\n    audit_log:", 1)).Snapshot(context.Background())
			locked := 0
			for _, c := range s.Claims {
				if c.LockFile != "" {
					locked++
				}
			}
			if here.Sources.Locks.Status != model.StatusOK || s.Sources.Locks.Status != model.StatusNotObserved || locked != 0 ||
				!strings.Contains(s.Sources.Locks.Reason, "another-host") {
				t.Fatalf("host another-host: locks %s (%s), %d claims of a lock; here %s", s.Sources.Locks.Status, s.Sources.Locks.Reason, locked, here.Sources.Locks.Status)
			}
			if s.Sources.DB.Status != model.StatusOK || refusedCount(s) != refusedCount(here) || len(s.Claims) == 0 {
				t.Fatalf("host another-host: the DB's verdicts are gone: db %s, %d refused, %d claims", s.Sources.DB.Status, refusedCount(s), len(s.Claims))
			}
		}},
		{config.KeyAuditLog, func(t *testing.T, w *world) {
			sess := w.open(t, w.file(""))
			if sess.Workbench.AuditPath != filepath.Join(w.dir, "audit.jsonl") {
				t.Fatalf("the workbench reads the audit log at %q", sess.Workbench.AuditPath)
			}
			if res := apply(sess); res.Result == govern.ResultSucceeded {
				t.Fatal("a release of no lease succeeded")
			}
			if b, err := os.ReadFile(filepath.Join(w.dir, "audit.jsonl")); err != nil || !strings.Contains(string(b), "no-such-lease") {
				t.Fatalf("the attempt is not in the configured audit log (%v): %s", err, b)
			}
		}},
		{config.KeyTeaLogin, func(t *testing.T, w *world) {
			xdg := t.TempDir()
			w.env["XDG_CONFIG_HOME"] = xdg
			tea := fmt.Sprintf("logins:\n  - name: wrong\n    url: %s\n    token: not-the-token-000000\n    default: true\n  - name: right\n    url: %s\n    token: %s\n", w.url, w.url, w.token)
			if err := os.MkdirAll(filepath.Join(xdg, "tea"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(xdg, "tea", "config.yml"), []byte(tea), 0o600); err != nil {
				t.Fatal(err)
			}
			base := strings.NewReplacer("      url: "+w.url+"\n", "", "      token: "+w.token+"\n", "").Replace(w.file(""))
			if s := w.open(t, base).Snapshot(context.Background()); s.Sources.Gitea.Status == model.StatusOK {
				t.Fatal("tea's default login (a wrong token) read the Gitea")
			}
			named := strings.Replace(base, "      owner:", "      tea_login: right\n      owner:", 1)
			if s := w.open(t, named).Snapshot(context.Background()); s.Sources.Gitea.Status != model.StatusOK {
				t.Fatalf("tea_login right: Gitea %s (%s)", s.Sources.Gitea.Status, s.Sources.Gitea.Reason)
			}
		}},
		{config.KeyGiteaURL, giteaBroken("      url: ", "http://127.0.0.1:1")},
		{config.KeyGiteaToken, giteaBroken("      token: ", "wrong-token-0000000000")},
		{config.KeyGiteaOwner, giteaBroken("      owner: ", "nobody")},
		{config.KeyGiteaRepo, giteaBroken("      repo: ", "nothing")},
		{config.KeyGiteaRemote, func(t *testing.T, w *world) {
			// The sample's rows and locks name acme/widgets under the remote origin, each
			// issue leased; Gitea has the same repository, issue #1 closed. Under the remote
			// the rows name, Gitea's facts join the leases: the closed issue's live claim is
			// an orphan. Under another, they are apart, and nothing is concluded of #1.
			r := w.fake.CreateRepo("acme", "widgets")
			for i := range 4 {
				r.CreateIssue("maintainer", fmt.Sprintf("widget %d", i+1), "body")
			}
			r.CloseIssue(1)
			widgets := strings.Replace(w.file(""), "      repo: fleet\n", "      repo: widgets\n", 1)
			with := func(remote string) bool {
				return hasOrphan(w.open(t, strings.Replace(widgets, "      repo: widgets\n", "      repo: widgets\n"+remote, 1)).Snapshot(context.Background()), model.OrphanClosedIssueLiveClaim)
			}
			if !with("      remote: origin\n") {
				t.Fatal("gitea.remote origin (the rows' remote): the closed issue's live lease is no orphan")
			}
			if with("      remote: elsewhere\n") {
				t.Fatal("gitea.remote elsewhere: Gitea's closed issue was joined with the origin lease")
			}
			w.env["STEWARD_GITEA_REMOTE"] = "elsewhere"
			if with("      remote: origin\n") {
				t.Fatal("STEWARD_GITEA_REMOTE elsewhere over the file's origin: Gitea's closed issue was joined with the origin lease")
			}
			delete(w.env, "STEWARD_GITEA_REMOTE")
			// Unset: inferred from the DB's rows for acme/widgets (all origin), and said.
			s := w.open(t, widgets).Snapshot(context.Background())
			if !hasOrphan(s, model.OrphanClosedIssueLiveClaim) || !strings.Contains(strings.Join(s.Sources.Gitea.Notes, " "), "remote origin inferred") {
				t.Fatalf("gitea.remote unset: orphan %v, Gitea notes %q", hasOrphan(s, model.OrphanClosedIssueLiveClaim), s.Sources.Gitea.Notes)
			}
		}},
		{config.KeyMarkerLabels, func(t *testing.T, w *world) {
			if s := w.snap(t, ""); len(s.Clarifications) != 0 {
				t.Fatalf("default markers found %d clarifications", len(s.Clarifications))
			}
			if s := w.snap(t, "marker_labels: [needs-answer]\n"); len(s.Clarifications) != 1 {
				t.Fatalf("marker_labels [needs-answer]: %d clarifications", len(s.Clarifications))
			}
		}},
		{config.KeyBlockedLabel, func(t *testing.T, w *world) {
			if n := s2bucket(w.snap(t, ""), model.BucketNeedsController); n != 0 {
				t.Fatalf("default blocked label: %d needs_controller", n)
			}
			if n := s2bucket(w.snap(t, "blocked_label: stuck\n"), model.BucketNeedsController); n != 1 {
				t.Fatalf("blocked_label stuck: %d needs_controller", n)
			}
		}},
		{config.KeyClarificationSLA, func(t *testing.T, w *world) {
			w.now = time.Now().Add(2 * time.Hour)
			for _, c := range []struct {
				sla, want string
			}{{"", "2h00m / 24h00m"}, {"clarification_sla: 1h\n", "2h00m > SLA 1h00m"}} {
				sess := w.open(t, w.file("marker_labels: [needs-answer]\n"+c.sla))
				if got := screen(sess, sess.Snapshot(context.Background()), nil); !strings.Contains(got, c.want) {
					t.Fatalf("clarification_sla %q: the screen lacks %q:\n%s", c.sla, c.want, got)
				}
			}
		}},
		{config.KeyStalePR, func(t *testing.T, w *world) {
			w.now = time.Now().Add(2 * time.Hour)
			if hasOrphan(w.snap(t, ""), model.OrphanStalePRNoClaim) {
				t.Fatal("a 2-hour-quiet PR is stale under the 72h default")
			}
			if !hasOrphan(w.snap(t, "thresholds:\n  stale_pr: 1h\n"), model.OrphanStalePRNoClaim) {
				t.Fatal("thresholds.stale_pr 1h: a 2-hour-quiet PR is not stale")
			}
		}},
		{config.KeyContentionWindow, func(t *testing.T, w *world) {
			if n := refusedCount(w.snap(t, "thresholds:\n  contention_window: 1s\n")); n != 0 {
				t.Fatalf("contention_window 1s: %d refused claims counted (the sample's are minutes old)", n)
			}
			if s := w.snap(t, ""); refusedCount(s) != 2 || s.Contention[0].WindowS != 3600 {
				t.Fatalf("default window: %+v", s.Contention)
			}
		}},
		{config.KeyTheme, func(t *testing.T, w *world) {
			w.now = time.Now()
			dark, light := w.open(t, w.file("marker_labels: [needs-answer]\ntheme: dark\n")), w.open(t, w.file("marker_labels: [needs-answer]\ntheme: light\n"))
			if screen(dark, dark.Snapshot(context.Background()), nil) == screen(light, light.Snapshot(context.Background()), nil) {
				t.Fatal("theme dark and light draw the question the same")
			}
		}},
		{config.KeyReadOnly, func(t *testing.T, w *world) {
			sess := w.open(t, w.file("read_only: true\n"))
			if res := apply(sess); res.Code != "read_only" {
				t.Fatalf("read_only: true: the core did not refuse as read-only: %+v", res)
			}
		}},
		{config.KeyRole, func(t *testing.T, w *world) {
			// The sample's lease past its expiry may be reclaimed by an operator, not a viewer.
			codes := map[string]govern.Outcome{}
			for _, role := range []string{"viewer", "operator"} {
				w.env["STEWARD_ROLE"] = role
				sess := w.open(t, w.file(""))
				var o *model.Orphan
				for _, x := range sess.Snapshot(context.Background()).Orphans {
					if x.Kind == model.OrphanActiveLeasePastExpiry && x.Action != nil {
						o = x
					}
				}
				if o == nil {
					t.Fatal("the sample has no lease past its expiry to reclaim")
				}
				ctx := context.Background()
				pv, err := sess.Core.Preview(ctx, govern.Request{Action: o.Action.ID, Target: govern.Target{LeaseID: o.Action.Target.LeaseID, LockFile: o.Action.Target.LockFile}})
				if err != nil {
					t.Fatal(err)
				}
				codes[role] = sess.Core.Apply(ctx, pv, "")
			}
			if codes["viewer"].Result == govern.ResultSucceeded || codes["operator"].Result != govern.ResultSucceeded {
				t.Fatalf("viewer %+v, operator %+v: want the viewer refused and the operator's reclaim applied", codes["viewer"], codes["operator"])
			}
		}},
		{config.KeyDBPasswordFile, func(t *testing.T, w *world) {
			// A PostgreSQL DB (db_url) takes its password from db_password_file: one others can
			// read is refused, with the reason on the DB source, before any connection.
			pw := filepath.Join(w.dir, "pgpass")
			if err := os.WriteFile(pw, []byte("secret\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			pg := strings.Replace(w.file(""), "db_path: "+w.dir+"/control_plane.sqlite3", "db_url: postgres://steward@127.0.0.1:1/steward", 1)
			without := w.open(t, pg).Snapshot(context.Background()).Sources.DB
			with := w.open(t, strings.Replace(pg, "    audit_log:", "    db_password_file: "+pw+"\n    audit_log:", 1)).Snapshot(context.Background()).Sources.DB
			if with.Status != model.StatusUnavailable || !strings.Contains(with.Reason, "readable by others") {
				t.Fatalf("db_password_file naming a 0644 file: DB %s (%s)", with.Status, with.Reason)
			}
			if strings.Contains(without.Reason, "readable by others") {
				t.Fatalf("without db_password_file the DB reads the password file: %s", without.Reason)
			}
		}},
		{config.KeyNotifyBell, func(t *testing.T, w *world) {
			on, off := sequence(w.open(t, w.file(""))), sequence(w.open(t, w.file("notify:\n  bell: false\n")))
			if !strings.Contains(on, "\a") || strings.Contains(off, "\a") {
				t.Fatalf("notify.bell: the workbench writes %q by default and %q with bell false", on, off)
			}
		}},
		{config.KeyNotifyDesktop, func(t *testing.T, w *world) {
			on, off := sequence(w.open(t, w.file(""))), sequence(w.open(t, w.file("notify:\n  desktop: false\n")))
			if !strings.Contains(on, "\x1b]") || strings.Contains(off, "\x1b]") {
				t.Fatalf("notify.desktop: the workbench writes %q by default and %q with desktop false", on, off)
			}
		}},
		{config.KeyNotifyCommand, func(t *testing.T, w *world) {
			fired := filepath.Join(w.dir, "fired")
			if a := w.open(t, w.file("")).Workbench.Attention; len(a.Command.Argv) != 0 {
				t.Fatalf("a notify command with none configured: %q", a.Command.Argv)
			}
			a := w.open(t, w.file(fmt.Sprintf("notify:\n  command: [touch, %q]\n", fired))).Workbench.Attention
			if r := a.Command.Run(context.Background(), attention.Event{Type: "escalated", At: w.now}); r.Err != nil {
				t.Fatalf("the configured notify command failed: %v", r.Err)
			}
			if _, err := os.Stat(fired); err != nil {
				t.Fatalf("the configured notify command did not run: %v", err)
			}
		}},
		{config.KeyNotifyTimeout, func(t *testing.T, w *world) {
			// sleep outlives a 50 ms timeout (the default is 10 s): the run is stopped.
			a := w.open(t, w.file("notify:\n  command: [sleep, \"60\"]\n  timeout: 50ms\n")).Workbench.Attention
			if r := a.Command.Run(context.Background(), attention.Event{Type: "escalated", At: w.now}); r.Err == nil {
				t.Fatal("notify.timeout 50ms: a 60 s command ran to its end")
			}
			if d := w.open(t, w.file("")).Workbench.Attention.Command.Timeout; d != 10*time.Second {
				t.Fatalf("the default notify timeout: %s", d)
			}
		}},
		{config.KeyNotifyReescalations, func(t *testing.T, w *world) {
			// An entry overdue for days (a 1 s orphan SLA) escalates, then re-escalates as
			// often as notify.reescalations allows: its level is capped at 1 + that.
			level := func(extra string) int {
				sess := w.open(t, w.file("attention:\n  orphan_sla: 1s\n"+extra))
				a := sess.Workbench.Attention
				entries, unread := attention.FromSnapshot(sess.Snapshot(context.Background()), a.SLAs)
				tr := attention.NewTracker(attention.Config{Reescalations: a.Reescalations})
				n := 0
				for i := range 20 {
					for _, e := range tr.Observe(attention.Frame{Now: w.now.Add(time.Duration(i) * 24 * time.Hour), Entries: entries, Unread: unread}) {
						n = max(n, e.Level)
					}
				}
				return n
			}
			if a, b := level(""), level("notify:\n  reescalations: 0\n"); a != 3 || b != 1 {
				t.Fatalf("an entry overdue for days reaches level %d with notify.reescalations 0 (want 1), %d with the default 2 (want 3)", b, a)
			}
		}},
		{config.KeyOrphanSLA, slaRow("attention:\n  orphan_sla: 7m\n", attention.KindOrphan, 7*time.Minute)},
		{config.KeyCollisionSLA, func(t *testing.T, w *world) {
			// A collision: the same claim's lock file twice (two live locks on one item).
			data, err := os.ReadFile(filepath.Join(w.dir, "locks", "origin__acme__widgets__issue-1.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(w.dir, "locks", "mirror__acme__widgets__issue-1.json"), data, 0o600); err != nil {
				t.Fatal(err)
			}
			slaRow("attention:\n  collision_sla: 7m\n", attention.KindCollision, 7*time.Minute)(t, w)
		}},
		{config.KeySourceSLA, func(t *testing.T, w *world) {
			// A source is an entry only while it is unavailable: no lock directory.
			file := strings.Replace(w.file(""), w.dir+"/locks", w.dir+"/nope", 1)
			slaRow("attention:\n  source_sla: 7m\n", attention.KindSource, 7*time.Minute)(t, &world{dir: w.dir, url: w.url, token: w.token, env: w.env, now: w.now, base: file})
		}},
	}
	env := []row{
		{"GITEA_LEASE_POLICY_*", func(t *testing.T, w *world) {
			base := w.snap(t, "")
			a := fresh(base)
			// A minute's cadence and grace for every class the sample's claims hold.
			for _, c := range base.Claims {
				for _, f := range []string{leaserec.FieldHeartbeatCadenceMinutes, leaserec.FieldMissedHeartbeatGraceMinutes, leaserec.FieldStaleWarningMinutes} {
					w.env[leaserec.EnvVarName(leaserec.TaskClass(c.TaskClass), f)] = "1"
				}
			}
			b := fresh(w.snap(t, ""))
			if a == b {
				t.Fatalf("a 1 s heartbeat grace changed no claim's freshness: %s", a)
			}
		}},
		{"lease_policy", func(t *testing.T, w *world) {
			// The same minute's cadence and grace as the row above, from the workspace's
			// lease_policy in the file instead of the variables.
			base := w.snap(t, "")
			a := fresh(base)
			lp, seen := "    lease_policy:\n", map[string]bool{}
			for _, c := range base.Claims {
				if c.TaskClass == "" || seen[c.TaskClass] {
					continue
				}
				seen[c.TaskClass] = true
				lp += "      " + c.TaskClass + ":\n        heartbeat_cadence_minutes: 1\n        missed_heartbeat_grace_minutes: 1\n        stale_warning_minutes: 1\n"
			}
			b := fresh(w.open(t, strings.Replace(w.file(""), "    audit_log:", lp+"    audit_log:", 1)).Snapshot(context.Background()))
			if a == b {
				t.Fatalf("a 1-minute heartbeat grace in lease_policy changed no claim's freshness: %s", a)
			}
		}},
		{"GITEA_ISSUE_LOCK_FILE", func(t *testing.T, w *world) {
			slot := filepath.Join(w.dir, "gitea_issue_lock.json")
			data, err := os.ReadFile(filepath.Join(w.dir, "locks", "origin__acme__widgets__issue-1.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(slot, data, 0o600); err != nil {
				t.Fatal(err)
			}
			w.env["GITEA_ISSUE_LOCK_FILE"] = slot
			s := w.snap(t, "")
			found := false
			for _, c := range s.Claims {
				found = found || c.LockFile == slot
			}
			for _, o := range s.Orphans {
				found = found || o.LockFile == slot
			}
			if !found {
				t.Fatalf("the legacy single-slot lock %s is not read", slot)
			}
		}},
	}
	covered := map[string]bool{}
	for _, r := range rows {
		covered[r.key] = true
	}
	for _, k := range config.Keys() {
		if !covered[k] {
			t.Errorf("config key %s has no row: say what it changes for a user", k)
		}
	}
	for _, r := range append(rows, env...) {
		t.Run(r.key, func(t *testing.T) { r.effect(t, newWorld(t)) })
	}
}

// giteaBroken: the base reads the Gitea; the key set to bad makes it unavailable, with a
// reason — never "not configured".
func giteaBroken(prefix, bad string) func(t *testing.T, w *world) {
	return func(t *testing.T, w *world) {
		if s := w.snap(t, ""); s.Sources.Gitea.Status != model.StatusOK {
			t.Fatalf("the base reads Gitea %s (%s)", s.Sources.Gitea.Status, s.Sources.Gitea.Reason)
		}
		base := w.file("")
		i := strings.Index(base, prefix)
		j := i + strings.Index(base[i:], "\n")
		s := w.open(t, base[:i]+prefix+bad+base[j:]).Snapshot(context.Background())
		if s.Sources.Gitea.Status != model.StatusUnavailable || s.Sources.Gitea.Reason == "" {
			t.Fatalf("%s%s: Gitea %s (%s), want unavailable with a reason", prefix, bad, s.Sources.Gitea.Status, s.Sources.Gitea.Reason)
		}
	}
}

// apply releases a lease that does not exist through sess's core (refused: nothing to
// release), as a worker's session would.
func apply(sess *app.Session) govern.Outcome {
	ctx := context.Background()
	pv, err := sess.Core.Preview(ctx, govern.Request{Action: actionid.Release, Target: govern.Target{LeaseID: "no-such-lease"}})
	if err != nil {
		return govern.Outcome{Code: "preview: " + err.Error()}
	}
	return sess.Core.Apply(ctx, pv, "")
}

// worktrees is what the snapshot says about the claims' and orphans' worktrees.
func worktrees(s *model.Snapshot) string {
	b, _ := json.Marshal(struct {
		C any
		O any
	}{s.Claims, s.Orphans})
	return string(b)
}

// liveness is what the snapshot says about the owners of the DB's sessions and leases.
func liveness(s *model.Snapshot) string {
	b, _ := json.Marshal(struct{ S, C, O any }{s.Sessions, s.Claims, s.Orphans})
	return string(b)
}

func fresh(s *model.Snapshot) string {
	var b strings.Builder
	for _, c := range s.Claims {
		fmt.Fprintf(&b, "%s=%s ", c.LockFile, c.Freshness)
	}
	return b.String()
}

func s2bucket(s *model.Snapshot, b model.Bucket) int { return s.Count().Buckets[b] }

// sequence is what the workbench of sess writes to the terminal for a notice: the bell and
// the desktop notification as notify.bell and notify.desktop say.
func sequence(sess *app.Session) string {
	a := sess.Workbench.Attention
	return attention.Sequence("title", "body", a.Bell, a.Desktop, a.Mux)
}

// slaRow: the entries of kind k the workbench (and steward watch) derive from the session's
// snapshot carry the SLA that extra configures, and another one without it.
func slaRow(extra string, k attention.Kind, want time.Duration) func(t *testing.T, w *world) {
	return func(t *testing.T, w *world) {
		sla := func(text string) (time.Duration, bool) {
			sess := w.open(t, text)
			entries, _ := attention.FromSnapshot(sess.Snapshot(context.Background()), sess.Workbench.Attention.SLAs)
			for _, e := range entries {
				if e.Kind == k {
					return e.SLA, true
				}
			}
			return 0, false
		}
		base, ok := sla(w.file(""))
		if !ok {
			t.Fatalf("the workspace has no %s entry", k)
		}
		if got, _ := sla(w.file(extra)); got != want || base == want {
			t.Fatalf("%q: the %s entries' SLA is %s (without it %s), want %s", extra, k, got, base, want)
		}
	}
}
