package model

import "sort"

// IncidentKind names a root cause several orphans share.
type IncidentKind string

// incidentDeadWorker: a worker whose process is proven dead while it held claims. Its lease
// and its lock file each make an orphan (stale-lease-dead-owner, live-lock-dead-owner, …);
// they are one thing to a person — the worker died holding the item — and one plan
// (item.recover) ends them together.
const incidentDeadWorker IncidentKind = "dead-worker"

// Incident is one root cause behind several orphans: a dead worker (its session) and every
// orphan of that session that has a sanctioned action — its parts, the evidence — with the
// items they hold. A person sees the incident; the parts keep their kinds (the detail, the
// JSON).
type Incident struct {
	Kind      IncidentKind `json:"kind"`
	SessionID string       `json:"session_id"`
	// Items are the items the parts hold, each once, in item order.
	Items []Item `json:"items"`
	// Orphans are the parts, in the snapshot's order.
	Orphans []*Orphan `json:"orphans"`
}

// Key is the incident's identity: its kind and the dead worker's session.
func (i *Incident) Key() string { return string(i.Kind) + ":" + i.SessionID }

// deadOwnerKind reports whether an orphan of kind k proves its owner's process dead (on the
// host that wrote the record: liveness is evidence only there).
func deadOwnerKind(k OrphanKind) bool {
	switch k {
	case OrphanStaleLeaseDeadOwner, OrphanLiveLockDeadOwner, OrphanStaleLockDeadOwner:
		return true
	}
	return false
}

// Incidents groups orphans by root cause: a session with at least one orphan of a dead-owner
// kind, or whose process the sessions read proves dead, is a dead worker, and each of its
// orphans that has a sanctioned action and names an item is a part of its incident — a lease
// that ran out as well as a lock (a dead worker's expired lease is active-lease-past-expiry,
// not a dead-owner kind). Orphans of no session, of no item, or inspect only are no part of
// any incident. Incidents are in session order. The result is a function of the snapshot's
// orphans and sessions alone, so every surface groups alike.
func Incidents(orphans []*Orphan, sessions []*Session) []*Incident {
	dead := map[string]bool{}
	for _, s := range sessions {
		if s.Liveness == LivenessDead && s.SessionID != "" {
			dead[s.SessionID] = true
		}
	}
	for _, o := range orphans {
		if o.SessionID != "" && o.Action != nil && o.Item != nil && deadOwnerKind(o.Kind) {
			dead[o.SessionID] = true
		}
	}
	by := map[string]*Incident{}
	seen := map[string]map[string]bool{}
	for _, o := range orphans {
		if !dead[o.SessionID] || o.Action == nil || o.Item == nil {
			continue
		}
		in := by[o.SessionID]
		if in == nil {
			in = &Incident{Kind: incidentDeadWorker, SessionID: o.SessionID}
			by[o.SessionID], seen[o.SessionID] = in, map[string]bool{}
		}
		in.Orphans = append(in.Orphans, o)
		if k := o.Item.key(); !seen[o.SessionID][k] {
			seen[o.SessionID][k] = true
			in.Items = append(in.Items, *o.Item)
		}
	}
	out := make([]*Incident, 0, len(by))
	for _, in := range by {
		sort.SliceStable(in.Items, func(a, b int) bool { return in.Items[a].key() < in.Items[b].key() })
		out = append(out, in)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].SessionID < out[b].SessionID })
	return out
}
