package sim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"steward/gitea"
	"steward/gitea/fakegitea"
	"steward/govern"
	"steward/leases/leaserec"
	"steward/model"
)

// DemoOptions set up a demo workspace.
type DemoOptions struct {
	// Parent is the folder the demo's temporary folder is made in ("" = os.TempDir()).
	Parent string
	// Keep leaves the folder (and nothing else) behind on Close.
	Keep bool
	// GiteaURL and GiteaToken select a real Gitea; empty means the in-process subset.
	// Owner/Repo name a repository there, which the demo fills with issues (SeedReal).
	GiteaURL, GiteaToken string
	Owner, Repo          string
	// Issues is the backlog size (default 30).
	Issues int
	// Fleet settings: seed, size, speed, rates; OnEvent sees every event.
	Seed    uint64
	Workers int
	Speed   float64
	Rates   *Rates
	OnEvent func(Event)
	// Virtual runs the fleet's events back to back (tests of determinism).
	Virtual bool
	// Legacy is how many workers run the supervised system's older lock tool (Config.Legacy):
	// 0 means the demo's default, one; negative means none.
	Legacy int
	// NoStaff leaves out the on-call operator and the maintainer (Config.Staff); the default
	// has them, with demoStaff's timing.
	NoStaff bool
	// Census books what each minute showed into Summary.Minutes (Config.Census), judged by
	// ModelConfig.
	Census bool
}

// Demo is a complete, lively workspace in a temporary folder: control-plane DB, locks
// directory, repository root with branches/, an audit log, a Gitea, and a fleet.
type Demo struct {
	// Root is the temporary folder holding everything else.
	Root string
	// Workspace is what the fleet acts on (Env carries the compressed lease policy).
	Workspace govern.Workspace
	// AuditPath is the demo's audit log (the workers' attempts).
	AuditPath string
	// Env is the lease-policy overrides the demo runs with (print them for `steward status`).
	Env map[string]string
	// GiteaURL is where the Gitea is served; Owner/Repo name the demo repository, and
	// Remote is the name the demo's workers give its remote in their locks and rows.
	GiteaURL    string
	Owner, Repo string
	Remote      string
	// Client reads (and, for the core, writes) the demo repository.
	Client *gitea.Client
	// Backlog is the demo's issue numbers.
	Backlog []int64
	// Fake is the in-process server, nil with a real Gitea.
	Fake *fakegitea.Server

	opts     DemoOptions
	token    string
	fakeRepo *fakegitea.Repo
	audit    *govern.AuditLog
	fleet    *Fleet
	ln       net.Listener
	srv      *http.Server
}

// demoRemote is the remote name the demo's workers give its repository in their lock files
// and DB rows (the workspace's gitea.remote).
const demoRemote = "origin"

// NewDemo builds the workspace and seeds it; Run starts the workers. Close undoes it all.
func NewDemo(ctx context.Context, o DemoOptions) (d *Demo, err error) {
	if o.Issues <= 0 {
		o.Issues = 30
	}
	if o.Speed <= 0 {
		o.Speed = DefaultSpeed
	}
	root, err := os.MkdirTemp(o.Parent, "steward-demo-")
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	d = &Demo{Root: root, opts: o, Env: PolicyEnv(o.Speed), Remote: demoRemote}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	d.Workspace = govern.Workspace{
		LocksDir: filepath.Join(root, "locks"),
		DBPath:   filepath.Join(root, "control-plane", "control_plane.sqlite3"),
		RepoRoot: filepath.Join(root, "repo"),
		Env:      Lookup(d.Env, nil),
	}
	d.AuditPath = filepath.Join(root, "audit.jsonl")
	if err = govern.InitWorkspace(d.Workspace); err != nil {
		return d, err
	}
	if d.audit, err = govern.OpenAudit(d.AuditPath, nil); err != nil {
		return d, err
	}
	issues := Backlog(o.Seed, o.Issues)
	var prs PRMaker
	if o.GiteaURL == "" {
		prs, err = d.serveFake(issues)
	} else {
		err = d.seedReal(ctx, issues)
	}
	if err != nil {
		return d, err
	}
	d.Client, err = gitea.New(
		gitea.Config{Login: gitea.Login{Name: "demo", URL: d.GiteaURL, Token: gitea.NewToken(d.token), Source: "demo"},
			Owner: d.Owner, Repo: d.Repo, RequestTimeout: 10 * time.Second},
	)
	if err != nil {
		return d, err
	}
	d.Workspace.Gitea = d.Client
	legacy := o.Legacy
	switch {
	case legacy == 0:
		legacy = 1
	case legacy < 0:
		legacy = 0
	}
	var staff *Staff
	if !o.NoStaff {
		st := demoStaff()
		st.Model = d.ModelConfig()
		if d.Fake != nil {
			st.Desk = fakeDesk{d.fakeRepo}
		}
		staff = &st
	}
	var cen *model.Config
	if o.Census {
		mc := d.ModelConfig()
		cen = &mc
	}
	d.fleet, err = New(
		Config{
			Workspace: d.Workspace,
			Audit:     d.audit,
			Owner:     d.Owner,
			Repo:      d.Repo,
			Remote:    d.Remote,
			Backlog:   d.Backlog,
			Tracker:   d.Client,
			PRs:       prs,
			Workers:   o.Workers,
			Seed:      o.Seed,
			Speed:     o.Speed,
			Rates:     o.Rates,
			OnEvent:   o.OnEvent,
			Virtual:   o.Virtual,
			Legacy:    legacy,
			Staff:     staff,
			Census:    cen,
		},
	)
	if d.Fake != nil && err == nil {
		// The in-process Gitea stamps its items with the fleet's clock, so that they age as
		// the lock files and leases do (in a virtual run, too).
		d.Fake.SetClock(d.fleet.Clock)
	}
	if err == nil {
		err = d.writeConfig()
	}
	return d, err
}

