package reliability_test

import (
	"context"
	"fmt"
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
// every snapshot. It counts the frames, so a test can show the screen kept drawing while a
// source was stuck: frames drawn while a source is held unanswered did not wait on it.
type screen struct {
	mu     sync.Mutex
	last   *model.Snapshot
	frame  string
	frames int
	cancel context.CancelFunc
	done   chan struct{}
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
			f := ansi.Strip(root.Render())
			s.mu.Lock()
			s.frame, s.frames = f, s.frames+1
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

// drawn returns how many frames were drawn so far.
func (s *screen) drawn() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frames
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

// keepsDrawing waits until the screen has drawn n more frames. Called while a source is
// held unanswered, it shows causally that drawing does not wait on that source: the frames
// were drawn before the source answered anything. It measures no time; the wait's limit
// only turns a screen that stopped drawing into a failure instead of a hang.
func (s *screen) keepsDrawing(t *testing.T, n int) {
	t.Helper()
	start := s.drawn()
	waitFor(t, hangLimit, fmt.Sprintf("%d more frames", n), func() bool { return s.drawn() >= start+n })
}

// hangLimit bounds the waits for something that must happen: generous, because it is no
// measure — reaching it means the thing never happened.
const hangLimit = time.Minute

// claimsOf lists the lease ids and lock files of a snapshot's claims.
func claimsOf(s *model.Snapshot) string {
	var out []string
	for _, c := range s.Claims {
		out = append(out, c.LeaseID+"|"+c.LockFile)
	}
	return strings.Join(out, ",")
}
