package tui

import "charm.land/bubbles/v2/key"

// KeyMap is every key of the workbench, grouped by where it applies. It is a value built by
// defaultKeyMap and passed in through Options, and it is the only place a key is named: pages
// and dialogs declare their bindings from it (bindings.go), and help, the footer, the palette,
// the note a disabled key leaves and docs/keys.md are all generated from those declarations.
type KeyMap struct {
	Global  GlobalKeys
	Table   TableKeys
	Act     ActKeys
	Filter  FilterKeys
	Line    LineKeys
	Dialog  DialogKeys
	Palette PaletteKeys
	Editor  EditorKeys
	Discard DiscardKeys
	Resolve ResolveKeys
	Opener  OpenerKeys
	History HistoryKeys
	Help    HelpKeys
}

// GlobalKeys apply on every page when no dialog is open and the filter is not being typed;
// ForceQuit applies everywhere.
type GlobalKeys struct {
	Views                                 []key.Binding
	NextView, PrevView                    key.Binding
	Help, Palette, Refresh, Quit, Dismiss key.Binding
	ForceQuit, Toasts, Pause              key.Binding
	// History opens the History view (the fleet at a time cursor, the heatmap); Since
	// opens it on "since you left".
	History, Since key.Binding
	// Workspaces opens the chooser of a workbench over several workspaces: one of them, or
	// the all view.
	Workspaces key.Binding
}

// TableKeys move, filter, sort and open the detail of the rows of a list page.
type TableKeys struct {
	Up, Down, Top, Bottom, PageUp, PageDown key.Binding
	Filter, Sort, Reverse, Detail, Back     key.Binding
	DetailUp, DetailDown                    key.Binding
	// Routine shows or hides the routine rows of the overview's inbox; Heartbeats shows
	// heartbeat events one by one instead of a count per item (Activity).
	Routine, Heartbeats key.Binding
}

// ActKeys mark rows and act on them.
type ActKeys struct {
	Mark, MarkAll, ClearMarks, Actions, Recover, Open, Copy, Jump key.Binding
	// Verify and Resolve apply to an audit attempt whose outcome is unknown (Activity, and
	// the overview's inbox).
	Verify, Resolve key.Binding
	// Ack acknowledges the selected row's attention entry through the core's preview; Snooze
	// asks how long, then snoozes it through the core's preview.
	Ack, Snooze key.Binding
}

// FilterKeys apply while the filter is being typed (every other key types).
type FilterKeys struct {
	Accept, Clear key.Binding
}

// LineKeys edit a one-line field: the filter, the palette's query, a typed phrase, a reason.
type LineKeys struct {
	DeleteBack, DeleteWord, ClearLine key.Binding
	// DeleteForward deletes the character under the cursor; Left, Right, Start and End move
	// the cursor (where a dialog gives left and right to its buttons, they switch buttons).
	DeleteForward, Left, Right, Start, End key.Binding
}

// DialogKeys drive the confirm dialog, the action menu, help and the lists of dialogs.
type DialogKeys struct {
	Up, Down, Switch, Choose, Cancel key.Binding
	ScrollUp, ScrollDown             key.Binding
}

// PaletteKeys drive the ':' palette (every other key types the query).
type PaletteKeys struct {
	Up, Down, Run, Close key.Binding
}

// EditorKeys drive the clarification answer editor (every other key edits the answer).
type EditorKeys struct {
	Preview, Submit, Close key.Binding
}

// DiscardKeys answer the question the editor asks before closing with text in it.
type DiscardKeys struct {
	Keep, Discard, Back key.Binding
}

// ResolveKeys drive the resolve-by-hand dialog; every other key types the reason.
type ResolveKeys struct {
	Prev, Next, Switch, Choose, Cancel key.Binding
}

// HelpKeys drive help ('?'); every other key types its filter.
type HelpKeys struct {
	Up, Down, PageUp, PageDown, Close key.Binding
}

// OpenerKeys drive the dialog that shows an address no browser could open.
type OpenerKeys struct {
	Copy, Close key.Binding
}

