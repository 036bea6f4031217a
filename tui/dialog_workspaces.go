package tui

import (
	"fmt"
	"strings"
)

// wsPicker is the chooser: the all view and every workspace, with what each holds now.
type wsPicker struct {
	sized
	noInput
	keys   KeyMap
	nav    *wsNav
	cursor int // 0: the all view; i+1: workspace i
}

func newWSPicker(keys KeyMap, nav *wsNav) *wsPicker {
	c := 0
	if nav.cur < len(nav.names) {
		c = nav.cur + 1
	}
	return &wsPicker{keys: keys, nav: nav, cursor: c}
}

func (p *wsPicker) bindings() bindings {
	d := p.keys.Dialog
	const grp = "Workspaces"
	return bindings{
		bind(d.Up, grp, false, nil, func() intent { p.cursor = max(p.cursor-1, 0); return nil }),
		bind(d.Down, grp, false, nil, func() intent { p.cursor = min(p.cursor+1, len(p.nav.names)); return nil }),
		bind(d.Choose, grp, true, nil, func() intent {
			ws := len(p.nav.names)
			if p.cursor > 0 {
				ws = p.cursor - 1
			}
			return closeThen{cmdIntent{wsOpen(ws, 0, "")}}
		}),
		bind(d.Cancel, grp, true, nil, func() intent { return closeIntent{} }),
	}
}

func (p *wsPicker) View() string {
	iw := p.inner(90)
	n := p.nav
	b := []string{st.title.Render(truncate("Workspaces", iw)), ""}
	entry := func(i int, name, what string, shown bool) string {
		cur := "  "
		if i == p.cursor {
			cur = "▸ "
		}
		s := cur + pad(truncate(name, 18), 18) + " " + what
		if shown {
			s += st.dim.Render(" (shown)")
		}
		return truncate(s, iw)
	}
	b = append(b, entry(0, "all", "every workspace, view only", n.cur >= len(n.names)))
	for i, name := range n.names {
		s := n.sums[i]
		what := st.dim.Render("not read yet")
		if s.loaded {
			what = fmt.Sprintf("%d claims · %d attention · %d orphans · ", s.claims, s.attention, s.orphans)
			if s.state == "ok" {
				what += stateStyle("ok").Render("sources ok")
			} else {
				what += stateStyle(s.state).Render(s.why + " " + strings.ReplaceAll(s.state, "_", " "))
			}
		}
		if h := n.hosts[i]; h != "" {
			what = "on " + line(h) + " · " + what
		}
		b = append(b, entry(i+1, line(name), what, i == n.cur))
	}
	b = append(b, "", st.dim.Render(truncate("each workspace acts through its own core; the all view only shows", iw)))
	if len(b) > p.h-2 {
		b = b[:max(p.h-2, 1)]
	}
	return st.box.Width(iw + 4).Render(strings.Join(b, "\n"))
}
