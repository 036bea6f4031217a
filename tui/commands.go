package tui

import (
	"context"
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
		gen  int
		opts []menuOption
	}
	answerPreviewMsg struct {
		gen int
		pv  govern.Preview
		err error
	}
	applyMsg struct {
		toast int
		out   govern.Outcome
	}
	auditMsg struct {
		gen    int
		events []event
		err    error
	}
	rawMsg struct {
		gen      int
		lockFile string
		raw      string
	}
	openedMsg struct{ err error }
)

// cmdTimeout bounds every call into the core from the workbench.
const cmdTimeout = 30 * time.Second

func tickCmd(d time.Duration) tea.Cmd {
	return tea.Tick(d, func(time.Time) tea.Msg { return tickMsg{} })
}

// previewOptionsCmd asks the core for the preview of every request of every option.
func previewOptionsCmd(core *govern.Core, gen int, opts []menuOption) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
		defer cancel()
		out := make([]menuOption, len(opts))
		for i, o := range opts {
			out[i] = o
			if o.editor {
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
		return previewsMsg{gen: gen, opts: out}
	}
}

// answerPreviewCmd previews a clarification answer.
func answerPreviewCmd(core *govern.Core, gen int, req govern.Request) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
		defer cancel()
		pv, err := core.Preview(ctx, req)
		return answerPreviewMsg{gen: gen, pv: pv, err: err}
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
		evs := auditEvents(govern.Attempts(recs))
		return auditMsg{gen: gen, events: evs}
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
	return func() tea.Msg { return openedMsg{err: open(url)} }
}
