package tui

// clarificationsView is the Clarifications view: items a worker marked blocked pending a
// maintainer's answer, with the question and its age against the SLA.
type clarificationsView struct{ *listView }

func newClarifications(env *shared) tab {
	return clarificationsView{newList(pageClarifications, env, clarificationColumns())}
}

func clarificationColumns() []column {
	return []column{
		{Title: "Item", Elide: true, Min: 8, Max: 40, Sort: sortText(0)},
		{Title: "Title", Idx: 1, Grow: true, Min: 12},
		{Title: "Asked by", Idx: 2, Prio: 2, Elide: true, Min: 8, Max: 32},
		{Title: "Age", Idx: 3, Prio: 1, Fixed: 19, Min: 8, Cell: cellSLA, Sort: sortAge(rowSince)},
	}
}
