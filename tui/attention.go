package tui

import (
	"context"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"steward/attention"
	"steward/attention/notify"
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
	// Command is the notify command (empty Argv: none); its failure is a toast.
	Command notify.Command
}

// attn is the workbench's attention state: the tracker, the marks of the attention file,
// and which entries a mark keeps quiet now. Only Update touches it.
type attn struct {
	tr    *attention.Tracker
	snap  *model.Snapshot
	marks []attention.Mark
	quiet map[string]bool
	byKey map[string]attention.Entry
	mgen  int
}

func newAttn(o AttentionOptions) *attn {
	return &attn{tr: attention.NewTracker(attention.Config{Reescalations: o.Reescalations}), quiet: map[string]bool{}, byKey: map[string]attention.Entry{}}
}

// marksMsg carries the attention file's marks.
type marksMsg struct {
	gen   int
	marks []attention.Mark
	err   error
}

// notifyDoneMsg is a finished notify command run.
type notifyDoneMsg struct{ err error }

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
			return "orphan:" + p[0] + ":" + p[2] + ":" + p[1]
		}
	case strings.HasPrefix(k, "contention:"):
		p := strings.Split(strings.TrimPrefix(k, "contention:"), "\x00")
		if len(p) >= 2 {
			return "collision:" + p[0] + ":" + p[1]
		}
	}
	return ""
}

// hear runs the tracker on what msg brings — a snapshot, the attention file's marks, a
// finished notify command, or nothing new (a tick) — with sel the selected row. It keeps the
// quiet set, tells note what went wrong, and returns the notifications (one bell and desktop
// sequence for the frame, a notify command run per notifying event) and whether the quiet
// set changed (the inbox must be derived again).
func (a *attn) hear(msg any, sel *row, opts Options, note func(string)) (tea.Cmd, bool) {
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
			note("attention file unreadable: " + line(m.err.Error()))
			return nil, false
		}
		a.marks = m.marks
	case notifyDoneMsg:
		if m.err != nil {
			note("notify command: " + line(m.err.Error()))
		}
		return nil, false
	}
	if a.snap == nil {
		return nil, false
	}
	key := ""
	if sel != nil {
		key = attnKeyOf(sel.Key)
	}
	return a.observe(opts.Now(), key, opts.Attention)
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
	quiet := map[string]bool{}
	for _, row := range a.tr.Inbox(now, true) {
		if row.Acked || row.Snoozed {
			quiet[row.Entry.Key] = true
		}
	}
	clear(a.byKey)
	for _, e := range entries {
		a.byKey[e.Key] = e
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
				cmds = append(cmds, notifyCmd(o.Command, e))
			}
		}
	}
	return tea.Batch(cmds...), changed
}

func notifyCmd(c notify.Command, e attention.Event) tea.Cmd {
	return func() tea.Msg { return notifyDoneMsg{err: c.Run(context.Background(), e).Err} }
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

// inbox is d's inbox without the entries an acknowledgement or a snooze keeps quiet.
func (a *attn) inbox(d *data) []row {
	rows := inbox(d)
	if len(a.quiet) == 0 {
		return rows
	}
	out := rows[:0]
	for _, x := range rows {
		if !a.quiet[attnKeyOf(x.Key)] {
			out = append(out, x)
		}
	}
	return out
}

// ack asks core to preview acknowledging attention entry k at the level it has now (the
// confirm dialog shows the preview: Root.previewed); note says what happens or why nothing
// does.
func (a *attn) ack(core *govern.Core, k string, now time.Time, note func(string)) tea.Cmd {
	e, ok := a.byKey[k]
	switch {
	case k == "" || !ok:
		note("this row's attention entry is not in the latest snapshot; nothing to acknowledge")
		return nil
	case core == nil:
		note("no governed core: this workbench only shows")
		return nil
	}
	level := 0
	for _, x := range a.tr.Inbox(now, true) {
		if x.Entry.Key == k {
			level = x.Level
		}
	}
	note("asking the core to preview the acknowledgement…")
	return previewCmd(core, 0, govern.Request{Action: govern.ActionAttentionAck, Target: govern.Target{Entry: k},
		Params: map[string]string{"evidence": e.Evidence, "level": strconv.Itoa(level)}})
}

// hear runs the attention tracker on what msg brings (attn.hear) and derives the inbox again
// when what it keeps quiet changed.
func (r *Root) hear(msg any) tea.Cmd {
	cmd, changed := r.attn.hear(msg, r.page().tbl.selected(), r.opts, r.note)
	if d := r.env.data; changed && d.Loaded {
		d.Inbox = r.attn.inbox(d)
		r.setRows()
	}
	return cmd
}
