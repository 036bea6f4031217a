package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"steward/govern"
)

// intent is what a page or a dialog answers: a sealed set of values that only the root turns
// into state changes and commands (and only the root builds commands that call the core).
type intent interface{ isIntent() }

type (
	// noteIntent is a status-line note (why a key did nothing, what was copied).
	noteIntent struct{ text string }
	// cancelIntent closes the dialog on top with nothing done, and says so.
	cancelIntent struct{}
	// closeIntent closes the dialog on top (help, the palette: nothing to cancel).
	closeIntent struct{}
	// closeThen closes the dialog on top, then does what was chosen in it.
	closeThen struct{ next intent }
	// cmdIntent is a command of the root's own (view switches, refresh, quit).
	cmdIntent struct{ cmd tea.Cmd }
	// pushIntent opens a dialog on top of the stack.
	pushIntent struct{ d dialog }
	// copyIntent copies text through the terminal (OSC 52); what names it for the note.
	copyIntent struct{ what, text string }
	// openIntent opens an address in the browser.
	openIntent struct{ url string }
	// actIntent asks for the action menu of rows.
	actIntent struct {
		rows   []*row
		hidden int // marked rows the filter hides (not included)
	}
	// planIntent asks the core to preview req and shows the plan in the confirm dialog when
	// it arrives (asking is the note meanwhile). owned: the preview belongs to the dialog on
	// top (an answer's, to its editor) and is dropped if that dialog was closed meanwhile.
	planIntent struct {
		req    govern.Request
		asking string
		owned  bool
	}
	// chooseIntent is an option of the action menu.
	chooseIntent struct{ opt menuOption }
	// confirmIntent is the plan the person confirmed: the previews, applied with their typed
	// phrases.
	confirmIntent struct {
		previews []govern.Preview
		phrases  []string
		draft    string // the answer draft the apply sends ("" none)
	}
	// auditIntent asks for the verifier (verify) or the resolve dialog (resolve) on an
	// attempt whose outcome is unknown.
	auditIntent struct {
		kind string // localVerify | localResolve
		att  *attemptRef
	}
	// resolveIntent asks the root to record a human's resolution through the core.
	resolveIntent struct {
		attempt string
		result  govern.Result
		reason  string
	}
	// jumpIntent shows the row key in its own view.
	jumpIntent struct {
		page pageID
		key  string
	}
	// backIntent leaves the view shown for the tab it was opened over (History's esc).
	backIntent struct{}
	// draftIntent closes the answer editor, keeping its text as the item's draft or not.
	draftIntent struct {
		item, text string
		keep       bool
	}
)

func (noteIntent) isIntent()    {}
func (cancelIntent) isIntent()  {}
func (closeIntent) isIntent()   {}
func (closeThen) isIntent()     {}
func (cmdIntent) isIntent()     {}
func (pushIntent) isIntent()    {}
func (copyIntent) isIntent()    {}
func (openIntent) isIntent()    {}
func (actIntent) isIntent()     {}
func (planIntent) isIntent()    {}
func (chooseIntent) isIntent()  {}
func (confirmIntent) isIntent() {}
func (auditIntent) isIntent()   {}
func (resolveIntent) isIntent() {}
func (jumpIntent) isIntent()    {}
func (draftIntent) isIntent()   {}
func (backIntent) isIntent()    {}

// intent turns what a page or a dialog answered into state changes and commands. This is the
// only place that builds commands calling the governed core.
func (r *Root) intent(in intent) tea.Cmd {
	switch in := in.(type) {
	case nil:
	case noteIntent:
		r.note(in.text)
	case cancelIntent:
		r.stack.pop()
		r.note("cancelled — nothing was done")
	case closeIntent:
		r.stack.pop()
	case closeThen:
		r.stack.pop()
		return r.intent(in.next)
	case cmdIntent:
		return in.cmd
	case pushIntent:
		r.push(in.d)
	case copyIntent:
		r.note(in.note())
		return tea.SetClipboard(in.text)
	case openIntent:
		return openCmd(r.opts.OpenURL, in.url)
	case actIntent:
		return r.actionMenu(in)
	case planIntent:
		return r.plan(in)
	case ackIntent:
		return r.intent(r.attn.ack(in.entry, r.opts.Now()))
	case snoozeIntent:
		return r.intent(r.attn.snooze(in, r.opts))
	case chooseIntent:
		return r.choose(in.opt)
	case confirmIntent:
		return r.apply(in)
	case replanIntent:
		return replanCmd(r.opts.Core, in.reqs, in.hidden, in.names, in.from)
	case auditIntent:
		return r.audit(in)
	case resolveIntent:
		return r.intent(r.audits.resolve(&r.toasts, r.opts.Core, in, r.opts.Now()))
	case jumpIntent:
		cmd := r.show(in.page)
		if !r.list().tbl.selectKey(in.key) {
			r.note("the row is no longer in " + in.page.title() + "; it changed since the inbox was drawn")
		}
		return tea.Batch(cmd, r.readRaw())
	case backIntent:
		return r.show(r.cur)
	case draftIntent:
		r.stack.popThrough(func(d dialog) bool { _, ok := d.(*answerEditor); return ok })
		r.note(in.keepIn(r.drafts))
	}
	return nil
}

// keepIn keeps the draft in drafts, or drops it, and says which.
func (in draftIntent) keepIn(drafts map[string]string) string {
	if in.keep {
		drafts[in.item] = in.text
		return "the answer to " + in.item + " is kept as a draft; a opens it again"
	}
	delete(drafts, in.item)
	return "the answer to " + in.item + " was discarded"
}

