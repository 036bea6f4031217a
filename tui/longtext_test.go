package tui

import (
	"strings"
	"testing"
)

// Long text can be read. A message is wrapped, never cut at the screen
// edge; older messages that no longer fit are named with the key that shows them, and t
// opens the history with every message in full; the detail pane scrolls to its last line.
func TestLongTextCanBeRead(t *testing.T) {
	r := newTestRoot(t, 80, 24, false)
	send(r, SnapshotMsg{populated()})
	long := func(i string) string {
		return "note " + i + ": the lease is not active; re-read and preview again before acting, the fence moved while you read — END-" + i
	}
	for _, i := range []string{"one", "two", "three", "four"} {
		r.note(long(i))
	}
	send(r, keyMsg("2"))
	f := plain(r)
	if !contains(f, "END-four") {
		t.Fatalf("the newest message is cut:\n%s", f)
	}
	if !contains(f, "older message(s) — t shows them all") {
		t.Fatalf("older messages vanished unnamed:\n%s", f)
	}
	for _, l := range strings.Split(f, "\n") {
		if strings.HasSuffix(strings.TrimRight(l, " "), "re-read and …") {
			t.Fatalf("a message is cut at the edge: %q", l)
		}
	}
	send(r, keyMsg("t"))
	if _, ok := r.stack.top().(*messagesView); !ok {
		t.Fatalf("t opened %T", r.stack.top())
	}
	seen := map[string]bool{}
	for i := 0; i < 20; i++ {
		for _, n := range []string{"one", "two", "three", "four"} {
			if contains(plain(r), "END-"+n) {
				seen[n] = true
			}
		}
		send(r, keyMsg("pgdown"))
	}
	if len(seen) != 4 {
		t.Fatalf("the history shows in full only %v", seen)
	}
	send(r, keyMsg("esc"))
	// The detail pane scrolls to its end (ctrl+d), where the item's timeline is.
	send(r, keyMsg("j"), keyMsg("j"), keyMsg("enter"))
	if !contains(plain(r), "more lines — ctrl+d") {
		t.Fatalf("the detail does not say it scrolls:\n%s", plain(r))
	}
	for i := 0; i < 40 && contains(plain(r), "more lines — ctrl+d"); i++ {
		send(r, keyMsg("ctrl+d"))
	}
	if f := plain(r); contains(f, "more lines — ctrl+d") || !contains(f, "Timeline") && !contains(f, "timeline") {
		t.Fatalf("the detail's end cannot be reached:\n%s", f)
	}
}
