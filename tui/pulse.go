package tui

import (
	"fmt"
	"strings"
	"time"

	"steward/attention"
)

// pulseWindow is how far back the header's pulse looks.
const pulseWindow = 10 * time.Minute

// pulse is the at-a-glance health the header shows: claims, refused claims
// and new orphans per minute over the last ten minutes, and how long the oldest
// human-required entry has waited.
type pulse struct {
	claims, refused, orphans int
	// span is the time the counts cover: the window, or less when the snapshot's events
	// (the newest 200 of the control plane) begin later than its start.
	span time.Duration
	// oldest is the age of the oldest human-required entry still there (acknowledged or
	// snoozed ones too: that answers nothing); ok false when there is none.
	oldest time.Duration
	ok     bool
}

// pulseOf counts d's control-plane events (lease.claim, claim.refused) and the orphans a
// tracker saw appear within the window before now.
func pulseOf(d *data, a *attn, now time.Time) pulse {
	p := pulse{span: pulseWindow}
	from := now.Add(-pulseWindow)
	var first time.Time
	for _, e := range d.Events {
		if e.At.IsZero() || e.At.After(now) {
			continue
		}
		if first.IsZero() || e.At.Before(first) {
			first = e.At
		}
		if e.At.Before(from) {
			continue
		}
		switch e.Kind {
		case "lease.claim":
			p.claims++
		case "claim.refused":
			p.refused++
		}
	}
	if len(d.Events) > 0 && first.After(from) {
		p.span = max(now.Sub(first), time.Minute)
	}
	for _, t := range a.appeared {
		if !t.Before(from) {
			p.orphans++
		}
	}
	if !a.oldest.IsZero() {
		p.oldest, p.ok = max(now.Sub(a.oldest), 0), true
	}
	return p
}

// line draws the pulse in as few words as fit w cells: per minute over its span, and the
// oldest human-required age ("—" when nothing waits); "" when not even that fits.
func (p pulse) line(w int) string {
	rate := func(n int) string { return fmt.Sprintf("%.1f", float64(n)/p.span.Minutes()) }
	span := ""
	if p.span < pulseWindow {
		span = " (last " + age(p.span) + ")"
	}
	oldest := "—"
	if p.ok {
		oldest = age(p.oldest)
	}
	for _, s := range []string{
		fmt.Sprintf("per min%s: %s claims, %s refused, %s new orphans · oldest human-required %s",
			span, rate(p.claims), rate(p.refused), rate(p.orphans), oldest),
		fmt.Sprintf("/min: %s claims %s refused %s orphans · oldest %s",
			rate(p.claims), rate(p.refused), rate(p.orphans), oldest),
		"oldest waiting " + oldest, "oldest " + oldest,
	} {
		if len([]rune(s)) <= w {
			return s
		}
	}
	return ""
}

// sawAppear keeps when orphans appeared within the pulse's window, one per orphaned thing
// (its item, else its lease and lock file; each item of a dead worker's incident): a dead
// worker's lease and lock, or an orphan whose kind changes, are one new orphan. It counts an
// orphan entering after the first snapshot, or one whose evidence says when it began —
// never one the first snapshot found with no time of its own (when it began is not known).
func (a *attn) sawAppear(evs []attention.Event, now time.Time, first bool) {
	from := now.Add(-pulseWindow)
	if a.appeared == nil {
		a.appeared = map[string]time.Time{}
	}
	for k, t := range a.appeared {
		if t.Before(from) {
			delete(a.appeared, k)
		}
	}
	for _, e := range evs {
		k := e.Entry.Kind
		if e.Type != attention.EventEntered || k != attention.KindOrphan && k != attention.KindIncident ||
			(first && e.Entry.SinceFrom == attention.SinceFirstSeen) {
			continue
		}
		things := e.Entry.Items // a dead worker's incident: each item it held
		if len(things) == 0 {
			thing := e.Entry.Item
			if thing == "" {
				_, rest, _ := strings.Cut(strings.TrimPrefix(e.Entry.Key, "orphan:"), ":")
				thing = rest
			}
			things = []string{thing}
		}
		for _, thing := range things {
			if _, ok := a.appeared[thing]; !ok && !e.Entry.Since.Before(from) {
				a.appeared[thing] = e.Entry.Since
			}
		}
	}
}
