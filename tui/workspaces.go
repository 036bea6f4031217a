package tui

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	tea "charm.land/bubbletea/v2"

	"steward/model"
)

// A workbench over several workspaces is one Root per workspace — each with its
// own governed core, snapshot feed, audit log and attention, exactly as a workbench over one
// — and the "all" view: a Root with no core that draws every workspace's rows under a
// Workspace column. Global.Workspaces opens the chooser; Act.Jump on a row of the all view
// shows that row in its own workspace, where its actions go to that workspace's core. The
// all view never acts: nothing in it reaches a core.
//
// Every command a workspace's Root returns is wrapped so that its answer comes back to that
// Root (wsMsg), whichever workspace is shown by then: a preview, an apply's result, an audit
// read or a tick of a workspace in the background is never taken by another.

// Workspace is one workspace of a workbench over several.
type Workspace struct {
	// Name is the workspace's name in the configuration; Host the host its lock directory
	// lives on ("" or this host's name: this one).
	Name, Host string
	// Options are the workbench's options for this workspace alone (its core, its source, its
	// audit log, its attention); the first workspace's keymap, clock, tick and theme serve
	// every view.
	Options Options
}

// wsView is what a Root of a workbench over several workspaces knows of them: nil for a
// workbench over one.
type wsView struct {
	nav   *wsNav
	index int // this Root's workspace; -1 for the all view
}

// wsNav is shared by every Root of one workbench; only the UI goroutine reads and writes it.
type wsNav struct {
	names, hosts []string
	cur          int // the workspace shown; len(names) for the all view
	sums         []wsSummary
}

// wsSummary is what the chooser and the all view's sources strip say of a workspace.
type wsSummary struct {
	loaded                     bool
	claims, attention, orphans int
	state, why                 string // its worst source's state and which source it is
}

// allViewWhy is why a key that acts does nothing in the all view.
const allViewWhy = "the all view only shows: > opens the row in its own workspace, where this key acts through " +
	"that workspace's core"

func (w *wsView) all() bool { return w != nil && w.index < 0 }

// historyWhy is why the History keys do nothing when no history is configured: in the all
// view, history is each workspace's own.
func (w *wsView) historyWhy() string {
	if w.all() {
		return "history is each workspace's own: W opens one, where H and L read it"
	}
	return "history is not available here (no sources to read it from)"
}

// available is the Workspaces key's reason: "" when there are several.
func (w *wsView) available() func() string {
	return func() string {
		if w == nil {
			return "this workbench shows one workspace (steward ui --all opens every workspace of the config file)"
		}
		return ""
	}
}

// readOnly wraps a key's reason: in the all view nothing acts.
func (w *wsView) readOnly(why func() string) func() string {
	if !w.all() {
		return why
	}
	return func() string { return allViewWhy }
}

// label is the header's name of what is shown: the workspace (and its host), or the all view.
func (w *wsView) label() string {
	if w == nil {
		return ""
	}
	n := w.nav
	if w.all() {
		return st.badge.Render(" ALL ") + fmt.Sprintf(" %d workspaces, view only", len(n.names))
	}
	s := st.badge.Render(" " + line(n.names[w.index]) + " ")
	if h := n.hosts[w.index]; h != "" {
		s += " on " + line(h)
	}
	return s + fmt.Sprintf(" (%d/%d)", w.index+1, len(n.names))
}

