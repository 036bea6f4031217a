package tui

import (
	tea "charm.land/bubbletea/v2"
)

// globalBindings are the keys of every view: views, help, palette, refresh, pause, the
// message history, dismiss and quit.
func (r *Root) globalBindings() bindings {
	g := r.env.keys.Global
	const grp = "Global"
	bs := make(bindings, 0, len(g.Views)+10)
	for i, id := range pageOrder {
		bs = append(bs, bind(g.Views[i], "Views", false, nil, func() intent { return cmdIntent{r.show(id)} }))
	}
	step := func(d int) func() intent {
		return func() intent {
			return cmdIntent{r.show(pageOrder[(int(r.cur)+len(pageOrder)+d)%len(pageOrder)])}
		}
	}
	refresh := func() intent {
		r.agen++
		return cmdIntent{tea.Batch(refreshCmd(r.opts.Source), auditCmd(r.opts.AuditPath, r.agen))}
	}
	hist := onlyIf(func() bool { return r.opts.History != nil }, r.opts.ws.historyWhy())
	return append(bs,
		bind(g.NextView, "Views", false, nil, step(1)),
		bind(g.PrevView, "Views", false, nil, step(-1)),
		bind(g.Palette, grp, true, nil, func() intent {
			return pushIntent{newPalette(r.env.keys, paletteEntries(r.env.keys, r.keymap(), r.shown()))}
		}),
		bind(g.Refresh, grp, false,
			onlyIf(func() bool { return r.opts.Source != nil || r.opts.AuditPath != "" }, "no live source to re-read"), refresh),
		bind(g.Pause, grp, false, onlyIf(func() bool { return r.env.data.Loaded }, "there is no snapshot yet"),
			func() intent { r.pause(); return nil }),
		bind(g.Toasts, grp, false, onlyIf(func() bool { return len(r.toasts.history) > 0 }, "no messages yet"),
			func() intent { return pushIntent{newMessages(r.env.keys, r.toasts.history, r.opts.Now())} }),
		bind(g.Dismiss, grp, false, onlyIf(func() bool { return r.toasts.dismissible() },
			"no message to dismiss (a pending one stays until its answer)"),
			func() intent { r.toasts.dismiss(); return nil }),
		bind(g.History, grp, false, hist, func() intent { return cmdIntent{r.openHistory(r.opts, histFleet, false)} }),
		bind(g.Since, grp, false, hist, func() intent { return cmdIntent{r.openHistory(r.opts, histSince, false)} }),
		bind(g.Workspaces, grp, true, r.opts.ws.available(),
			func() intent { return pushIntent{newWSPicker(r.env.keys, r.opts.ws.nav)} }),
		bind(g.Quit, grp, true, nil, func() intent { return cmdIntent{tea.Quit} }),
		bind(g.Help, grp, true, nil,
			func() intent { return pushIntent{newHelp(r.env.keys, helpGroups(r.env.keys, r.keymap(), r.cur))} }),
	)
}

// helpGroups is help's content: the current view's keys first (bs: what applies there now),
// then the global ones, then the keys of the dialogs for reference.
func helpGroups(km KeyMap, bs bindings, cur pageID) []KeyGroup {
	full := bs.FullHelp()
	var out []KeyGroup
	for i, title := range bs.groups() {
		t := title
		if t == "Rows" || t == "Acting" {
			t = cur.title() + ": " + t
		}
		out = append(out, KeyGroup{Title: t, Bindings: full[i]})
	}
	own := map[string]bool{"Views": true, "Global": true, "Rows": true, "Acting": true}
	for _, t := range bs.groups() {
		own[t] = true
	}
	for _, g := range km.Groups() {
		if !own[g.Title] {
			out = append(out, g)
		}
	}
	return out
}

// paletteEntries is everything the palette can run on view p: every binding that applies
// there (with the key that does it, or why it does nothing now), and the view's commands.
func paletteEntries(km KeyMap, bs bindings, p page) []paletteEntry {
	var out []paletteEntry
	for _, b := range bs {
		if b.typing || b.Binding.Help().Key == km.Global.Palette.Help().Key {
			continue
		}
		out = append(out, paletteEntry{label: b.Help().Desc, key: b.Help().Key, why: b.reason(), run: b.run})
	}
	return append(out, p.commands()...)
}

// resize gives every view and dialog its room.
func (r *Root) resize() {
	r.sizedH = r.bodyHeight()
	r.screens.SetSize(r.width, r.sizedH)
	r.stack.setSize(r.width, r.sizedH)
}

// click selects a tab or a row.
func (r *Root) click(m tea.Mouse) tea.Cmd {
	if r.stack.open() {
		return nil
	}
	switch {
	case m.Y == 1:
		if id, ok := r.chrome().tabAt(m.X); ok {
			return r.show(id)
		}
	case m.Y >= headerLines:
		r.shown().click(m.Y - headerLines)
	}
	return nil
}
