package gitea

import (
	"fmt"
	"time"
)

// HealthState says how much of a read can be trusted.
type HealthState string

// Health states. A failed read is never HealthOK with no items.
const (
	HealthOK          HealthState = "ok"          // everything was read
	HealthPartial     HealthState = "partial"     // some was read (kept), some failed: "none found (partial inventory)"
	HealthUnavailable HealthState = "unavailable" // nothing could be read; the result means nothing
)

// Health accompanies every read.
type Health struct {
	State  HealthState
	Reason string    // why not ok; scrubbed, safe to show
	Err    error     // the classified error behind Reason, nil when ok
	ReadAt time.Time // when the read finished
}

// OK reports whether the read was complete.
func (h Health) OK() bool { return h.State == HealthOK }

func (c *Client) healthOK() Health { return Health{State: HealthOK, ReadAt: c.cfg.Now()} }

func (c *Client) healthFail(state HealthState, what string, err error) Health {
	return Health{State: state, Reason: fmt.Sprintf("%s: %v", what, err), Err: err, ReadAt: c.cfg.Now()}
}

// worse combines two health values, keeping the worse state and the first reason.
func worse(a, b Health) Health {
	rank := map[HealthState]int{HealthOK: 0, HealthPartial: 1, HealthUnavailable: 2}
	if rank[b.State] > rank[a.State] {
		if a.Reason != "" && b.Reason != "" {
			b.Reason = a.Reason + "; " + b.Reason
		}
		return b
	}
	if b.Reason != "" && a.State != HealthOK {
		a.Reason += "; " + b.Reason
	}
	return a
}
