package cli

import (
	"bytes"
	"context"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"steward/govern"
	"steward/sim"
	"steward/tui"
)

// TestDemoWorkbenchShowsLiveClaims runs the demo's fleet at 6x the default speed under
// teatest and waits for the Claims page to show the simulated workers' claims.
func TestDemoWorkbenchShowsLiveClaims(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d, err := sim.NewDemo(ctx, sim.DemoOptions{Parent: t.TempDir(), Seed: 3, Speed: sim.DefaultSpeed * 6})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	wb, err := newDemoWorkbench(ctx, d, govern.RoleOperator, govern.Options{}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer wb.close()
	ran := make(chan error, 1)
	go func() { _, err := d.Run(ctx, 5*time.Second); ran <- err }()
	tm := teatest.NewTestModel(t, tui.New(wb.opts), teatest.WithInitialTermSize(160, 48),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	go func() {
		for s := range wb.sess.Snapshots() {
			tm.Send(tui.SnapshotMsg{Snapshot: s})
		}
	}()
	tm.Send(tea.KeyPressMsg{Code: '2', Text: "2"})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("sim-worker-")) && bytes.Contains(b, []byte("demo/fleet#"))
	}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	cur := wb.sess.Live.Current()
	if cur == nil || len(cur.Claims) == 0 {
		t.Fatalf("the live model has no claims while the screen shows them")
	}
	_ = tm.Quit()
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
}
