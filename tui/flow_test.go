package tui

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"steward/govern"
	"steward/govern/actionid"
	"steward/model"
	"steward/model/live"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// diskSource builds real snapshots from the workspace's files and DB on every Refresh.
type diskSource struct {
	ws    govern.Workspace
	now   func() time.Time
	ch    chan *model.Snapshot
	gitea live.GiteaFacts // nil: Gitea not configured
}

func (s *diskSource) Snapshots() <-chan *model.Snapshot { return s.ch }

func (s *diskSource) Refresh() { s.ch <- s.build() }

func (s *diskSource) build() *model.Snapshot {
	mws := live.Workspace{LocksDir: s.ws.LocksDir, DBPath: s.ws.DBPath, RepoRoot: s.ws.RepoRoot}
	probe := live.NewProbe(s.ws.RepoRoot)
	probe.Host = "bench"
	cfg := model.Config{Org: "acme", Repo: "widgets"}
	in := live.Load(context.Background(), mws, probe, s.now())
	if s.gitea != nil {
		in.Gitea, in.Clarifications, in.GiteaHealth = live.LoadGitea(context.Background(), s.gitea, cfg, nil, s.now())
	}
	return model.Build(in, cfg, s.now())
}

// probeMsg asks the program's event loop for the current screen (see screenFilter).
type probeMsg struct{ ch chan string }

// screenFilter answers probes on the event loop goroutine, where reading the model is safe.
func screenFilter(m tea.Model, msg tea.Msg) tea.Msg {
	if p, ok := msg.(probeMsg); ok {
		if mm, ok := m.(*multi); ok {
			p.ch <- plain(mm.root(mm.shown()))
			return nil
		}
		p.ch <- plain(m.(*Root))
		return nil
	}
	return msg
}

// screen is a reader of whole screens: each check of teatest.WaitFor (which reads to EOF)
// gets the current frame after a marker, or nothing when it did not change, so the wait is
// on what is on screen now rather than on the renderer's diffs.
type screen struct {
	tm     *teatest.TestModel
	last   string
	buf    bytes.Buffer
	served bool
}

const frameMark = "\x00frame\x00"

func (s *screen) Read(p []byte) (int, error) {
	if s.buf.Len() > 0 {
		return s.buf.Read(p)
	}
	if s.served {
		s.served = false
		return 0, io.EOF
	}
	s.served = true
	ch := make(chan string, 1)
	s.tm.Send(probeMsg{ch})
	select {
	case f := <-ch:
		if f != s.last {
			s.last = f
			s.buf.WriteString(frameMark + f)
		}
	case <-time.After(time.Second):
	}
	if s.buf.Len() == 0 {
		s.served = false
		return 0, io.EOF
	}
	return s.buf.Read(p)
}

// startFlow runs the workbench under teatest with snapshots from src forwarded through the
// one bridge, as Run does.
func startFlow(t *testing.T, opts Options, src *diskSource) *teatest.TestModel {
	t.Helper()
	return startFlowAt(t, opts, src, 160, 48)
}

// startFlowAt is startFlow on a w×h terminal.
func startFlowAt(t *testing.T, opts Options, src *diskSource, w, h int) *teatest.TestModel {
	t.Helper()
	tm := teatest.NewTestModel(t, New(opts), teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii), tea.WithFilter(screenFilter)))
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-src.ch:
				tm.Send(SnapshotMsg{Snapshot: s})
			case <-done:
				return
			}
		}
	}()
	t.Cleanup(func() { close(done) })
	return tm
}

