package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
)

// Notice is what the workbench says over itself when it opens on a workspace it cannot read
// at all (Options.Notice): what is wrong and what to do, until the person closes it. The
// views stay under it, each saying which source is unavailable.
type Notice struct {
	Title string
	Lines []string
}

// noticeView draws a Notice; esc closes it, q quits.
type noticeView struct {
	sized
	noInput
	keys   KeyMap
	n      Notice
	scroll pager
}

func newNotice(keys KeyMap, n Notice) *noticeView {
	return &noticeView{keys: keys, n: Notice{Title: line(n.Title), Lines: safeLines(n.Lines)}}
}

func safeLines(ls []string) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = line(l)
	}
	return out
}

func (v *noticeView) bindings() bindings {
	d, g := v.keys.Dialog, v.keys.Global
	const grp = "Notice"
	return bindings{
		bind(d.ScrollDown, grp, false, nil, func() intent { v.scroll.by(10); return nil }),
		bind(d.ScrollUp, grp, false, nil, func() intent { v.scroll.by(-10); return nil }),
		bind(d.Cancel, grp, true, nil, func() intent { return closeIntent{} }),
		bind(g.Quit, grp, true, nil, func() intent { return cmdIntent{tea.Quit} }),
	}
}

func (v *noticeView) View() string {
	iw := v.inner(100)
	var b []string
	for _, l := range v.n.Lines {
		if l == "" {
			b = append(b, "")
			continue
		}
		b = append(b, hang("", l, iw)...)
	}
	d, g := v.keys.Dialog, v.keys.Global
	foot := st.bold.Render(d.Cancel.Help().Key) + " closes this (the views say what cannot be read)  " +
		st.bold.Render(g.Quit.Help().Key) + " quits"
	out := append(
		[]string{st.warn.Render(truncate(v.n.Title, iw)), ""},
		v.scroll.window(b, max(v.h-6, 3), iw, d.ScrollDown.Help().Key)...)
	out = append(out, "", truncate(foot, iw))
	return st.box.Width(iw + 4).Render(strings.Join(out, "\n"))
}
