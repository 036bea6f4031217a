package tui

// orphansView is the Orphans view: reconcilable artifacts, each with its kind, its evidence
// and the sanctioned action (or why it is inspect only).
type orphansView struct{ *listView }

func newOrphans(env *shared) tab { return orphansView{newList(pageOrphans, env, orphanColumns())} }

func orphanColumns() []column {
	return []column{
		{Title: "Kind", Min: 8, Max: 30, Sort: sortText(0)},
		{Title: "Item", Idx: 1, Elide: true, Min: 8, Max: 40, Sort: sortText(1)},
		{Title: "Evidence", Idx: 2, Prio: 1, Grow: true, Min: 12},
		{Title: "Action", Idx: 3, Decides: true, Min: 24},
	}
}
