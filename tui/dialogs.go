package tui

import (
	"fmt"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"

	"steward/govern"
	"steward/termsafe"
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
	keys    KeyMap
	opts    []menuOption
	cursor  int
	names   []string // the rows acted on
	hidden  int
	loading bool
	// chosen: Choose was pressed while the previews were still coming; the choice is
	// made when they arrive (see loaded), so a key typed ahead is not lost.
	chosen  bool
	inspect []string
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
		if row.Inspect != "" && len(in.rows) == 1 {
			m.inspect = append(m.inspect, row.Inspect)
		}
		actions := row.Actions
		if row.Recover != nil {
			actions = append(append([]actionRef{}, actions...), actionRef{Req: govern.Request{Action: govern.ActionRecover, Target: govern.Target{Item: row.Recover}}})
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
				if a.Req.Action == actionAnswer {
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
	case govern.ActionRecover:
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
			return chooseIntent{m.opts[m.cursor]}
		}
	}
	return nil
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
		return chooseIntent{o}
	}
	return bindings{
		bind(d.Up, grp, false, nil, func() intent { m.cursor = max(m.cursor-1, 0); return nil }),
		bind(d.Down, grp, false, nil, func() intent { m.cursor = min(m.cursor+1, max(len(m.opts)-1, 0)); return nil }),
		bind(d.Choose, grp, true, onlyIf(func() bool { return m.loading || m.cursor < len(m.opts) }, "no action applies here"), choose),
		bind(d.ScrollUp, grp, false, nil, func() intent { m.scroll.by(-5); return nil }),
		bind(d.ScrollDown, grp, false, nil, func() intent { m.scroll.by(5); return nil }),
		bind(d.Cancel, grp, true, nil, func() intent { return cancelIntent{} }),
	}
}

func (m *actionMenu) input(tea.Msg) intent { return nil }

