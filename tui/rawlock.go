package tui

import (
	tea "charm.land/bubbletea/v2"

	"steward/govern"
)

// rawLocks reads the raw JSON of the selected claim's lock file for its detail pane (through
// the locks read API, in a tea.Cmd): one read per file until the next snapshot, an answer of
// an older read dropped.
type rawLocks struct {
	gen  int               // read generation
	file string            // the lock file last asked for
	got  map[string]string // what was read, by lock file (the pages read it)
}

// need starts reading the lock file of sel, the selected row whose detail wants it (nil:
// none does); nil when there is nothing to read (or no core to say where the locks are).
func (x *rawLocks) need(sel *row, core *govern.Core) tea.Cmd {
	if sel == nil || core == nil || x.file == sel.LockFile {
		return nil
	}
	x.gen++
	x.file = sel.LockFile
	return rawCmd(core.Workspace().LocksDir, sel.LockFile, x.gen)
}

// loaded keeps what a read found, unless a newer read was started since.
func (x *rawLocks) loaded(m rawMsg) {
	if m.gen == x.gen {
		x.got[m.lockFile] = m.raw
	}
}

// reset forgets every read (a new snapshot: the files may have changed).
func (x *rawLocks) reset() {
	clear(x.got)
	x.file = ""
}
