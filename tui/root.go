package tui

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"steward/govern"
)

// Root is the workbench's root model. It routes: keys go to the dialog on top of the stack
// or to the view shown (whose declared bindings are matched first), intents come back, and
// only Root turns an intent into a command that calls the governed core.
type Root struct {
	opts Options
	env  *shared
	// screens are the views and which is shown.
	screens
	stack stack
	// from is the row the key (or the answer) being handled acts on: a dialog it opens
	// keeps it (subject.go).
	from     *subject
	agen     int // audit read generation
	asks     askReread
	raw      rawLocks // the selected claim's lock file as read, for its detail
	toasts   toasts
	dcfg     digestCfg // for snapshots digested in Update, with the root's own row cache
	applying int       // applies of this workbench still in flight
	audits   auditRun  // the verify or resolution in flight
	// drafts are unsent answers by item; sending maps an apply's toast to the draft it sends
	// (dropped when the answer was posted).
	drafts  map[string]string
	sending map[int]string
	// paused holds the live view still: snapshots that arrive meanwhile wait in held.
	paused bool
	held   *data
	width  int
	height int
	sizedH int // the body height the pages were last given
	// attn hears attention: the tracker, the marks, what they keep quiet.
	attn *attn
	// help draws the footer (bubbles' help).
	help help.Model
}

var _ tea.Model = (*Root)(nil)

// New returns the workbench's root model for opts.
func New(opts Options) *Root {
	opts = opts.withDefaults()
	r := &Root{opts: opts, raw: rawLocks{got: map[string]string{}}, drafts: map[string]string{}, sending: map[int]string{},
		width: 80, height: 24}
	r.env = &shared{now: opts.Now(), data: &data{Rows: map[pageID][]*row{}}, keys: *opts.Keys, theme: theme(opts.Theme),
		light: opts.Theme == "light", ws: opts.ws, knows: coreKnows(opts.Core), raw: r.raw.got}
	r.dcfg = digestConfig(r.opts)
	r.attn = newAttn(opts.Attention)
	r.screens = newScreens(r.env)
	r.help = newHelpModel()
	r.resize()
	if opts.Notice != nil {
		r.push(newNotice(r.env.keys, *opts.Notice))
	}
	return r
}

// Init starts the countdown ticks and the first audit read.
func (r *Root) Init() tea.Cmd {
	r.agen++
	cmds := []tea.Cmd{
		tickCmd(r.opts.TickEvery), auditCmd(r.opts.AuditPath, r.agen), r.attn.reread(r.opts.AuditPath), r.env.theme.ask(),
	}
	if r.opts.SinceOnStart && r.opts.History != nil {
		cmds = append(cmds, r.openHistory(r.opts, histSince, true))
	}
	return tea.Batch(cmds...)
}

// Update routes one message.
func (r *Root) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := r.update(msg)
	if r.bodyHeight() != r.sizedH {
		r.resize() // the messages take more or fewer lines
	}
	return r, cmd
}

func (r *Root) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		r.width, r.height = msg.Width, msg.Height
		r.resize()
	case tea.BackgroundColorMsg:
		r.env.light = r.env.theme.light(msg, r.env.light)
	case SnapshotMsg:
		return r.update(digestedMsg{msg.Snapshot, digest(msg.Snapshot, r.dcfg)})
	case digestedMsg:
		cmd := r.hear(msg.snap) // first: its inbox is derived with its own entries
		r.setData(msg.data)
		return tea.Batch(r.readRaw(), cmd, r.asks.need(r.env.data, r.opts.AuditPath, &r.agen))
	case tickMsg:
		r.env.now = r.env.data.Clock.At(r.opts.Now())
		r.toasts.expire(r.env.now)
		return tea.Batch(tickCmd(r.opts.TickEvery), r.hear(nil), r.attn.reread(r.opts.AuditPath))
	case marksMsg, notifyDoneMsg, keptMsg:
		return r.hear(msg)
	case previewsMsg:
		if m, ok := r.stack.byID(msg.owner).(*actionMenu); ok {
			return r.intent(m.loaded(msg.opts))
		}
	case previewMsg:
		r.previewed(msg)
	case applyMsg:
		r.applied(msg)
		r.agen++
		return tea.Batch(auditCmd(r.opts.AuditPath, r.agen), refreshCmd(r.opts.Source), r.attn.reread(r.opts.AuditPath))
	case auditDoneMsg:
		r.audits.done(&r.toasts, msg, r.opts.Now())
		r.agen++
		return tea.Batch(auditCmd(r.opts.AuditPath, r.agen), refreshCmd(r.opts.Source))
	case auditMsg:
		if msg.gen == r.agen {
			r.setAudit(msg)
		}
	case histMsg:
		return r.historyRead(msg)
	case seenMsg:
		if msg.err != nil {
			r.note("the last-seen mark was not kept: " + line(msg.err.Error()))
		}
	case rawMsg:
		r.raw.loaded(msg)
	case openedMsg:
		if msg.err != nil {
			r.push(newOpener(r.env.keys, msg.url, line(msg.err.Error())))
		}
	case tea.PasteMsg, tea.MouseWheelMsg:
		return r.input(msg)
	case tea.KeyPressMsg:
		cmd := r.key(msg)
		return tea.Batch(cmd, r.readRaw())
	case tea.MouseClickMsg:
		return r.click(msg.Mouse())
	}
	return nil
}

