package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"steward/attention"
	"steward/attention/store"
	"steward/gitea"
	"steward/govern"
	"steward/history/gather"
	"steward/leases"
	"steward/leases/leaserec"
	"steward/locks"
	"steward/locks/lockrec"
	"steward/model"
	"steward/model/live"
	"steward/termsafe"
	"steward/tui"
)

// Session is a workspace put together for a surface.
type Session struct {
	// Core is the governed core every action goes through.
	Core *govern.Core
	// Live is the live model (started by Watch).
	Live *live.Model
	// Workbench is the workbench's options: the core, the annotated and redacted snapshot
	// source, the audit log, the lease policy, the clarification SLA, the theme.
	Workbench tui.Options
	// Gitea is the Gitea client, nil when none is read; GiteaHealth is what the Gitea
	// source reads then (not configured, not read, or unavailable with the reason).
	Gitea       *gitea.Client
	GiteaHealth model.SourceHealth
	// Config is what the model judges by; Policies the lease policy with the overrides.
	Config   model.Config
	Policies leaserec.PolicySet
	// Secrets is the redactor of everything shown.
	Secrets *govern.Redactor

	ws       live.Workspace
	settings Settings
	src      *annotated
	closers  []func()
}

// Open builds the session s describes. Nothing is read yet (Watch starts the live model,
// Snapshot reads once). A Gitea that is configured and cannot be set up is no error: the
// session reads it as unavailable with the reason, and the core has no Gitea side.
func Open(ctx context.Context, s Settings) (*Session, error) {
	if s.Now == nil {
		// Surfaces that need an instant of their own (toasts, the notify command's times)
		// take this host's; every verdict takes the DB's clock where there is one.
		s.Now, s.hostClock = s.host(), true
	}
	if s.Secrets == nil {
		s.Secrets = govern.NewRedactor()
	}
	if s.Warn == nil {
		s.Warn = io.Discard
	}
	sess := &Session{settings: s, Secrets: s.Secrets,
		ws: live.Workspace{
			LocksDir:       s.LocksDir,
			DBPath:         s.DBPath,
			DBPasswordFile: s.DBPasswordFile,
			RepoRoot:       s.RepoRoot,
			DBHost:         s.DBHost,
			LegacyLock:     s.LegacyLock,
			Host:           s.Host,
		}}
	sess.Policies = leaserec.LoadPolicies(s.Env)
	sess.Config = model.Config{
		Policies:      sess.Policies,
		RefusedWindow: s.ContentionWindow,
		StalePRQuiet:  s.StalePR,
		BlockedLabel:  s.BlockedLabel,
		Remote:        s.Gitea.Remote,
	}
	sess.openGitea()
	if c := sess.Gitea; c != nil {
		sess.Config.Org, sess.Config.Repo = c.Repository()
	}
	core, closeLog, err := newCore(s, sess.Gitea)
	if err != nil {
		return nil, err
	}
	sess.Core, sess.closers = core, append(sess.closers, closeLog)
	var fixed func() time.Time // nil: the DB's clock, else this host's (live.Options.Now)
	if !s.hostClock {
		fixed = s.Now
	}
	sess.Live = live.New(
		sess.ws,
		live.Options{
			Config:        sess.Config,
			Now:           fixed,
			HostNow:       s.host(),
			Gitea:         sess.giteaFacts(),
			NoGitea:       sess.GiteaHealth,
			GiteaEvery:    s.Tuning.GiteaEvery,
			ProbeEvery:    s.Tuning.ProbeEvery,
			WorktreeEvery: s.Tuning.WorktreeEvery,
			Resync:        s.Tuning.Resync,
		},
	)
	sess.src = &annotated{live: sess.Live, core: sess.Core, secrets: s.Secrets, out: make(chan *model.Snapshot, 1)}
	a := s.Attention
	sess.Workbench = tui.Options{Core: sess.Core, Source: sess.src, AuditPath: s.AuditPath, Policies: &sess.Policies,
		ClarificationSLA: a.SLAs.Clarification, Theme: s.Theme, Now: s.Now,
		Attention: tui.AttentionOptions{SLAs: a.SLAs, Reescalations: a.Reescalations, Bell: a.Bell, Desktop: a.Desktop,
			Mux: attention.DetectMux(plain(s.Env)), Command: a.Command}}
	if h := s.History; h != nil {
		src := gather.Sources{LocksDir: s.LocksDir, DB: sess.ws.DBTarget(), AuditPath: s.AuditPath}
		src.LocksNotObserved = LocksNotObserved(s.Host, s.Now())
		historyOptions(&sess.Workbench, src, h.StateDir, h.SinceOnStart)
	}
	return sess, nil
}

