package tui

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"steward/attention"
	"steward/attention/store"
)

// TestFlowRestartNotifiesNothingAgain: a workbench hears a worker's question (the desktop
// notification `entered`), is quit and started again on the attention state it kept beside
// the attention file (store.Saver; app.Session.KeepAttention loads it). The restarted
// workbench does not notify the unchanged question again; when its SLA passes it is
// `escalated` once — the first notification its output holds, so nothing came before it.
// Before the fix the restart notified `entered` again.
func TestFlowRestartNotifiesNothingAgain(t *testing.T) {
	f := newAttnFixture(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl.attention-state-ui.default.json")
	const key, notice = "clarification:acme/widgets#1", "\x1b]777;notify;steward: "
	start := func(restore attention.State) *teatest.TestModel {
		t.Helper()
		tm := startFlow(t, Options{Core: f.core, Source: f.src, AuditPath: f.audit, Now: f.clk.Now, TickEvery: 20 * time.Millisecond,
			Attention: AttentionOptions{Desktop: true, SLAs: attention.SLAs{Clarification: 30 * time.Minute}, Restore: restore, Keep: store.NewSaver(path)}}, f.src)
		// Sent here, not through f.src.ch: an earlier start's forwarder still reads that.
		tm.Send(SnapshotMsg{Snapshot: f.src.build()})
		return tm
	}
	quit := func(tm *teatest.TestModel, seen *bytes.Buffer) string {
		t.Helper()
		tm.Send(tea.QuitMsg{})
		return seen.String() + string(readAll(tm.FinalOutput(t, teatest.WithFinalTimeout(5*time.Second))))
	}
	var seen bytes.Buffer
	tm := start(attention.State{})
	waitOutput(t, tm, &seen, notice+"entered")
	waitKept(t, path, key, 0)
	if out := quit(tm, &seen); strings.Count(out, notice) != 1 {
		t.Fatalf("first start: %d notifications; want the one entered", strings.Count(out, notice))
	}

	st, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	seen.Reset()
	tm = start(st)
	inboxFrame(t, tm, true)
	// Looked at from another view: on the selected row it would escalate quietly.
	pressAll(tm, "2")
	waitText(t, tm, "Claims ·")
	f.clk.Add(31 * time.Minute)
	waitOutput(t, tm, &seen, notice+"escalated")
	waitKept(t, path, key, 1)
	out := quit(tm, &seen)
	if i := strings.Index(out, notice); !strings.HasPrefix(out[i:], notice+"escalated") || strings.Count(out, notice) != 1 {
		t.Fatalf("restarted on the kept state: %d notifications, the first %q; want only the escalation", strings.Count(out, notice), out[i:min(len(out), i+40)])
	}
}

// waitKept waits until the attention state file at path holds the entry key announced at
// level (the state is kept by a command off the UI goroutine).
func waitKept(t *testing.T, path, key string, level int) {
	t.Helper()
	end := time.Now().Add(20 * time.Second)
	for {
		if st, err := store.Load(path); err == nil {
			for _, r := range st.Entries {
				if r.Entry.Key == key && r.Announced == level {
					return
				}
			}
		}
		if time.Now().After(end) {
			t.Fatalf("the attention state at %s never held %s", path, key)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
