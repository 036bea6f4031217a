package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// headerLines is the header's height: title, tabs, sources.
const headerLines = 3

// maxToasts is how many toast lines the screen keeps.
const maxToasts = 3

// View returns the frame: alternate screen, mouse on.
func (r *Root) View() tea.View {
	v := tea.NewView(r.Render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "steward"
	return v
}

// Render returns the frame's content: header, the page or the open dialog, toasts and the
// key hints, exactly width × height.
func (r *Root) Render() string {
	toastLines := r.toasts.view(r.width, maxToasts)
	bodyH := r.bodyHeight()
	var body string
	if r.dialog != nil {
		body = lipgloss.Place(r.width, bodyH, lipgloss.Center, lipgloss.Center, r.dialog.View(r.width, bodyH))
	} else if r.hist != nil {
		body = r.hist.View(r.width, bodyH, r.env.keys.History)
	} else {
		body = r.page().View()
	}
	lines := []string{r.header(), r.tabs(), r.sources()}
	bl := strings.Split(body, "\n")
	for i := 0; i < bodyH; i++ {
		l := ""
		if i < len(bl) {
			l = bl[i]
		}
		lines = append(lines, l)
	}
	lines = append(lines, toastLines...)
	lines = append(lines, r.hints())
	for i := range lines {
		lines[i] = pad(truncate(lines[i], r.width), r.width)
	}
	return strings.Join(lines, "\n")
}

func (r *Root) bodyHeight() int {
	return max(r.height-headerLines-1-min(len(r.toasts.list), maxToasts), 3)
}

// resize gives every page its body size.
func (r *Root) resize() {
	for _, p := range r.pages {
		p.SetSize(r.width, r.bodyHeight())
	}
}

// header names the actor and role, the read-only switch and the snapshot's age.
func (r *Root) header() string {
	parts := []string{st.header.Render("steward")}
	if r.opts.Core == nil {
		parts = append(parts, st.warn.Render("no governed core: view only"))
	} else {
		a := r.opts.Core.Actor()
		who := line(a.OSUser) + "@" + line(a.Host)
		if a.GiteaLogin != "" {
			who = line(a.GiteaLogin) + " (" + who + ")"
		}
		parts = append(parts, who, "role "+st.bold.Render(a.Role.String()))
		if r.opts.Core.ReadOnly() {
			parts = append(parts, st.badge.Render(" READ-ONLY "))
		}
	}
	d := r.env.data
	if d.Loaded {
		parts = append(parts, "snapshot "+since(d.Generated, r.env.now)+" old")
	} else {
		parts = append(parts, st.warn.Render("no snapshot yet"))
	}
	return strings.Join(parts, " · ")
}

// tabLabel is a view's tab: its number, its title (cut on narrow screens unless current)
// and its row count.
func (r *Root) tabLabel(i int, id pageID) string {
	title := pageTitles[id]
	if r.width < 120 && id != r.cur {
		title = title[:4]
	}
	label := fmt.Sprintf(" %d %s", i+1, title)
	if n := len(r.pages[id].tbl.rows); r.env.data.Loaded && id != pageOverview {
		if r.env.data.down(id) {
			label += " ?"
		} else {
			label += fmt.Sprintf(" %d", n)
		}
	}
	return label + " "
}

// tabs draws the views with their row counts; the current one is reversed.
func (r *Root) tabs() string {
	var b strings.Builder
	for i, id := range pageOrder {
		label := r.tabLabel(i, id)
		if id == r.cur {
			b.WriteString(st.tabOn.Render(label))
		} else {
			b.WriteString(st.tabOff.Render(label))
		}
	}
	return b.String()
}

// tabAt returns the view whose tab covers column x.
func (r *Root) tabAt(x int) (pageID, bool) {
	pos := 0
	for i, id := range pageOrder {
		w := lipgloss.Width(r.tabLabel(i, id))
		if x >= pos && x < pos+w {
			return id, true
		}
		pos += w
	}
	return 0, false
}

// sources is the health strip: every source's state and age, on every view.
func (r *Root) sources() string {
	d := r.env.data
	if !d.Loaded {
		return st.dim.Render("sources: not read yet")
	}
	var parts []string
	for _, h := range d.Sources {
		s := h.Name + " " + stateStyle(h.State).Render(strings.ReplaceAll(h.State, "_", " "))
		if !h.ScannedAt.IsZero() {
			s += " " + since(h.ScannedAt, r.env.now)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, st.dim.Render(" · "))
}

// hints is the short help line: the bindings that apply here.
func (r *Root) hints() string {
	var bs []key.Binding
	switch r.dialog.(type) {
	case *answerEditor:
		e := r.env.keys.Editor
		bs = []key.Binding{e.Preview, e.Submit, e.Cancel}
	case *resolveDialog:
		k := r.env.keys.Resolve
		bs = []key.Binding{k.Result, k.Switch, k.Choose, k.Cancel}
	case nil:
		if r.hist != nil {
			bs = append(r.historyHints(), r.env.keys.Global.Help, r.env.keys.Global.Quit)
			break
		}
		g := r.env.keys.Global
		short := map[string]bool{"/": true, "enter": true, "a": true, "space": true, "s": true, "o": true, "y": true, "v": true, "R": true}
		for _, b := range r.page().KeyMap() {
			if b.Enabled() && short[b.Help().Key] {
				bs = append(bs, b)
			}
		}
		bs = append(bs, g.Palette, g.Help, g.Quit)
	default:
		dk := r.env.keys.Dialog
		bs = []key.Binding{dk.Choose, dk.Cancel}
	}
	var parts []string
	for _, b := range bs {
		parts = append(parts, st.bold.Render(b.Help().Key)+" "+st.dim.Render(b.Help().Desc))
	}
	return strings.Join(parts, "  ")
}

// click selects a tab or a row.
func (r *Root) click(m tea.Mouse) {
	if r.dialog != nil {
		return
	}
	switch {
	case m.Y == 1:
		if id, ok := r.tabAt(m.X); ok {
			r.cur = id
		}
	case m.Y >= headerLines:
		r.page().click(m.Y - headerLines)
	}
}
