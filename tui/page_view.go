package tui

import (
	"fmt"
	"strings"
)

// View draws the page's head, its status line, its honesty banner and the visible rows, with
// the detail beside or below them.
func (p *listPage) View() string {
	var b strings.Builder
	if p.head != nil {
		b.WriteString(p.head(p))
		b.WriteByte('\n')
	}
	b.WriteString(p.statusLine())
	b.WriteByte('\n')
	body := p.body()
	if p.detail && p.tbl.selected() != nil {
		if p.split() {
			dw := p.width - p.tbl.width - 1
			body = joinColumns(body, p.detailView(dw, p.tbl.height+1), p.tbl.width)
		} else {
			body += "\n" + p.detailView(p.width, p.height-p.tbl.height-3)
		}
	}
	b.WriteString(body)
	return b.String()
}

func (p *listPage) statusLine() string {
	d := p.env.data
	parts := []string{st.title.Render(pageTitles[p.id])}
	parts = append(parts, fmt.Sprintf("%d of %d", len(p.tbl.view), len(p.tbl.rows)))
	if w := p.window(); w != "" {
		parts = append(parts, w)
	}
	if p.filtering {
		parts = append(parts, st.mark.Render("filter:")+" "+p.filter.view(24))
	} else if f := p.filter.String(); f != "" {
		parts = append(parts, "filter: "+truncate(f, 24))
	}
	switch {
	case p.tbl.sortCol >= 0:
		parts = append(parts, "sort: "+p.tbl.cols[p.tbl.sortCol].Title+map[bool]string{false: "↑", true: "↓"}[p.tbl.desc])
	case p.id != pageActivity:
		parts = append(parts, "sort: attention")
	}
	if n := len(p.tbl.marks); n > 0 {
		_, hidden := p.tbl.marked()
		m := fmt.Sprintf("%d marked", n)
		if hidden > 0 {
			m += fmt.Sprintf(" (%d hidden by the filter)", hidden)
		}
		parts = append(parts, st.mark.Render(m))
	}
	if p.gone != "" {
		parts = append(parts, st.warn.Render(p.gone+" left the snapshot; now on its neighbour"))
	}
	if d.Loaded && p.head == nil {
		parts = append(parts, st.dim.Render("snapshot "+since(d.Generated, p.env.now)+" old"))
	}
	return truncate(strings.Join(parts, " · "), p.width)
}

// window says when the rows are a window of a longer history.
func (p *listPage) window() string {
	if p.id != pageActivity {
		return ""
	}
	d := p.env.data
	var parts []string
	if d.EventsTotal > len(d.Events) {
		parts = append(parts, fmt.Sprintf("events: last %s of %s", thousands(len(d.Events)), thousands(d.EventsTotal)))
	}
	if d.AuditTotal > len(d.Audit) {
		parts = append(parts, fmt.Sprintf("audit: last %s of %s", thousands(len(d.Audit)), thousands(d.AuditTotal)))
	}
	if !p.heartbeats && d.heartbeatsFolded > 0 {
		parts = append(parts, fmt.Sprintf("%d heartbeat(s) folded (%s)", d.heartbeatsFolded, p.env.keys.Table.Heartbeats.Help().Key))
	}
	return strings.Join(parts, " · ")
}

// body is the table, or the words that say why there is none.
func (p *listPage) body() string {
	d := p.env.data
	if !d.Loaded {
		return st.warn.Render("waiting for the first snapshot…")
	}
	var down, partial []string
	for _, name := range pageSources[p.id] {
		h := d.source(name)
		switch {
		case !h.usable():
			down = append(down, name+" "+strings.ReplaceAll(h.State, "_", " ")+reason(h.Reason))
		case h.State == "degraded":
			partial = append(partial, name+" degraded"+reason(h.Reason))
		}
	}
	srcs := pageSources[p.id]
	if len(srcs) > 0 && len(down) == len(srcs) {
		return st.bad.Render(wrapText("unavailable — "+strings.Join(down, "; "), p.width))
	}
	var banner string
	if len(down)+len(partial) > 0 {
		banner = st.warn.Render(truncate("partial — "+strings.Join(append(down, partial...), "; "), p.width)) + "\n"
	}
	switch {
	case len(p.tbl.rows) == 0 && banner != "":
		return banner + "none found (partial inventory)"
	case len(p.tbl.rows) == 0 && p.id == pageOverview && d.routine > 0:
		return fmt.Sprintf("nothing needs attention (%d routine hidden; h shows them)", d.routine)
	case len(p.tbl.rows) == 0:
		return "none"
	case len(p.tbl.view) == 0:
		return banner + fmt.Sprintf("no row matches the filter %q (%d hidden)", p.filter.String(), len(p.tbl.rows))
	}
	return banner + p.tbl.View(p.env.now)
}

func reason(r string) string {
	if r == "" {
		return ""
	}
	return ": " + r
}

// joinColumns puts right beside left, left padded to lw cells.
func joinColumns(left, right string, lw int) string {
	ll := strings.Split(left, "\n")
	rl := strings.Split(right, "\n")
	n := max(len(ll), len(rl))
	var b strings.Builder
	for i := 0; i < n; i++ {
		var l, r string
		if i < len(ll) {
			l = ll[i]
		}
		if i < len(rl) {
			r = rl[i]
		}
		b.WriteString(pad(l, lw))
		b.WriteString(st.dim.Render("│"))
		b.WriteString(r)
		if i < n-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// thousands writes n with thousands separators: 14,312.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
