package tui

import tea "charm.land/bubbletea/v2"

// Every dialog follows one pattern, and lives in its own dialog_*.go:
//
//   - it is a value built by its constructor from what it shows (the keymap, previews,
//     rows, entries), never from the root;
//   - it declares its keys (bindings), which the root matches first; every other key and
//     a paste is its input (typing), and the wheel scrolls it;
//   - the root tells it its room (SetSize: on push and on every resize) and draws it
//     centred over the view (View);
//   - it answers with intents (intents.go) and changes nothing outside itself: cancelIntent
//     closes it saying nothing was done, closeIntent closes it quietly, closeThen closes it
//     and then does what was chosen, confirmIntent carries the plan the person confirmed.
//     It never pushes or pops the stack and never calls the governed core: only the root
//     turns an intent into a command.

// dialog is a modal: while it is on top of the stack it takes every key.
type dialog interface {
	bindings() bindings
	input(msg tea.Msg) intent
	SetSize(w, h int)
	View() string
}

// sized is the room a dialog was given (SetSize); dialogs embed it.
type sized struct{ w, h int }

// SetSize keeps the room the dialog is drawn in.
func (s *sized) SetSize(w, h int) { s.w, s.h = w, h }

// inner is the text width of a dialog box at most limit wide.
func (s *sized) inner(limit int) int { return min(s.w-4, limit) }

// noInput is embedded by dialogs that take no typing: a key they do not declare does nothing.
type noInput struct{}

func (noInput) input(tea.Msg) intent { return nil }

// stackEntry is a dialog on the stack with the id that owns the answers of its commands.
type stackEntry struct {
	id int
	d  dialog
	// from is the row the dialog acts on (nil: none; subject.go).
	from *subject
}

// stack is the open dialogs, bottom first: the answer editor stays under the core's preview
// of its answer, the discard question over the editor.
type stack struct {
	entries []stackEntry
	next    int
}

// push opens d on top, acting on the row from (nil: none), and returns its id.
func (s *stack) push(d dialog, from *subject) int {
	s.next++
	s.entries = append(s.entries, stackEntry{id: s.next, d: d, from: from})
	return s.next
}

// topEntry returns the entry on top, nil when no dialog is open.
func (s *stack) topEntry() *stackEntry {
	if len(s.entries) == 0 {
		return nil
	}
	return &s.entries[len(s.entries)-1]
}

// pop closes the top dialog.
func (s *stack) pop() {
	if len(s.entries) > 0 {
		s.entries = s.entries[:len(s.entries)-1]
	}
}

// top returns the dialog on top, nil when none is open.
func (s *stack) top() dialog {
	if len(s.entries) == 0 {
		return nil
	}
	return s.entries[len(s.entries)-1].d
}

// topID is the id of the dialog on top, 0 when none is open.
func (s *stack) topID() int {
	if len(s.entries) == 0 {
		return 0
	}
	return s.entries[len(s.entries)-1].id
}

// byID returns the open dialog with id, nil when it was closed: an answer for it is dropped.
func (s *stack) byID(id int) dialog {
	for _, e := range s.entries {
		if e.id == id {
			return e.d
		}
	}
	return nil
}

// open reports whether any dialog is open.
func (s *stack) open() bool { return len(s.entries) > 0 }

// popThrough closes dialogs from the top down to, and with, the first one is matches.
func (s *stack) popThrough(is func(dialog) bool) {
	for s.open() {
		d := s.top()
		s.pop()
		if is(d) {
			return
		}
	}
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
