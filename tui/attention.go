package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"steward/attention"
	"steward/attention/notify"
	"steward/attention/store"
	"steward/govern"
	"steward/model"
)

// AttentionOptions configure how the workbench makes a person hear about attention entries
// (docs/attention.md). The zero value notifies nobody (no bell, no desktop, no command).
type AttentionOptions struct {
	SLAs          attention.SLAs
	Reescalations int
	// Bell and Desktop write the terminal bell and the OSC 9/777 desktop notification, wrapped
	// for Mux.
	Bell, Desktop bool
	Mux           attention.Multiplexer
	// Command is the notify command (empty Argv: none); its failure is a toast and a
	// finding in the inbox until a later run succeeds.
	Command notify.Command
	// Snooze is the choice of snooze lengths Z offers (defaultSnoozes when empty), each
	// from 1 minute to govern.MaxSnooze.
	Snooze []time.Duration
	// Restore is the attention state an earlier workbench left (store.Load), and Keep
	// saves the state as it changes (nil: not kept): a restarted workbench notifies nothing
	// it already notified, and "first seen" and the SLAs run on.
	Restore attention.State
	Keep    *store.Saver
}

// defaultSnoozes are the snooze lengths the workbench offers when none are configured.
var defaultSnoozes = []time.Duration{15 * time.Minute, time.Hour, 4 * time.Hour, 24 * time.Hour, 72 * time.Hour}

