package leases

import (
	"encoding/json"
	"slices"

	"steward/leases/leaserec"
)

// notifyChannel is the PostgreSQL channel every transition notifies, in its own
// transaction (so the notice is delivered at commit, and never for a rollback).
const notifyChannel = "steward_control_plane"

// maxNotifyPayload keeps a notice under PostgreSQL's 8000-byte payload limit.
const maxNotifyPayload = 7000

// change is what one committed transition changed, as its notice says: the work items,
// leases and sessions to re-read and the events written. Resync is set when the change
// was too large to list (or its notice could not be decoded): re-read everything.
type change struct {
	WorkItemIDs []int64  `json:"w,omitempty"`
	LeaseIDs    []string `json:"l,omitempty"`
	SessionIDs  []string `json:"s,omitempty"`
	EventIDs    []int64  `json:"e,omitempty"`
	Resync      bool     `json:"all,omitempty"`
}

// Scope is the rows the change names, to re-read with ReadScope.
func (c change) Scope() Scope {
	return Scope{WorkItemIDs: c.WorkItemIDs, LeaseIDs: c.LeaseIDs, SessionIDs: c.SessionIDs}
}

// decodeChange decodes a notice's payload. A payload that is not a change asks for a
// full re-read (Resync) rather than being dropped: nothing a notice was sent for is
// lost.
func decodeChange(payload string) change {
	var c change
	if err := json.Unmarshal([]byte(payload), &c); err != nil {
		return change{Resync: true}
	}
	for _, id := range c.WorkItemIDs {
		if id <= 0 {
			return change{Resync: true}
		}
	}
	return c
}

// encode renders the notice's payload; a change too large for one notice becomes a
// request to re-read everything.
func (c change) encode() string {
	b, err := json.Marshal(c)
	if err != nil || len(b) > maxNotifyPayload {
		return `{"all":true}`
	}
	return string(b)
}

// add records a lease's item, id and holder.
func (c *change) add(l *leaserec.Lease) {
	if l == nil {
		return
	}
	if l.WorkItemID > 0 && !slices.Contains(c.WorkItemIDs, l.WorkItemID) {
		c.WorkItemIDs = append(c.WorkItemIDs, l.WorkItemID)
	}
	if l.LeaseID != "" && !slices.Contains(c.LeaseIDs, l.LeaseID) {
		c.LeaseIDs = append(c.LeaseIDs, l.LeaseID)
	}
	if l.SessionID != "" && !slices.Contains(c.SessionIDs, l.SessionID) {
		c.SessionIDs = append(c.SessionIDs, l.SessionID)
	}
}
