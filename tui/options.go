package tui

import (
	"context"
	"errors"
	"os/exec"
	"runtime"
	"time"

	tea "charm.land/bubbletea/v2"

	"steward/govern"
	"steward/history"
	"steward/leases/leaserec"
	"steward/model"
)

// SnapshotSource publishes the live model's snapshots. live.Model satisfies it.
type SnapshotSource interface {
	// Snapshots returns the channel new snapshots arrive on; a closed channel ends the feed.
	Snapshots() <-chan *model.Snapshot
	// Refresh asks for a full re-read; the result arrives on the channel.
	Refresh()
}

// Options configure the workbench.
type Options struct {
	// Core is the governed core every action goes through; nil shows the data with no actions.
	Core *govern.Core
	// Source feeds snapshots (Run forwards them as SnapshotMsg) and takes refresh requests.
	Source SnapshotSource
	// AuditPath is steward's audit log, shown in the Activity timeline.
	AuditPath string
	// Now is the clock; time.Now when nil. Goldens pass a fixed clock.
	Now func() time.Time
	// Keys is the keymap; defaultKeyMap when nil.
	Keys *KeyMap
	// Policies gives the lease policy's warning thresholds; the seed's defaults when nil.
	Policies *leaserec.PolicySet
	// ClarificationSLA is how long a question may wait for an answer (default 24 h).
	ClarificationSLA time.Duration
	// ItemURL returns the browser address of an item, "" when unknown.
	ItemURL func(model.Item) string
	// OpenURL opens an address in the browser; xdg-open (open on macOS) when nil.
	OpenURL func(url string) error
	// TickEvery is the countdown cadence (default one second).
	TickEvery time.Duration
	// History gathers the History view's evidence, read-only (run in a command); nil
	// leaves the view unavailable.
	History func(ctx context.Context) (*history.Evidence, error)
	// LastSeen reads the user's last-seen mark of this workspace and SaveSeen keeps one
	// (steward's own state, never a supervised source); both run in commands.
	LastSeen func() (time.Time, bool, error)
	SaveSeen func(time.Time) error
	// SinceOnStart opens "since you left" at start when a last-seen mark exists (and keeps
	// a first mark when none does).
	SinceOnStart bool
	// Attention says how a person hears about attention entries; the zero value notifies
	// nobody.
	Attention AttentionOptions
	// Theme is the configuration's theme: dark, light, or auto (the default: dark until
	// the terminal answers the workbench's question about its background colour). It
	// chooses the Markdown style of questions and answers.
	Theme string

	// Notice, when set, is shown over the workbench as it opens (a workspace that cannot
	// be read at all: what is wrong and what to do).
	Notice *Notice

	// ws is set by RunWorkspaces: the other workspaces of a workbench over several.
	ws *wsView
}

func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Keys == nil {
		km := defaultKeyMap()
		o.Keys = &km
	}
	if o.Policies == nil {
		p := leaserec.DefaultPolicies()
		o.Policies = &p
	}
	if o.ClarificationSLA <= 0 {
		o.ClarificationSLA = 24 * time.Hour
	}
	if o.OpenURL == nil {
		o.OpenURL = openBrowser
	}
	if o.TickEvery <= 0 {
		o.TickEvery = time.Second
	}
	return o
}

func openBrowser(url string) error {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	return exec.Command(name, url).Start()
}

// SnapshotMsg is the one bridge for outside events: the program's owner sends each new
// snapshot of the live model with tea.Program.Send. Update digests it into rows; Run
// instead digests each snapshot on its bridge goroutine and sends the rows ready-made, so
// that Update stays fast with tens of thousands of claims.
type SnapshotMsg struct {
	Snapshot *model.Snapshot
}

// digestedMsg is a snapshot already digested off the UI goroutine (see Run).
type digestedMsg struct {
	snap *model.Snapshot
	data *data
}

// digestConfig is what digest needs from the options: all of it fixed for a program's life,
// so the bridge goroutine may use it while Update runs. Each call has its own row cache, for
// the one goroutine that digests with it.
func digestConfig(o Options) digestCfg {
	knows := func(action string) bool {
		if o.Core == nil {
			return false
		}
		_, ok := o.Core.Spec(action)
		return ok
	}
	return digestCfg{
		policies: *o.Policies,
		sla:      o.ClarificationSLA,
		itemURL:  o.ItemURL,
		knows:    knows,
		cache:    newRowCache(),
	}
}

// Run starts the workbench on the terminal (alternate screen, mouse) and forwards the
// source's snapshots into it until ctx ends, the user quits or the feed closes.
func Run(ctx context.Context, opts Options) error {
	root := New(opts)
	// 120 frames a second: at 60 the frame ticker alone can hold a key press for 16.7 ms,
	// the whole key-to-frame budget (docs/performance.md).
	p := tea.NewProgram(root, tea.WithContext(ctx), tea.WithFPS(120))
	go root.Feed(ctx, p.Send)
	return runProgram(ctx, p)
}

// Feed forwards the source's snapshots into the program that runs r, as Run does for its
// own: each digested on this goroutine, off the UI's, and sent ready-made with send, until
// ctx ends or the feed closes. Run calls it; a program Run does not start (the benchmark's
// headless one) calls it too, so that it measures what the workbench runs.
func (r *Root) Feed(ctx context.Context, send func(tea.Msg)) {
	if r.opts.Source == nil {
		return
	}
	feed(ctx, r.opts.Source, digestConfig(r.opts), func(d digestedMsg) { send(d) })
}

// SnapshotOf returns the snapshot a message of the feed (Feed's, or a SnapshotMsg) carries,
// nil for any other message.
func SnapshotOf(msg tea.Msg) *model.Snapshot {
	switch m := msg.(type) {
	case SnapshotMsg:
		return m.Snapshot
	case digestedMsg:
		return m.snap
	}
	return nil
}

// feed digests each of src's snapshots with cfg (on its own goroutine, off the UI's) and
// sends the rows ready-made, until ctx ends or the feed closes.
func feed(ctx context.Context, src SnapshotSource, cfg digestCfg, send func(digestedMsg)) {
	ch := src.Snapshots()
	for {
		select {
		case <-ctx.Done():
			return
		case s, ok := <-ch:
			if !ok {
				return
			}
			if s == nil {
				continue
			}
			send(digestedMsg{snap: s, data: digest(s, cfg)})
		}
	}
}

// runProgram runs p; the end of ctx is a normal end.
func runProgram(ctx context.Context, p *tea.Program) error {
	_, err := p.Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}