func (o AttentionOptions) snoozes() []time.Duration {
	var out []time.Duration
	for _, d := range o.Snooze {
		if d >= time.Minute && d <= govern.MaxSnooze {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		return defaultSnoozes
	}
	return out
}

// attn is the workbench's attention state: the tracker, the marks of the attention file,
// and which entries a mark keeps quiet now. Only Update touches it.
type attn struct {
	tr    *attention.Tracker
	snap  *model.Snapshot
	marks []attention.Mark
	quiet map[string]bool
	byKey map[string]attention.Entry
	// partOf is the incident each orphan an incident stands for belongs to (by attention
	// key): acknowledging or snoozing the orphan's row acts on its incident.
	partOf map[string]string
	// since is when each entry entered its state, as the tracker knows it (from the
	// evidence, else when it first saw it): the inbox's age and SLA are drawn from it.
	since map[string]time.Time
	seen  map[string]bool // the entries whose since is when the tracker first saw them
	mgen  int
	// failed is the notify command's failure since its last success (nil: none).
	failed *notifyFailure
	// appeared is when orphans appeared within the pulse's window; observed says the
	// tracker saw a first snapshot (pulse.go).
	appeared map[string]time.Time
	observed bool
	// oldest is when the oldest human-required entry entered its state (zero: none).
	oldest time.Time
	// kept is the tracker's revision last handed to a save.
	kept uint64
}

// notifyFailure is the notify command's failures since it last succeeded: the inbox shows
// it as a finding until a run succeeds.
type notifyFailure struct {
	n     int
	first time.Time
	last  time.Time
	err   string
	what  string // the event whose run failed last
}

func newAttn(o AttentionOptions) *attn {
	a := &attn{tr: attention.NewTracker(attention.Config{Reescalations: o.Reescalations}), quiet: map[string]bool{},
		byKey: map[string]attention.Entry{}, partOf: map[string]string{}, since: map[string]time.Time{},
		seen: map[string]bool{}}
	a.tr.Restore(o.Restore)
	a.kept = a.tr.Rev()
	return a
}

// keepCmd saves the tracker's state off the UI goroutine when it changed since the last
// save (the Saver drops a save older than one already written); its failure is a toast.
func (a *attn) keepCmd(k *store.Saver) tea.Cmd {
	if k == nil || a.tr.Rev() == a.kept {
		return nil
	}
	rev, st := a.tr.Rev(), a.tr.State()
	a.kept = rev
	return func() tea.Msg {
		if err := k.Save(rev, st); err != nil {
			return keptMsg{err: err}
		}
		return nil
	}
}

// keptMsg is a failed save of the attention state.
type keptMsg struct{ err error }

// marksMsg carries the attention file's marks.
type marksMsg struct {
	gen   int
	marks []attention.Mark
	err   error
}

// notifyDoneMsg is a finished notify command run: the event it was run for and its error.
type notifyDoneMsg struct {
	what string
	at   time.Time
	err  error
}

// marksCmd reads the attention file beside the audit log.
func marksCmd(auditPath string, gen int) tea.Cmd {
	if auditPath == "" {
		return nil
	}
	return func() tea.Msg {
		ms, _, err := govern.ReadAttention(auditPath)
		out := make([]attention.Mark, 0, len(ms))
		for _, m := range ms {
			out = append(out, attention.Mark{Attempt: m.Attempt, At: m.At, Kind: attention.MarkKind(m.Kind), Key: m.Entry,
				Evidence: m.Evidence, Level: m.Level, Until: m.Until, By: m.By})
		}
		return marksMsg{gen: gen, marks: out, err: err}
	}
}

// attnKeyOf is the attention key of a row of the inbox, the Clarifications, Contention or
// Orphans view ("" when the row is no attention entry).
func attnKeyOf(rowKey string) string {
	k := strings.TrimPrefix(rowKey, "inbox:")
	switch {
	case strings.HasPrefix(k, "clar:"):
		return "clarification:" + strings.TrimPrefix(k, "clar:")
	case strings.HasPrefix(k, "src:"):
		return "source:" + strings.TrimPrefix(k, "src:")
	case strings.HasPrefix(k, "orphan:"):
		p := strings.Split(strings.TrimPrefix(k, "orphan:"), "\x00")
		if len(p) == 4 {
			return attention.OrphanKey(p[0], p[2], p[1])
		}
	case strings.HasPrefix(k, "incident:"):
		return k
	case strings.HasPrefix(k, "contention:"):
		p := strings.Split(strings.TrimPrefix(k, "contention:"), "\x00")
		if len(p) >= 2 {
			return "collision:" + p[0] + ":" + p[1]
		}
	}
	return ""
}

// entryOf is the entry attention key k answers to: its incident when it is an orphan an
// incident stands for, else k itself.
func (a *attn) entryOf(k string) string {
	if in, ok := a.partOf[k]; ok {
		return in
	}
	return k
}

// hear runs the tracker on what msg brings — a snapshot, the attention file's marks, a
// finished notify command, or nothing new (a tick) — with sel the selected row. It keeps the
// quiet set, tells ts what went wrong, and returns the notifications (one bell and desktop
// sequence for the frame, a notify command run per notifying event) and whether the inbox
// must be derived again (the quiet set or the notify command's finding changed). A snapshot
// is heard before it is installed, so that its inbox is derived with its own entries.
func (a *attn) hear(msg any, sel *row, opts Options, ts *toasts) (tea.Cmd, bool) {
	now := opts.Now()
	switch m := msg.(type) {
	case *model.Snapshot:
		if m != nil {
			a.snap = m
		}
	case marksMsg:
		switch {
		case m.gen != a.mgen:
			return nil, false
		case m.err != nil:
			ts.push(toastNote, "attention file unreadable: "+line(m.err.Error()), now)
			return nil, false
		}
		a.marks = m.marks
	case notifyDoneMsg:
		return nil, a.notified(m, ts)
	case keptMsg:
		ts.push(toastNote, "the attention state cannot be kept ("+line(m.err.Error())+"): a restart may notify again", now)
		return nil, false
	}
	if a.snap == nil {
		return nil, false
	}
	now = a.snap.Clock.At(now) // ages and SLAs at the clock the snapshot was judged at
	key := ""
	if sel != nil {
		key = a.entryOf(attnKeyOf(sel.Key))
	}
	return a.observe(now, key, opts.Attention)
}

// notified takes a finished notify command run: a failure is a toast and the inbox's
// finding (until a run succeeds). It reports whether the finding changed.
func (a *attn) notified(m notifyDoneMsg, ts *toasts) bool {
	if m.err == nil {
		was := a.failed != nil
		a.failed = nil
		return was
	}
	e := line(m.err.Error())
	ts.push(toastFailed, "notify command failed for "+m.what+": "+e, m.at)
	if a.failed == nil {
		a.failed = &notifyFailure{first: m.at}
	}
	a.failed.n++
	a.failed.last, a.failed.err, a.failed.what = m.at, e, m.what
	return true
}

// reread starts reading the attention file again (a newer read makes older ones stale).
func (a *attn) reread(auditPath string) tea.Cmd {
	a.mgen++
	return marksCmd(auditPath, a.mgen)
}

// observe runs the tracker on the latest snapshot at now (sel: the attention key of the
// selected row) and keeps the quiet set.
func (a *attn) observe(now time.Time, sel string, o AttentionOptions) (tea.Cmd, bool) {
	entries, unread := attention.FromSnapshot(a.snap, o.SLAs)
	evs := a.tr.Observe(attention.Frame{Now: now, Entries: entries, Unread: unread, Marks: a.marks, Selected: sel})
	a.sawAppear(evs, now, !a.observed)
	a.observed = true
	quiet := map[string]bool{}
	for _, row := range a.tr.Inbox(now, true) {
		if row.Acked || row.Snoozed {
			quiet[row.Entry.Key] = true
		}
	}
	clear(a.byKey)
	clear(a.partOf)
	for _, e := range entries {
		a.byKey[e.Key] = e
		for _, p := range e.Parts {
			a.partOf[p.Key] = e.Key
		}
	}
	clear(a.since)
	clear(a.seen)
	a.oldest = time.Time{}
	for _, row := range a.tr.Inbox(now, true) {
		a.since[row.Entry.Key] = now.Add(-row.Age)
		a.seen[row.Entry.Key] = row.Entry.SinceFrom == attention.SinceFirstSeen
		if row.Entry.Need == model.NeedHuman && (a.oldest.IsZero() || a.since[row.Entry.Key].Before(a.oldest)) {
			a.oldest = a.since[row.Entry.Key]
		}
	}
	changed := !sameSet(quiet, a.quiet)
	a.quiet = quiet
	var cmds []tea.Cmd
	if title, body, ok := attention.Notice(evs); ok && (o.Bell || o.Desktop) {
		cmds = append(cmds, tea.Raw(attention.Sequence(title, body, o.Bell, o.Desktop, o.Mux)))
	}
	if len(o.Command.Argv) > 0 {
		for _, e := range evs {
			if e.Notify {
				cmds = append(cmds, notifyCmd(o.Command, e, now))
			}
		}
	}
	if c := a.keepCmd(o.Keep); c != nil {
		cmds = append(cmds, c)
	}
	return tea.Batch(cmds...), changed
}

// notifyCmd runs the notify command for e (started at now) off the UI goroutine.
func notifyCmd(c notify.Command, e attention.Event, now time.Time) tea.Cmd {
	what := string(e.Type) + " " + e.Entry.Key
	return func() tea.Msg { return notifyDoneMsg{what: what, at: now, err: c.Run(context.Background(), e).Err} }
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// inbox is d's inbox without the entries an acknowledgement or a snooze keeps quiet, each
// attention entry with its age (since it entered its state) and its SLA, ordered by need,
// then by how far past its SLA (a row that is no attention entry — an unknown outcome — is
// due from its own time), and the notify command's failure as a finding.
func (a *attn) inbox(d *data) []*row {
	rows := inbox(d)
	out := rows[:0]
	for _, x := range rows {
		k := attnKeyOf(x.Key)
		if a.quiet[k] {
			continue
		}
		if e, ok := a.byKey[k]; ok {
			if s, ok := a.since[k]; ok {
				x.Since, x.SinceSeen = s, a.seen[k]
			}
			x.SLA, x.Urgent = e.SLA, x.Since.Add(e.SLA)
		}
		out = append(out, x)
	}
	if f := a.failed; f != nil {
		out = append(out, ptrTo(f.row()))
	}
	byAttention(out)
	return out
}

// row is the inbox's finding for the notify command's failures.
func (f *notifyFailure) row() row {
	what := fmt.Sprintf("notify command failed %d× since %s: %s", f.n, f.first.Local().Format("15:04:05"), f.err)
	r := row{
		Key:    "inbox:notify",
		Class:  "operator",
		Rank:   1,
		Since:  f.first,
		Urgent: f.first,
		Title:  "the notify command failed",
		Cells:  []string{"operator", "notify", "", what, "", ""},
		Sections: []section{{Title: "Notify command", Lines: []string{
			fmt.Sprintf(
				"failed %d time(s), first %s, last %s",
				f.n,
				f.first.Local().Format(time.DateTime),
				f.last.Local().Format(time.DateTime),
			),
			"last run for: " + f.what, "error: " + f.err,
			"nobody outside this screen heard of those events; fix notify.command (steward config check) — the next run " +
				"that succeeds clears this"}}},
	}
	r.finish()
	return r
}

// hear runs the attention tracker on what msg brings (attn.hear) and derives the inbox again
// when what it keeps quiet, or the notify command's finding, changed.
func (r *Root) hear(msg any) tea.Cmd {
	cmd, changed := r.attn.hear(msg, r.list().tbl.selected(), r.opts, &r.toasts)
	if d := r.env.data; changed && d.Loaded {
		d.Inbox = r.attn.inbox(d)
		r.setRows()
	}
	return cmd
}
