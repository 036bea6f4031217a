package tui

import (
	tea "charm.land/bubbletea/v2"
)

// The workbench shows one view at a time: one of the numbered tabs, each a list of rows
// from the snapshot (view_overview.go … view_sessions.go, all built on the shared list
// view, list.go), or History (H, L). A view is a component: its own model, the keys it
// declares (bindings), its room (SetSize), its data update, and its View. The root routes
// to it and draws the chrome around it; it never looks inside a view for what the view
// does.

// page is one view of the workbench. The root matches the keys it declares before the
// global ones (none while it takes typing), gives it as input the keys it does not declare,
// pastes and the wheel, passes on the clicks in its body, tells it its room and draws it.
type page interface {
	// bindings are its keys as they apply now: help, the footer, the palette and the note a
	// disabled key leaves are generated from them.
	bindings() bindings
	// typing reports that it takes every key but its own bindings (a filter being typed).
	typing() bool
	input(msg tea.Msg) intent
	click(y int)
	SetSize(w, h int)
	View() string
	// footer is what the footer says before and after the keys.
	footer() (pre, post string)
	// commands are what the palette offers besides the bindings (a sort per column).
	commands() []paletteEntry
}

// tab is one of the numbered views: a page over the shared list view.
type tab interface {
	page
	list() *listView
	// setData is its data update: its rows of d, as the view chose to show them.
	setData(d *data)
}

// pageID names one tab of the workbench; the constants are in tab order.
type pageID int

const (
	pageOverview pageID = iota
	pageClaims
	pageContention
	pageClarifications
	pageOrphans
	pageActivity
	pageSessions
	numTabs
)

// tabInfo is what is known of each tab before it is built: its title, its short title (a
// whole word, used for every tab at once when the full ones do not fit, as at 80 columns)
// and the sources its rows come from (when none of them is usable, its count is unknown).
var tabInfo = [numTabs]struct {
	title, short string
	sources      []string
}{
	pageOverview:       {"Overview", "Home", nil},
	pageClaims:         {"Claims", "Claims", []string{"locks", "db"}},
	pageContention:     {"Contention", "Clash", []string{"locks", "db"}},
	pageClarifications: {"Clarifications", "Asks", []string{"gitea"}},
	pageOrphans:        {"Orphans", "Orphans", []string{"locks", "db"}},
	pageActivity:       {"Activity", "Log", []string{"db"}},
	pageSessions:       {"Sessions", "Sessions", []string{"db"}},
}

// newTabs builds every tab, in tab order.
func newTabs(env *shared) [numTabs]tab {
	return [numTabs]tab{
		pageOverview:       newOverview(env),
		pageClaims:         newClaims(env),
		pageContention:     newContention(env),
		pageClarifications: newClarifications(env),
		pageOrphans:        newOrphans(env),
		pageActivity:       newActivity(env),
		pageSessions:       newSessions(env),
	}
}

// pageOrder is every tab, in tab order.
var pageOrder = func() []pageID {
	out := make([]pageID, numTabs)
	for i := range out {
		out[i] = pageID(i)
	}
	return out
}()

func (id pageID) title() string { return tabInfo[id].title }

// screens are the workbench's views and which one is shown: a tab, or History over it.
type screens struct {
	tabs [numTabs]tab
	cur  pageID // the tab shown, or under History
	// hist is the History view, shown over the tab while histOn.
	hist   *historyView
	histOn bool
}

func newScreens(env *shared) screens {
	return screens{tabs: newTabs(env), hist: newHistoryView(env.keys.History)}
}

// shown is the view on screen: History, or the tab.
func (s *screens) shown() page {
	if s.histOn {
		return s.hist
	}
	return s.tabs[s.cur]
}

// list is the tab's list (under History while it is shown).
func (s *screens) list() *listView { return s.tabs[s.cur].list() }

// show shows tab id, leaving History if it is shown (which may keep the last-seen mark).
func (s *screens) show(id pageID) tea.Cmd {
	var cmd tea.Cmd
	if s.histOn {
		s.histOn = false
		cmd = s.hist.leave()
	}
	s.cur = id
	s.list().resumeSelection()
	return cmd
}

// openHistory shows History in a mode and starts reading its evidence (none without a
// History source).
func (s *screens) openHistory(opts Options, mode histMode, atStart bool) tea.Cmd {
	var cmd tea.Cmd
	if s.histOn {
		cmd = s.hist.leave()
	}
	s.histOn = opts.History != nil
	if !s.histOn {
		return cmd
	}
	return tea.Batch(cmd, s.hist.open(opts, mode, atStart))
}

// historyRead gives History its evidence; History may close itself on it (see loaded).
func (s *screens) historyRead(m histMsg) tea.Cmd {
	cmd, stay := s.hist.loaded(m)
	s.histOn = s.histOn && stay
	return cmd
}

// SetSize gives every view its room.
func (s *screens) SetSize(w, h int) {
	for _, t := range s.tabs {
		t.SetSize(w, h)
	}
	s.hist.SetSize(w, h)
}

// fill gives every tab its rows of d (its data update).
func (s *screens) fill(d *data) {
	for _, t := range s.tabs {
		t.setData(d)
	}
}
