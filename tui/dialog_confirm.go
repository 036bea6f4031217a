package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"steward/govern"
	"steward/termsafe"
)

// confirmDialog shows the core's preview, scrollable and wrapped so every target can be read,
// and asks for the go-ahead. Cancel is the default button; destructive and bulk applies need
// a typed phrase, and once it matches, enter applies.
type confirmDialog struct {
	sized
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
	// stale is the row it acts on once it left its view since its plan was read
	// (subject.go): Apply asks the core for the plan again instead of applying this one.
	stale *subject
}

func newConfirm(keys KeyMap, pvs []govern.Preview, hidden int, actor govern.Actor, names []string) *confirmDialog {
	d := &confirmDialog{
		keys:     keys,
		previews: pvs,
		hidden:   hidden,
		actor:    actor,
		names:    names,
		typed:    newField(keys.Line, 200),
	}
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
	if d.stale != nil && d.draft == "" {
		return closeThen{replanIntent{reqs: requests(pvs), hidden: d.hidden, names: d.names, from: d.stale}}
	}
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
		bind(
			k.Switch,
			grp,
			true,
			onlyIf(func() bool { return d.ready() }, "Apply is not enabled yet"),
			func() intent { d.focus = 1 - d.focus; return nil },
		),
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
		// A plan of several steps opens with one line per step (each effect's first
		// line), so that at 80×24 every step shows before the details scroll.
		if steps := planSteps(p.Effects); len(steps) > 1 {
			for i, s := range steps {
				prefix := "          "
				if i == 0 {
					prefix = "  plan    "
				}
				b = append(b, st.bold.Render(truncate(prefix+s, w)))
			}
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

// planSteps are the headlines of a preview's effects that have details under them (a
// plan's steps: "step 1 of 2, lease.reclaim-expired on lease L:"), without the colon.
func planSteps(effects []string) []string {
	var out []string
	for _, s := range effects {
		lines := strings.Split(termsafe.Text(s), "\n")
		if len(lines) > 1 {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(lines[0]), ":"))
		}
	}
	return out
}

func (d *confirmDialog) View() string {
	iw := d.inner(110)
	var head []string
	p0 := d.previews[0]
	head = append(head, hang("", st.title.Render(line(p0.Spec.Title)+"  ("+line(p0.Spec.ID)+")"), iw)...)
	head = append(
		head,
		truncate(
			fmt.Sprintf(
				"tier %s · needs role %s · you are %s as %s",
				p0.Spec.Tier,
				p0.Spec.MinRole,
				line(actorName(d.actor)),
				d.actor.Role,
			),
			iw,
		),
	)
	if len(d.previews) > 1 {
		head = append(
			head,
			st.warn.Render(fmt.Sprintf("bulk: %d targets, %d allowed", len(d.previews), len(d.allowedPreviews()))),
		)
	}
	if d.hidden > 0 {
		head = append(head, st.warn.Render(fmt.Sprintf("%d marked row(s) hidden by the filter are not included", d.hidden)))
	}
	var foot []string
	if d.phrase != "" && len(d.allowedPreviews()) > 0 {
		foot = append(foot, "")
		if n := len(d.previews); n > 1 && d.read() < n {
			foot = append(
				foot,
				st.warn.Render(
					truncate(
						fmt.Sprintf(
							"you have read %d of %d targets — %s shows the rest",
							d.read(),
							n,
							d.keys.Dialog.ScrollDown.Help().Key,
						),
						iw,
					),
				),
			)
		}
		foot = append(foot, truncate(fmt.Sprintf("type %q, then enter applies:", d.phrase), iw), "> "+d.typed.view(iw-2))
	}
	foot = append(foot, "", buttons(d.focus, d.ready(), "Apply"))
	body := d.content(iw)
	room := max(d.h-2-len(head)-len(foot), 3)
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