// note says exactly what was copied, and that the terminal may not support it.
func (in copyIntent) note() string {
	return fmt.Sprintf(
		"copied %s %q to the clipboard through the terminal (OSC 52); a terminal without OSC 52 support copies nothing",
		in.what,
		in.text,
	)
}

// choose acts on an option of the action menu: the verifier or the resolve dialog, the
// answer editor, or the core's preview in the confirm dialog.
func (r *Root) choose(o menuOption) tea.Cmd {
	switch {
	case o.local != "":
		return r.audit(auditIntent{kind: o.local, att: o.attempt})
	case o.editor:
		it := o.reqs[0].Target.Item
		r.push(newAnswerEditor(r.env.keys, it, o.question, o.questionID, r.drafts[it.String()]).styled(r.env.light))
	default:
		r.push(newConfirm(r.env.keys, o.previews, o.hidden, actorOf(r.opts.Core), o.names))
	}
	return nil
}

// apply closes the confirm dialog (and the answer editor under it) and applies every
// allowed preview; each apply's toast owns its answer.
func (r *Root) apply(in confirmIntent) tea.Cmd {
	r.stack.pop()
	if _, ok := r.stack.top().(*answerEditor); ok {
		r.stack.pop()
	}
	cmds := make([]tea.Cmd, 0, len(in.previews))
	for i, pv := range in.previews {
		r.applying++
		id := r.toasts.push(toastPending, pv.Spec.ID+" on "+targetString(pv.Request.Target)+" …", r.opts.Now())
		if in.draft != "" {
			r.sending[id] = in.draft
		}
		cmds = append(cmds, applyCmd(r.opts.Core, pv, in.phrases[i], id))
	}
	return tea.Batch(cmds...)
}

// audit starts the verifier on an unknown attempt or opens the resolve dialog for it. Both
// go through the core; the core, not the workbench, judges the role.
func (r *Root) audit(in auditIntent) tea.Cmd {
	if why := auditBlocked(r.opts.Core != nil, r.audits.busy(), r.applying, in.kind); why != "" {
		r.note(why)
		return nil
	}
	if in.kind == localResolve {
		r.push(newResolveDialog(r.env.keys, in.att, actorOf(r.opts.Core)))
		return nil
	}
	return r.audits.verify(&r.toasts, r.opts.Core, in.att.ID, r.opts.Now())
}

// auditBlocked says why a verify or a resolution cannot start now, "" when it can.
func auditBlocked(core, auditing bool, applying int, kind string) string {
	switch {
	case !core:
		return noCore
	case auditing:
		return "a verify or a resolution is still running; wait for its message"
	case kind == localVerify && applying > 0:
		// The verifier records an attempt with no outcome as interrupted: it would take this
		// workbench's own apply, still running, for a dead one.
		return fmt.Sprintf(
			"%d action(s) of this workbench are still running; verify when they have finished (the verifier would take them "+
				"for interrupted ones)",
			applying,
		)
	}
	return ""
}

// actionMenu opens the action menu for rows and asks the core to preview every action.
func (r *Root) actionMenu(in actIntent) tea.Cmd {
	m := newActionMenu(r.env.keys, in, r.opts.Core)
	id := r.push(m)
	if !m.loading {
		return nil
	}
	return previewOptionsCmd(r.opts.Core, id, m.opts)
}

// plan asks the core to preview a request; previewed shows the plan when it arrives.
func (r *Root) plan(in planIntent) tea.Cmd {
	if r.opts.Core == nil {
		r.note(noCore)
		return nil
	}
	in, refusal := spelled(in)
	if refusal != "" {
		r.note(refusal)
		return nil
	}
	toast := r.toasts.push(toastPending, in.asking, r.opts.Now())
	owner := 0
	if in.owned {
		owner = r.stack.topID()
	}
	// asked after its row left: a plan of the current state
	return withSubject(previewCmd(r.opts.Core, owner, toast, in.req), r.from.again())
}

// previewed shows the core's preview of an answer or a recover plan in the confirm dialog;
// an answer's preview for an editor that was closed meanwhile is dropped. The toast that
// said it was asked for says, in its place, what came of it.
func (r *Root) previewed(m previewMsg) {
	now := r.opts.Now()
	if m.owner != 0 && r.stack.byID(m.owner) == nil {
		r.toasts.set(m.toast, toastNote, "the preview came after its dialog was closed; nothing was done", now)
		return
	}
	if m.err != nil {
		r.toasts.set(m.toast, toastNote, "preview failed: "+line(m.err.Error()), now)
		return
	}
	r.toasts.set(m.toast, toastNote, previewedText(m.previews()), now)
	r.from = m.from
	r.push(newConfirm(r.env.keys, m.previews(), m.hidden, actorOf(r.opts.Core), m.names))
}

// noCore is why nothing acts in a workbench without a governed core.
const noCore = "no governed core: this workbench only shows"

// push opens d on top, in the room of the view, and returns its id.
func (r *Root) push(d dialog) int {
	id := r.stack.push(d, subjectOf(d, r.from))
	r.stack.setSize(r.width, r.bodyHeight())
	return id
}

// previewedText says what came of a preview asked for: "previewed lease.reclaim-expired on
// lease L1 (allowed)", or "(refused: not_active)".
func previewedText(pvs []govern.Preview) string {
	var out []string
	for _, pv := range pvs {
		verdict := "allowed"
		if !pv.Allowed {
			verdict = "refused"
			if pv.Refusal != nil {
				verdict += ": " + line(pv.Refusal.Code)
			}
		}
		out = append(out, "previewed "+line(pv.Spec.ID)+" on "+targetString(pv.Request.Target)+" ("+verdict+")")
	}
	return strings.Join(out, "; ")
}
