package tui

import "charm.land/bubbles/v2/key"

// KeyMap is every binding of the workbench, grouped by where it applies. It is a value built
// by DefaultKeyMap and passed in through Options; help, the palette and docs/keys.md are all
// generated from it.
type KeyMap struct {
	Global  GlobalKeys
	Table   TableKeys
	Dialog  DialogKeys
	Editor  EditorKeys
	Resolve ResolveKeys
	History HistoryKeys
}

// GlobalKeys apply on every page when no dialog is open.
type GlobalKeys struct {
	Views                                 [7]key.Binding
	NextView, PrevView                    key.Binding
	Help, Palette, Refresh, Quit, Dismiss key.Binding
	// History opens the History view (the fleet at a time cursor, the heatmap); Since
	// opens it on "since you left".
	History, Since key.Binding
}

// TableKeys move, filter, sort, mark and act on the rows of a list page.
type TableKeys struct {
	Up, Down, Top, Bottom, PageUp, PageDown key.Binding
	Filter, Sort, Reverse, Detail, Back     key.Binding
	Mark, MarkAll, Actions, Open, Copy      key.Binding
	DetailUp, DetailDown                    key.Binding
	// Verify and Resolve apply to an audit attempt whose outcome is unknown (Activity, and
	// the overview's inbox).
	Verify, Resolve key.Binding
	// Ack acknowledges the selected row's attention entry through the core's preview.
	Ack key.Binding
}

// DialogKeys drive the confirm dialog, the action menu, the palette and help.
type DialogKeys struct {
	Up, Down, Switch, Choose, Cancel key.Binding
}

// EditorKeys drive the clarification answer editor.
type EditorKeys struct {
	Preview, Submit, Cancel key.Binding
}

// ResolveKeys drive the resolve-by-hand dialog; every other key types the reason.
type ResolveKeys struct {
	Result, Switch, Choose, Cancel key.Binding
}

