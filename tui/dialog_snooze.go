package tui

import (
	"fmt"
	"strings"
	"time"
)

// snoozeMenu asks how long to snooze an attention entry; the choice goes to the core's
// preview, so nothing is recorded before the confirm dialog's Apply.
type snoozeMenu struct {
	sized
	noInput
	keys    KeyMap
	entry   string
	title   string
	waited  time.Duration
	sla     time.Duration
	choices []time.Duration
	cursor  int
	now     time.Time
}

func newSnoozeMenu(
	keys KeyMap,
	entry, title string,
	waited, sla time.Duration,
	choices []time.Duration,
	now time.Time,
) *snoozeMenu {
	return &snoozeMenu{keys: keys, entry: entry, title: title, waited: waited, sla: sla, choices: choices, now: now}
}

func (m *snoozeMenu) bindings() bindings {
	d := m.keys.Dialog
	const grp = "Snooze"
	return bindings{
		bind(d.Up, grp, false, nil, func() intent { m.cursor = max(m.cursor-1, 0); return nil }),
		bind(d.Down, grp, false, nil, func() intent { m.cursor = min(m.cursor+1, len(m.choices)-1); return nil }),
		bind(
			d.Choose,
			grp,
			true,
			nil,
			func() intent { return closeThen{snoozeIntent{entry: m.entry, dur: m.choices[m.cursor]}} },
		),
		bind(d.Cancel, grp, true, nil, func() intent { return cancelIntent{} }),
	}
}

func (m *snoozeMenu) View() string {
	iw := m.inner(80)
	b := []string{st.title.Render(truncate("Snooze "+line(m.entry), iw))}
	b = append(b, hang("", line(m.title), iw)...)
	for _, l := range hang("", fmt.Sprintf("waiting %s, SLA %s — snoozed, it leaves the inbox and rings nobody until "+
		"the snooze ends", age(m.waited), age(m.sla)), iw) {
		b = append(b, st.dim.Render(l))
	}
	b = append(b, "")
	for i, d := range m.choices {
		cur := "  "
		if i == m.cursor {
			cur = "▸ "
		}
		b = append(
			b,
			truncate(fmt.Sprintf("%sfor %-4s (until %s)", cur, age(d), m.now.Add(d).Local().Format("Mon 15:04")), iw),
		)
	}
	b = append(b, "", st.dim.Render(truncate("the core previews it next; nothing is recorded before Apply", iw)))
	if len(b) > m.h-2 {
		b = b[:max(m.h-2, 1)]
	}
	return st.box.Width(iw + 4).Render(strings.Join(b, "\n"))
}
