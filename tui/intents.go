package tui

import (
	"fmt"
	"sort"

	tea "charm.land/bubbletea/v2"

	"steward/govern"
)

// intent turns what a page or a dialog answered into state changes and commands. This is the
// only place that builds commands calling the governed core.
func (r *Root) intent(in any) tea.Cmd {
	switch in := in.(type) {
	case nil:
		return nil
	case cancelIntent:
		r.closeDialog()
	case noteIntent:
		r.note(in.text)
	case copyIntent:
		r.note("copied " + in.text)
		return tea.SetClipboard(in.text)
	case openIntent:
		return openCmd(r.opts.OpenURL, in.url)
	case actIntent:
		return r.actionMenu(in)
	case chooseIntent:
		r.dialog = nil
		if in.opt.local != "" {
			r.dgen++
			return r.intent(auditIntent{kind: in.opt.local, att: in.opt.attempt})
		}
		if in.opt.editor {
			r.open(newAnswerEditor(r.env.keys.Editor, in.opt.reqs[0].Target.Item, in.opt.question))
			return nil
		}
		r.open(newConfirm(r.env.keys.Dialog, in.opt.previews, in.opt.hidden, r.actor()))
	case answerIntent:
		r.stash = r.dialog
		r.dgen++
		r.note("asking the core to preview the answer…")
		req := govern.Request{Action: actionAnswer, Target: govern.Target{Item: in.item}, Params: map[string]string{"body": in.body}}
		return answerPreviewCmd(r.opts.Core, r.dgen, req)
	case confirmIntent:
		r.dialog, r.stash = nil, nil
		r.dgen++
		cmds := make([]tea.Cmd, 0, len(in.previews))
		for i, pv := range in.previews {
			r.applying++
			id := r.toasts.push(toastPending, pv.Spec.ID+" on "+targetString(pv.Request.Target)+" …", r.opts.Now())
			cmds = append(cmds, applyCmd(r.opts.Core, pv, in.phrases[i], id))
		}
		return tea.Batch(cmds...)
	case paletteIntent:
		r.dialog = nil
		return r.runPalette(in.cmd)
	case auditIntent:
		return r.audit(in)
	case resolveIntent:
		r.dialog, r.stash = nil, nil
		r.dgen++
		if r.auditing != 0 {
			r.note("a verify or a resolution is still running; record this one when it has finished")
			return nil
		}
		r.auditing = r.toasts.push(toastPending, "resolving attempt "+in.attempt+" as "+string(in.result)+" by hand …", r.opts.Now())
		return resolveCmd(r.opts.Core, in.attempt, in.result, in.reason, r.auditing)
	}
	return nil
}

// audit starts the verifier on an unknown attempt or opens the resolve dialog for it. Both
// go through the core; the core, not the workbench, judges the role.
func (r *Root) audit(in auditIntent) tea.Cmd {
	switch {
	case r.opts.Core == nil:
		r.note("no governed core: this workbench only shows")
		return nil
	case r.auditing != 0:
		r.note("a verify or a resolution is still running; wait for its toast")
		return nil
	}
	if in.kind == localResolve {
		r.open(newResolveDialog(r.env.keys.Resolve, in.att, r.actor()))
		return nil
	}
	if r.applying > 0 {
		// The verifier records an attempt with no outcome as interrupted: it would take this
		// workbench's own apply, still running, for a dead one.
		r.note(fmt.Sprintf("%d action(s) of this workbench are still running; verify when they have finished (the verifier would take them for interrupted ones)", r.applying))
		return nil
	}
	r.auditing = r.toasts.push(toastPending, "verifying attempt "+in.att.ID+" from evidence (the core verifies every unknown attempt) …", r.opts.Now())
	return verifyCmd(r.opts.Core, in.att.ID, r.auditing)
}