// waitText waits until the current screen shows every one of want.
func waitText(t *testing.T, tm *teatest.TestModel, want ...string) {
	t.Helper()
	teatest.WaitFor(t, &screen{tm: tm}, func(b []byte) bool {
		if i := bytes.LastIndex(b, []byte(frameMark)); i >= 0 {
			b = b[i:]
		}
		for _, w := range want {
			if !bytes.Contains(b, []byte(w)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}

func pressAll(tm *teatest.TestModel, ks ...string) {
	for _, k := range ks {
		tm.Send(keyMsg(k))
	}
}

// claimShort makes a real claim through the governed core with a one-minute lease.
func claimShort(t *testing.T, c *govern.Core, n int64, session string) {
	t.Helper()
	req := govern.Request{Action: actionid.Claim, Target: govern.Target{Session: session,
		Item: &govern.Item{Org: "acme", Repo: "widgets", Kind: "issue", Number: n}},
		Params: govern.ClaimParams{Role: "author", TTL: "1m", Username: "bot-" + session, Profile: "author", PID: "999999"}}
	_, out, err := c.Run(context.Background(), req, "")
	if err != nil || out.Result != govern.ResultSucceeded {
		t.Fatalf("claim: %v %+v", err, out)
	}
}

// TestFlowReclaimExpired: filter → select → action → confirm → toast → row gone, on real lock
// files and a real control-plane DB.
func TestFlowReclaimExpired(t *testing.T) {
	clk := &clock{t: fixedNow}
	c, ws, audit := testCore(t, false, clk.Now)
	claimShort(t, c, 201, "sess-1")
	claimShort(t, c, 202, "sess-2")
	clk.Add(5 * time.Minute)
	src := &diskSource{ws: ws, now: clk.Now, ch: make(chan *model.Snapshot, 4)}
	tm := startFlow(t, Options{Core: c, Source: src, AuditPath: audit, Now: clk.Now}, src)
	src.ch <- src.build()

	pressAll(tm, "5")
	waitText(t, tm, "active-lease-past-expiry", "acme/widgets#201", "acme/widgets#202")
	tm.Send(keyMsg("/"))
	for _, m := range typeText("#201 past") {
		tm.Send(m)
	}
	pressAll(tm, "enter")
	waitText(t, tm, "1 of 2 · filter: #201 past")
	pressAll(tm, "a")
	waitText(t, tm, "(1 of 1 allowed)")
	pressAll(tm, "enter")
	waitText(t, tm, "Apply", "effect")
	pressAll(tm, "tab", "enter")
	waitText(t, tm, "SUCCEEDED")
	waitText(t, tm, "no row matches")

	tm.Send(tea.QuitMsg{})
	r := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Root)
	for _, row := range r.tabs[pageOrphans].list().tbl.rows {
		if strings.Contains(row.Item, "#201") && strings.Contains(row.Cells[0], "past-expiry") {
			t.Fatalf("the reclaimed lease is still an orphan: %+v", row.Cells)
		}
	}
	var still bool
	for _, row := range r.tabs[pageOrphans].list().tbl.rows {
		still = still || strings.Contains(row.Item, "#202")
	}
	if !still {
		t.Fatal("the other expired lease (not selected) went too")
	}
	if r.tabs[pageOrphans].list().filter.String() != "#201 past" {
		t.Fatalf("filter not kept: %q", r.tabs[pageOrphans].list().filter.String())
	}
	recs, _, err := govern.ReadAudit(audit)
	if err != nil || len(govern.Attempts(recs)) != 3 {
		t.Fatalf("want 2 claims and 1 reclaim in the audit log, got %d (%v)", len(govern.Attempts(recs)), err)
	}
}

// TestFlowRefusedChangesNothing: a read-only core refuses; the refusal is shown in the menu
// and no apply is possible, the files and the audit log are untouched.
func TestFlowRefusedChangesNothing(t *testing.T) {
	clk := &clock{t: fixedNow}
	c, ws, audit := testCore(t, false, clk.Now)
	claimShort(t, c, 301, "sess-3")
	clk.Add(5 * time.Minute)
	log, err := govern.OpenAudit(filepath.Join(t.TempDir(), "ro-audit.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	ro := govern.New(ws, log, govern.Options{Actor: testActor, ReadOnly: true, Now: clk.Now})
	defer ro.Close()
	before, _, _ := govern.ReadAudit(audit)
	src := &diskSource{ws: ws, now: clk.Now, ch: make(chan *model.Snapshot, 4)}
	tm := startFlow(t, Options{Core: ro, Source: src, AuditPath: audit, Now: clk.Now}, src)
	src.ch <- src.build()

	pressAll(tm, "5")
	waitText(t, tm, "acme/widgets#301")
	pressAll(tm, "a")
	waitText(t, tm, "read_only", "disabled")
	pressAll(tm, "enter") // a disabled option cannot be chosen
	pressAll(tm, "esc", "2")
	waitText(t, tm, "Claims · 1 of 1", "READ-ONLY")
	tm.Send(tea.QuitMsg{})
	r := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Root)
	if r.stack.open() {
		t.Fatalf("a dialog is still open: %T", r.stack.top())
	}
	if !strings.Contains(plain(r), "READ-ONLY") {
		t.Fatal("no read-only badge in the header")
	}
	for _, x := range r.toasts.list {
		if x.state != toastNote {
			t.Fatalf("an apply ran: %+v", x)
		}
	}
	after, _, _ := govern.ReadAudit(audit)
	if len(after) != len(before) {
		t.Fatalf("audit log changed: %d → %d records", len(before), len(after))
	}
	if got := src.build(); len(got.Orphans) == 0 {
		t.Fatal("the orphan went away after a refusal")
	}
}
