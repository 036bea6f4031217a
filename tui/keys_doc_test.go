package tui

import (
	"os"
	"strings"
	"testing"
)

// keysDoc renders docs/keys.md from the keymap.
func keysDoc(km KeyMap) string {
	var b strings.Builder
	b.WriteString("# steward workbench keys\n\n")
	b.WriteString("Generated from `tui.defaultKeyMap()` (`go test ./tui -run TestKeysDoc -update` rewrites it;\n")
	b.WriteString("the test fails when a binding is missing here). Keys that do not apply to the selected row are\n")
	b.WriteString("disabled and drop out of the in-app help (`?`); the action menu (`a`) shows refused actions with\n")
	b.WriteString("the governed core's reason.\n")
	for _, g := range km.Groups() {
		b.WriteString("\n## " + g.Title + "\n\n| key | does |\n|---|---|\n")
		for _, k := range g.Bindings {
			b.WriteString("| `" + strings.Join(k.Keys(), "` `") + "` | " + k.Help().Desc + " |\n")
		}
	}
	b.WriteString("\n## Palette (`:`)\n\nFuzzy list of: view <name>, refresh the sources, actions for the selected row, verify the\nselected attempt's unknown outcome, resolve it by hand, clear the filter, clear the marks,\ndismiss the oldest toast, help, quit, and sort by <column> for each sortable column of the\ncurrent view (Left, Heartbeat, Count, Age, …).\n")
	b.WriteString("\n## Mouse\n\nWheel scrolls the rows; a click on a tab switches view; a click on a row selects it.\n")
	b.WriteString("\n## Narrow screens\n\nWhen the tabs' full names do not fit (at 80 columns), every tab takes its short name, a whole\nword: Home (Overview), Claims, Clash (Contention), Asks (Clarifications), Orphans, Log\n(Activity), Sessions; narrower still the tabs stand closer, then show numbers only. The\ncurrent tab is drawn reversed, and the view's full name heads it. Columns that decide (an\norphan's Action, the inbox's \"what → action\", the Contention's Next) are never the ones\ndropped; the footer names the columns that are (`hidden: Evidence`).\n")
	b.WriteString("\n## The selected row\n\nThe cursor stays on its row while snapshots arrive: a row that appears above it never takes\n" +
		"it (the top row included), so a key acts on the row you looked at. When the selected row\n" +
		"leaves the view, the cursor stays at its place and the detail says so. A dialog opened on a\n" +
		"row (the action menu, a confirm, the snooze menu) acts on that row whatever the cursor does; if\n" +
		"the row leaves the view while it is open, the dialog says so (\"acme/widgets#7 left this view:\n" +
		"the action will be previewed against the current state\"), and choosing or applying asks the\n" +
		"governed core for a new preview against the current state first: nothing is applied from a\n" +
		"preview of a row that is gone (`tui.TestSelectionFollowsTheRow`, `tui.TestDialogSaysItsRowLeft`).\n")
	return b.String()
}

func TestKeysDoc(t *testing.T) {
	const path = "../docs/keys.md"
	want := keysDoc(defaultKeyMap())
	if updateDocs() {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range defaultKeyMap().Groups() {
		for _, k := range g.Bindings {
			for _, key := range k.Keys() {
				if !strings.Contains(string(got), "`"+key+"`") {
					t.Errorf("docs/keys.md does not list %q (%s)", key, k.Help().Desc)
				}
			}
		}
	}
	if string(got) != want {
		t.Error("docs/keys.md is out of date: run go test ./tui -run TestKeysDoc -update")
	}
}