// KeepAttention gives the workbench the attention state an earlier workbench on this audit
// log left (store.Path, beside the attention file; one per workspace of the config file) and
// keeps it there as it changes, so that a restarted workbench notifies nothing it already
// notified and "first seen" and the SLAs run on. A state that cannot be read is said on
// Warn, kept aside (store.SetAside) and started afresh. Without an audit log nothing is kept.
func (sess *Session) KeepAttention() {
	if sess.settings.AuditPath == "" {
		return
	}
	path := store.Path(sess.settings.AuditPath, store.Surface(store.SurfaceWorkbench, sess.settings.Workspace))
	st, err := store.Load(path)
	if err != nil {
		msg := "warning: " + err.Error() + "; starting afresh (entries already notified may be notified again)"
		if bad, serr := store.SetAside(path); serr == nil {
			msg += "; the file is kept as " + bad
		}
		fmt.Fprintln(sess.settings.Warn, termsafe.Line(msg))
	}
	sess.Workbench.Attention.Restore, sess.Workbench.Attention.Keep = st, store.NewSaver(path)
}

// LocksNotObserved is why a lock directory on host is not read from this one (the
// reason of model.LocksHere), "" when host is this one.
func LocksNotObserved(host string, now time.Time) string {
	here, _ := leases.HostName()
	if h, observe := model.LocksHere(host, here, now); !observe {
		return h.Reason
	}
	return ""
}

// NewCore builds the governed core s describes — its Gitea client (NewClient), its audit
// log (s.Audit; read only when read-only), the actor, the read-only switch — for a surface
// that needs no live model (the action commands, steward audit, steward mcp). close closes
// the core's DB handles and the log it opened.
func NewCore(s Settings) (core *govern.Core, close func(), err error) {
	if s.Secrets == nil {
		s.Secrets = govern.NewRedactor()
	}
	cl, err := NewClient(s)
	if err != nil {
		return nil, nil, err
	}
	return newCore(s, cl)
}

// newCore builds the core on the client cl (nil: no Gitea side).
func newCore(s Settings, cl *gitea.Client) (*govern.Core, func(), error) {
	gws := govern.Workspace{
		LocksDir:       s.LocksDir,
		DBPath:         s.DBPath,
		DBPasswordFile: s.DBPasswordFile,
		RepoRoot:       s.RepoRoot,
		DBHost:         s.DBHost,
		Env:            s.Env,
	}
	if cl != nil {
		gws.Gitea = cl
	}
	log, closeLog := s.AuditLog, func() {}
	switch {
	case log != nil:
	case s.Audit == AuditNone:
	case s.ReadOnly:
		// A read-only steward creates and appends nothing: its audit log is only read.
		log = govern.ReadOnlyAudit(s.AuditPath)
	default:
		var err error
		if log, err = govern.OpenAudit(s.AuditPath, s.Secrets); err != nil {
			return nil, nil, err
		}
		closeLog = func() { log.Close() }
	}
	now := s.Now
	if s.hostClock && s.HostNow == nil {
		now = nil // this host's own clock: the core tells a jump of it against the monotonic clock
	}
	core := govern.New(gws, log, govern.Options{Actor: govern.LocalActor(s.Role, s.Login), ReadOnly: s.ReadOnly,
		ReadOnlyReason: s.ReadOnlyReason, Now: now, Step: s.Step, Attention: attentionLookup(s)})
	// Closing closes the core's DB handles too: a command that wrote leaves the DB as
	// SQLite leaves it when its last connection closes (a WAL DB checkpointed, its -wal
	// and -shm removed), not with the files a process killed while connected leaves.
	return core, func() { core.Close(); closeLog() }, nil
}

// openGitea builds the Gitea client, or says why there is none.
func (sess *Session) openGitea() {
	g := sess.settings.Gitea
	switch {
	case g.Off:
		sess.GiteaHealth = model.SourceHealth{Status: model.StatusNotConfigured, Reason: "Gitea not read (--no-gitea)"}
		return
	case g.Client != nil:
		sess.Gitea = g.Client
	case g.Repo == "":
		sess.GiteaHealth = model.SourceHealth{
			Status: model.StatusNotConfigured,
			Reason: "Gitea not configured (give --gitea-repo or gitea.owner and gitea.repo, or --no-gitea)",
		}
		return
	default:
		c, err := sess.newClient()
		if err != nil {
			// Configured and not usable: unavailable, never "not configured".
			sess.GiteaHealth = model.SourceHealth{Status: model.StatusUnavailable, Reason: "Gitea: " + err.Error()}
			return
		}
		sess.Gitea = c
	}
	sess.Secrets.AddScrubber(sess.Gitea.Scrub)
}

