package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"steward/govern"
	"steward/govern/actionid"
	"steward/sim"
	"steward/tui"
)

// screenProbe asks the program's event loop for the current screen (demoScreenFilter).
type screenProbe struct{ ch chan string }

func demoScreenFilter(m tea.Model, msg tea.Msg) tea.Msg {
	if p, ok := msg.(screenProbe); ok {
		p.ch <- ansi.Strip(m.(*tui.Root).Render())
		return nil
	}
	return msg
}

// waitScreen waits until the screen satisfies ok (a minute: a hang detector, not a budget).
func waitScreen(t *testing.T, tm *teatest.TestModel, what string, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	last := ""
	for time.Now().Before(deadline) {
		ch := make(chan string, 1)
		tm.Send(screenProbe{ch})
		select {
		case last = <-ch:
			if ok(last) {
				return last
			}
		case <-time.After(time.Second):
		}
		time.Sleep(20 * time.Millisecond) // poll interval between probes, not a synchronisation
	}
	t.Fatalf("the screen never showed %s; last:\n%s", what, last)
	return ""
}

// TestDemoAttentionFlow: the whole attention path, end to end: a worker of the demo's
// simulation asks a
// question → the demo's workbench writes the bell and the desktop notification (OSC 9 and
// 777) for it once → A on its inbox row asks the core for the preview of attention.ack →
// applied, it leaves the inbox → the demo's audit log has the attention.ack and the mark is
// beside it. The fleet is one worker that always asks; it is stopped after its first
// question, so the question is the demo's only attention entry.
func TestDemoAttentionFlow(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runCtx, stopFleet := context.WithCancel(ctx)
	var asked atomic.Int64
	d, err := sim.NewDemo(ctx, sim.DemoOptions{Parent: t.TempDir(), Seed: 3, Speed: sim.DefaultSpeed * 2, Workers: 1,
		Rates: &sim.Rates{Ask: 1}, OnEvent: func(e sim.Event) {
			if e.Kind == sim.EventQuestion && asked.CompareAndSwap(0, e.Item) {
				stopFleet()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	wb, err := newDemoWorkbench(ctx, d, govern.RoleOperator, govern.Options{}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer wb.close()
	if a := wb.opts.Attention; !a.Bell || !a.Desktop || a.SLAs.Clarification != time.Duration(float64(time.Hour)/d.Speed()) || len(a.Command.Argv) != 0 {
		t.Fatalf("the demo's attention options: %+v", a)
	}
	ran := make(chan error, 1)
	go func() { _, err := d.Run(runCtx, 2*time.Minute); ran <- err }()
	tm := teatest.NewTestModel(t, tui.New(wb.opts), teatest.WithInitialTermSize(160, 48),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii), tea.WithFilter(demoScreenFilter)))
	go func() {
		for s := range wb.sess.Snapshots() {
			tm.Send(tui.SnapshotMsg{Snapshot: s})
		}
	}()

	// The worker asks; the workbench rings.
	var out bytes.Buffer
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		out.Reset()
		out.Write(b)
		return asked.Load() != 0 && bytes.Contains(b, []byte("\x1b]777;notify;steward: entered;clarification: "+item(d, asked.Load())))
	}, teatest.WithDuration(time.Minute), teatest.WithCheckInterval(20*time.Millisecond))
	it := item(d, asked.Load())
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out.Bytes(), []byte("\a\x1b]9;steward: entered: clarification: "+it)) {
		t.Fatalf("no bell and OSC 9 before the OSC 777:\n%q", out.String())
	}
	waitScreen(t, tm, "the question in the inbox", func(s string) bool { return strings.Contains(s, it) && strings.Contains(s, "asks:") })

	// A on its row — the filter "asks" leaves it alone on screen (an unknown outcome the
	// fleet's stop may leave is due before it, and may be about the same item): the core's
	// preview, then Apply.
	for _, k := range []string{"/", "a", "s", "k", "s"} {
		tm.Send(tea.KeyPressMsg{Code: []rune(k)[0], Text: k})
	}
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitScreen(t, tm, "the question alone in the filtered inbox", func(s string) bool {
		return strings.Contains(s, "Overview · 1 of") && strings.Contains(s, "asks:")
	})
	tm.Send(tea.KeyPressMsg{Code: 'A', Text: "A"})
	waitScreen(t, tm, "the preview of attention.ack", func(s string) bool {
		return strings.Contains(s, "acknowledges clarification:"+it+" at level 0") && strings.Contains(s, "Apply")
	})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitScreen(t, tm, "the question gone from the inbox", func(s string) bool {
		return strings.Contains(s, "SUCCEEDED") && strings.Contains(s, "Attention inbox") && !strings.Contains(s, "asks:")
	})

	tm.Send(tea.QuitMsg{})
	all := out.String() + string(readAllOf(tm.FinalOutput(t, teatest.WithFinalTimeout(5*time.Second))))
	if k := strings.Count(all, "\x1b]777;notify;steward: entered;clarification: "+it); k != 1 {
		t.Fatalf("%d desktop notifications of the question, want exactly 1", k)
	}
	if k := strings.Count(all, "\x1b]9;steward: entered: clarification: "+it); k != 1 {
		t.Fatalf("%d OSC 9 notifications of the question, want exactly 1", k)
	}
	recs, _, err := govern.ReadAudit(d.AuditPath)
	if err != nil {
		t.Fatal(err)
	}
	var acked bool
	for _, a := range govern.Attempts(recs) {
		acked = acked || (a.Intent != nil && a.Intent.Action == actionid.AttentionAck && a.Intent.Target.Entry == "clarification:"+it && a.Status() == govern.ResultSucceeded)
	}
	if !acked {
		t.Fatal("no succeeded attention.ack of the question in the demo's audit log")
	}
	if ms, _, _ := govern.ReadAttention(d.AuditPath); len(ms) != 1 || ms[0].Kind != "ack" || ms[0].Entry != "clarification:"+it {
		t.Fatalf("attention file: %+v", ms)
	}
}

func item(d *sim.Demo, n int64) string { return fmt.Sprintf("%s/%s#%d", d.Owner, d.Repo, n) }

func readAllOf(r interface{ Read([]byte) (int, error) }) []byte {
	var b bytes.Buffer
	_, _ = b.ReadFrom(r)
	return b.Bytes()
}