// DefaultKeyMap returns the workbench's bindings.
func DefaultKeyMap() KeyMap {
	b := func(keys []string, help, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	var km KeyMap
	for i, id := range pageOrder {
		n := string(rune('1' + i))
		km.Global.Views[i] = b([]string{n}, n, "view "+pageTitles[id])
	}
	km.Global.NextView = b([]string{"tab"}, "tab", "next view")
	km.Global.PrevView = b([]string{"shift+tab"}, "shift+tab", "previous view")
	km.Global.Help = b([]string{"?"}, "?", "help")
	km.Global.Palette = b([]string{":"}, ":", "palette")
	km.Global.Refresh = b([]string{"r"}, "r", "refresh")
	km.Global.Quit = b([]string{"q", "ctrl+c"}, "q/ctrl+c", "quit")
	km.Global.Dismiss = b([]string{"x"}, "x", "dismiss toast")
	km.Global.History = b([]string{"H"}, "H", "history: the fleet at a past moment, the heatmap")
	km.Global.Since = b([]string{"L"}, "L", "since you left")
	km.History = defaultHistoryKeys(b)

	km.Table.Up = b([]string{"k", "up"}, "k/↑", "up")
	km.Table.Down = b([]string{"j", "down"}, "j/↓", "down")
	km.Table.Top = b([]string{"g", "home"}, "g", "first row")
	km.Table.Bottom = b([]string{"G", "end"}, "G", "last row")
	km.Table.PageUp = b([]string{"pgup", "ctrl+b"}, "pgup", "page up")
	km.Table.PageDown = b([]string{"pgdown", "ctrl+f"}, "pgdn", "page down")
	km.Table.Filter = b([]string{"/"}, "/", "filter")
	km.Table.Sort = b([]string{"s"}, "s", "sort")
	km.Table.Reverse = b([]string{"S"}, "S", "reverse the sort")
	km.Table.Detail = b([]string{"enter"}, "enter", "detail")
	km.Table.Back = b([]string{"esc"}, "esc", "close detail / clear filter")
	km.Table.DetailUp = b([]string{"ctrl+u"}, "ctrl+u", "scroll the detail pane up")
	km.Table.DetailDown = b([]string{"ctrl+d"}, "ctrl+d", "scroll the detail pane down")
	km.Table.Mark = b([]string{"space"}, "space", "mark")
	km.Table.MarkAll = b([]string{"ctrl+a"}, "ctrl+a", "mark all shown / clear marks")
	km.Table.Actions = b([]string{"a"}, "a", "actions")
	km.Table.Open = b([]string{"o"}, "o", "open in browser")
	km.Table.Copy = b([]string{"y"}, "y", "copy id")
	km.Table.Verify = b([]string{"v"}, "v", "verify an unknown outcome from evidence")
	km.Table.Resolve = b([]string{"R"}, "R", "resolve an unknown outcome by hand")
	km.Table.Ack = b([]string{"A"}, "A", "acknowledge the attention entry (the core's preview first)")

	km.Dialog.Up = b([]string{"up", "k"}, "↑/k", "previous")
	km.Dialog.Down = b([]string{"down", "j"}, "↓/j", "next")
	km.Dialog.Switch = b([]string{"tab", "left", "right"}, "tab/←/→", "switch button")
	km.Dialog.Choose = b([]string{"enter"}, "enter", "choose")
	km.Dialog.Cancel = b([]string{"esc"}, "esc", "cancel")

	km.Editor.Preview = b([]string{"ctrl+p"}, "ctrl+p", "toggle Markdown preview")
	km.Editor.Submit = b([]string{"ctrl+s"}, "ctrl+s", "preview the answer through the core")
	km.Editor.Cancel = b([]string{"esc"}, "esc", "discard the answer")

	km.Resolve.Result = b([]string{"up", "down"}, "↑/↓", "choose succeeded / failed")
	km.Resolve.Switch = b([]string{"tab", "shift+tab"}, "tab", "switch button")
	km.Resolve.Choose = b([]string{"enter"}, "enter", "press the focused button")
	km.Resolve.Cancel = b([]string{"esc"}, "esc", "cancel")
	return km
}

// KeyGroup is a titled list of bindings, for help and the docs.
type KeyGroup struct {
	Title    string
	Bindings []key.Binding
}

// Groups returns the bindings in the order help and docs/keys.md show them.
func (km KeyMap) Groups() []KeyGroup {
	g := km.Global
	views := append([]key.Binding{}, g.Views[:]...)
	t := km.Table
	return []KeyGroup{
		{"Views", append(views, g.NextView, g.PrevView)},
		{"Global", []key.Binding{g.Help, g.Palette, g.Refresh, g.Dismiss, g.History, g.Since, g.Quit}},
		{"Rows", []key.Binding{t.Up, t.Down, t.Top, t.Bottom, t.PageUp, t.PageDown, t.Filter, t.Sort, t.Reverse, t.Detail, t.DetailUp, t.DetailDown, t.Back}},
		{"Acting", []key.Binding{t.Mark, t.MarkAll, t.Actions, t.Open, t.Copy, t.Verify, t.Resolve, t.Ack}},
		{"Dialogs", []key.Binding{km.Dialog.Up, km.Dialog.Down, km.Dialog.Switch, km.Dialog.Choose, km.Dialog.Cancel}},
		{"Answer editor", []key.Binding{km.Editor.Preview, km.Editor.Submit, km.Editor.Cancel}},
		{"Resolve by hand (typing: the reason)", []key.Binding{km.Resolve.Result, km.Resolve.Switch, km.Resolve.Choose, km.Resolve.Cancel}},
		{"History (H; actions disabled while it is open)", []key.Binding{km.History.Earlier, km.History.Later, km.History.Finer,
			km.History.Coarser, km.History.Now, km.History.Mode, km.History.Window, km.History.Up, km.History.Down,
			km.History.Left, km.History.Right, km.History.Open, km.History.Back}},
	}
}
