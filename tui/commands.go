package tui

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	tea "charm.land/bubbletea/v2"

	"steward/govern"
	"steward/locks"
	"steward/termsafe"
)

// Messages of the root's commands. Each carries its owner (a dialog generation, a toast id,
// a lock file) so that a late answer is dropped instead of applied.
type (
	tickMsg     struct{}
	previewsMsg struct {
		owner int // the action menu's stack id
		opts  []menuOption
	}
	// previewMsg is one preview (an answer's, owned by its editor; a recover plan's, owned
	// by no dialog: 0).
	previewMsg struct {
		owner int
		toast int // the pending toast that says the preview was asked for
		pv    govern.Preview
		err   error
		// from is the row it acts on (subject.go); pvs, hidden and names are a plan read
		// again for several targets (replanCmd), in place of pv.
		from   *subject
		pvs    []govern.Preview
		hidden int
		names  []string
	}
	applyMsg struct {
		toast int
		out   govern.Outcome
	}
	auditMsg struct {
		gen    int
		events []event
		total  int // attempts in the log (events holds the newest maxAudit)
		err    error
	}
	rawMsg struct {
		gen      int
		lockFile string
		raw      string
	}
	openedMsg struct {
		url string
		err error
	}
	// auditDoneMsg is the end of a verify or a human resolution: its toast's new state and
	// words, and every attempt it settled (their unknown toasts are settled too).
	auditDoneMsg struct {
		toast   int
		state   toastState
		text    string
		settled map[string]govern.Result
	}
)

// maxAudit is how many of the newest audit attempts the Activity view holds; the view says
// when the log has more.
const maxAudit = 1000

// cmdTimeout bounds every call into the core from the workbench.
const cmdTimeout = 30 * time.Second

func tickCmd(d time.Duration) tea.Cmd {
	return tea.Tick(d, func(time.Time) tea.Msg { return tickMsg{} })
}

// previewOptionsCmd asks the core for the preview of every request of every option.
func previewOptionsCmd(core *govern.Core, owner int, opts []menuOption) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
		defer cancel()
		out := make([]menuOption, len(opts))
		for i, o := range opts {
			out[i] = o
			if o.editor || o.local != "" {
				continue
			}
			out[i].previews = nil
			for _, req := range o.reqs {
				pv, err := core.Preview(ctx, req)
				if err != nil {
					out[i].errs = append(out[i].errs, err.Error())
					continue
				}
				out[i].previews = append(out[i].previews, pv)
			}
		}
		return previewsMsg{owner: owner, opts: out}
	}
}

// previewCmd previews one request for the dialog owner.
func previewCmd(core *govern.Core, owner, toast int, req govern.Request) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
		defer cancel()
		pv, err := core.Preview(ctx, req)
		return previewMsg{owner: owner, toast: toast, pv: pv, err: err}
	}
}

// applyCmd applies one preview; its toast id owns the answer.
func applyCmd(core *govern.Core, pv govern.Preview, phrase string, toast int) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
		defer cancel()
		return applyMsg{toast: toast, out: core.Apply(ctx, pv, phrase)}
	}
}

// auditCmd reads steward's audit log for the Activity timeline.
func auditCmd(path string, gen int) tea.Cmd {
	if path == "" {
		return nil
	}
	return func() tea.Msg {
		recs, _, err := govern.ReadAudit(path)
		if err != nil {
			return auditMsg{gen: gen, err: err}
		}
		atts := govern.Attempts(recs)
		total := len(atts)
		if len(atts) > maxAudit {
			atts = atts[len(atts)-maxAudit:]
		}
		return auditMsg{gen: gen, events: auditEvents(atts), total: total}
	}
}

// rawCmd reads a lock file's bytes through the locks read API, for the detail pane.
func rawCmd(dir, name string, gen int) tea.Cmd {
	return func() tea.Msg {
		e := locks.ReadFile(dir, filepath.Base(name))
		switch {
		case e.Missing:
			return rawMsg{gen: gen, lockFile: name, raw: "(the file is gone)"}
		case e.Unreadable != nil && len(e.Record.Raw) == 0:
			return rawMsg{gen: gen, lockFile: name, raw: "(unreadable: " + termsafe.Line(string(e.Unreadable.Reason)) + ")"}
		}
		raw := termsafe.Text(string(e.Record.Raw))
		if len(raw) > 16<<10 {
			raw = raw[:16<<10] + "\n… (cut)"
		}
		return rawMsg{gen: gen, lockFile: name, raw: raw}
	}
}

