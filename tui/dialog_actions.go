package tui

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"steward/govern"
	"steward/govern/actionid"
)

// menuOption is one action offered for the selected or marked rows, with the core's previews.
type menuOption struct {
	action     string
	title      string
	reqs       []govern.Request
	previews   []govern.Preview
	errs       []string
	editor     bool // clarification.answer: opens the answer editor first
	question   string
	questionID string
	hidden     int
	names      []string // the rows it acts on, by name
	// local is localVerify or localResolve: no preview, the verifier or the resolve dialog
	// for attempt.
	local   string
	attempt *attemptRef
}

// allowed counts the option's previews the core allows.
func (o menuOption) allowed() int {
	n := 0
	for _, p := range o.previews {
		if p.Allowed {
			n++
		}
	}
	return n
}

// usable reports whether the option can be chosen.
func (o menuOption) usable() bool { return o.editor || o.local != "" || o.allowed() > 0 }

// why is the first refusal of the option, in the core's words.
func (o menuOption) why() string {
	for _, p := range o.previews {
		if !p.Allowed && p.Refusal != nil {
			return p.Refusal.Code + ": " + line(p.Refusal.Message)
		}
	}
	if len(o.errs) > 0 {
		return line(o.errs[0])
	}
	return ""
}

// actionMenu lists the actions for the rows, which it names; refused ones stay visible with
// the core's reason, wrapped so every word can be read.
type actionMenu struct {
	sized
	noInput
	keys    KeyMap
	opts    []menuOption
	cursor  int
	names   []string // the rows acted on
	hidden  int
	loading bool
	// chosen: Choose was pressed while the previews were still coming; the choice is
	// made when they arrive (see loaded), so a key typed ahead is not lost.
	chosen bool
	// stale is the row it acts on once it left its view since the previews were read
	// (subject.go): a choice asks the core for them again.
	stale   *subject
	inspect []string
	next    []string // a contention row's way out, said before its actions
	scroll  pager
}

// newActionMenu gathers the options of the rows: every governed action the core knows (one
// option per action, with a request per row), and for one unknown attempt the verifier and
// the resolve dialog.
func newActionMenu(keys KeyMap, in actIntent, core *govern.Core) *actionMenu {
	m := &actionMenu{keys: keys, hidden: in.hidden, loading: core != nil}
	for _, row := range in.rows {
		m.names = append(m.names, row.Title)
	}
	knows := func(id string) (govern.Spec, bool) {
		if core == nil {
			return govern.Spec{}, false
		}
		return core.Spec(id)
	}
	byID := map[string]*menuOption{}
	var order []string
	for _, row := range in.rows {
		if row.Next != "" && len(in.rows) == 1 {
			m.next = append(m.next, row.Next)
		}
		if row.Inspect != "" && len(in.rows) == 1 {
			m.inspect = append(m.inspect, row.Inspect)
		}
		actions := row.Actions
		if row.Recover != nil &&
			!slices.ContainsFunc(actions, func(a actionRef) bool { return a.Req.Action == actionid.Recover }) {
			actions = append(
				append([]actionRef{}, actions...),
				actionRef{Req: govern.Request{Action: actionid.Recover, Target: govern.Target{Item: row.Recover}}},
			)
		}
		for _, a := range actions {
			if a.Req.Action == localVerify || a.Req.Action == localResolve {
				if len(in.rows) == 1 && core != nil && row.Unsettled != nil {
					byID[a.Req.Action] = &menuOption{action: a.Req.Action, title: a.Label, local: a.Req.Action, attempt: row.Unsettled}
					order = append(order, a.Req.Action)
				}
				continue // one attempt at a time
			}
			spec, ok := knows(a.Req.Action)
			if !ok {
				continue
			}
			o := byID[a.Req.Action]
			if o == nil {
				o = &menuOption{action: a.Req.Action, title: firstNonEmpty(spec.Title, a.Label), hidden: in.hidden}
				if a.Req.Action == actionid.Answer {
					if len(in.rows) > 1 {
						continue // one answer per question
					}
					o.editor, o.question, o.questionID = true, row.Markdown, row.QuestionID
				}
				byID[a.Req.Action] = o
				order = append(order, a.Req.Action)
			}
			if !sameRequest(o.reqs, a.Req) {
				o.reqs = append(o.reqs, a.Req)
				o.names = append(o.names, row.Title)
			}
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		if a, b := menuRank(order[i]), menuRank(order[j]); a != b {
			return a < b
		}
		return order[i] < order[j]
	})
	for _, id := range order {
		m.opts = append(m.opts, *byID[id])
	}
	if core == nil {
		m.inspect = append(m.inspect, "no governed core: this workbench only shows")
	}
	if len(m.opts) == 0 {
		m.loading = false
	}
	return m
}