// strip is the all view's sources strip: each workspace's worst source.
func (w *wsView) strip() string {
	n := w.nav
	parts := make([]string, 0, len(n.names))
	for i, name := range n.names {
		s := n.sums[i]
		p := line(name) + " "
		switch {
		case !s.loaded:
			p += st.dim.Render("not read yet")
		case s.state == "ok":
			p += stateStyle("ok").Render("ok")
		default:
			p += stateStyle(s.state).Render(s.why + " " + strings.ReplaceAll(s.state, "_", " "))
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, st.dim.Render(" · "))
}

// wsOpenMsg asks the workbench to show workspace ws (len(names): the all view) and, when key
// is set, the row of that view whose key it is.
type wsOpenMsg struct {
	ws   int
	page pageID
	key  string
}

func wsOpen(ws int, page pageID, key string) tea.Cmd {
	return func() tea.Msg { return wsOpenMsg{ws: ws, page: page, key: key} }
}

// wsMsg is a message for one Root: the answer of a command it returned (ws -1: the all view).
type wsMsg struct {
	ws  int
	msg tea.Msg
}

// teaPackage is Bubble Tea's own package: its messages (quit, a clipboard or raw write, a
// terminal query) are the program's, never a Root's.
var teaPackage = reflect.TypeOf(tea.QuitMsg{}).PkgPath()

// tag wraps cmd so that its answer comes back to Root ws; a batch is wrapped command by
// command, and Bubble Tea's own messages pass untouched.
func tag(ws int, cmd tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	return func() tea.Msg { return tagMsg(ws, cmd()) }
}

func tagMsg(ws int, msg tea.Msg) tea.Msg {
	switch m := msg.(type) {
	case nil:
		return nil
	case tea.BatchMsg:
		out := make(tea.BatchMsg, 0, len(m))
		for _, c := range m {
			if c != nil {
				out = append(out, tag(ws, c))
			}
		}
		return out
	}
	t := reflect.TypeOf(msg)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.PkgPath() == teaPackage {
		return msg
	}
	return wsMsg{ws: ws, msg: msg}
}

// multi is the workbench over several workspaces.
type multi struct {
	roots []*Root
	all   *Root
	nav   *wsNav
	// stale: a workspace's rows changed since the all view was built (it is built when shown).
	stale bool
	seen  []wsSeen
}

// wsSeen is what the all view was last built from, per workspace.
type wsSeen struct {
	data  *data
	inbox int
	first **row
}

// newMulti builds the workbench over ws, showing ws[start] first (len(ws): the all view).
func newMulti(ws []Workspace, start int) *multi {
	nav := &wsNav{cur: min(max(start, 0), len(ws)), sums: make([]wsSummary, len(ws))}
	m := &multi{nav: nav, seen: make([]wsSeen, len(ws)), stale: true}
	first := ws[0].Options.withDefaults()
	var srcs everySource
	for i, w := range ws {
		nav.names, nav.hosts = append(nav.names, w.Name), append(nav.hosts, w.Host)
		o := w.Options
		o.Keys, o.Now, o.TickEvery, o.Theme = first.Keys, first.Now, first.TickEvery, first.Theme
		o.ws = &wsView{nav: nav, index: i}
		m.roots = append(m.roots, New(o))
		if o.Source != nil {
			srcs = append(srcs, o.Source)
		}
	}
	all := Options{Keys: first.Keys, Now: first.Now, TickEvery: first.TickEvery, Theme: first.Theme,
		Policies: first.Policies, ClarificationSLA: first.ClarificationSLA, ws: &wsView{nav: nav, index: -1}}
	if len(srcs) > 0 {
		all.Source = srcs
	}
	m.all = New(all)
	return m
}

var _ tea.Model = (*multi)(nil)

// everySource is the all view's source: a refresh asks every workspace's source for a full
// re-read, whose snapshots reach each workspace's own Root (the all view is built from them).
type everySource []SnapshotSource

// Snapshots is nil: the all view is fed by its workspaces, never by a feed of its own.
func (everySource) Snapshots() <-chan *model.Snapshot { return nil }

func (e everySource) Refresh() {
	for _, s := range e {
		s.Refresh()
	}
}

func (m *multi) root(ws int) *Root {
	if ws < 0 || ws >= len(m.roots) {
		return m.all
	}
	return m.roots[ws]
}

func (m *multi) shown() int {
	if m.nav.cur >= len(m.roots) {
		return -1
	}
	return m.nav.cur
}

// Init starts every Root: its ticks, its first audit read, its last-seen mark.
func (m *multi) Init() tea.Cmd {
	cmds := make([]tea.Cmd, 0, len(m.roots)+1)
	for i, r := range m.roots {
		cmds = append(cmds, tag(i, r.Init()))
	}
	return tea.Batch(append(cmds, tag(-1, m.all.Init()))...)
}

// Update routes a message: a Root's answer to it, the screen's size and colours to every
// Root, the person's keys, mouse and pastes to the Root shown.
func (m *multi) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case wsMsg:
		if o, ok := msg.msg.(wsOpenMsg); ok {
			return m, m.open(o)
		}
		_, cmd := m.root(msg.ws).Update(msg.msg)
		if msg.ws >= 0 {
			m.observe(msg.ws)
		}
		return m, tag(msg.ws, cmd)
	case tea.WindowSizeMsg, tea.BackgroundColorMsg:
		cmds := make([]tea.Cmd, 0, len(m.roots)+1)
		for i, r := range m.roots {
			_, cmd := r.Update(msg)
			cmds = append(cmds, tag(i, cmd))
		}
		_, cmd := m.all.Update(msg)
		return m, tea.Batch(append(cmds, tag(-1, cmd))...)
	}
	ws := m.shown()
	_, cmd := m.root(ws).Update(msg)
	if ws >= 0 {
		m.observe(ws)
	}
	return m, tag(ws, cmd)
}