func (m *actionMenu) View(w, h int) string {
	iw := min(w-4, 100)
	var b []string
	b = append(b, st.title.Render(truncate(fmt.Sprintf("Actions for %d row(s)", len(m.names)), iw)))
	b = append(b, hang("on: ", strings.Join(m.names, ", "), iw)...)
	if m.hidden > 0 {
		b = append(b, st.warn.Render(fmt.Sprintf("%d marked row(s) hidden by the filter are not included", m.hidden)))
	}
	b = append(b, "")
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
	if !m.loading && len(m.opts) == 0 {
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
	b = m.scroll.window(b, h-2, iw, m.keys.Dialog.ScrollDown.Help().Key)
	return st.box.Width(iw + 4).Render(strings.Join(b, "\n"))
}

// confirmDialog shows the core's preview, scrollable and wrapped so every target can be read,
// and asks for the go-ahead. Cancel is the default button; destructive and bulk applies need
// a typed phrase, and once it matches, enter applies.
type confirmDialog struct {
	keys     KeyMap
	previews []govern.Preview
	hidden   int
	names    []string
	phrase   string // what must be typed; empty when none
	typed    field
	focus    int // 0 Cancel, 1 Apply
	actor    govern.Actor
	scroll   pager
	starts   []int // the line each target starts on (last drawn)
	draft    string
}

func newConfirm(keys KeyMap, pvs []govern.Preview, hidden int, actor govern.Actor, names []string) *confirmDialog {
	d := &confirmDialog{keys: keys, previews: pvs, hidden: hidden, actor: actor, names: names, typed: newField(keys.Line, 200)}
	allowed := d.allowedPreviews()
	switch {
	case len(allowed) > 1:
		d.phrase = fmt.Sprintf("apply %d", len(allowed))
	case len(allowed) == 1:
		d.phrase = allowed[0].ConfirmPhrase
	}
	return d
}

func (d *confirmDialog) allowedPreviews() []govern.Preview {
	var out []govern.Preview
	for _, p := range d.previews {
		if p.Allowed {
			out = append(out, p)
		}
	}
	return out
}

// ready reports whether Apply may be pressed.
func (d *confirmDialog) ready() bool {
	return len(d.allowedPreviews()) > 0 && d.typed.String() == d.phrase
}

// go applies the allowed previews.
func (d *confirmDialog) apply() intent {
	pvs := d.allowedPreviews()
	phrases := make([]string, len(pvs))
	for i, p := range pvs {
		phrases[i] = p.ConfirmPhrase
	}
	return confirmIntent{previews: pvs, phrases: phrases, draft: d.draft}
}

func (d *confirmDialog) bindings() bindings {
	k := d.keys.Dialog
	const grp = "Confirm"
	choose := func() intent {
		switch {
		case d.phrase != "" && d.ready():
			return d.apply() // the phrase matches: enter applies, whatever is focused
		case d.focus == 0:
			return cancelIntent{}
		case !d.ready():
			return noteIntent{"Apply is not enabled: nothing the core allows, or the phrase is not typed yet"}
		}
		return d.apply()
	}
	return bindings{
		bind(k.Choose, grp, true, nil, choose),
		bind(k.Switch, grp, true, onlyIf(func() bool { return d.ready() }, "Apply is not enabled yet"), func() intent { d.focus = 1 - d.focus; return nil }),
		bind(k.ScrollDown, grp, true, nil, func() intent { d.scroll.by(d.page()); return nil }),
		bind(k.ScrollUp, grp, false, nil, func() intent { d.scroll.by(-d.page()); return nil }),
		bind(k.Cancel, grp, true, nil, func() intent { return cancelIntent{} }),
	}
}

// page is how far one scroll key moves the preview.
func (d *confirmDialog) page() int { return 8 }

func (d *confirmDialog) input(msg tea.Msg) intent {
	switch m := msg.(type) {
	case tea.MouseWheelMsg:
		if m.Button == tea.MouseWheelDown {
			d.scroll.by(3)
		} else if m.Button == tea.MouseWheelUp {
			d.scroll.by(-3)
		}
		return nil
	}
	if d.phrase != "" && len(d.allowedPreviews()) > 0 {
		d.typed.input(msg)
		if d.ready() {
			d.focus = 1
		}
	}
	return nil
}

// content is the whole preview, wrapped at w: every target with its refusal, effects,
// fences, evidence and undo.
func (d *confirmDialog) content(w int) []string {
	var b []string
	add := func(style func(...string) string, prefix, text string) {
		for _, l := range hang(prefix, text, w) {
			b = append(b, style(l))
		}
	}
	plain := func(s ...string) string { return strings.Join(s, "") }
	d.starts = d.starts[:0]
	for _, p := range d.previews {
		b = append(b, "")
		d.starts = append(d.starts, len(b))
		add(st.bold.Render, "Target ", targetString(p.Request.Target))
		if !p.Allowed && p.Refusal != nil {
			add(st.bad.Render, "refused ", p.Refusal.Code+": "+line(p.Refusal.Message))
		}
		for _, s := range p.Effects {
			for i, l := range strings.Split(termsafe.Text(s), "\n") {
				prefix := "  effect  "
				if i > 0 {
					prefix = "          "
				}
				add(plain, prefix, l)
			}
		}
		for _, s := range p.Fences {
			add(plain, "  fence   ", line(s))
		}
		for _, s := range p.Evidence {
			add(st.dim.Render, "  seen    ", line(s))
		}
		if p.Inverse != nil {
			add(st.dim.Render, "  undo    ", line(p.Inverse.Action))
		}
	}
	return b
}

func (d *confirmDialog) View(w, h int) string {
	iw := min(w-4, 110)
	var head []string
	p0 := d.previews[0]
	head = append(head, hang("", st.title.Render(line(p0.Spec.Title)+"  ("+line(p0.Spec.ID)+")"), iw)...)
	head = append(head, truncate(fmt.Sprintf("tier %s · needs role %s · you are %s as %s", p0.Spec.Tier, p0.Spec.MinRole, line(actorName(d.actor)), d.actor.Role), iw))
	if len(d.previews) > 1 {
		head = append(head, st.warn.Render(fmt.Sprintf("bulk: %d targets, %d allowed", len(d.previews), len(d.allowedPreviews()))))
	}
	if d.hidden > 0 {
		head = append(head, st.warn.Render(fmt.Sprintf("%d marked row(s) hidden by the filter are not included", d.hidden)))
	}
	var foot []string
	if d.phrase != "" && len(d.allowedPreviews()) > 0 {
		foot = append(foot, "")
		if n := len(d.previews); n > 1 && d.read() < n {
			foot = append(foot, st.warn.Render(truncate(fmt.Sprintf("you have read %d of %d targets — %s shows the rest", d.read(), n, d.keys.Dialog.ScrollDown.Help().Key), iw)))
		}
		foot = append(foot, truncate(fmt.Sprintf("type %q, then enter applies:", d.phrase), iw), "> "+d.typed.view(iw-2))
	}
	foot = append(foot, "", buttons(d.focus, d.ready(), "Apply"))
	body := d.content(iw)
	room := max(h-2-len(head)-len(foot), 3)
	lines := append(head, d.scroll.window(body, room, iw, d.keys.Dialog.ScrollDown.Help().Key)...)
	lines = append(lines, foot...)
	return st.box.Width(iw + 4).Render(strings.Join(lines, "\n"))
}

// read counts the targets whose first line has been on screen.
func (d *confirmDialog) read() int {
	n := 0
	for _, s := range d.starts {
		if s < d.scroll.seen {
			n++
		}
	}
	return n
}

// targetString names every part of an action's target.
func targetString(t govern.Target) string {
	var parts []string
	for _, kv := range [][2]string{{"lease", t.LeaseID}, {"lock", t.LockFile}, {"session", t.Session}, {"attempt", t.Attempt}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+" "+line(kv[1]))
		}
	}
	if t.Item != nil {
		parts = append(parts, "item "+line(t.Item.String()))
	}
	return strings.Join(parts, " · ")
}

// targetCell is a target in one short cell: the item, else the lease, the lock file, the
// session or the attempt.
func targetCell(t govern.Target) string {
	switch {
	case t.Item != nil:
		return cut(line(t.Item.String()))
	case t.LeaseID != "":
		return "lease " + cut(line(t.LeaseID))
	case t.LockFile != "":
		return "lock " + cut(line(t.LockFile))
	case t.Session != "":
		return "session " + cut(line(t.Session))
	case t.Attempt != "":
		return "attempt " + cut(line(t.Attempt))
	}
	return ""
}

// buttons draws a dialog's Cancel and action buttons: focus 0 is Cancel (the default), any
// other the action, which is drawn disabled until ready.
func buttons(focus int, ready bool, action string) string {
	cancel, act := st.btnOff, st.btnOff
	if focus == 0 {
		cancel = st.btnOn
	} else {
		act = st.btnOn
	}
	if !ready {
		act = st.btnDisabled
	}
	return cancel.Render("Cancel") + "  " + act.Render(action)
}