// sameRequest reports whether reqs holds req already (two rows of one item: one recover).
func sameRequest(reqs []govern.Request, req govern.Request) bool {
	for _, r := range reqs {
		if r.Action == req.Action && targetString(r.Target) == targetString(req.Target) {
			return true
		}
	}
	return false
}

// menuRank puts the verifier first, then the resolve dialog, the row's own actions, and the
// recover plan of the whole item last.
func menuRank(id string) int {
	switch id {
	case localVerify:
		return 0
	case localResolve:
		return 1
	case actionid.Recover:
		return 3
	}
	return 2
}

// loaded takes the core's previews; a choice typed ahead is made now if the option is
// usable (otherwise the menu stays open, showing why).
func (m *actionMenu) loaded(opts []menuOption) intent {
	m.opts, m.loading = opts, false
	m.cursor = min(m.cursor, max(len(m.opts)-1, 0))
	if m.chosen {
		m.chosen = false
		if m.cursor < len(m.opts) && m.opts[m.cursor].usable() {
			return m.pick(m.opts[m.cursor])
		}
	}
	return nil
}

// pick closes the menu and acts on option o: its previews, or — when its row left its view
// since they were read — the core's previews of its requests read again.
func (m *actionMenu) pick(o menuOption) intent {
	if m.stale != nil && !o.editor && o.local == "" {
		return closeThen{replanIntent{reqs: o.reqs, hidden: o.hidden, names: o.names, from: m.stale}}
	}
	return closeThen{chooseIntent{o}}
}

func (m *actionMenu) bindings() bindings {
	d := m.keys.Dialog
	const grp = "Action menu"
	choose := func() intent {
		if m.loading {
			m.chosen = true
			return nil
		}
		o := m.opts[m.cursor]
		if !o.usable() {
			return noteIntent{o.title + " is refused: " + o.why()}
		}
		return m.pick(o)
	}
	return bindings{
		bind(d.Up, grp, false, nil, func() intent { m.cursor = max(m.cursor-1, 0); return nil }),
		bind(d.Down, grp, false, nil, func() intent { m.cursor = min(m.cursor+1, max(len(m.opts)-1, 0)); return nil }),
		bind(
			d.Choose,
			grp,
			true,
			onlyIf(func() bool { return m.loading || m.cursor < len(m.opts) }, "no action applies here"),
			choose,
		),
		bind(d.ScrollUp, grp, false, nil, func() intent { m.scroll.by(-5); return nil }),
		bind(d.ScrollDown, grp, false, nil, func() intent { m.scroll.by(5); return nil }),
		bind(d.Cancel, grp, true, nil, func() intent { return cancelIntent{} }),
	}
}

func (m *actionMenu) View() string {
	iw := m.inner(100)
	var b []string
	b = append(b, st.title.Render(truncate(fmt.Sprintf("Actions for %d row(s)", len(m.names)), iw)))
	b = append(b, hang("on: ", strings.Join(m.names, ", "), iw)...)
	if m.hidden > 0 {
		b = append(b, st.warn.Render(fmt.Sprintf("%d marked row(s) hidden by the filter are not included", m.hidden)))
	}
	b = append(b, "")
	for _, s := range m.next {
		b = append(b, hang("next — ", s, iw)...)
	}
	for _, s := range m.inspect {
		for _, l := range hang("inspect only — ", s, iw) {
			b = append(b, st.warn.Render(l))
		}
	}
	if m.loading {
		s := "asking the governed core for previews…"
		if m.chosen {
			s += " (your choice is kept)"
		}
		b = append(b, s)
	}
	if !m.loading && len(m.opts) == 0 && len(m.next) == 0 {
		b = append(b, "no action the core knows applies here")
	}
	for i, o := range m.opts {
		cur := "  "
		if i == m.cursor {
			cur = "▸ "
		}
		label := o.title
		if !o.editor && o.local == "" {
			label += fmt.Sprintf("  (%d of %d allowed)", o.allowed(), len(o.previews))
		}
		if o.usable() {
			b = append(b, hang(cur, label, iw)...)
		} else {
			for _, l := range hang(cur, label+" — disabled", iw) {
				b = append(b, st.dim.Render(l))
			}
		}
		if why := o.why(); why != "" {
			for _, l := range hang("    refused: ", why, iw) {
				b = append(b, st.bad.Render(l))
			}
		}
	}
	b = m.scroll.window(b, m.h-2, iw, m.keys.Dialog.ScrollDown.Help().Key)
	return st.box.Width(iw + 4).Render(strings.Join(b, "\n"))
}
