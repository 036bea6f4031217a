package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"steward/govern"
)

// Root is the workbench's root model. It routes: messages go to the open dialog or the
// current page, intents come back, and only Root turns an intent into a command that calls
// the governed core.
type Root struct {
	opts     Options
	env      *shared
	pages    map[pageID]*listPage
	cur      pageID
	dialog   dialog
	stash    dialog // the answer editor while its preview is shown
	dgen     int    // dialog generation: previews for an older one are dropped
	agen     int    // audit read generation
	rgen     int    // raw lock read generation
	rawFor   string
	raw      map[string]string
	toasts   toasts
	dcfg     digestCfg // for snapshots digested in Update, with the root's own row cache
	applying int       // applies of this workbench still in flight
	auditing int       // the toast of the verify or resolution in flight, 0 when none
	width    int
	height   int
	snapshot bool
	// hist is the open History view (nil when closed); hgen drops late evidence.
	hist         *historyView
	hgen         int
	sinceOnStart bool
	attn         *attn // attention: the tracker, the marks, what they keep quiet
}

var _ tea.Model = (*Root)(nil)

// New returns the workbench's root model for opts.
func New(opts Options) *Root {
	opts = opts.withDefaults()
	r := &Root{opts: opts, env: &shared{now: opts.Now(), data: &data{Rows: map[pageID][]row{}}, keys: *opts.Keys},
		pages: map[pageID]*listPage{}, raw: map[string]string{}, width: 80, height: 24}
	r.dcfg = digestConfig(r.opts)
	r.attn = newAttn(opts.Attention)
	for _, id := range pageOrder {
		p := newListPage(id, r.env, pageColumns(id))
		if id == pageOverview {
			p.head = overviewHead
		}
		p.raw = r.raw
		r.pages[id] = p
	}
	r.resize()
	return r
}

// Init starts the countdown ticks and the first audit read.
func (r *Root) Init() tea.Cmd {
	r.agen++
	r.attn.mgen++
	cmds := []tea.Cmd{tickCmd(r.opts.TickEvery), auditCmd(r.opts.AuditPath, r.agen), marksCmd(r.opts.AuditPath, r.attn.mgen)}
	if r.opts.SinceOnStart && r.opts.History != nil {
		r.sinceOnStart = true
		cmds = append(cmds, r.openHistory(histSince))
	}
	return tea.Batch(cmds...)
}

// Update routes one message.
func (r *Root) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	n := len(r.toasts.list)
	m, cmd := r.update(msg)
	if len(r.toasts.list) != n {
		r.resize()
	}
	return m, cmd
}

func (r *Root) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		r.width, r.height = msg.Width, msg.Height
		r.resize()
	case SnapshotMsg:
		r.setSnapshot(msg)
		r.attn.snap = msg.Snapshot
		return r, tea.Batch(r.needRaw(), r.observeAttention())
	case digestedMsg:
		r.setData(msg.data)
		r.attn.snap = msg.snap
		return r, tea.Batch(r.needRaw(), r.observeAttention())
	case tickMsg:
		r.env.now = r.opts.Now()
		r.toasts.expire(r.env.now)
		r.attn.mgen++
		return r, tea.Batch(tickCmd(r.opts.TickEvery), r.observeAttention(), marksCmd(r.opts.AuditPath, r.attn.mgen))
	case marksMsg:
		if msg.gen == r.attn.mgen {
			if msg.err != nil {
				r.note("attention file unreadable: " + line(msg.err.Error()))
				return r, nil
			}
			r.attn.marks = msg.marks
			return r, r.observeAttention()
		}
	case notifyDoneMsg:
		if msg.err != nil {
			r.note("notify command: " + line(msg.err.Error()))
		}
	case ackPreviewMsg:
		r.ackPreviewed(msg)
	case previewsMsg:
		if m, ok := r.dialog.(*actionMenu); ok && msg.gen == r.dgen {
			return r, r.intent(m.loaded(msg.opts))
		}
	case answerPreviewMsg:
		return r, r.answerPreviewed(msg)
	case applyMsg:
		r.applying = max(r.applying-1, 0)
		r.toasts.settle(msg.toast, msg.out, r.opts.Now())
		r.agen++
		r.attn.mgen++
		return r, tea.Batch(auditCmd(r.opts.AuditPath, r.agen), refreshCmd(r.opts.Source), marksCmd(r.opts.AuditPath, r.attn.mgen))
	case auditDoneMsg:
		if msg.toast == r.auditing {
			r.auditing = 0
		}
		now := r.opts.Now()
		r.toasts.set(msg.toast, msg.state, msg.text, now)
		r.toasts.settleAttempt(msg.settled, now)
		r.agen++
		return r, tea.Batch(auditCmd(r.opts.AuditPath, r.agen), refreshCmd(r.opts.Source))
	case auditMsg:
		if msg.gen == r.agen {
			r.setAudit(msg)
		}
	case histMsg:
		return r, r.historyLoaded(msg)
	case seenMsg:
		if msg.err != nil {
			r.note("the last-seen mark was not kept: " + line(msg.err.Error()))
		}
	case rawMsg:
		if msg.gen == r.rgen {
			r.raw[msg.lockFile] = msg.raw
		}
	case openedMsg:
		if msg.err != nil {
			r.note("could not open the browser: " + line(msg.err.Error()))
		}
	case tea.PasteMsg:
		if e, ok := r.dialog.(*answerEditor); ok {
			e.paste(msg)
		} else if p := r.page(); p.filtering {
			p.filter.update(tea.KeyPressMsg{Text: msg.Content})
			p.tbl.setFilter(p.filter.String())
		}
	case tea.KeyPressMsg:
		return r, r.key(msg)
	case tea.MouseWheelMsg:
		if r.dialog == nil {
			r.page().Update(msg)
		}
	case tea.MouseClickMsg:
		r.click(msg.Mouse())
	}
	return r, nil
}

