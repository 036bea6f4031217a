package tui

import (
	"testing"

	"steward/model"
)

// A sessions row with an empty session_id is listed under a name that says so, never as a
// blank cell or a title that ends in nothing.
func TestSessionRowOfAnEmptyID(t *testing.T) {
	for _, tc := range []struct{ id, cell, title string }{
		{"", "(empty session_id)", "Session (empty session_id)"},
		{"s1", "s1", "Session s1"},
	} {
		r := sessionRow(&model.Session{SessionID: tc.id, Status: "active"})
		if r.Cells[0] != tc.cell || r.Title != tc.title {
			t.Errorf("session %q: cell %q, title %q; want %q, %q", tc.id, r.Cells[0], r.Title, tc.cell, tc.title)
		}
	}
}
