package tui

import (
	"context"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"steward/history"
)

// histMsg carries the History view's evidence, read in a command.
type histMsg struct {
	gen     int
	ev      *history.Evidence
	mark    time.Time
	hasMark bool
	err     error
}

// seenMsg is the end of saving the last-seen mark.
type seenMsg struct{ err error }

// histCmd gathers the evidence and reads the last-seen mark (IO, off the UI goroutine).
func histCmd(load func(context.Context) (*history.Evidence, error), lastSeen func() (time.Time, bool, error), gen int) tea.Cmd {
	return func() tea.Msg {
		m := histMsg{gen: gen}
		if lastSeen != nil {
			var err error
			if m.mark, m.hasMark, err = lastSeen(); err != nil {
				m.hasMark = false
			}
		}
		m.ev, m.err = load(context.Background())
		return m
	}
}

func saveSeenCmd(save func(time.Time) error, t time.Time) tea.Cmd {
	if save == nil {
		return nil
	}
	return func() tea.Msg { return seenMsg{err: save(t)} }
}

// openHistory opens the History view in a mode and starts reading its evidence.
func (r *Root) openHistory(mode histMode) tea.Cmd {
	if r.opts.History == nil {
		r.note("history is not available here (no sources to read it from)")
		return nil
	}
	r.hist = newHistoryView()
	r.hist.mode = mode
	r.hgen++
	return histCmd(r.opts.History, r.opts.LastSeen, r.hgen)
}

// historyLoaded installs the evidence of the open view (a late answer is dropped).
func (r *Root) historyLoaded(m histMsg) tea.Cmd {
	if r.hist == nil || m.gen != r.hgen {
		return nil
	}
	r.hist.loaded(m.ev, m.mark, m.hasMark, m.err)
	if m.err == nil && r.hist.mode == histSince && !m.hasMark && r.sinceOnStart {
		// First start on this workspace: nothing to compare with yet; mark now and close.
		r.hist, r.sinceOnStart = nil, false
		return saveSeenCmd(r.opts.SaveSeen, m.ev.Read)
	}
	return nil
}

// historyKey routes a key to the open History view; closing it after "since you left"
// was shown moves the last-seen mark to when its evidence was read.
func (r *Root) historyKey(k tea.KeyPressMsg) tea.Cmd {
	g := r.env.keys.Global
	if key.Matches(k, g.Quit) {
		return tea.Quit
	}
	if key.Matches(k, g.Help) {
		r.open(&helpView{groups: r.helpGroups()})
		return nil
	}
	h := r.hist
	if !h.Update(k, r.env.keys.History) {
		return nil
	}
	r.hist = nil
	r.sinceOnStart = false
	if h.ev != nil && h.sawSince {
		return saveSeenCmd(r.opts.SaveSeen, h.ev.Read)
	}
	return nil
}

// historyHints are the History view's key hints.
func (r *Root) historyHints() []key.Binding {
	k := r.env.keys.History
	if r.hist.tl != nil {
		return []key.Binding{k.Down, k.Up, k.Back}
	}
	return []key.Binding{k.Earlier, k.Later, k.Mode, k.Open, k.Back, k.Finer, k.Coarser, k.Window}
}
