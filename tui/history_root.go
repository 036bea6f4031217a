package tui

import (
	"context"
	"strings"
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

// histState is the History view of the root: open or not, the generation of its evidence
// (a late answer is dropped), and whether it was opened at start.
type histState struct {
	view         *historyView
	gen          int
	sinceOnStart bool
}

// open opens the History view in a mode and starts reading its evidence.
func (hs *histState) open(opts Options, mode histMode, atStart bool) tea.Cmd {
	if opts.History == nil {
		return nil
	}
	hs.view = newHistoryView()
	hs.view.mode = mode
	hs.sinceOnStart = atStart
	hs.gen++
	return histCmd(opts.History, opts.LastSeen, hs.gen)
}

// loaded installs the evidence of the open view (a late answer is dropped).
func (hs *histState) loaded(opts Options, m histMsg) tea.Cmd {
	if hs.view == nil || m.gen != hs.gen {
		return nil
	}
	hs.view.loaded(m.ev, m.mark, m.hasMark, m.err)
	if m.err == nil && hs.view.mode == histSince && !m.hasMark && hs.sinceOnStart {
		// First start on this workspace: nothing to compare with yet; mark now and close.
		hs.view, hs.sinceOnStart = nil, false
		return saveSeenCmd(opts.SaveSeen, m.ev.Read)
	}
	return nil
}

// key routes a key to the open History view: quit and help as everywhere; closing it after
// "since you left" was shown moves the last-seen mark to when its evidence was read.
func (hs *histState) key(k tea.KeyPressMsg, km KeyMap, opts Options) intent {
	if key.Matches(k, km.Global.Quit) {
		return cmdIntent{tea.Quit}
	}
	if key.Matches(k, km.Global.Help) {
		var groups []KeyGroup
		for _, g := range km.Groups() {
			if strings.HasPrefix(g.Title, "History") {
				groups = append([]KeyGroup{g}, groups...)
			} else {
				groups = append(groups, g)
			}
		}
		return pushIntent{newHelp(km, groups)}
	}
	h := hs.view
	if !h.Update(k, km.History) {
		return nil
	}
	hs.view, hs.sinceOnStart = nil, false
	if h.ev != nil && h.sawSince {
		return cmdIntent{saveSeenCmd(opts.SaveSeen, h.ev.Read)}
	}
	return nil
}

// hints are the History view's key hints.
func (h *historyView) hints(k HistoryKeys) []key.Binding {
	if h.tl != nil {
		return []key.Binding{k.Down, k.Up, k.Back}
	}
	return []key.Binding{k.Earlier, k.Later, k.Mode, k.Open, k.Back, k.Finer, k.Coarser, k.Window}
}
