package reliability_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"steward/govern"
	"steward/model"
	"steward/model/live"
	"steward/tui"
)

// TestMain runs the child processes some tests start (the test binary re-executed with
// RELIABILITY_CHILD set), and the tests otherwise.
func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	os.Exit(m.Run())
}

// screen is the workbench as a person sees it: the tui root model fed by a live model's
// snapshots on one goroutine, drawing a frame at the workbench's own cadence and after
// every snapshot. It records every frame's render time, so a test can show the screen
// kept drawing while a source was stuck.
type screen struct {
	mu       sync.Mutex
	last     *model.Snapshot
	frame    string
	frames   int
	maxFrame time.Duration
	cancel   context.CancelFunc
	done     chan struct{}
}

// frameEvery is the drawing cadence (the workbench ticks once a second; the test draws
// more often to see stalls).
const frameEvery = 50 * time.Millisecond

// watch starts drawing live's snapshots with a workbench on core (nil: view only).
func watch(t *testing.T, live *live.Model, core *govern.Core) *screen {
	t.Helper()
	root := tui.New(tui.Options{Core: core})
	root.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	ctx, cancel := context.WithCancel(context.Background())
	s := &screen{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(frameEvery)
		defer tick.Stop()
		snaps := live.Snapshots()
		for {
			select {
			case <-ctx.Done():
				return
			case snap, ok := <-snaps:
				if !ok {
					snaps = nil
					continue
				}
				root.Update(tui.SnapshotMsg{Snapshot: snap})
				s.mu.Lock()
				s.last = snap
				s.mu.Unlock()
			case <-tick.C:
			}
			t0 := time.Now()
			f := ansi.Strip(root.Render())
			d := time.Since(t0)
			s.mu.Lock()
			s.frame, s.frames = f, s.frames+1
			s.maxFrame = max(s.maxFrame, d)
			s.mu.Unlock()
		}
	}()
	t.Cleanup(s.stop)
	return s
}

func (s *screen) stop() {
	s.cancel()
	<-s.done
}

// snapshot is the latest snapshot the screen drew.
func (s *screen) snapshot() *model.Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// stats returns the frames drawn so far and the slowest frame's render time.
func (s *screen) stats() (int, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frames, s.maxFrame
}

// text is the latest frame without styling.
func (s *screen) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frame
}

// waitSnapshot waits until a drawn snapshot satisfies cond.
func (s *screen) waitSnapshot(t *testing.T, d time.Duration, what string, cond func(*model.Snapshot) bool) *model.Snapshot {
	t.Helper()
	var got *model.Snapshot
	waitFor(t, d, what, func() bool {
		got = s.snapshot()
		return got != nil && cond(got)
	})
	return got
}

// keepsDrawing asserts the screen drew at least n more frames within d, none slower than
// the frame budget: the UI goroutine is never blocked on a source.
func (s *screen) keepsDrawing(t *testing.T, n int, d time.Duration) {
	t.Helper()
	start, _ := s.stats()
	waitFor(t, d, "frames", func() bool { f, _ := s.stats(); return f >= start+n })
	if _, worst := s.stats(); worst > frameBudget {
		t.Fatalf("a frame took %s to render (budget %s)", worst, frameBudget)
	}
}

// frameBudget is the slowest a frame may render, with the race detector on.
const frameBudget = 500 * time.Millisecond

// claimsOf lists the lease ids and lock files of a snapshot's claims.
func claimsOf(s *model.Snapshot) string {
	var out []string
	for _, c := range s.Claims {
		out = append(out, c.LeaseID+"|"+c.LockFile)
	}
	return strings.Join(out, ",")
}
