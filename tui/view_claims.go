package tui

// claimsView is the Claims view: every live claim, its lock file joined with its lease,
// session and item.
type claimsView struct{ *listView }

func newClaims(env *shared) tab { return claimsView{newList(pageClaims, env, claimColumns())} }

func claimColumns() []column {
	return []column{
		{Title: "Item", Elide: true, Min: 8, Max: 40, Sort: sortText(0)},
		{Title: "Claimant", Idx: 2, Elide: true, Min: 8, Max: 32},
		{Title: "Fresh", Idx: 8, Prio: 1, Min: 6, Max: 24, Cell: stateCell(8)},
		{Title: "Left", Idx: 6, Prio: 1, Fixed: 13, Min: 8, Cell: cellLeft, Sort: sortTime(rowDeadline)},
		{Title: "Owner", Idx: 9, Prio: 2, Fixed: 7, Min: 5, Cell: stateCell(9)},
		{Title: "Heartbeat", Idx: 5, Prio: 3, Fixed: 7, Min: 6, Cell: cellAgo(rowHeartbeat), Sort: sortAge(rowHeartbeat)},
		{Title: "Session", Idx: 3, Prio: 4, Elide: true, Min: 8, Max: 32},
		{Title: "Phase", Idx: 4, Prio: 5, Min: 5, Max: 18},
		{Title: "Contract", Idx: 7, Prio: 6, Min: 6, Max: 12, Cell: stateCell(7)},
		{Title: "Role", Idx: 1, Prio: 7, Min: 4, Max: 28},
	}
}