// demoStaff is the demo's staff timing, in supervised time: a look every 3 min 20 s (10 s of
// the demo at the default speed); an orphan the person at the keyboard leaves alone is
// recovered by the on-call operator after 15 min (45 s of the demo); a clarification
// answered after 45 min (2¼ min of the demo; questions pile up a little, so one is always
// waiting); a stale pull request closed after 20 min; an item a worker holds closed about
// every 40 min.
func demoStaff() Staff {
	return Staff{Every: 200 * time.Second, RecoverAfter: 15 * time.Minute, AnswerAfter: 45 * time.Minute,
		CloseStalePRAfter: 20 * time.Minute, CloseClaimedEvery: 40 * time.Minute}
}

// ModelConfig is what the demo's workspace is judged by — the workbench's, `status`'s and
// the staff's: the compressed lease policy, and the model's own durations compressed alike
// (a pull request is stale after 10 supervised minutes, refused claims count for an hour).
func (d *Demo) ModelConfig() model.Config {
	return model.Config{Policies: leaserec.LoadPolicies(d.Workspace.Env), Remote: d.Remote, Org: d.Owner, Repo: d.Repo,
		StalePRQuiet: d.scale(10 * time.Minute), RefusedWindow: d.scale(time.Hour)}
}

// ClarificationSLA is the demo's clarification SLA: an hour, compressed.
func (d *Demo) ClarificationSLA() time.Duration { return d.scale(time.Hour) }

// scale compresses a supervised duration to the demo's clock.
func (d *Demo) scale(x time.Duration) time.Duration { return time.Duration(float64(x) / d.opts.Speed) }

// fakeDesk is the maintainer's desk on the in-process Gitea (its seeding helpers).
type fakeDesk struct{ r *fakegitea.Repo }

func (k fakeDesk) Close(_ context.Context, n int64) error { k.r.CloseIssue(n); return nil }

func (k fakeDesk) File(_ context.Context, title, body string, labels ...string) (int64, error) {
	return k.r.CreateIssue("maintainer", title, body, labels...), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// serveFake starts the in-process Gitea on a loopback port and seeds it.
func (d *Demo) serveFake(issues []SeedIssue) (PRMaker, error) {
	d.Owner, d.Repo, d.token = "demo", "fleet", randomHex(20)
	fake := fakegitea.New()
	fake.AddUser("steward-demo", d.token)
	repo := fake.CreateRepo(d.Owner, d.Repo)
	d.fakeRepo = repo
	d.Backlog = SeedFake(repo, "maintainer", issues, demoPRs)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo: listen: %w", err)
	}
	d.ln, d.Fake = ln, fake
	d.GiteaURL = "http://" + ln.Addr().String()
	fake.SetBaseURL(d.GiteaURL)
	d.srv = &http.Server{Handler: fake, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = d.srv.Serve(ln) }()
	return FakePRs(repo), nil
}

// Addr is the Gitea listener's address ("" with a real Gitea).
func (d *Demo) Addr() string {
	if d.ln == nil {
		return ""
	}
	return d.ln.Addr().String()
}

// StewardEnv is the environment another steward process needs to act on this demo as the
// demo's own core does: its Gitea login (URL, token, repository — the token through the
// environment, never argv) and the compressed lease policy. Pass it to the child only.
func (d *Demo) StewardEnv() []string {
	env := append(
		envLines(d.Env),
		gitea.EnvURL+"="+d.GiteaURL,
		gitea.EnvToken+"="+d.token,
		"STEWARD_GITEA_REPO="+d.Owner+"/"+d.Repo,
	)
	return env
}

// SetHands makes the fleet act through hands (see Config.Hands); call it before Run.
func (d *Demo) SetHands(h HandsFactory) error {
	if d.fleet == nil {
		return errors.New("demo: not set up")
	}
	if d.opts.Virtual {
		return errors.New("sim: a virtual run needs the in-process core")
	}
	d.fleet.cfg.Hands = h
	return nil
}

// Run runs the fleet for d of wall time, or until ctx ends.
func (d *Demo) Run(ctx context.Context, dur time.Duration) (Summary, error) {
	if d.fleet == nil {
		return Summary{}, errors.New("demo: not set up")
	}
	return d.fleet.Run(ctx, dur)
}

// AuditLog is the demo's audit log, shared by the workers and the workbench's core.
func (d *Demo) AuditLog() *govern.AuditLog { return d.audit }

// Speed is the demo's time compression.
func (d *Demo) Speed() float64 { return d.opts.Speed }

// Fleet returns the demo's fleet (for live counts while it runs).
func (d *Demo) Fleet() *Fleet { return d.fleet }

// Close stops the workers' processes and the Gitea listener, closes the audit log, and
// removes the folder unless Keep. It is safe to call twice.
func (d *Demo) Close() error {
	if d.fleet != nil {
		d.fleet.Close()
	}
	var errs []error
	if d.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if err := d.srv.Shutdown(ctx); err != nil {
			errs = append(errs, d.srv.Close())
		}
		cancel()
		d.srv = nil
	}
	if d.audit != nil {
		errs = append(errs, d.audit.Close())
		d.audit = nil
	}
	if !d.opts.Keep && d.Root != "" {
		errs = append(errs, os.RemoveAll(d.Root))
	}
	return errors.Join(errs...)
}
