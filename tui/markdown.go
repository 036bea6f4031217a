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
