package tui

// contentionView is the Contention view: items several workers went for — refused claims
// over a window, and real collisions.
type contentionView struct{ *listView }

func newContention(env *shared) tab {
	return contentionView{newList(pageContention, env, contentionColumns())}
}

func contentionColumns() []column {
	return []column{
		{Title: "Kind", Prio: 1, Min: 6, Max: 24, Sort: sortText(0)},
		{Title: "Class", Idx: 1, Prio: 2, Fixed: 9, Min: 7, Cell: stateCell(1)},
		{Title: "Item", Idx: 2, Elide: true, Min: 8, Max: 40, Sort: sortText(2)},
		{Title: "Count", Idx: 3, Prio: 3, Min: 5, Max: 7, Sort: sortCount},
		{Title: "Sessions", Idx: 4, Grow: true, Min: 16},
		{Title: "Window", Idx: 5, Prio: 4, Min: 6, Max: 8},
		{Title: "Next", Idx: 6, Grow: true, Decides: true, Min: 24},
	}
}
