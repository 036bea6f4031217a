package model

// Stats counts what a model holds: the sources as read and the indexes and derived
// output kept over them (see engine). Every count is bounded by the workspace (the
// deadline heap by twice the units plus the sessions, see Engine.compact).
type Stats struct {
	Locks, Leases, RefLeases, RefPending, Sessions, WorkItems int
	Units, Deadlines, Dirty, Activity, GiteaFacts             int
	Claims, Orphans, Contention, Items, SessionsOut           int
	Branches, Heads, ItemLeases, SessionLeases, SessionKeys   int
}

func (e *Engine) Stats() Stats {
	return Stats{Locks: len(e.locks), Leases: len(e.leases), RefLeases: len(e.refs), RefPending: len(e.refPending),
		Sessions: len(e.sessions), WorkItems: len(e.workItems), Units: len(e.units), Deadlines: len(e.dl),
		Dirty: len(e.dirty) + len(e.dirtySess), Activity: len(e.activity), GiteaFacts: len(e.facts),
		Claims: e.claims.len(), Orphans: e.orphans.len(), Contention: e.contention.len(),
		Items: e.items.len(), SessionsOut: e.sessOut.len(),
		Branches: len(e.branches), Heads: len(e.heads), ItemLeases: len(e.itemLeases), SessionLeases: len(e.sessLeases),
		SessionKeys: len(e.sessKeys)}
}
