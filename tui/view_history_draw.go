package tui

import (
	"fmt"
	"strings"
	"time"

	"steward/history"
)

// View draws the view in its room.
func (h *historyView) View() string {
	w, ht := h.w, h.h
	var lines []string
	switch {
	case h.loading:
		lines = []string{
			st.title.Render("History"),
			"reading the evidence (events, leases, locks with retired/, the audit log) …",
		}
	case h.err != "":
		lines = []string{st.title.Render("History"), st.bad.Render("history unavailable: " + line(h.err))}
	case h.tl != nil:
		return fitLines(h.timelineLines(ht), w, ht, 0)
	default:
		head := st.title.Render("History") + " · " + st.badge.Render(" as of "+history.Stamp(h.cursor)+", reconstructed ") +
			" · read " + history.Stamp(h.ev.Read) + " · actions disabled"
		var tabs []string
		for i, n := range histModeNames {
			if n == "Heatmap" {
				n += " " + shortDur(histWindows[h.window])
			}
			if histMode(i) == h.mode {
				tabs = append(tabs, st.tabOn.Render(" "+n+" "))
			} else {
				tabs = append(tabs, st.tabOff.Render(" "+n+" "))
			}
		}
		lines = []string{head, strings.Join(tabs, "") + st.dim.Render("  step "+shortDur(histSteps[h.step]))}
		switch h.mode {
		case histFleet:
			lines = append(lines, h.fleetLines()...)
		case histHeat:
			lines = append(lines, heatLines(h.heat(), h.hs, h.hi, w, ht-2)...)
		case histSince:
			lines = append(lines, h.sinceLines()...)
		}
	}
	return fitLines(lines, w, ht, h.scroll)
}

// fit cuts lines to the box, scrolled (the first two lines, the view's head, stay).
func fitLines(lines []string, w, ht, scroll int) string {
	if len(lines) > ht {
		keep := min(2, len(lines))
		body := lines[keep:]
		scroll = min(scroll, max(len(body)-(ht-keep), 0))
		end := min(scroll+ht-keep, len(body))
		lines = append(lines[:keep:keep], body[scroll:end]...)
	}
	for i := range lines {
		lines[i] = pad(truncate(lines[i], w), w)
	}
	return strings.Join(lines, "\n")
}

func shortDur(d time.Duration) string {
	if d >= time.Hour && d%time.Hour == 0 {
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return fmt.Sprintf("%dm", d/time.Minute)
}

func (h *historyView) fleetLines() []string {
	fl := h.ev.At(h.cursor, 15*time.Minute)
	out := []string{st.bold.Render(fmt.Sprintf("Claims live then (%d)", len(fl.Claims)))}
	h.sel = min(h.sel, max(len(fl.Claims)-1, 0))
	for i, c := range fl.Claims {
		state := string(c.State)
		switch c.State {
		case history.ClaimHeld:
			state = "held, expires " + hms(c.Expires)
		case history.ClaimPastExpiry:
			state = st.bad.Render("PAST EXPIRY " + hms(c.Expires))
		case history.ClaimExpiryUnknown:
			state = st.warn.Render("expiry then unknown")
		case history.ClaimLockOnly:
			state = st.warn.Render("lock only")
		}
		s := fmt.Sprintf("%-20s %-14s since %s  %s", line(c.Item.String()), line(c.Session), hms(c.Since), state)
		if !c.Ended.IsZero() {
			s += st.dim.Render("  ended " + history.Stamp(c.Ended))
		}
		if i == h.sel {
			s = st.sel.Render("▌") + s
		} else {
			s = " " + s
		}
		out = append(out, s)
	}
	if len(fl.Collisions) == 0 {
		out = append(out, "Collisions: none")
	}
	for _, c := range fl.Collisions {
		out = append(
			out,
			st.bad.Render("Collision: "+line(c.Item.String())+" held by "+line(strings.Join(c.Sessions, " and "))),
		)
	}
	ref := "Refused in the 15m before:"
	if len(fl.Contention) == 0 {
		ref += " none"
	}
	out = append(out, ref)
	for _, c := range fl.Contention {
		out = append(
			out,
			fmt.Sprintf("  %-20s %d (%s)", line(c.Item.String()), c.Refusals, line(strings.Join(c.Sessions, ", "))),
		)
	}
	out = append(out, st.warn.Render("Unknown then:"))
	for _, u := range fl.Unknown {
		out = append(out, "  - "+line(u))
	}
	return out
}

// hms is an instant as hh:mm:ss (the day is in the header).
func hms(t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	return t.UTC().Format("15:04:05")
}

func (h *historyView) sinceLines() []string {
	h.sawSince = true
	r := h.since()
	what := "Since you left (" + history.Stamp(r.Since) + ")"
	if !h.hasMark {
		what = "No last-seen mark yet: the last 24 hours (" + history.Stamp(r.Since) + ")"
	}
	out := []string{st.bold.Render(what)}
	if len(r.Lines) == 0 {
		out = append(out, "  nothing recorded changed")
	}
	h.sel = min(h.sel, max(len(r.Lines)-1, 0))
	var cat history.Category
	for i, l := range r.Lines {
		if l.Category != cat {
			cat = l.Category
			out = append(out, st.colHead.Render(string(cat)))
		}
		s := line(l.Text)
		if !l.At.IsZero() {
			s = hms(l.At) + "  " + s
		}
		if i == h.sel {
			s = st.sel.Render("▌") + s
		} else {
			s = " " + s
		}
		out = append(out, s)
	}
	return out
}

func (h *historyView) timelineLines(ht int) []string {
	tl := h.tl
	out := []string{
		st.title.Render(
			"Timeline of "+line(h.tlName),
		) + fmt.Sprintf(
			" · %d entries",
			len(tl.Entries),
		) + st.dim.Render(
			" · j/k scroll · esc back",
		),
		"",
	}
	// Only the lines on screen are drawn: a timeline may hold tens of thousands of entries.
	total := len(tl.Entries) + 1 + len(tl.Gaps)
	h.scroll = min(h.scroll, max(total-(ht-2), 0))
	for i := h.scroll; i < total && len(out) < ht; i++ {
		switch {
		case i < len(tl.Entries):
			e := tl.Entries[i]
			who := e.Session
			if e.Actor != "" && e.Actor != e.Session {
				who = strings.Trim(who+" ("+e.Actor+")", " ")
			}
			out = append(out, fmt.Sprintf("%s %-6s %-9s %-12s %s", hms(e.At), e.Source, e.Kind, line(who), line(e.Text)))
		case i == len(tl.Entries):
			out = append(out, st.warn.Render("Gaps (evidence missing, not \"nothing happened\"):"))
		default:
			out = append(out, "  "+line(tl.Gaps[i-len(tl.Entries)-1].String()))
		}
	}
	return out
}