// defaultKeyMap returns the workbench's bindings.
func defaultKeyMap() KeyMap {
	b := func(keys []string, help, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	var km KeyMap
	for i, id := range pageOrder {
		n := string(rune('1' + i))
		km.Global.Views = append(km.Global.Views, b([]string{n}, n, "view "+id.title()))
	}
	km.Global.NextView = b([]string{"tab"}, "tab", "next view")
	km.Global.PrevView = b([]string{"shift+tab"}, "shift+tab", "previous view")
	km.Global.Help = b([]string{"?"}, "?", "help")
	km.Global.Palette = b([]string{":"}, ":", "palette")
	km.Global.Refresh = b([]string{"r"}, "r", "refresh")
	km.Global.Quit = b([]string{"q"}, "q", "quit")
	km.Global.ForceQuit = b([]string{"ctrl+c"}, "ctrl+c", "quit (anywhere)")
	km.Global.Dismiss = b([]string{"x"}, "x", "dismiss message")
	km.Global.Toasts = b([]string{"t"}, "t", "message history")
	km.Global.Pause = b([]string{"p"}, "p", "pause / resume")
	km.Global.History = b([]string{"H"}, "H", "history: the fleet at a past moment, the heatmap")
	km.Global.Since = b([]string{"L"}, "L", "since you left")
	km.Global.Workspaces = b([]string{"W"}, "W", "workspaces: switch, or all of them")
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
	km.Table.DetailUp = b([]string{"ctrl+u"}, "ctrl+u", "scroll the detail up")
	km.Table.DetailDown = b([]string{"ctrl+d"}, "ctrl+d", "scroll the detail down")
	km.Table.Routine = b([]string{"h"}, "h", "show / hide routine rows")
	km.Table.Heartbeats = b([]string{"b"}, "b", "fold / list heartbeats")

	km.Act.Mark = b([]string{"space"}, "space", "mark")
	km.Act.MarkAll = b([]string{"ctrl+a"}, "ctrl+a", "mark all shown")
	km.Act.ClearMarks = b([]string{"u"}, "u", "clear marks")
	km.Act.Actions = b([]string{"a"}, "a", "actions")
	km.Act.Recover = b([]string{"c"}, "c", "recover item")
	km.Act.Open = b([]string{"o"}, "o", "open in browser")
	km.Act.Copy = b([]string{"y"}, "y", "copy id")
	km.Act.Jump = b([]string{">"}, ">", "go to its view")
	km.Act.Verify = b([]string{"v"}, "v", "verify")
	km.Act.Resolve = b([]string{"R"}, "R", "resolve by hand")
	km.Act.Ack = b([]string{"A"}, "A", "acknowledge attention")
	km.Act.Snooze = b([]string{"Z"}, "Z", "snooze attention")

	km.Filter.Accept = b([]string{"enter"}, "enter", "keep the filter")
	km.Filter.Clear = b([]string{"esc"}, "esc", "clear the filter and leave")

	km.Line.DeleteBack = b([]string{"backspace", "ctrl+h"}, "backspace", "delete a character")
	km.Line.DeleteWord = b([]string{"ctrl+w", "alt+backspace"}, "ctrl+w", "delete a word")
	km.Line.ClearLine = b([]string{"ctrl+u"}, "ctrl+u", "delete before the cursor")
	km.Line.DeleteForward = b([]string{"delete"}, "delete", "delete the character under the cursor")
	km.Line.Left = b([]string{"left"}, "←", "cursor left")
	km.Line.Right = b([]string{"right"}, "→", "cursor right")
	km.Line.Start = b([]string{"home", "ctrl+a"}, "home", "cursor to the start")
	km.Line.End = b([]string{"end", "ctrl+e"}, "end", "cursor to the end")

	km.Dialog.Up = b([]string{"up", "k"}, "↑/k", "previous")
	km.Dialog.Down = b([]string{"down", "j"}, "↓/j", "next")
	km.Dialog.Switch = b([]string{"tab", "shift+tab", "left", "right"}, "tab/←/→", "switch button")
	km.Dialog.Choose = b([]string{"enter"}, "enter", "choose")
	km.Dialog.Cancel = b([]string{"esc"}, "esc", "cancel")
	km.Dialog.ScrollUp = b([]string{"pgup", "ctrl+u"}, "pgup/ctrl+u", "scroll up")
	km.Dialog.ScrollDown = b([]string{"pgdown", "ctrl+d"}, "pgdn/ctrl+d", "scroll down")

	km.Palette.Up = b([]string{"up", "ctrl+p"}, "↑", "previous")
	km.Palette.Down = b([]string{"down", "ctrl+n"}, "↓", "next")
	km.Palette.Run = b([]string{"enter"}, "enter", "run")
	km.Palette.Close = b([]string{"esc"}, "esc", "close")

	km.Editor.Preview = b([]string{"ctrl+p"}, "ctrl+p", "Markdown preview / edit")
	km.Editor.Submit = b([]string{"ctrl+s"}, "ctrl+s", "ask the core to preview the answer")
	km.Editor.Close = b([]string{"esc"}, "esc", "close (asks before discarding)")

	km.Discard.Keep = b([]string{"k"}, "k", "keep the draft and close")
	km.Discard.Discard = b([]string{"d"}, "d", "discard the answer")
	km.Discard.Back = b([]string{"esc", "enter"}, "esc", "back to the answer")

	km.Resolve.Prev = b([]string{"up"}, "↑", "previous result (succeeded / failed)")
	km.Resolve.Next = b([]string{"down"}, "↓", "next result (succeeded / failed)")
	km.Resolve.Switch = b([]string{"tab", "shift+tab"}, "tab", "switch button")
	km.Resolve.Choose = b([]string{"enter"}, "enter", "press the focused button")
	km.Resolve.Cancel = b([]string{"esc"}, "esc", "cancel")

	km.Help.Up = b([]string{"up"}, "↑", "scroll up a line")
	km.Help.Down = b([]string{"down"}, "↓", "scroll down a line")
	km.Help.PageUp = b([]string{"pgup", "ctrl+b"}, "pgup", "page up")
	km.Help.PageDown = b([]string{"pgdown", "ctrl+f"}, "pgdn", "page down")
	km.Help.Close = b([]string{"esc"}, "esc", "clear the filter, else close")

	km.Opener.Copy = b([]string{"y"}, "y", "copy the address")
	km.Opener.Close = b([]string{"esc", "enter", "q"}, "esc", "close")
	return km
}

// KeyGroup is a titled list of bindings, for help and the docs.
type KeyGroup struct {
	Title    string
	Bindings []key.Binding
}

// Groups returns every binding in the order docs/keys.md lists them.
func (km KeyMap) Groups() []KeyGroup {
	g, t, a := km.Global, km.Table, km.Act
	views := append([]key.Binding{}, g.Views[:]...)
	return []KeyGroup{
		{"Views", append(views, g.NextView, g.PrevView)},
		{
			"Global",
			[]key.Binding{
				g.Help,
				g.Palette,
				g.Refresh,
				g.Pause,
				g.Toasts,
				g.Dismiss,
				g.History,
				g.Since,
				g.Workspaces,
				g.Quit,
				g.ForceQuit,
			},
		},
		{
			"Rows",
			[]key.Binding{
				t.Up,
				t.Down,
				t.Top,
				t.Bottom,
				t.PageUp,
				t.PageDown,
				t.Filter,
				t.Sort,
				t.Reverse,
				t.Detail,
				t.DetailUp,
				t.DetailDown,
				t.Back,
				t.Routine,
				t.Heartbeats,
			},
		},
		{
			"Acting",
			[]key.Binding{
				a.Mark,
				a.MarkAll,
				a.ClearMarks,
				a.Actions,
				a.Recover,
				a.Open,
				a.Copy,
				a.Jump,
				a.Verify,
				a.Resolve,
				a.Ack,
				a.Snooze,
			},
		},
		{"Filter (typing the filter)", []key.Binding{km.Filter.Accept, km.Filter.Clear}},
		{"Text fields", []key.Binding{km.Line.DeleteBack, km.Line.DeleteWord, km.Line.ClearLine, km.Line.DeleteForward,
			km.Line.Left, km.Line.Right, km.Line.Start, km.Line.End}},
		{
			"Dialogs",
			[]key.Binding{
				km.Dialog.Up,
				km.Dialog.Down,
				km.Dialog.Switch,
				km.Dialog.Choose,
				km.Dialog.ScrollUp,
				km.Dialog.ScrollDown,
				km.Dialog.Cancel,
			},
		},
		{"Palette", []key.Binding{km.Palette.Up, km.Palette.Down, km.Palette.Run, km.Palette.Close}},
		{"Answer editor", []key.Binding{km.Editor.Preview, km.Editor.Submit, km.Editor.Close}},
		{"Closing the answer editor", []key.Binding{km.Discard.Keep, km.Discard.Discard, km.Discard.Back}},
		{
			"Resolve by hand (typing: the reason)",
			[]key.Binding{km.Resolve.Prev, km.Resolve.Next, km.Resolve.Switch, km.Resolve.Choose, km.Resolve.Cancel},
		},
		{"Address without a browser", []key.Binding{km.Opener.Copy, km.Opener.Close}},
		{
			"Help (typing: the filter)",
			[]key.Binding{km.Help.Up, km.Help.Down, km.Help.PageUp, km.Help.PageDown, km.Help.Close, km.Global.Help},
		},
		{"History", []key.Binding{km.History.Earlier, km.History.Later, km.History.Finer,
			km.History.Coarser, km.History.Now, km.History.Mode, km.History.Window, km.History.Up, km.History.Down,
			km.History.Left, km.History.Right, km.History.Open, km.History.Back}},
	}
}