func (sess *Session) newClient() (*gitea.Client, error) { return NewClient(sess.settings) }

// NewClient builds the Gitea client s configures (its login, repository, marker and
// blocked labels), nil when no repository is configured or Gitea is off. Its token is
// added to s.Secrets; the login's warnings go to s.Warn.
func NewClient(s Settings) (*gitea.Client, error) {
	if s.Gitea.Off || s.Gitea.Repo == "" {
		return nil, nil
	}
	owner, repo, ok := strings.Cut(s.Gitea.Repo, "/")
	if !ok || owner == "" || repo == "" {
		return nil, fmt.Errorf("the repository must be owner/name, got %q", s.Gitea.Repo)
	}
	login, warns, err := gitea.LoadLogin(
		gitea.LoginOptions{Name: s.Gitea.TeaLogin, URL: s.Gitea.URL, Token: s.Gitea.Token, Getenv: plain(s.Env)},
	)
	if err != nil {
		return nil, err
	}
	if s.Warn != nil {
		for _, w := range warns {
			fmt.Fprintf(s.Warn, "warning: %s: %s\n", w.Code, w.Message)
		}
	}
	if s.Secrets != nil {
		s.Secrets.AddScrubber(login.Token.Scrub)
	}
	return gitea.New(
		gitea.Config{
			Login:        login,
			Owner:        owner,
			Repo:         repo,
			MarkerLabels: s.MarkerLabels,
			BlockedLabel: s.BlockedLabel,
			Now:          s.Now,
		},
	)
}

// plain is env as a getenv (os.LookupEnv's when nil).
func plain(env func(string) (string, bool)) func(string) string {
	if env == nil {
		env = os.LookupEnv
	}
	return func(k string) string { v, _ := env(k); return v }
}

// giteaFacts is the client as the live model's Gitea, nil when there is none (a typed
// nil would read as one).
func (sess *Session) giteaFacts() live.GiteaFacts {
	if sess.Gitea == nil {
		return nil
	}
	return sess.Gitea
}

// Watch starts the live model and the annotating source (Workbench.Source, Snapshots):
// each snapshot's orphan actions previewed by the core, steward's secrets redacted. It
// fails only when the lock directory cannot be watched.
func (sess *Session) Watch(ctx context.Context) error {
	if err := sess.Live.Start(ctx); err != nil {
		return err
	}
	go sess.src.run(ctx)
	return nil
}

// Snapshots is the annotated, redacted feed Watch started.
func (sess *Session) Snapshots() <-chan *model.Snapshot { return sess.src.out }

// Snapshot reads every source once and returns the snapshot as a surface shows it: its
// orphan actions previewed by the core, steward's secrets redacted.
func (sess *Session) Snapshot(ctx context.Context) *model.Snapshot {
	now := sess.settings.Now()
	var in *model.Input
	if sess.settings.hostClock {
		// Every verdict at the DB's clock where there is one, read once for the snapshot.
		in, now = live.LoadClocked(ctx, sess.ws, live.NewProbe(sess.ws.RepoRoot), sess.settings.host())
	} else {
		in = live.Load(ctx, sess.ws, live.NewProbe(sess.ws.RepoRoot), now)
	}
	in.GiteaHealth = live.NoGitea(sess.GiteaHealth, now)
	if sess.Gitea != nil {
		var claimed []model.Item
		for _, c := range model.Build(in, sess.Config, now).Claims {
			if c.Item != nil {
				claimed = append(claimed, *c.Item)
			}
		}
		in.Gitea, in.Clarifications, in.GiteaHealth = live.LoadGitea(ctx, sess.Gitea, sess.Config, claimed, now)
	}
	runtime.GC() // see below
	if in.LocksHealth.Status == model.StatusOK {
		// The previews of the orphans look items up in the listing just read, not in a
		// second read of the whole directory (locks.ViewOf).
		ctx = govern.WithLockView(ctx, locks.ViewOf(sess.ws.LocksDir, func(yield func(*lockrec.Entry) bool) {
			for i := range in.Locks {
				if !yield(&in.Locks[i].Entry) {
					return
				}
			}
		}))
	}
	s := model.Build(in, sess.Config, now)
	// A one-shot read collects its garbage at the two points where most of the heap
	// just became garbage — the raw rows and files once the sources are read, the input
	// and the derivation once the snapshot is built (at 50,000 claims about 300 of the 430
	// MB then live) — so the derivation, the previews and the encoding reuse that memory.
	// Left to the pacer, the heap grew on toward twice each peak (GOGC) before its next
	// collection: peak RSS at 50,000 claims 667-691 MB before, 571-586 MB after.
	runtime.GC()
	return sess.Secrets.Snapshot(sess.Core.Annotate(ctx, s))
}

