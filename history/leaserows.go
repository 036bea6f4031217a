package history

import (
	"fmt"
	"strings"
	"time"

	"steward/leases/leaserec"
)

// The lease rows are the supervised system's own record of every claim: when it was taken
// (created_at), its last heartbeat (last_heartbeat_at, heartbeat_count), and when and how it
// ended (released_at, status). Each row gives the timeline those instants as entries of
// source "leases" (refs leases:<id>/claimed, /heartbeat, /ended), with the session that
// held it — on the seed's schema, whose events record no session, the only record that
// names who held an item when. An event that records the same step of the same lease (a
// lease.claim, lease.renew or end event naming it, or — where events name no lease — the
// same item's, within a second) is the same fact: the row's entry is then left out.

// leaseStep is the step of a lease's life an entry records.
type leaseStep int

const (
	stepNone leaseStep = iota
	stepClaim
	stepHeartbeat
	stepEnd
)

func stepOf(k Kind) leaseStep {
	switch k {
	case KindClaim:
		return stepClaim
	case KindHeartbeat:
		return stepHeartbeat
	case KindRelease, KindReclaim, kindAbandon, kindExpire:
		return stepEnd
	}
	return stepNone
}

// endKind is the entry kind of a lease row's end, by its status.
func endKind(s leaserec.Status) Kind {
	switch leaserec.Status(leaserec.Fold(string(s))) {
	case leaserec.StatusExpired:
		return kindExpire
	case leaserec.StatusAbandoned:
		return kindAbandon
	}
	return KindRelease
}

// rowEntries are the timeline entries of one lease row (sp its span).
func rowEntries(l *leaserec.Lease, sp LeaseSpan) []Entry {
	who := sp.Session
	if who == "" {
		who = "an unrecorded session"
	}
	role := ""
	if l.Role != "" {
		role = " as " + l.Role
	}
	ref := "leases:" + l.LeaseID
	base := Entry{Source: SourceLeases, Item: sp.Item, Session: sp.Session, Lease: l.LeaseID}
	var out []Entry
	if !sp.Start.IsZero() {
		en := base
		en.At, en.Ref, en.Kind = sp.Start, ref+"/claimed", KindClaim
		en.Text = clean(fmt.Sprintf("lease %s claimed by %s%s (row: status %s)", l.LeaseID, who, role, l.StatusText()))
		out = append(out, en)
	}
	if l.LastHeartbeatAt.OK() {
		if hb := l.LastHeartbeatAt.Time.UTC(); sp.Start.IsZero() || hb.After(sp.Start) {
			en := base
			en.At, en.Ref, en.Kind = hb, ref+"/heartbeat", KindHeartbeat
			n := ""
			if l.HeartbeatCount > 0 {
				n = fmt.Sprintf(", heartbeat_count %d", l.HeartbeatCount)
			}
			en.Text = clean(
				fmt.Sprintf(
					"last heartbeat of lease %s by %s (row: last_heartbeat_at%s; earlier heartbeats are not kept in the row)",
					l.LeaseID,
					who,
					n,
				),
			)
			out = append(out, en)
		}
	}
	if sp.Ended && !sp.End.IsZero() {
		en := base
		en.At, en.Ref, en.Kind = sp.End, ref+"/ended", endKind(l.Status)
		why := ""
		if l.EndReason != "" {
			why = ", end_reason " + l.EndReason
		}
		en.Text = clean(
			fmt.Sprintf("lease %s of %s %s (row: released_at%s)", l.LeaseID, who, strings.ToLower(l.StatusText()), why),
		)
		out = append(out, en)
	}
	return out
}

// historyColumns are the lease columns the timeline's lease entries rest on, and what their
// absence leaves unrecorded.
var historyColumns = map[string]string{
	"leases.created_at":        "when each lease was claimed is not recorded in its row",
	"leases.last_heartbeat_at": "no lease row records a heartbeat",
	"leases.released_at":       "when each ended lease ended is not recorded in its row",
	"leases.session_id":        "no lease row names its session",
	"leases.work_item_id":      "no lease row names its item",
}

// columnGaps turns the read's notes and reasons about absent lease columns into gaps that
// name the missing record.
func columnGaps(h leaserec.Health) []Gap {
	var out []Gap
	for _, s := range append(append([]string(nil), h.Notes...), h.Reasons...) {
		for col, what := range historyColumns {
			if strings.Contains(s, "column "+col+" is absent") {
				out = append(out, Gap{Kind: GapLimit, Source: SourceLeases, Reason: "the leases table has no " +
					strings.TrimPrefix(col, "leases.") + " column: " + what})
			}
		}
	}
	return out
}

// mergeRows adds the lease rows' entries the events do not already record.
func (e *Evidence) mergeRows() {
	if len(e.rows) == 0 {
		return
	}
	type key struct {
		lease string
		step  leaseStep
	}
	type itemKey struct {
		item Item
		step leaseStep
	}
	byLease := map[key][]time.Time{}
	byItem := map[itemKey][]time.Time{}
	for _, en := range e.Entries {
		st := stepOf(en.Kind)
		if en.Source != SourceEvents || st == stepNone || en.At.IsZero() {
			continue
		}
		if en.Lease != "" {
			byLease[key{en.Lease, st}] = append(byLease[key{en.Lease, st}], en.At)
		} else if !en.Item.Zero() {
			k := itemKey{en.Item.Key(), st}
			byItem[k] = append(byItem[k], en.At)
		}
	}
	near := func(ts []time.Time, at time.Time) bool {
		for _, t := range ts {
			if d := t.Sub(at); d <= time.Second && d >= -time.Second {
				return true
			}
		}
		return false
	}
	for _, en := range e.rows {
		st := stepOf(en.Kind)
		if near(byLease[key{en.Lease, st}], en.At) || near(byItem[itemKey{en.Item.Key(), st}], en.At) {
			continue
		}
		e.Entries = append(e.Entries, en)
	}
	e.rows = nil
}
