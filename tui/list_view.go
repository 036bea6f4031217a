package tui

import (
	"fmt"
	"slices"
	"strings"

	"steward/govern/actionid"
)

// View draws the page's head, its status line, its honesty banner and the visible rows, with
// the detail beside or below them.
func (p *listView) View() string {
	var b strings.Builder
	if p.head != nil {
		b.WriteString(p.head())
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

func (p *listView) statusLine() string {
	d := p.env.data
	parts := []string{st.title.Render(p.id.title())}
	parts = append(parts, fmt.Sprintf("%d of %d", len(p.tbl.view), len(p.tbl.rows)))
	if p.status != nil {
		parts = append(parts, p.status()...)
	}
	if p.filtering {
		parts = append(parts, st.mark.Render("filter:")+" "+p.filter.view(24))
	} else if f := p.filter.String(); f != "" {
		parts = append(parts, "filter: "+truncate(f, 24))
	}
	switch {
	case p.tbl.sortCol >= 0:
		parts = append(parts, "sort: "+p.tbl.cols[p.tbl.sortCol].Title+map[bool]string{false: "↑", true: "↓"}[p.tbl.desc])
	case p.order != "":
		parts = append(parts, "sort: "+p.order)
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

// body is the table, or the words that say why there is none.
func (p *listView) body() string {
	d := p.env.data
	if !d.Loaded {
		return st.warn.Render("waiting for the first snapshot…")
	}
	var down, partial []string
	srcs := tabInfo[p.id].sources
	for _, name := range srcs {
		h := d.source(name)
		switch {
		case !h.usable():
			down = append(down, name+" "+strings.ReplaceAll(h.State, "_", " ")+reason(h.Reason))
		case h.State == "degraded":
			partial = append(partial, name+" degraded"+reason(h.Reason))
		}
	}
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
	case len(p.tbl.rows) == 0 && p.empty != nil:
		return p.empty()
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

// detailView draws the selected row's detail: title, address, what can be done, the
// question, the evidence sections and the item's own timeline — prose wrapped at w, raw JSON
// cut — scrolled (ctrl+d / ctrl+u) within h lines.
func (p *listView) detailView(w, h int) string {
	r := p.tbl.selected()
	if r == nil || w < 10 || h < 1 {
		return ""
	}
	var lines []string
	add := func(s ...string) { lines = append(lines, s...) }
	wrap := func(style func(...string) string, prefix, text string) {
		for _, l := range hang(prefix, text, w) {
			lines = append(lines, style(l))
		}
	}
	plain := func(s ...string) string { return strings.Join(s, "") }
	if p.gone != "" {
		wrap(st.warn.Render, "", p.gone+" left the snapshot (released, recovered or re-claimed); this is its neighbour.")
	}
	wrap(st.title.Render, "", r.Title)
	if r.URL != "" {
		add(st.dim.Render(truncate(r.URL, w)))
	}
	if r.Next != "" {
		wrap(st.warn.Render, "next — ", r.Next)
	}
	if r.Inspect != "" {
		wrap(st.warn.Render, "inspect only — ", r.Inspect)
	}
	for _, a := range r.Actions {
		s := a.Label
		if a.Allowed != nil && !*a.Allowed {
			s += " (refused: " + a.Refusal + ")"
		}
		wrap(plain, "action: ", s)
	}
	if r.Recover != nil &&
		!slices.ContainsFunc(r.Actions, func(a actionRef) bool { return a.Req.Action == actionid.Recover }) {
		wrap(plain, "action: ", "recover the whole item in one plan ("+p.env.keys.Act.Recover.Help().Key+")")
	}
	if r.Markdown != "" {
		add("", st.bold.Render("Question"))
		add(strings.Split(p.md.render(r.Markdown, w, p.env.light), "\n")...)
	}
	for _, s := range r.sections(p.env.data.Generated) {
		add("", st.bold.Render(truncate(s.Title, w)))
		if r.LockFile != "" && strings.HasPrefix(s.Title, "Lock file") {
			raw, ok := p.env.raw[r.LockFile]
			if !ok {
				raw = "loading…"
			}
			for _, l := range strings.Split(raw, "\n") {
				add(st.dim.Render(truncate(l, w)))
			}
			continue
		}
		for _, l := range s.Lines {
			wrap(plain, "", l)
		}
		if s.Raw != "" {
			for _, l := range strings.Split(s.Raw, "\n") {
				add(st.dim.Render(truncate(l, w)))
			}
		}
	}
	if r.Item != "" {
		add("", st.bold.Render(truncate("Timeline of "+r.Item, w)))
		n := 0
		for _, e := range p.env.data.timeline() {
			if e.Item != r.Item {
				continue
			}
			wrap(plain, since(e.At, p.env.now)+" ago  ", e.Source+"  "+e.Kind+"  "+e.Result+" "+e.Message)
			n++
		}
		if n == 0 {
			add(st.dim.Render("no events for this item"))
		}
	}
	for i := range lines {
		lines[i] = truncate(lines[i], w)
	}
	return strings.Join(p.scroll.window(lines, h, w, p.env.keys.Table.DetailDown.Help().Key), "\n")
}
