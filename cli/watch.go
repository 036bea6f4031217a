package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"steward/app"
	"steward/attention"
	"steward/attention/store"
	"steward/govern"
	"steward/model"
	"steward/termsafe"
)

// exitWatchUnavailable is `steward watch`'s exit when it cannot read any configured source
// at all: the same code as `steward status` for an unavailable source (5).
const exitWatchUnavailable = 5

// watchFlags are the flags of `steward watch`.
type watchFlags struct {
	noGitea bool
	forDur  time.Duration
	tick    time.Duration
}

// addWatchCommand adds `steward watch`.

// watchTuning is the live model's cadences for steward watch: zero, the defaults. The tests
// set a resync longer than their hang limit, so an event they see came from the change
// itself, never from the periodic full read that would also report it.
var watchTuning app.Tuning

func addWatchCommand(root *cobra.Command, g *globals) {
	f := &watchFlags{}
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Attention without a screen: print attention events (JSON lines with --json) and run the notify command",
		Long: `steward watch runs the live model headless and prints one line per attention event:
entered, escalated, returned, acknowledged, snoozed, cleared, and a source's unavailable and
recovered (losing a source is itself an alert). For an event that notifies it runs
notify.command (with the event's fields as environment variables, never through a shell).
See docs/attention.md.

Exit codes: 0 when stopped (SIGINT, SIGTERM, or --for elapsed); 5 when it cannot read any
configured source at all on start; 1 when it cannot run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runWatch(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), g, f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.noGitea, "no-gitea", false, "do not read Gitea")
	fl.DurationVar(&f.forDur, "for", 0, "stop after this long (0: until interrupted)")
	fl.DurationVar(
		&f.tick,
		"tick",
		time.Second,
		"how often the SLAs and the attention file are re-checked between snapshots",
	)
	root.AddCommand(cmd)
}

// watchLine is one line of `steward watch --json`.
type watchLine struct {
	attention.Event
	AgeS int64 `json:"age_s"`
	SLAS int64 `json:"sla_s"`
	// NotifyError is set on a line of event notify_failed: why the notify command failed.
	NotifyError string `json:"notify_error,omitempty"`
}

func runWatch(ctx context.Context, out, errw io.Writer, g *globals, f *watchFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if f.forDur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.forDur)
		defer cancel()
	}
	st, err := g.settings()
	if err != nil {
		return err
	}
	// A preview-only core (no audit log): watch changes nothing.
	st.Audit, st.Role, st.Gitea.Off, st.Warn = app.AuditNone, govern.RoleViewer, f.noGitea, errw
	st.Tuning = watchTuning
	sess, err := app.Open(ctx, st)
	if err != nil {
		return err
	}
	defer sess.Close()
	if h := sess.GiteaHealth; h.Status == model.StatusUnavailable {
		fmt.Fprintln(errw, "steward watch:", termsafe.Line(h.Reason))
	}
	if err := sess.Watch(ctx); err != nil {
		// The live model cannot even start watching (a missing lock directory): nothing
		// can be read.
		return &exitError{
			code: exitWatchUnavailable,
			msg:  "steward watch: no configured source can be read: " + termsafe.Line(err.Error()),
		}
	}
	// The first snapshot is read before the watchers exist: read once more now that they
	// do, so that nothing changed in between waits for the periodic resync.
	sess.Live.Refresh()

	set := st.Attention
	w := &watcher{out: out, errw: errw, json: g.jsonOut, set: set, audit: g.audit, secrets: g.secrets(),
		tr: attention.NewTracker(attention.Config{Reescalations: set.Reescalations})}
	w.restore(store.Path(g.audit, store.Surface(store.SurfaceWatch, st.Workspace)))
	defer w.wait()
	tick := time.NewTicker(max(f.tick, 50*time.Millisecond))
	defer tick.Stop()
	var last *model.Snapshot
	first := true
	for {
		select {
		case <-ctx.Done():
			return nil
		case s, ok := <-sess.Snapshots():
			if !ok {
				return nil
			}
			if first {
				first = false
				if why, none := noSourceRead(s, sess.Gitea != nil); none {
					return &exitError{code: exitWatchUnavailable, msg: "steward watch: no configured source can be read: " + why}
				}
				if err := w.started(s); err != nil {
					return err
				}
			}
			last = s
			if err := w.observe(ctx, last); err != nil {
				return err
			}
		case <-tick.C:
			if last != nil {
				if err := w.observe(ctx, last); err != nil {
					return err
				}
			}
		}
	}
}

// noSourceRead reports whether the first snapshot read none of the configured sources.
func noSourceRead(s *model.Snapshot, giteaConfigured bool) (string, bool) {
	hs := []struct {
		n string
		h model.SourceHealth
	}{{"locks", s.Sources.Locks}, {"db", s.Sources.DB}}
	if giteaConfigured {
		hs = append(hs, struct {
			n string
			h model.SourceHealth
		}{"gitea", s.Sources.Gitea})
	}
	var why []string
	for _, x := range hs {
		if x.h.Usable() {
			return "", false
		}
		why = append(why, x.n+": "+termsafe.Line(x.h.Reason))
	}
	return strings.Join(why, "; "), true
}

// watcher turns snapshots into printed events and notify runs.
type watcher struct {
	out, errw io.Writer
	json      bool
	set       app.Attention
	audit     string
	secrets   *govern.Redactor
	tr        *attention.Tracker
	mu        sync.Mutex // out
	wg        sync.WaitGroup
	runs      chan struct{}
	marksErr  string
	// keep is the attention state kept across restarts (nil: none); the fields below are
	// its, guarded by kmu: the tracker's last state and revision, whether it awaits a save,
	// the saves' sequence, the notify runs not yet finished per entry (the first one's
	// event), and the last save's error.
	keep    *store.Saver
	kmu     sync.Mutex
	state   attention.State
	rev     uint64
	dirty   bool
	seq     uint64
	pending map[string]*pendingRun
	keepErr string
}

// pendingRun is an entry's notify runs not yet finished: how many, and the first one's event.
type pendingRun struct {
	n     int
	first attention.Event
}

// restore reads the attention state an earlier watch left at path into the tracker, so
// that a restart notifies nothing already notified and "first seen" and the SLAs run on.
// A state file that cannot be read is said on stderr, kept aside and started afresh.
func (w *watcher) restore(path string) {
	w.keep, w.pending = store.NewSaver(path), map[string]*pendingRun{}
	st, err := store.Load(path)
	if err != nil {
		msg := "steward watch: " + err.Error() + "; starting afresh (entries already notified may be notified again)"
		if bad, serr := store.SetAside(path); serr == nil {
			msg += "; the file is kept as " + bad
		}
		fmt.Fprintln(w.errw, termsafe.Line(msg))
		return
	}
	w.tr.Restore(st)
}

// keepState saves the attention state when it changed: the tracker's (st, at revision
// rev) when its revision moved, or — st nil — when a notify run started or finished. An
// entry's level counts as announced in the saved state only once its notify run finished,
// so that a watch stopped or killed before a run ended notifies again after a restart,
// never not at all.
func (w *watcher) keepState(st *attention.State, rev uint64) {
	if w.keep == nil {
		return
	}
	w.kmu.Lock()
	defer w.kmu.Unlock()
	if st != nil && rev != w.rev {
		w.state, w.rev, w.dirty = *st, rev, true
	}
	if !w.dirty {
		return
	}
	out := attention.State{Entries: make([]attention.Remembered, len(w.state.Entries))}
	copy(out.Entries, w.state.Entries)
	for i, r := range out.Entries {
		switch p := w.pending[r.Entry.Key]; {
		case p == nil:
		case p.first.Type == attention.EventReturned:
			out.Entries[i].Snoozed = true // it returns again
		default:
			out.Entries[i].Announced = min(r.Announced, p.first.Level-1)
		}
	}
	w.seq++
	if err := w.keep.Save(w.seq, out); err != nil {
		if msg := "steward watch: the attention state cannot be kept: " + err.Error() + " (a restart may notify " +
			"again)"; msg != w.keepErr {
			w.keepErr = msg
			fmt.Fprintln(w.errw, termsafe.Line(msg))
		}
		return
	}
	w.keepErr, w.dirty = "", false
}

// runStarts and runEnds count an entry's notify runs in flight (see keepState).
func (w *watcher) runStarts(e attention.Event) {
	if w.keep == nil {
		return
	}
	w.kmu.Lock()
	defer w.kmu.Unlock()
	if p := w.pending[e.Entry.Key]; p != nil {
		p.n++
		return
	}
	w.pending[e.Entry.Key] = &pendingRun{n: 1, first: e}
	w.dirty = true
}

func (w *watcher) runEnds(e attention.Event) {
	if w.keep == nil {
		return
	}
	w.kmu.Lock()
	if p := w.pending[e.Entry.Key]; p != nil {
		if p.n--; p.n <= 0 {
			delete(w.pending, e.Entry.Key)
			w.dirty = true
		}
	}
	w.kmu.Unlock()
	w.keepState(nil, 0)
}

func (w *watcher) observe(ctx context.Context, s *model.Snapshot) error {
	entries, unread := attention.FromSnapshot(s, w.set.SLAs)
	marks, err := readMarks(w.audit)
	if err != nil {
		if msg := "steward watch: the attention file is unreadable: " + err.Error(); msg != w.marksErr {
			w.marksErr = msg
			fmt.Fprintln(w.errw, termsafe.Line(msg))
		}
	} else {
		w.marksErr = ""
	}
	// Ages and SLAs at the clock the snapshot was judged at (the DB's on PostgreSQL).
	evs := w.tr.Observe(attention.Frame{Now: s.Clock.At(time.Now()), Entries: entries, Unread: unread, Marks: marks})
	if title, body, ok := attention.Notice(evs); ok && !w.json && isTerminal(w.out) {
		// In a terminal (a tmux pane), the bell and the desktop notification too.
		w.mu.Lock()
		_, _ = io.WriteString(
			w.out,
			attention.Sequence(title, body, w.set.Bell, w.set.Desktop, attention.DetectMux(os.Getenv)),
		)
		w.mu.Unlock()
	}
	run := len(w.set.Command.Argv) > 0
	for _, e := range evs {
		if e.Notify && run {
			w.runStarts(e)
		}
	}
	if w.keep != nil {
		if rev := w.tr.Rev(); rev != w.rev || len(evs) > 0 {
			st := w.tr.State()
			w.keepState(&st, rev)
		}
	}
	for _, e := range evs {
		if err := w.print(watchLine{Event: e}); err != nil {
			return err
		}
		if e.Notify && run {
			w.notify(ctx, e)
		}
	}
	return nil
}

// print writes one event line, redacted and made safe.
func (w *watcher) print(l watchLine) error {
	l.AgeS, l.SLAS = int64(l.Age.Seconds()), int64(l.Entry.SLA.Seconds())
	l.Entry.Title = termsafe.Line(w.secrets.String(l.Entry.Title))
	l.Entry.URL = termsafe.Line(l.Entry.URL)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.json {
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w.out, "%s\n", b)
		return err
	}
	msg := fmt.Sprintf("%s %-12s %-14s %s", l.At.Format("15:04:05"), l.Type, l.Entry.Need, l.Entry.Title)
	if l.Type == "notify_failed" {
		msg += " — " + l.NotifyError
	} else if l.Entry.Kind != attention.KindSource {
		msg += fmt.Sprintf(" (age %s, SLA %s", model.Span(l.Age), model.Span(l.Entry.SLA))
		if l.Level > 0 {
			msg += fmt.Sprintf(", overdue, level %d", l.Level)
		}
		msg += ")"
	}
	if l.By != "" {
		msg += " by " + termsafe.Line(l.By)
	}
	_, err := fmt.Fprintln(w.out, msg)
	return err
}

// started prints the first line: watching, with each source's status.
func (w *watcher) started(s *model.Snapshot) error {
	st := map[string]model.Status{
		"locks": s.Sources.Locks.Status,
		"db":    s.Sources.DB.Status,
		"gitea": s.Sources.Gitea.Status,
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.json {
		b, err := json.Marshal(struct {
			Event   string                  `json:"event"`
			At      time.Time               `json:"at"`
			Sources map[string]model.Status `json:"sources"`
		}{"watching", time.Now(), st})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w.out, "%s\n", b)
		return err
	}
	_, err := fmt.Fprintf(
		w.out,
		"%s watching: locks %s, db %s, gitea %s\n",
		time.Now().Format("15:04:05"),
		st["locks"],
		st["db"],
		st["gitea"],
	)
	return err
}

// notify runs the notify command for e in the background, one run at a time, and prints
// its failure as a notify_failed line (and on stderr).
func (w *watcher) notify(ctx context.Context, e attention.Event) {
	if w.runs == nil {
		w.runs = make(chan struct{}, 1)
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		select {
		case w.runs <- struct{}{}:
		case <-ctx.Done():
			return // never run: still owed after a restart (keepState)
		}
		defer func() { <-w.runs }()
		r := w.set.Command.Run(context.WithoutCancel(ctx), e)
		w.runEnds(e) // run, whatever its outcome: a failure is printed below, not run again
		if r.Err == nil {
			return
		}
		fmt.Fprintln(w.errw, "steward watch:", termsafe.Line(r.Err.Error()))
		_ = w.print(
			watchLine{Event: attention.Event{Type: "notify_failed", At: time.Now(), Entry: e.Entry, Level: e.Level, Age: e.Age},
				NotifyError: termsafe.Line(r.Err.Error())},
		)
	}()
}

func (w *watcher) wait() { w.wg.Wait() }

// readMarks reads the attention file beside the audit log at path as the tracker's marks.
func readMarks(path string) ([]attention.Mark, error) {
	ms, _, err := govern.ReadAttention(path)
	if err != nil {
		return nil, err
	}
	return toMarks(ms), nil
}

func toMarks(ms []govern.AttentionMark) []attention.Mark {
	out := make([]attention.Mark, 0, len(ms))
	for _, m := range ms {
		out = append(out, attention.Mark{Attempt: m.Attempt, At: m.At, Kind: attention.MarkKind(m.Kind), Key: m.Entry,
			Evidence: m.Evidence, Level: m.Level, Until: m.Until, By: m.By})
	}
	return out
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
