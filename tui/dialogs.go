package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"steward/govern"
)

// Intents dialogs return to the root.
type (
	cancelIntent  struct{}
	confirmIntent struct {
		previews []govern.Preview
		phrases  []string
	}
	chooseIntent struct{ opt menuOption }
	answerIntent struct {
		item *govern.Item
		body string
	}
	paletteIntent struct{ cmd paletteCmd }
)

// dialog is a modal: it takes every key while open and answers with an intent.
type dialog interface {
	Update(msg tea.KeyPressMsg) any
	View(w, h int) string
}

// menuOption is one action offered for the selected or marked rows, with the core's previews.
type menuOption struct {
	action   string
	title    string
	reqs     []govern.Request
	previews []govern.Preview
	errs     []string
	editor   bool // clarification.answer: opens the answer editor first
	question string
	hidden   int
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
			return p.Refusal.Code + ": " + p.Refusal.Message
		}
	}
	if len(o.errs) > 0 {
		return o.errs[0]
	}
	return ""
}

// actionMenu lists the actions for the rows; refused ones stay visible with the core's reason.
type actionMenu struct {
	keys    DialogKeys
	opts    []menuOption
	cursor  int
	rows    int
	hidden  int
	loading bool
	// chosen: Choose was pressed while the previews were still coming; the choice is
	// made when they arrive (see loaded), so a key typed ahead is not lost.
	chosen  bool
	inspect []string
}

// loaded takes the core's previews; a choice typed ahead is made now if the option is
// usable (otherwise the menu stays open, showing why).
func (m *actionMenu) loaded(opts []menuOption) any {
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

func (m *actionMenu) Update(k tea.KeyPressMsg) any {
	switch {
	case key.Matches(k, m.keys.Cancel):
		return cancelIntent{}
	case key.Matches(k, m.keys.Up):
		m.cursor = max(m.cursor-1, 0)
	case key.Matches(k, m.keys.Down):
		m.cursor = min(m.cursor+1, max(len(m.opts)-1, 0))
	case key.Matches(k, m.keys.Choose):
		if m.loading {
			m.chosen = true
			return nil
		}
		if m.cursor < len(m.opts) && m.opts[m.cursor].usable() {
			return chooseIntent{m.opts[m.cursor]}
		}
	}
	return nil
}

func (m *actionMenu) View(w, h int) string {
	iw := min(w-4, 100)
	var b []string
	head := fmt.Sprintf("Actions for %d row(s)", m.rows)
	if m.hidden > 0 {
		head += fmt.Sprintf(" — %d marked row(s) hidden by the filter are not included", m.hidden)
	}
	b = append(b, st.title.Render(truncate(head, iw)), "")
	for _, s := range m.inspect {
		b = append(b, st.warn.Render(truncate("inspect only — "+s, iw)))
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
			b = append(b, truncate(cur+label, iw))
		} else {
			b = append(b, st.dim.Render(truncate(cur+label+" — disabled", iw)))
		}
		if why := o.why(); why != "" {
			b = append(b, st.bad.Render(truncate("    refused: "+why, iw)))
		}
	}
	b = append(b, "", st.dim.Render("enter choose · esc cancel"))
	return st.box.Width(iw + 4).Render(strings.Join(b, "\n"))
}

// confirmDialog shows the core's preview and asks for the go-ahead. Cancel is the default
// button; destructive and bulk applies need a typed phrase.
type confirmDialog struct {
	keys     DialogKeys
	previews []govern.Preview
	hidden   int
	phrase   string // what must be typed; empty when none
	typed    lineEdit
	focus    int // 0 Cancel, 1 Apply
	actor    govern.Actor
}

func newConfirm(keys DialogKeys, pvs []govern.Preview, hidden int, actor govern.Actor) *confirmDialog {
	d := &confirmDialog{keys: keys, previews: pvs, hidden: hidden, actor: actor, typed: lineEdit{limit: 200}}
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

func (d *confirmDialog) Update(k tea.KeyPressMsg) any {
	switch {
	case key.Matches(k, d.keys.Cancel):
		return cancelIntent{}
	case k.String() == "tab" || k.String() == "left" || k.String() == "right" || k.String() == "shift+tab":
		d.focus = 1 - d.focus
	case key.Matches(k, d.keys.Choose):
		if d.focus == 0 || !d.ready() {
			return cancelIntent{}
		}
		pvs := d.allowedPreviews()
		phrases := make([]string, len(pvs))
		for i, p := range pvs {
			phrases[i] = p.ConfirmPhrase
		}
		return confirmIntent{previews: pvs, phrases: phrases}
	default:
		if d.phrase != "" {
			d.typed.update(k)
		}
	}
	return nil
}

func (d *confirmDialog) View(w, h int) string {
	iw := min(w-4, 110)
	var b []string
	add := func(s string) { b = append(b, truncate(s, iw)) }
	p0 := d.previews[0]
	add(st.title.Render(p0.Spec.Title + "  (" + p0.Spec.ID + ")"))
	add(fmt.Sprintf("tier %s · needs role %s · you are %s as %s", p0.Spec.Tier, p0.Spec.MinRole, actorName(d.actor), d.actor.Role))
	if len(d.previews) > 1 {
		add(st.warn.Render(fmt.Sprintf("bulk: %d targets, %d allowed", len(d.previews), len(d.allowedPreviews()))))
	}
	if d.hidden > 0 {
		add(st.warn.Render(fmt.Sprintf("%d marked row(s) hidden by the filter are not included", d.hidden)))
	}
	for i, p := range d.previews {
		if i >= 6 {
			add(st.dim.Render(fmt.Sprintf("… %d more targets", len(d.previews)-i)))
			break
		}
		b = append(b, "")
		add(st.bold.Render("Target " + targetString(p.Request.Target)))
		if !p.Allowed && p.Refusal != nil {
			add(st.bad.Render("refused " + p.Refusal.Code + ": " + line(p.Refusal.Message)))
		}
		for _, s := range p.Effects {
			add("  effect  " + line(s))
		}
		for _, s := range p.Fences {
			add("  fence   " + line(s))
		}
		limit := len(p.Evidence)
		if len(d.previews) > 1 || h < 30 {
			limit = min(limit, 3)
		}
		for _, s := range p.Evidence[:limit] {
			add(st.dim.Render("  seen    " + line(s)))
		}
		if p.Inverse != nil {
			add(st.dim.Render("  undo    " + p.Inverse.Action))
		}
	}
	var foot []string
	if d.phrase != "" && len(d.allowedPreviews()) > 0 {
		foot = append(foot, truncate(fmt.Sprintf("type %q to enable Apply:", d.phrase), iw), "> "+d.typed.view(iw-2))
	}
	foot = append(foot, buttons(d.focus, d.ready(), "Apply"))
	// Keep the phrase and the buttons visible: cut the preview, saying how much was cut.
	if room := h - 3 - len(foot); len(b) > room {
		more := len(b) - room + 1
		b = append(b[:max(room-1, 1)], st.dim.Render(fmt.Sprintf("… %d more lines of preview (widen the terminal)", more)))
	}
	b = append(b, "")
	b = append(b, foot...)
	return st.box.Width(iw + 4).Render(strings.Join(b, "\n"))
}

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
