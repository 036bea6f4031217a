package tui

import (
	"cmp"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
)

// column describes one column of a table. Its width comes from its content and its priority
// (layout.go); cell, when set, computes the cell at draw time (a countdown), otherwise the
// row's static Cells[Idx] is drawn.
type column struct {
	Title string
	Idx   int
	// Prio orders the columns by importance: 0 is identity (never dropped, sized first);
	// the highest is dropped first when the screen is too narrow.
	Prio int
	// Min is the fewest cells the column is drawn in; Max caps its content width (0: none).
	Min, Max int
	// Fixed is the content width of a computed column (its cells are not measured).
	Fixed int
	// Elide cuts a value too long for the column in the middle, keeping the part that tells
	// rows apart (the values' shared prefix goes first).
	Elide bool
	// Grow takes the spare width (prose: What, Evidence, Message).
	Grow bool
	// Decides marks the column a person acts on (an orphan's Action, the inbox's
	// "what → action"): never dropped, it gets its full width before any prose grows and
	// is the last one cut; prose with a Prio gives way to it whole.
	Decides bool
	// Tail, when set, is the separator before the part of the value that decides
	// (" → " before the action): a value too long for the column is cut before it, so the
	// action stays whole.
	Tail string
	Cell func(r *row, now time.Time) (string, lipgloss.Style)
	// placed: Idx is the cell's index even when 0 (a column placed after another, as the
	// all view's columns are after its Workspace column).
	placed bool
	Sort   func(a, b *row) int // nil: not sortable
}

// Sorts of the columns: sortText by a static cell, sortAge by a time as an age (older
// first), sortTime by a time (earlier first, unknown last), sortCount by the row's count.
func sortText(i int) func(a, b *row) int {
	return func(a, b *row) int { return strings.Compare(a.cell(i), b.cell(i)) }
}

func sortAge(f func(*row) time.Time) func(a, b *row) int {
	return func(a, b *row) int { return -cmpTime(f(a), f(b)) } // older first = larger age first
}

func sortTime(f func(*row) time.Time) func(a, b *row) int {
	return func(a, b *row) int { return cmpTime(f(a), f(b)) }
}

func sortCount(a, b *row) int { return cmp.Compare(a.Count, b.Count) }

// The times of a row the columns draw and sort by.
func rowHeartbeat(r *row) time.Time { return r.Heartbeat }
func rowSince(r *row) time.Time     { return r.Since }
func rowDeadline(r *row) time.Time  { return r.Deadline }
func rowUrgent(r *row) time.Time    { return r.Urgent }
