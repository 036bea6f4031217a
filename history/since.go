package history

import (
	"fmt"
	"slices"
	"steward/govern/actionid"
	"strings"
	"time"
)

// Category groups the lines of a "since you left" report, in the order they are shown:
// what needs a person first, routine counts last.
type Category string

// The categories.
const (
	CatSourcesLost    Category = "sources lost"
	catCollisions     Category = "collisions"
	CatNewOrphans     Category = "new orphans"
	CatClearedOrphans Category = "cleared orphans"
	catUnknown        Category = "unknown outcomes"
	catAnswers        Category = "answers"
	CatRecoveries     Category = "recoveries by others"
	CatYours          Category = "your actions"
	CatRoutine        Category = "routine"
)

// categories lists every category in report order.
var categories = []Category{CatSourcesLost, catCollisions, CatNewOrphans, CatClearedOrphans, catUnknown,
	catAnswers, CatRecoveries, CatYours, CatRoutine}

// SinceLine is one line of the report; Item (when set) is the row it jumps to.
type SinceLine struct {
	Category Category  `json:"category"`
	At       time.Time `json:"at,omitzero"`
	Item     Item      `json:"item,omitzero"`
	Session  string    `json:"session,omitempty"`
	Text     string    `json:"text"`
	Ref      string    `json:"ref,omitempty"`
}

// SinceReport is what changed between a mark and the time the evidence was read.
type SinceReport struct {
	Since time.Time   `json:"since"`
	Read  time.Time   `json:"read"`
	Lines []SinceLine `json:"lines"`
	Gaps  []Gap       `json:"gaps"`
}

// supervisorActions are the governed recoveries (not a worker's own claim, heartbeat or
// release, not an answer).
var supervisorActions = map[string]bool{
	actionid.ReclaimExpired: true, actionid.AbandonStale: true, actionid.ExpireSweep: true,
	actionid.RetireLock: true, actionid.RestoreLock: true, actionid.Undo: true, actionid.Relabel: true,
}

// Since reports what changed after mark: sources lost, collisions, claims that went past
// their expiry (new orphans) and those that stopped being so (cleared), attempts whose
// outcome is unknown, answers given and by whom, recoveries by others (self names the
// user's actor, "login" or "os_user@host"), and routine counts.
func (e *Evidence) Since(mark time.Time, self string) SinceReport {
	e.Finish()
	now := e.Read
	r := SinceReport{Since: mark, Read: now, Lines: []SinceLine{}}
	r.Gaps = e.gapsFor(Item{}, false, mark, now)
	for _, g := range r.Gaps {
		if g.Lost() || (g.Kind == GapNotRetained && g.To.After(mark)) {
			r.Lines = append(r.Lines, SinceLine{Category: CatSourcesLost, Item: g.Item, Text: g.String()})
		}
	}
	for _, c := range e.collisionsSince(mark, now) {
		r.Lines = append(r.Lines, c)
	}
	then, cur := e.At(mark, 0), e.At(now, 0)
	past := func(f Fleet) map[string]Claim {
		m := map[string]Claim{}
		for _, c := range f.Claims {
			if c.State == ClaimPastExpiry {
				m[c.Lease] = c
			}
		}
		return m
	}
	pThen, pNow := past(then), past(cur)
	for _, c := range cur.Claims {
		if _, was := pThen[c.Lease]; c.State == ClaimPastExpiry && !was {
			r.Lines = append(
				r.Lines,
				SinceLine{Category: CatNewOrphans, At: c.Expires, Item: c.Item, Session: c.Session,
					Text: fmt.Sprintf(
						"%s: lease %s of %s passed its expiry %s and is still active",
						c.Item,
						c.Lease,
						c.Session,
						stamp(c.Expires),
					)},
			)
		}
	}
	for _, c := range then.Claims {
		if _, still := pNow[c.Lease]; c.State == ClaimPastExpiry && !still {
			r.Lines = append(r.Lines, SinceLine{Category: CatClearedOrphans, Item: c.Item, Session: c.Session,
				Text: fmt.Sprintf(
					"%s: lease %s of %s, past its expiry when you left, %s",
					c.Item,
					c.Lease,
					c.Session,
					e.fate(c.Lease),
				)})
		}
	}
	routine := map[Kind]int{}
	for _, en := range e.Entries {
		if en.At.IsZero() || !en.At.After(mark) || en.At.After(now) {
			continue
		}
		line := SinceLine{At: en.At, Item: en.Item, Session: en.Session, Ref: en.Ref}
		switch {
		case en.Source == SourceAudit && en.Result == "unknown" && !strings.HasSuffix(en.Ref, "/resolution"):
			line.Category, line.Text = catUnknown, en.Item.String()+": "+en.Text+" (attempt "+en.Attempt+", by "+en.Actor+")"
		case en.Source == SourceAudit && strings.HasPrefix(en.Text, "clarification.answer succeeded"):
			line.Category, line.Text = catAnswers, en.Item.String()+": answered by "+en.Actor
		case en.Source == SourceAudit && en.Result == "succeeded" && supervisorActions[actionOf(en.Text)]:
			line.Category = CatRecoveries
			if self != "" && en.Actor == self {
				line.Category = CatYours
			}
			line.Text = en.Item.String() + ": " + actionOf(en.Text) + " by " + en.Actor
			if en.Item.Zero() {
				line.Text = actionOf(en.Text) + " by " + en.Actor
			}
		case en.Source == SourceEvents || en.Source == SourceLeases:
			routine[en.Kind]++
			continue
		default:
			continue
		}
		r.Lines = append(r.Lines, line)
	}
	var kinds []string
	routineKinds := []Kind{
		KindClaim,
		KindHeartbeat,
		KindRelease,
		KindRefused,
		KindReclaim,
		kindAbandon,
		kindExpire,
		kindEvent,
	}
	for _, k := range routineKinds {
		if n := routine[k]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
		}
	}
	if len(kinds) > 0 {
		r.Lines = append(
			r.Lines,
			SinceLine{Category: CatRoutine, Text: "control-plane events: " + strings.Join(kinds, ", ")},
		)
	}
	slices.SortStableFunc(r.Lines, func(a, b SinceLine) int {
		return slices.Index(categories, a.Category) - slices.Index(categories, b.Category)
	})
	return r
}