func (r *Root) page() *listPage { return r.pages[r.cur] }

func (r *Root) key(k tea.KeyPressMsg) tea.Cmd {
	if k.String() == "ctrl+c" {
		return tea.Quit
	}
	if r.dialog != nil {
		return r.intent(r.dialog.Update(k))
	}
	if r.hist != nil {
		return r.historyKey(k)
	}
	g := r.env.keys.Global
	p := r.page()
	if !p.Filtering() {
		for i, b := range g.Views {
			if key.Matches(k, b) {
				r.cur = pageOrder[i]
				return r.needRaw()
			}
		}
		switch {
		case key.Matches(k, g.Quit):
			return tea.Quit
		case key.Matches(k, g.NextView):
			r.cur = pageOrder[(int(r.cur)+1)%len(pageOrder)]
			return r.needRaw()
		case key.Matches(k, g.PrevView):
			r.cur = pageOrder[(int(r.cur)+len(pageOrder)-1)%len(pageOrder)]
			return r.needRaw()
		case key.Matches(k, g.Help):
			r.open(&helpView{groups: r.helpGroups()})
			return nil
		case key.Matches(k, g.Palette):
			r.open(&palette{keys: r.env.keys.Dialog, cmds: r.paletteCmds()})
			return nil
		case key.Matches(k, g.Refresh):
			r.agen++
			return tea.Batch(refreshCmd(r.opts.Source), auditCmd(r.opts.AuditPath, r.agen))
		case key.Matches(k, g.Dismiss):
			r.toasts.dismiss()
			return nil
		case key.Matches(k, g.History):
			return r.openHistory(histFleet)
		case key.Matches(k, g.Since):
			return r.openHistory(histSince)
		}
	}
	if !p.Filtering() && key.Matches(k, r.env.keys.Table.Ack) {
		return r.ackSelected()
	}
	cmd := r.intent(p.Update(k))
	return tea.Batch(cmd, r.needRaw())
}

// open shows a dialog; a new generation makes answers for the previous one stale.
func (r *Root) open(d dialog) {
	r.dgen++
	r.dialog = d
}

// closeDialog closes the dialog (back to the stashed editor, if any).
func (r *Root) closeDialog() {
	r.dgen++
	r.dialog, r.stash = r.stash, nil
}

func (r *Root) note(s string) { r.toasts.push(toastNote, s, r.opts.Now()) }

// setSnapshot digests a new snapshot and gives every page its rows.
func (r *Root) setSnapshot(m SnapshotMsg) {
	if m.Snapshot == nil {
		return
	}
	r.setData(digest(m.Snapshot, r.dcfg))
}

// setData installs a digested snapshot: cheap, so it may run in Update.
func (r *Root) setData(d *data) {
	if d == nil {
		return
	}
	r.env.now = r.opts.Now()
	d.Audit = r.env.data.Audit
	d.merge()
	d.Inbox = r.inboxOf(d)
	r.env.data = d
	clear(r.raw)
	r.rawFor = ""
	r.snapshot = true
	r.setRows()
}

func (r *Root) setAudit(m auditMsg) {
	if m.err != nil {
		r.note("audit log unreadable: " + line(m.err.Error()))
		return
	}
	d := r.env.data
	d.Audit = m.events
	d.merge()
	if d.Loaded {
		d.Inbox = r.inboxOf(d)
	}
	r.setRows()
}

func (r *Root) setRows() {
	d := r.env.data
	for id, p := range r.pages {
		switch id {
		case pageOverview:
			p.SetRows(d.Inbox)
		case pageActivity:
			p.SetRows(activityRows(d, r.knows))
		default:
			p.SetRows(d.Rows[id])
		}
	}
}

// knows reports whether the core has the action.
func (r *Root) knows(action string) bool {
	if r.opts.Core == nil {
		return false
	}
	_, ok := r.opts.Core.Spec(action)
	return ok
}

// needRaw starts reading the selected claim's lock file when its detail is open.
func (r *Root) needRaw() tea.Cmd {
	p := r.page()
	sel := p.tbl.selected()
	if !p.detail || sel == nil || sel.LockFile == "" || r.opts.Core == nil {
		return nil
	}
	if _, ok := r.raw[sel.LockFile]; ok || r.rawFor == sel.LockFile {
		return nil
	}
	r.rgen++
	r.rawFor = sel.LockFile
	return rawCmd(r.opts.Core.Workspace().LocksDir, sel.LockFile, r.rgen)
}

// Actor returns who the workbench acts as (the core's actor), zero without a core.
func (r *Root) actor() govern.Actor {
	if r.opts.Core == nil {
		return govern.Actor{}
	}
	return r.opts.Core.Actor()
}