// actionMenu opens the action menu for rows and asks the core to preview every action.
func (r *Root) actionMenu(in actIntent) tea.Cmd {
	m := &actionMenu{keys: r.env.keys.Dialog, rows: len(in.rows), hidden: in.hidden, loading: true}
	byID := map[string]*menuOption{}
	var order []string
	for _, row := range in.rows {
		if row.Inspect != "" && len(in.rows) == 1 {
			m.inspect = append(m.inspect, row.Inspect)
		}
		for _, a := range row.Actions {
			if a.Req.Action == localVerify || a.Req.Action == localResolve {
				if len(in.rows) == 1 && r.opts.Core != nil && row.Unsettled != nil {
					byID[a.Req.Action] = &menuOption{action: a.Req.Action, title: a.Label, local: a.Req.Action, attempt: row.Unsettled}
					order = append(order, a.Req.Action)
				}
				continue // one attempt at a time
			}
			if !r.knows(a.Req.Action) {
				continue
			}
			o := byID[a.Req.Action]
			if o == nil {
				spec, _ := r.opts.Core.Spec(a.Req.Action)
				o = &menuOption{action: a.Req.Action, title: spec.Title, hidden: in.hidden}
				if o.title == "" {
					o.title = a.Label
				}
				if a.Req.Action == actionAnswer {
					if len(in.rows) > 1 {
						continue // one answer per question
					}
					o.editor, o.question = true, row.Markdown
				}
				byID[a.Req.Action] = o
				order = append(order, a.Req.Action)
			}
			o.reqs = append(o.reqs, a.Req)
		}
	}
	rank := func(id string) int {
		switch id {
		case localVerify:
			return 0
		case localResolve:
			return 1
		}
		return 2
	}
	sort.Slice(order, func(i, j int) bool {
		if a, b := rank(order[i]), rank(order[j]); a != b {
			return a < b
		}
		return order[i] < order[j]
	})
	for _, id := range order {
		m.opts = append(m.opts, *byID[id])
	}
	r.open(m)
	if r.opts.Core == nil {
		m.loading = false
		m.inspect = append(m.inspect, "no governed core: this workbench only shows")
		return nil
	}
	if len(m.opts) == 0 {
		m.loading = false
		return nil
	}
	return previewOptionsCmd(r.opts.Core, r.dgen, m.opts)
}

// answerPreviewed shows the core's preview of an answer in the confirm dialog, with the
// editor kept behind it; a preview for an editor that was closed meanwhile is dropped.
func (r *Root) answerPreviewed(m answerPreviewMsg) tea.Cmd {
	if m.gen != r.dgen || r.stash == nil {
		return nil
	}
	if m.err != nil {
		r.note("preview failed: " + line(m.err.Error()))
		r.dialog, r.stash = r.stash, nil
		return nil
	}
	r.dialog = newConfirm(r.env.keys.Dialog, []govern.Preview{m.pv}, 0, r.actor())
	return nil
}

// helpGroups is help's content: the global keys and the current page's keys as they apply now.
func (r *Root) helpGroups() []KeyGroup {
	all := r.env.keys.Groups()
	page := r.page().KeyMap()
	out := []KeyGroup{all[0], all[1], {Title: "Rows (" + pageTitles[r.cur] + ")", Bindings: page[:12]}, {Title: "Acting", Bindings: page[12:]}}
	return append(out, all[4:]...)
}

// paletteCmds lists everything the palette can run, for the current page.
func (r *Root) paletteCmds() []paletteCmd {
	var out []paletteCmd
	for _, id := range pageOrder {
		out = append(out, paletteCmd{label: "view " + pageTitles[id], verb: "view", page: id})
	}
	out = append(out,
		paletteCmd{label: "refresh the sources", verb: "refresh"},
		paletteCmd{label: "actions for the selected row", verb: "actions"},
		paletteCmd{label: "verify the selected attempt's unknown outcome", verb: "verify"},
		paletteCmd{label: "resolve the selected attempt's unknown outcome by hand", verb: "resolve"},
		paletteCmd{label: "clear the filter", verb: "clear-filter"},
		paletteCmd{label: "clear the marks", verb: "clear-marks"},
		paletteCmd{label: "dismiss the oldest toast", verb: "dismiss"},
		paletteCmd{label: "help", verb: "help"},
		paletteCmd{label: "quit", verb: "quit"},
	)
	for _, c := range r.page().tbl.cols {
		if c.Sort != nil {
			out = append(out, paletteCmd{label: "sort by " + c.Title, verb: "sort", arg: c.Title})
		}
	}
	return out
}

func (r *Root) runPalette(c paletteCmd) tea.Cmd {
	p := r.page()
	switch c.verb {
	case "view":
		r.cur = c.page
	case "refresh":
		r.agen++
		return tea.Batch(refreshCmd(r.opts.Source), auditCmd(r.opts.AuditPath, r.agen))
	case "actions":
		return r.intent(p.actions())
	case "verify":
		return r.intent(p.audit(localVerify))
	case "resolve":
		return r.intent(p.audit(localResolve))
	case "clear-filter":
		p.filter.set("")
		p.tbl.setFilter("")
	case "clear-marks":
		clear(p.tbl.marks)
	case "dismiss":
		r.toasts.dismiss()
	case "help":
		r.open(&helpView{groups: r.helpGroups()})
	case "quit":
		return tea.Quit
	case "sort":
		if !p.tbl.sortBy(c.arg) {
			r.note(fmt.Sprintf("cannot sort by %s here", c.arg))
		}
	}
	return nil
}