// StatusJSON writes to w what `steward status --json` prints of Snapshot's snapshot with
// findings added (the bytes printSnapshot writes), reading the lock files a page of items
// at a time (live.StreamAt): the fleet's files, derivation and snapshot are never held
// whole, only the DB's rows and the short lists (orphans, contention). It returns the
// snapshot without its claims, sessions and items — what an exit code is judged on — and
// ok false, having written nothing, when it cannot stream: Gitea is read (its facts join
// items across the fleet), a secret is registered (redaction looks at the whole snapshot),
// or a lock file's record names an item already derived (live.ErrReplan). The caller then
// prints Snapshot.
func (sess *Session) StatusJSON(ctx context.Context, w io.Writer, findings []string) (*model.Snapshot, bool, error) {
	if sess.Gitea != nil || sess.Secrets.HoldsSecrets() {
		return nil, false, nil
	}
	p := live.NewProbe(sess.ws.RepoRoot)
	var st *live.Streamed
	var err error
	if sess.settings.hostClock {
		st, err = live.StreamClocked(ctx, sess.ws, p, sess.settings.host(), sess.Config, sess.GiteaHealth)
	} else {
		st, err = live.StreamAt(ctx, sess.ws, p, sess.settings.Now(), sess.Config, sess.GiteaHealth)
	}
	var replan *model.ErrReplan
	switch {
	case errors.As(err, &replan):
		return nil, false, nil
	case err != nil:
		return nil, true, err
	}
	actx := ctx
	if st.View != nil {
		actx = govern.WithLockView(ctx, st.View)
	}
	s := sess.Core.Annotate(actx, st.Summary)
	if len(findings) > 0 {
		cp := *s
		cp.Findings = append(append([]string(nil), s.Findings...), findings...)
		s = &cp
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := st.JSON.Write(s, st.Sessions, func(b []byte) error { _, err := bw.Write(b); return err }); err != nil {
		return nil, true, err
	}
	if err := bw.WriteByte('\n'); err != nil {
		return nil, true, err
	}
	return s, true, bw.Flush()
}

// Close stops the live model and closes the core and the audit log the session opened.
func (sess *Session) Close() error {
	err := sess.Live.Close()
	err = errors.Join(err, sess.Core.Close())
	for _, c := range sess.closers {
		c()
	}
	return err
}

// annotated forwards the live model's snapshots with every orphan's action previewed by the
// core (allowed or the refusal) and steward's secrets redacted, off the UI goroutine.
type annotated struct {
	live    *live.Model
	core    *govern.Core
	secrets *govern.Redactor
	out     chan *model.Snapshot
}

func (a *annotated) Snapshots() <-chan *model.Snapshot { return a.out }

func (a *annotated) Refresh() { a.live.Refresh() }

func (a *annotated) run(ctx context.Context) {
	defer close(a.out)
	// Annotations and redaction look only at entries new since the previous snapshot.
	ann, red := a.core.NewAnnotator(), a.secrets.NewStream()
	for {
		select {
		case <-ctx.Done():
			return
		case s, ok := <-a.live.Snapshots():
			if !ok {
				return
			}
			actx := ctx
			if s.Sources.Locks.Status == model.StatusOK {
				// The previews look items up in the live model's view of the directory, kept
				// from the reads it makes anyway: a view per snapshot lstat'ed every lock
				// file, most of a DB commit's way to the screen at 10,000 claims.
				actx = govern.WithLockView(ctx, a.live.LockView())
			}
			s = red.Snapshot(ann.Snapshot(actx, s))
			select {
			case a.out <- s:
			case <-ctx.Done():
				return
			}
		}
	}
}
