package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"steward/govern"
)

// attnIntent is what the attention keys answer (A acknowledge, Z snooze): the root hands it
// the attention state, and it asks the core for a preview (shown in the confirm dialog) or
// opens the snooze menu.
type attnIntent interface {
	intent
	act(a *attn, o Options, s *stack, note func(string)) tea.Cmd
}

type (
	// ackIntent asks the core to preview acknowledging an attention entry (its key).
	ackIntent struct{ entry string }
	// snoozeIntent asks for the snooze menu of an entry (dur 0: what the row's key answers)
	// or, chosen in the menu, for the core's preview of snoozing it for dur.
	snoozeIntent struct {
		entry string
		dur   time.Duration
	}
)

func (ackIntent) isIntent()    {}
func (snoozeIntent) isIntent() {}

func (in ackIntent) act(a *attn, o Options, _ *stack, note func(string)) tea.Cmd {
	return a.ack(o.Core, in.entry, o.Now(), note)
}

func (in snoozeIntent) act(a *attn, o Options, s *stack, note func(string)) tea.Cmd {
	if in.dur > 0 {
		s.pop() // the menu it was chosen in
		return a.snooze(o.Core, in.entry, in.dur, note)
	}
	e, ok := a.byKey[in.entry]
	switch {
	case in.entry == "" || !ok:
		note("this row's attention entry is not in the latest snapshot; nothing to snooze")
		return nil
	case o.Core == nil:
		note("no governed core: this workbench only shows")
		return nil
	}
	now := o.Now()
	s.push(&snoozeMenu{keys: *o.Keys, entry: in.entry, title: e.Title, waited: now.Sub(a.since[in.entry]), sla: e.SLA,
		choices: o.Attention.snoozes(), now: now})
	return nil
}

// snooze asks core to preview snoozing attention entry k for d (the confirm dialog shows the
// preview); note says what happens or why nothing does.
func (a *attn) snooze(core *govern.Core, k string, d time.Duration, note func(string)) tea.Cmd {
	e, ok := a.byKey[k]
	switch {
	case !ok:
		note("the entry left the latest snapshot meanwhile; nothing to snooze")
		return nil
	case core == nil:
		note("no governed core: this workbench only shows")
		return nil
	}
	note("asking the core to preview the snooze…")
	return previewCmd(core, 0, govern.Request{Action: govern.ActionAttentionSnooze, Target: govern.Target{Entry: k},
		Params: map[string]string{"evidence": e.Evidence, "for": d.String()}})
}

// snoozeMenu asks how long to snooze an attention entry; the choice goes to the core's
// preview, so nothing is recorded before the confirm dialog's Apply.
type snoozeMenu struct {
	keys    KeyMap
	entry   string
	title   string
	waited  time.Duration
	sla     time.Duration
	choices []time.Duration
	cursor  int
	now     time.Time
}

func (m *snoozeMenu) bindings() bindings {
	d := m.keys.Dialog
	const grp = "Snooze"
	return bindings{
		bind(d.Up, grp, false, nil, func() intent { m.cursor = max(m.cursor-1, 0); return nil }),
		bind(d.Down, grp, false, nil, func() intent { m.cursor = min(m.cursor+1, len(m.choices)-1); return nil }),
		bind(d.Choose, grp, true, nil, func() intent { return snoozeIntent{entry: m.entry, dur: m.choices[m.cursor]} }),
		bind(d.Cancel, grp, true, nil, func() intent { return cancelIntent{} }),
	}
}

func (m *snoozeMenu) input(tea.Msg) intent { return nil }

func (m *snoozeMenu) View(w, h int) string {
	iw := min(w-4, 80)
	b := []string{st.title.Render(truncate("Snooze "+line(m.entry), iw))}
	b = append(b, hang("", line(m.title), iw)...)
	for _, l := range hang("", fmt.Sprintf("waiting %s, SLA %s — snoozed, it leaves the inbox and rings nobody until the snooze ends", age(m.waited), age(m.sla)), iw) {
		b = append(b, st.dim.Render(l))
	}
	b = append(b, "")
	for i, d := range m.choices {
		cur := "  "
		if i == m.cursor {
			cur = "▸ "
		}
		b = append(b, truncate(fmt.Sprintf("%sfor %-4s (until %s)", cur, age(d), m.now.Add(d).Local().Format("Mon 15:04")), iw))
	}
	b = append(b, "", st.dim.Render(truncate("the core previews it next; nothing is recorded before Apply", iw)))
	if len(b) > h-2 {
		b = b[:max(h-2, 1)]
	}
	return st.box.Width(iw + 4).Render(strings.Join(b, "\n"))
}
