// Package headless runs Bubble Tea programs with no terminal, for the benchmark harness: a
// fixed window size, no input, a true-colour profile, and an output (Screen) that notes when
// a frame is written, so that the time from an event to the frame that shows it can be
// measured through the real renderer (its frame ticker and cell diff included).
package headless

import (
	"context"
	"errors"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
)

// ErrNoFrame is returned by Screen.Wait when no frame was written in time: the awaited view
// changed no cell, or the program stalled.
var ErrNoFrame = errors.New("headless: no frame was written")

// Screen is a program's output. Armed by a Probe, it reports the instant the next write
// (the renderer's flush of a changed frame) starts.
type Screen struct {
	mu     sync.Mutex
	armed  bool
	fired  chan time.Time
	writes int
	bytes  int
}

// newScreen returns an unarmed screen.
func newScreen() *Screen { return &Screen{fired: make(chan time.Time, 1)} }

// Write records a frame; the first write after arm is reported to Wait.
func (s *Screen) Write(p []byte) (int, error) {
	now := time.Now()
	s.mu.Lock()
	s.writes++
	s.bytes += len(p)
	armed := s.armed
	s.armed = false
	s.mu.Unlock()
	if armed {
		select {
		case s.fired <- now:
		default:
		}
	}
	return len(p), nil
}

// Stats returns how many writes and bytes the screen received.
func (s *Screen) Stats() (writes, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes, s.bytes
}

// Reset forgets an armed frame and any frame not yet waited for.
func (s *Screen) Reset() {
	s.mu.Lock()
	s.armed = false
	s.mu.Unlock()
	select {
	case <-s.fired:
	default:
	}
}

func (s *Screen) arm() {
	s.mu.Lock()
	s.armed = true
	s.mu.Unlock()
}

// Wait returns the instant the armed frame was written, or ErrNoFrame after timeout.
func (s *Screen) Wait(timeout time.Duration) (time.Time, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case at := <-s.fired:
		return at, nil
	case <-t.C:
		s.mu.Lock()
		s.armed = false
		s.mu.Unlock()
		select { // a frame that raced the timeout
		case at := <-s.fired:
			return at, nil
		default:
		}
		return time.Time{}, ErrNoFrame
	}
}

// Probe wraps a model. After the Update of a message its matcher accepts, the next View arms
// the screen: the next write is the frame that shows that message's effect.
//
// The renderer takes the view just after View returns; a flush of the previous view that
// lands in that window (microseconds, against a frame period of milliseconds) would be taken
// for the frame. The harness accepts that error.
type Probe struct {
	inner   tea.Model
	screen  *Screen
	mu      sync.Mutex
	match   func(tea.Msg) bool
	pending bool // owned by the event loop
}

var _ tea.Model = (*Probe)(nil)

// newProbe wraps m, arming s.
func newProbe(m tea.Model, s *Screen) *Probe { return &Probe{inner: m, screen: s} }

// Expect sets the matcher of the message to time; it fires once.
func (p *Probe) Expect(match func(tea.Msg) bool) {
	p.mu.Lock()
	p.match = match
	p.mu.Unlock()
}

// Init initialises the wrapped model.
func (p *Probe) Init() tea.Cmd { return p.inner.Init() }

// Update forwards msg, noting whether it is the awaited one.
func (p *Probe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	p.mu.Lock()
	if p.match != nil && p.match(msg) {
		p.pending, p.match = true, nil
	}
	p.mu.Unlock()
	m, cmd := p.inner.Update(msg)
	p.inner = m
	return p, cmd
}

// View draws the wrapped model and arms the screen after the awaited Update.
func (p *Probe) View() tea.View {
	v := p.inner.View()
	if p.pending {
		p.pending = false
		p.screen.arm()
	}
	return v
}

// Program is a running headless program.
type Program struct {
	*tea.Program
	Probe  *Probe
	Screen *Screen
	done   chan error
}

// Options size the headless terminal.
type Options struct {
	Width, Height int
	// FPS is the renderer's frame rate; 0 keeps Bubble Tea's default (60), as tui.Run does.
	FPS int
}

// Start runs m headless. Stop it with Stop.
func Start(ctx context.Context, m tea.Model, o Options) *Program {
	s := newScreen()
	pr := newProbe(m, s)
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(nil), tea.WithOutput(s),
		tea.WithWindowSize(o.Width, o.Height), tea.WithoutSignalHandler(), tea.WithColorProfile(colorprofile.TrueColor),
		tea.WithEnvironment([]string{"TERM=xterm-256color"})}
	if o.FPS > 0 {
		opts = append(opts, tea.WithFPS(o.FPS))
	}
	p := &Program{Program: tea.NewProgram(pr, opts...), Probe: pr, Screen: s, done: make(chan error, 1)}
	go func() {
		_, err := p.Run()
		p.done <- err
	}()
	return p
}

// Stop quits the program and waits for it (killing it after a second).
func (p *Program) Stop() {
	p.Quit()
	select {
	case <-p.done:
	case <-time.After(time.Second):
		p.Kill()
		<-p.done
	}
}

// Timed sends msg and returns how long until the frame that shows it was written.
func (p *Program) Timed(msg tea.Msg, match func(tea.Msg) bool, timeout time.Duration) (time.Duration, error) {
	p.Screen.Reset()
	p.Probe.Expect(match)
	t0 := time.Now()
	p.Send(msg)
	at, err := p.Screen.Wait(timeout)
	if err != nil {
		return 0, err
	}
	return at.Sub(t0), nil
}
