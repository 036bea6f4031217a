package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// headerLines is the header's height: title, tabs, sources.
const headerLines = 3

// maxToastLines is how many lines the messages above the footer take at most.
const maxToastLines = 4

// View returns the frame: alternate screen, mouse on.
func (r *Root) View() tea.View {
	v := tea.NewView(r.Render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "steward"
	return v
}

// Render returns the frame's content: header, the page or the dialog on top, messages and
// the footer, exactly width × height.
func (r *Root) Render() string {
	bodyH := r.bodyHeight()
	var body string
	if e := r.stack.topEntry(); e != nil {
		body = lipgloss.Place(r.width, bodyH, lipgloss.Center, lipgloss.Center, e.view(r.width))
	} else {
		body = r.shown().View()
	}
	c := r.chrome()
	return frameOf([]string{c.header(), c.tabs(), c.sources()}, body, bodyH,
		r.toasts.view(r.width, r.toastRoom(), r.env.keys.Global.Toasts.Help().Key), c.footer(), r.width)
}

// frameOf stacks the header, bodyH lines of body, the messages and the footer, each line
// cut and padded to w cells.
func frameOf(head []string, body string, bodyH int, toasts []string, foot string, w int) string {
	lines := head
	bl := strings.Split(body, "\n")
	for i := 0; i < bodyH; i++ {
		l := ""
		if i < len(bl) {
			l = bl[i]
		}
		lines = append(lines, l)
	}
	lines = append(lines, toasts...)
	lines = append(lines, foot)
	for i := range lines {
		lines[i] = pad(truncate(lines[i], w), w)
	}
	return strings.Join(lines, "\n")
}

// toastRoom is how many lines the messages may take: fewer on a short screen.
func (r *Root) toastRoom() int { return min(maxToastLines, max(r.height/8, 1)) }

func (r *Root) bodyHeight() int {
	return max(r.height-headerLines-1-len(r.toasts.view(r.width, r.toastRoom(), r.env.keys.Global.Toasts.Help().Key)), 3)
}

// chrome is what the header, the tabs, the sources strip and the footer are drawn from: a
// value taken from the root once per frame.
type chrome struct {
	opts   Options
	env    *shared
	views  *[numTabs]tab
	cur    pageID
	paused bool
	held   bool
	top    dialog
	shown  page     // the view on screen
	keys   bindings // what applies with no dialog open
	width  int
	attn   *attn // the pulse's orphans and oldest human-required entry
	help   help.Model
}

func (r *Root) chrome() chrome {
	return chrome{opts: r.opts, env: r.env, views: &r.tabs, cur: r.cur, paused: r.paused, held: r.held != nil,
		top: r.stack.top(), shown: r.shown(), keys: r.keymap(), width: r.width, attn: r.attn, help: r.help}
}

// header names the actor and role, the read-only switch, the snapshot's age and the pause.
func (r chrome) header() string {
	parts := []string{st.header.Render("steward")}
	if l := r.opts.ws.label(); l != "" {
		parts = append(parts, l)
	}
	if r.opts.ws.all() {
		parts = append(parts, st.dim.Render(r.env.keys.Act.Jump.Help().Key+" opens a row in its workspace"))
	} else if r.opts.Core == nil {
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
	switch {
	case r.paused:
		p := st.badge.Render(" PAUSED ") + " snapshot frozen, " + since(d.Generated, r.env.now) + " old"
		if r.held {
			p += ", newer waiting"
		}
		parts = append([]string{parts[0], p + " · " + r.env.keys.Global.Pause.Help().Key + " resumes"}, parts[1:]...)
	case d.Loaded:
		parts = append(parts, "snapshot "+since(d.Generated, r.env.now)+" old")
		if n := clockNote(d.Clock); n != "" {
			// Every verdict is the DB's clock's; this host's is off by more than a second.
			parts = append(parts, st.warn.Render(n))
		}
	default:
		parts = append(parts, st.warn.Render("no snapshot yet"))
	}
	h := strings.Join(parts, " · ")
	if p := ""; d.Loaded && r.attn != nil {
		if p = pulseOf(d, r.attn, r.env.now).line(r.width - lipgloss.Width(h) - 3); p != "" {
			h += " · " + st.dim.Render(p)
		}
	}
	return h
}

// tabScheme names the views the same way on every tab: full titles when they all fit, else
// short whole words (never cut stems), else the short words closer together, else numbers
// only.
func (r chrome) tabScheme() int {
	for scheme := 0; scheme < 3; scheme++ {
		w := 0
		for i, id := range pageOrder {
			w += lipgloss.Width(r.tabLabel(i, id, scheme))
		}
		if w <= r.width {
			return scheme
		}
	}
	return 3
}

// tabLabel is a view's tab in a scheme (0 full, 1 short, 2 short and close, 3 number): its
// number, its title and its row count. In scheme 2 the tabs are one "│" apart instead of
// two spaces, and the current one keeps its padding.
func (r chrome) tabLabel(i int, id pageID, scheme int) string {
	label := fmt.Sprintf(" %d", i+1)
	switch scheme {
	case 0:
		label += " " + tabInfo[id].title
	case 1, 2:
		label += " " + tabInfo[id].short
	}
	if r.env.data.Loaded && id != pageOverview {
		if r.env.data.down(id) {
			label += " ?"
		} else {
			label += fmt.Sprintf(" %d", len(r.views[id].list().tbl.rows))
		}
	}
	label += " "
	if scheme == 2 && id != r.cur {
		label = strings.TrimSpace(label)
		if i > 0 && pageOrder[i-1] != r.cur {
			label = "│" + label
		}
	}
	return label
}

// tabs draws the views with their row counts; the current one is reversed.
func (r chrome) tabs() string {
	var b strings.Builder
	scheme := r.tabScheme()
	for i, id := range pageOrder {
		label := r.tabLabel(i, id, scheme)
		if id == r.cur {
			b.WriteString(st.tabOn.Render(label))
		} else {
			b.WriteString(st.tabOff.Render(label))
		}
	}
	return b.String()
}

// tabAt returns the view whose tab covers column x.
func (r chrome) tabAt(x int) (pageID, bool) {
	pos, scheme := 0, r.tabScheme()
	for i, id := range pageOrder {
		w := lipgloss.Width(r.tabLabel(i, id, scheme))
		if x >= pos && x < pos+w {
			return id, true
		}
		pos += w
	}
	return 0, false
}

// sources is the health strip: every source's state and age, on every view.
func (r chrome) sources() string {
	if r.opts.ws.all() {
		return r.opts.ws.strip()
	}
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
		if len(h.Notes) > 0 {
			s += st.dim.Render(fmt.Sprintf(" (%d note(s))", len(h.Notes)))
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, st.dim.Render(" · "))
}

// footer is the short help of what applies now (the dialog on top, the filter being typed,
// or the view's and the global keys) — as many as fit, help last — and what the view says
// besides (the columns too narrow a screen hides).
func (r chrome) footer() string {
	var bs []key.Binding
	var pre, post string
	if r.top != nil {
		bs = r.top.bindings().ShortHelp()
	} else {
		bs = r.keys.ShortHelp()
		pre, post = r.shown.footer()
	}
	// As many as fit, in the order declared, help last; bubbles' help draws them.
	width := func(b key.Binding) int {
		return ansi.StringWidth(b.Help().Key) + 1 + ansi.StringWidth(b.Help().Desc) + 2
	}
	room := r.width - ansi.StringWidth(pre) - ansi.StringWidth(post)
	var last []key.Binding
	if n := len(bs); n > 0 && bs[n-1].Help().Key == r.env.keys.Global.Help.Help().Key {
		last, bs = bs[n-1:], bs[:n-1]
		room -= width(last[0])
	}
	var fit []key.Binding
	for _, b := range bs {
		if w := width(b); w <= room {
			fit = append(fit, b)
			room -= w
		}
	}
	hm := r.help
	hm.SetWidth(r.width - ansi.StringWidth(pre) - ansi.StringWidth(post))
	return pre + hm.ShortHelpView(append(fit, last...)) + st.dim.Render(post)
}