// observe notes whether workspace ws's rows changed since the all view was built, and keeps
// its summary; the all view is rebuilt now when it is shown (else when it is shown next).
func (m *multi) observe(ws int) {
	r := m.roots[ws]
	d := r.env.data
	now := wsSeen{data: d, inbox: len(d.Inbox)}
	if len(d.Inbox) > 0 {
		now.first = &d.Inbox[0]
	}
	if now == m.seen[ws] {
		return
	}
	m.seen[ws] = now
	m.nav.sums[ws] = summarize(d)
	m.stale = true
	if m.shown() < 0 {
		m.rebuild()
	}
}

// open shows workspace o.ws (or the all view) and, when asked, the row o.key of view o.page.
func (m *multi) open(o wsOpenMsg) tea.Cmd {
	m.nav.cur = min(max(o.ws, 0), len(m.roots))
	ws := m.shown()
	if ws < 0 {
		if m.stale {
			m.rebuild()
		}
		return nil
	}
	if o.key == "" {
		return nil
	}
	return tag(ws, m.roots[ws].intent(jumpIntent{page: o.page, key: o.key}))
}

// rebuild gives the all view every workspace's rows.
func (m *multi) rebuild() {
	ds := make([]*data, len(m.roots))
	for i, r := range m.roots {
		ds[i] = r.env.data
	}
	installAll(m.all, mergeAll(m.nav.names, ds))
	m.stale = false
}

// View draws the Root shown.
func (m *multi) View() tea.View { return m.root(m.shown()).View() }

// RunWorkspaces starts the workbench over several workspaces on the terminal, showing
// ws[start] first (len(ws): the all view), and forwards each workspace's snapshots to its
// own Root until ctx ends, the user quits or every feed closes.
func RunWorkspaces(ctx context.Context, ws []Workspace, start int) error {
	if len(ws) == 0 {
		return fmt.Errorf("no workspace to show")
	}
	m := newMulti(ws, start)
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithFPS(120))
	for i, w := range ws {
		if w.Options.Source != nil {
			go feed(ctx, w.Options.Source, digestConfig(m.roots[i].opts), func(d digestedMsg) { p.Send(wsMsg{ws: i, msg: d}) })
		}
	}
	return runProgram(ctx, p)
}

// summarize is a workspace's line in the chooser and the all view's strip.
func summarize(d *data) wsSummary {
	if !d.Loaded {
		return wsSummary{}
	}
	s := wsSummary{
		loaded:    true,
		claims:    len(d.Rows[pageClaims]),
		orphans:   len(d.Rows[pageOrphans]),
		attention: len(d.Inbox),
		state:     "ok",
	}
	rank := map[string]int{"ok": 0, "not_configured": 0, "not_observed": 1, "degraded": 2, "unavailable": 3}
	for _, h := range d.Sources {
		if rank[h.State] > rank[s.state] {
			s.state, s.why = h.State, h.Name
		}
	}
	return s
}
