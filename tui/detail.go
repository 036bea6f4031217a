package tui

import (
	"fmt"
	"strings"

	"charm.land/glamour/v2"

	"steward/termsafe"
)

// mdCache keeps the last Markdown rendering, so a frame does not re-run glamour.
type mdCache struct {
	key, out string
}

// render returns md (an external string, made safe first) rendered for width w, in the
// light style when light.
func (c *mdCache) render(md string, w int, light bool) string {
	k := fmt.Sprintf("%d\x00%t\x00%s", w, light, md)
	if c.key == k {
		return c.out
	}
	c.key, c.out = k, renderMarkdown(md, w, light)
	return c.out
}

// renderMarkdown renders external Markdown with glamour's dark style (light when light:
// the theme), wrapped at w; on any
// error it falls back to the plain text. The text is made safe before (termsafe.Markdown:
// no control character, and no character reference that decodes to one) and glamour's
// output after (termsafe.Styled: its colours kept, every other sequence dropped — the OSC 8
// hyperlinks it builds from external link targets included; the target stays visible as
// text after the link's own).
func renderMarkdown(md string, w int, light bool) string {
	safe := termsafe.Markdown(md)
	style := "dark"
	if light {
		style = "light"
	}
	r, err := glamour.NewTermRenderer(glamour.WithStandardStyle(style), glamour.WithWordWrap(max(w-4, 20)))
	if err != nil {
		return termsafe.Text(md)
	}
	out, err := r.Render(safe)
	if err != nil {
		return termsafe.Text(md)
	}
	return strings.Trim(termsafe.Styled(out), "\n")
}

// detailView draws the selected row's detail: title, address, what can be done, the
// question, the evidence sections and the item's own timeline — prose wrapped at w, raw JSON
// cut — scrolled (ctrl+d / ctrl+u) within h lines.
func (p *listPage) detailView(w, h int) string {
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
	if r.Recover != nil {
		wrap(plain, "action: ", "recover the whole item in one plan ("+p.env.keys.Act.Recover.Help().Key+")")
	}
	if r.Markdown != "" {
		add("", st.bold.Render("Question"))
		add(strings.Split(p.md.render(r.Markdown, w, p.env.light), "\n")...)
	}
	for _, s := range r.sections(p.env.data.Generated) {
		add("", st.bold.Render(truncate(s.Title, w)))
		if r.LockFile != "" && strings.HasPrefix(s.Title, "Lock file") {
			raw, ok := p.raw[r.LockFile]
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
	if p.scroll > max(len(lines)-h+1, 0) {
		p.scroll = max(len(lines)-h+1, 0)
	}
	lines = lines[p.scroll:]
	if len(lines) > h {
		more := len(lines) - h + 1
		lines = append(lines[:h-1], st.dim.Render(fmt.Sprintf("… %d more lines (%s)", more, p.env.keys.Table.DetailDown.Help().Key)))
	}
	return strings.Join(lines, "\n")
}