// actionOf is the action an audit entry's text starts with.
func actionOf(text string) string {
	a, _, _ := strings.Cut(text, " ")
	return a
}

// fate says how a lease ended, as its span tells it.
func (e *Evidence) fate(lease string) string {
	for _, sp := range e.Leases {
		if sp.Lease != lease {
			continue
		}
		switch {
		case !sp.Ended:
			return "is no longer past its expiry (renewed)"
		case sp.End.IsZero():
			return "ended (" + sp.Status + ") at an unrecorded time"
		default:
			s := "ended " + stamp(sp.End) + " (" + sp.Status
			if sp.Reason != "" {
				s += ", " + sp.Reason
			}
			return s + ")"
		}
	}
	return "is no longer known"
}

// collisionsSince lists the items on which two sessions held live leases at one instant
// after mark.
func (e *Evidence) collisionsSince(mark, now time.Time) []SinceLine {
	var out []SinceLine
	byItem := map[Item][]LeaseSpan{}
	var order []Item
	for _, sp := range e.Leases {
		k := sp.Item.Key()
		if _, ok := byItem[k]; !ok {
			order = append(order, k)
		}
		byItem[k] = append(byItem[k], sp)
	}
	for _, k := range order {
		ls := byItem[k]
		slices.SortFunc(ls, func(a, b LeaseSpan) int { return a.Start.Compare(b.Start) })
		for i, x := range ls {
			for _, y := range ls[i+1:] {
				if xe := spanEnd(x, now); xe.IsZero() || !y.Start.Before(xe) {
					break
				}
				if x.Session != y.Session && overlap(x, y, mark, now) {
					out = append(out, SinceLine{Category: catCollisions, At: maxTime(x.Start, y.Start), Item: x.Item,
						Text: fmt.Sprintf(
							"%s: %s and %s both held live leases (%s, %s)",
							x.Item,
							x.Session,
							y.Session,
							x.Lease,
							y.Lease,
						)})
				}
			}
		}
	}
	return out
}
