package tui

import tea "charm.land/bubbletea/v2"

// dialog is a modal: while it is on top of the stack it takes every key. Its bindings are
// matched first; a key none of them has is input (typing, a paste).
type dialog interface {
	bindings() bindings
	input(msg tea.Msg) intent
	View(w, h int) string
}

// stackEntry is a dialog on the stack with the id that owns the answers of its commands.
type stackEntry struct {
	id int
	d  dialog
}

// stack is the open dialogs, bottom first: the answer editor stays under the core's preview
// of its answer, the discard question over the editor.
type stack struct {
	entries []stackEntry
	next    int
}

// push opens d on top and returns its id.
func (s *stack) push(d dialog) int {
	s.next++
	s.entries = append(s.entries, stackEntry{id: s.next, d: d})
	return s.next
}

// pop closes the top dialog.
func (s *stack) pop() {
	if len(s.entries) > 0 {
		s.entries = s.entries[:len(s.entries)-1]
	}
}

// clear closes every dialog.
func (s *stack) clear() { s.entries = nil }

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
