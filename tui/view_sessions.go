package tui

// sessionsView is the Sessions view: the fleet's sessions, their owners' liveness,
// heartbeats and the leases they hold.
type sessionsView struct{ *listView }

func newSessions(env *shared) tab { return sessionsView{newList(pageSessions, env, sessionColumns())} }

func sessionColumns() []column {
	return []column{
		{Title: "Session", Elide: true, Min: 8, Max: 40, Sort: sortText(0)},
		{Title: "Role", Idx: 1, Prio: 3, Min: 4, Max: 14},
		{Title: "Profile", Idx: 2, Prio: 5, Min: 4, Max: 16},
		{Title: "PID", Idx: 3, Prio: 4, Min: 3, Max: 8},
		{Title: "Alive", Idx: 4, Prio: 1, Fixed: 7, Min: 5, Cell: stateCell(4)},
		{Title: "Heartbeat", Idx: 5, Prio: 1, Fixed: 7, Min: 6, Cell: cellAgo(rowHeartbeat), Sort: sortAge(rowHeartbeat)},
		{Title: "Leases", Idx: 6, Prio: 2, Min: 6, Max: 6, Sort: sortCount},
		{Title: "Status", Idx: 7, Prio: 3, Min: 5, Max: 12},
	}
}
