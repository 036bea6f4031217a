package tui

import (
	"context"
	"strconv"
	"strings"

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

// ackPreviewMsg is the core's preview of an acknowledgement, for dialog generation gen.
type ackPreviewMsg struct {
	gen int
	pv  govern.Preview
	err error
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

// observeAttention runs the tracker on the latest snapshot now, keeps the quiet set, and
// returns the notifications: one bell and desktop sequence for the frame, a notify command
// run per notifying event.
func (r *Root) observeAttention() tea.Cmd {
	a := r.attn
	if a.snap == nil {
		return nil
	}
	entries, unread := attention.FromSnapshot(a.snap, r.opts.Attention.SLAs)
	sel := ""
	if row := r.page().tbl.selected(); row != nil {
		sel = attnKeyOf(row.Key)
	}
	now := r.opts.Now()
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
	if !sameSet(quiet, a.quiet) {
		a.quiet = quiet
		if d := r.env.data; d.Loaded {
			d.Inbox = r.inboxOf(d)
			r.setRows()
		}
	}
	var cmds []tea.Cmd
	o := r.opts.Attention
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
	return tea.Batch(cmds...)
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

// inboxOf is the inbox without the entries an acknowledgement or a snooze keeps quiet.
func (r *Root) inboxOf(d *data) []row {
	rows := inbox(d)
	if len(r.attn.quiet) == 0 {
		return rows
	}
	out := rows[:0]
	for _, x := range rows {
		if !r.attn.quiet[attnKeyOf(x.Key)] {
			out = append(out, x)
		}
	}
	return out
}

// ackSelected asks the core to preview acknowledging the selected row's attention entry, at
// the level it has now; the confirm dialog shows the preview.
func (r *Root) ackSelected() tea.Cmd {
	row := r.page().tbl.selected()
	if row == nil {
		return nil
	}
	k := attnKeyOf(row.Key)
	e, ok := r.attn.byKey[k]
	switch {
	case k == "" || !ok:
		r.note("A acknowledges an attention entry (a question, a collision, an orphan with an action, a lost source); this row is not one")
		return nil
	case r.opts.Core == nil:
		r.note("no governed core: this workbench only shows")
		return nil
	}
	level := 0
	for _, x := range r.attn.tr.Inbox(r.opts.Now(), true) {
		if x.Entry.Key == k {
			level = x.Level
		}
	}
	req := govern.Request{Action: govern.ActionAttentionAck, Target: govern.Target{Entry: k},
		Params: map[string]string{"evidence": e.Evidence, "level": strconv.Itoa(level)}}
	r.dgen++
	r.note("asking the core to preview the acknowledgement…")
	gen := r.dgen
	core := r.opts.Core
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
		defer cancel()
		pv, err := core.Preview(ctx, req)
		return ackPreviewMsg{gen: gen, pv: pv, err: err}
	}
}

// ackPreviewed opens the confirm dialog on the core's preview (dropped when stale).
func (r *Root) ackPreviewed(m ackPreviewMsg) {
	if m.gen != r.dgen || r.dialog != nil {
		return
	}
	if m.err != nil {
		r.note("preview failed: " + line(m.err.Error()))
		return
	}
	r.open(newConfirm(r.env.keys.Dialog, []govern.Preview{m.pv}, 0, r.actor()))
}