// key matches a key press against the bindings that apply now: the dialog on top, or the
// page and the global keys; a key none of them has is input (typing).
func (r *Root) key(k tea.KeyPressMsg) tea.Cmd {
	if key.Matches(k, r.env.keys.Global.ForceQuit) {
		return tea.Quit
	}
	bs := r.keymap()
	if d := r.stack.top(); d != nil {
		bs = d.bindings()
	}
	r.from = acting(&r.stack, &r.screens) // the row what the key opens acts on
	if in, ok := bs.press(k); ok {
		return r.intent(in)
	}
	return r.input(k)
}

// input gives a key no binding has, a paste or the wheel to the dialog on top, else to the
// view shown.
func (r *Root) input(msg tea.Msg) tea.Cmd {
	if d := r.stack.top(); d != nil {
		return r.intent(d.input(msg))
	}
	return r.intent(r.shown().input(msg))
}

// keymap is what applies with no dialog open: the view's bindings, then the global ones
// (none while the view takes typing: every other key types).
func (r *Root) keymap() bindings {
	p := r.shown()
	if p.typing() {
		return p.bindings()
	}
	return append(p.bindings(), r.globalBindings()...)
}

// readRaw starts reading the lock file the shown detail wants, if any.
func (r *Root) readRaw() tea.Cmd {
	if r.histOn {
		return nil
	}
	return r.raw.need(r.list().rawWanted(), r.opts.Core)
}

func (r *Root) note(s string) { r.toasts.push(toastNote, s, r.opts.Now()) }

// applied settles an apply's toast; a sent answer's draft is dropped once it was posted.
func (r *Root) applied(m applyMsg) {
	r.applying = max(r.applying-1, 0)
	r.toasts.settle(m.toast, m.out, r.opts.Now())
	if item, ok := r.sending[m.toast]; ok {
		delete(r.sending, m.toast)
		if m.out.Result == govern.ResultSucceeded {
			delete(r.drafts, item)
		}
	}
}

// setData installs a digested snapshot (held while paused): cheap, so it may run in Update.
func (r *Root) setData(d *data) {
	if d == nil {
		return
	}
	if r.paused {
		r.held = d
		return
	}
	r.env.now = d.Clock.At(r.opts.Now())
	d.Audit, d.AuditTotal = r.env.data.Audit, r.env.data.AuditTotal
	d.merge()
	d.Inbox = r.attn.inbox(d)
	r.env.data = d
	r.raw.reset()
	r.setRows()
}

// pause freezes the live view, or resumes it with the newest snapshot held meanwhile.
func (r *Root) pause() {
	r.paused = !r.paused
	if d := r.held; !r.paused && d != nil {
		r.held = nil
		r.setData(d)
	}
}

func (r *Root) setAudit(m auditMsg) {
	if m.err != nil {
		r.note("audit log unreadable: " + line(m.err.Error()))
		return
	}
	d := r.env.data
	d.Audit, d.AuditTotal = m.events, m.total
	d.merge()
	if d.Loaded {
		d.Inbox = r.attn.inbox(d)
	}
	r.setRows()
}

// setRows gives every tab its rows of the snapshot (its data update).
func (r *Root) setRows() { r.stack.refill(&r.screens, r.env.data, r.width, r.bodyHeight()) }

// coreKnows reports whether core has an action (nil has none).
func coreKnows(core *govern.Core) func(string) bool {
	return func(action string) bool {
		if core == nil {
			return false
		}
		_, ok := core.Spec(action)
		return ok
	}
}

// actorOf returns who the workbench acts as (core's actor), zero without a core.
func actorOf(core *govern.Core) govern.Actor {
	if core == nil {
		return govern.Actor{}
	}
	return core.Actor()
}