// refreshCmd asks the source for a full re-read.
func refreshCmd(src SnapshotSource) tea.Cmd {
	if src == nil {
		return nil
	}
	return func() tea.Msg { src.Refresh(); return nil }
}

// openCmd opens an address in the browser.
func openCmd(open func(string) error, url string) tea.Cmd {
	return func() tea.Msg { return openedMsg{url: url, err: open(url)} }
}

// verifyCmd runs the core's verifier and reports what it concluded about attempt. The core
// verifies every unknown attempt of the audit log at once (Core.Verify); the toast names the
// selected one and counts the others.
func verifyCmd(core *govern.Core, attempt string, toast int) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
		defer cancel()
		vs, err := core.Verify(ctx)
		return verified(attempt, toast, vs, err)
	}
}

// verified words the verifier's answer for the toast.
func verified(attempt string, toast int, vs []govern.Verification, err error) auditDoneMsg {
	m := auditDoneMsg{toast: toast, settled: map[string]govern.Result{}}
	var mine *govern.Verification
	others, still := 0, 0
	for i := range vs {
		v := &vs[i]
		if v.Result != govern.ResultUnknown {
			m.settled[v.Attempt] = v.Result
		}
		switch {
		case v.Attempt == attempt:
			mine = v
		case v.Result != govern.ResultUnknown:
			others++
		default:
			still++
		}
	}
	id := line(attempt)
	switch {
	case mine == nil && err != nil:
		m.state, m.text = toastFailed, "verify of attempt "+id+" could not run: "+line(err.Error())
		return m
	case mine == nil:
		m.state, m.text = toastNote, "verify: the verifier did not report on attempt "+id+" (settled meanwhile, or no "+
			"intent to verify from); see Activity"
	case mine.Result == govern.ResultUnknown:
		m.state = toastUnknown
		m.text = "verify: attempt " + id + " (" + line(mine.Action) + ") stays UNKNOWN — " + line(mine.Note)
		if len(mine.Evidence) > 0 {
			m.text += ": " + line(mine.Evidence[0])
		}
		m.text += "; R resolves it by hand"
	default:
		m.state = toastState(mine.Result)
		m.text = "verify: attempt " + id + " (" + line(mine.Action) + ") settled as " + string(mine.Result) + " from evidence"
		if len(mine.Evidence) > 0 {
			m.text += ": " + line(mine.Evidence[0])
		}
	}
	if others > 0 {
		m.text += fmt.Sprintf(" (and %d other attempt(s) settled)", others)
	}
	if still > 0 {
		m.text += fmt.Sprintf(" (%d other attempt(s) still unknown)", still)
	}
	if err != nil {
		m.text += "; then the verifier stopped: " + line(err.Error())
	}
	return m
}

// resolveCmd records a human's resolution through the core, which checks the role and that
// the attempt is still unknown; a refusal is shown in the core's words.
func resolveCmd(core *govern.Core, attempt string, res govern.Result, reason string, toast int) tea.Cmd {
	return func() tea.Msg {
		id := line(attempt)
		if err := core.ResolveByHuman(attempt, res, reason); err != nil {
			return auditDoneMsg{
				toast: toast,
				state: toastRefused,
				text:  "resolve by hand of attempt " + id + " refused by the core: " + line(err.Error()),
			}
		}
		return auditDoneMsg{toast: toast, state: toastState(res), settled: map[string]govern.Result{attempt: res},
			text: "attempt " + id + " resolved as " + string(res) + " by a human: " + line(reason)}
	}
}

// previews are the previews the message carries: pvs (a plan read again), else pv.
func (m previewMsg) previews() []govern.Preview {
	if len(m.pvs) > 0 {
		return m.pvs
	}
	return []govern.Preview{m.pv}
}
