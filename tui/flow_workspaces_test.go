package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"steward/govern"
	"steward/govern/actionid"
	"steward/model"
)

// wsFixture is one workspace of a workbench over several: a real core on its own lock
// directory, DB and audit log, and a source that builds real snapshots of them.
type wsFixture struct {
	name  string
	core  *govern.Core
	src   *diskSource
	audit string
}

func newWSFixture(t *testing.T, name string, clk *clock) *wsFixture {
	t.Helper()
	c, ws, audit := testCore(t, false, clk.Now)
	return &wsFixture{name: name, core: c, audit: audit, src: &diskSource{ws: ws, now: clk.Now, ch: make(chan *model.Snapshot, 8)}}
}

func (f *wsFixture) workspace(clk *clock) Workspace {
	return Workspace{Name: f.name, Options: Options{Core: f.core, Source: f.src, AuditPath: f.audit, Now: clk.Now}}
}

// startWorkspaces runs the workbench over fs under teatest, each source's snapshots sent to
// its own workspace as RunWorkspaces does, showing fs[start] first (len(fs): the all view).
func startWorkspaces(t *testing.T, clk *clock, start, w, h int, fs ...*wsFixture) *teatest.TestModel {
	t.Helper()
	ws := make([]Workspace, len(fs))
	for i, f := range fs {
		ws[i] = f.workspace(clk)
	}
	tm := teatest.NewTestModel(t, newMulti(ws, start), teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii), tea.WithFilter(screenFilter)))
	done := make(chan struct{})
	for i, f := range fs {
		go func() {
			for {
				select {
				case s := <-f.src.ch:
					tm.Send(wsMsg{ws: i, msg: SnapshotMsg{Snapshot: s}})
				case <-done:
					return
				}
			}
		}()
	}
	t.Cleanup(func() { close(done) })
	return tm
}

func attempts(t *testing.T, audit string) []govern.Attempt {
	t.Helper()
	recs, _, err := govern.ReadAudit(audit)
	if err != nil {
		t.Fatal(err)
	}
	return govern.Attempts(recs)
}

// TestFlowWorkspacesAllViewAndSwitch: two workspaces, each with an expired lease. The all
// view shows both under a Workspace column and acts on neither (a says why, nothing is
// written); > opens the staging row in staging, where the reclaim goes through staging's
// core alone; W then chooses the all view again, which shows the staging orphan gone and
// the prod one still there.
func TestFlowWorkspacesAllViewAndSwitch(t *testing.T) {
	clk := &clock{t: fixedNow}
	prod, staging := newWSFixture(t, "prod", clk), newWSFixture(t, "staging", clk)
	claimShort(t, prod.core, 201, "sess-p")
	claimShort(t, staging.core, 301, "sess-s")
	clk.Add(5 * time.Minute)
	tm := startWorkspaces(t, clk, 2, 160, 48, prod, staging)
	prod.src.ch <- prod.src.build()
	staging.src.ch <- staging.src.build()

	pressAll(tm, "5")
	waitText(t, tm, "ALL", "2 workspaces, view only", "Workspace", "acme/widgets#201", "acme/widgets#301", "prod", "staging", "Orphans · 2 of 2")
	// Each view's own columns draw their own cells after the Workspace column.
	waitText(t, tm, "prod       active-lease-past-expiry", "staging    active-lease-past-expiry")
	// The all view acts on nothing: a (and A, c) leave the reason, nothing else.
	pressAll(tm, "a")
	waitText(t, tm, "the all view only shows")
	prodBefore, stagingBefore := len(attempts(t, prod.audit)), len(attempts(t, staging.audit))

	// The staging row, opened in its own workspace.
	tm.Send(keyMsg("/"))
	for _, m := range typeText("staging") {
		tm.Send(m)
	}
	pressAll(tm, "enter")
	waitText(t, tm, "1 of 2 · filter: staging")
	pressAll(tm, ">")
	waitText(t, tm, " staging ", "(2/2)", "acme/widgets#301", "Orphans · 1 of 1")
	pressAll(tm, "a")
	waitText(t, tm, "(1 of 1 allowed)")
	pressAll(tm, "enter")
	waitText(t, tm, "Apply", "effect")
	pressAll(tm, "tab", "enter")
	waitText(t, tm, "SUCCEEDED")

	// W: the chooser, with what each workspace holds; the all view again.
	pressAll(tm, "W")
	waitText(t, tm, "Workspaces", "every workspace, view only", "prod", "staging", "(shown)")
	pressAll(tm, "k", "k", "enter")
	waitText(t, tm, "ALL", "filter: staging") // the all view's own filter, as it was left
	pressAll(tm, "esc")
	waitText(t, tm, "ALL", "acme/widgets#201", "Orphans · 1 of 1")

	tm.Send(tea.QuitMsg{})
	m := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*multi)
	var items []string
	for _, r := range m.all.tabs[pageOrphans].list().tbl.rows {
		items = append(items, r.cell(wsCell)+" "+r.Item)
	}
	if len(items) != 1 || items[0] != "prod acme/widgets#201" {
		t.Fatalf("the all view's orphans after the reclaim in staging: %q", items)
	}
	if got := attempts(t, prod.audit); len(got) != prodBefore {
		t.Fatalf("prod's audit log changed: %d → %d attempts (the all view or staging's reclaim reached prod's core)", prodBefore, len(got))
	}
	got := attempts(t, staging.audit)
	if len(got) != stagingBefore+1 || got[len(got)-1].Intent == nil || got[len(got)-1].Intent.Action != actionid.ReclaimExpired || got[len(got)-1].Status() != govern.ResultSucceeded {
		t.Fatalf("staging's audit log: want its claim and one succeeded reclaim, got %d attempts", len(got))
	}
	if s := prod.src.build(); len(s.Orphans) != 1 {
		t.Fatalf("prod's expired lease: %d orphans, want it still there", len(s.Orphans))
	}
}

// The all view keeps every workspace's attention inbox, each row under its workspace; a
// workspace whose source is unavailable makes the merged source degraded, with its reason.
func TestMergeAll(t *testing.T) {
	cfg := digestConfig(Options{}.withDefaults())
	newer := populated()
	newer.GeneratedAt = fixedNow
	a := digest(newer, cfg)
	b := digest(unavailable(), cfg)
	d := mergeAll([]string{"prod", "edge"}, []*data{a, b})
	if !d.Loaded {
		t.Fatal("not loaded")
	}
	if got, want := len(d.Rows[pageClaims]), len(a.Rows[pageClaims])+len(b.Rows[pageClaims]); got != want {
		t.Fatalf("claims: %d, want %d", got, want)
	}
	seen := map[string]bool{}
	for _, r := range d.Rows[pageClaims] {
		if r.cell(wsCell) != "prod" || !strings.HasPrefix(r.Key, "prod\x1f") || r.Workspace != 1 || len(r.Actions) != 0 || r.Recover != nil {
			t.Fatalf("claim row of the all view: ws %q key %q index %d actions %d", r.cell(wsCell), r.Key, r.Workspace, len(r.Actions))
		}
		if seen[r.Key] {
			t.Fatalf("two rows with key %q", r.Key)
		}
		seen[r.Key] = true
		if r.Origin.page != pageClaims || r.Origin.key == "" || strings.Contains(r.Origin.key, "\x1f") {
			t.Fatalf("origin of %q: %+v", r.Key, r.Origin)
		}
	}
	if len(d.Inbox) != len(a.Inbox)+len(b.Inbox) {
		t.Fatalf("inbox: %d rows, want %d + %d", len(d.Inbox), len(a.Inbox), len(b.Inbox))
	}
	var edge bool
	for _, r := range d.Inbox {
		edge = edge || r.cell(wsCell) == "edge"
	}
	if !edge {
		t.Fatal("the unavailable workspace's own inbox entry (its lost source) is not in the all view's")
	}
	db := d.source("db")
	if db.State != "degraded" || !strings.Contains(db.Reason, "edge: unavailable") {
		t.Fatalf("merged db source: %+v", db)
	}
	if d.down(pageClaims) {
		t.Fatal("claims shown as down while prod reads them")
	}
	if !d.Generated.Equal(b.Generated) || !b.Generated.Before(a.Generated) {
		t.Fatalf("the all view's snapshot time %v is not the older workspace's (%v, %v)", d.Generated, a.Generated, b.Generated)
	}
}

// Answers of a workspace's commands come back to it; Bubble Tea's own messages pass.
func TestTagRoutesAnswers(t *testing.T) {
	mine := func() tea.Msg { return tickMsg{} }
	got := tag(3, tea.Batch(mine, tea.Quit, tea.SetClipboard("x")))()
	batch, ok := got.(tea.BatchMsg)
	if !ok || len(batch) != 3 {
		t.Fatalf("a batch stays a batch: %T", got)
	}
	if m, ok := batch[0]().(wsMsg); !ok || m.ws != 3 {
		t.Fatalf("a workspace's own answer: %T %+v", batch[0](), batch[0]())
	}
	if _, ok := batch[1]().(tea.QuitMsg); !ok {
		t.Fatalf("quit was wrapped: %T", batch[1]())
	}
	if _, ok := batch[2]().(wsMsg); ok {
		t.Fatal("the clipboard write was wrapped: the program would never write it")
	}
	if tag(0, nil) != nil {
		t.Fatal("no command, no wrapper")
	}
}

// W is in the one keymap: help, the footer and the palette list it in a workbench over
// several workspaces; over one, it says why it does nothing.
func TestWorkspacesKey(t *testing.T) {
	r := newTestRoot(t, 120, 30, false)
	send(r, SnapshotMsg{populated()}, keyMsg("W"))
	if f := plain(r); !contains(f, "workspaces: switch, or all of them: this workbench shows one workspace") {
		t.Fatalf("W over one workspace:\n%s", f)
	}
	clk := &clock{t: fixedNow}
	m := newMulti([]Workspace{newWSFixture(t, "prod", clk).workspace(clk), newWSFixture(t, "edge", clk).workspace(clk)}, 0)
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
	cur := m.root(m.shown())
	if f := ansi.Strip(cur.Render()); !contains(f, "W workspaces") || !contains(f, " prod ") || !contains(f, "(1/2)") {
		t.Fatalf("footer and header of a workspace:\n%s", f)
	}
	m.Update(keyMsg("?"))
	if f := ansi.Strip(cur.Render()); !contains(f, "workspaces: switch, or all of them") {
		t.Fatalf("help:\n%s", f)
	}
}

// r in the all view re-reads every workspace: each source is asked for a full re-read.
func TestAllViewRefreshesEveryWorkspace(t *testing.T) {
	clk := &clock{t: fixedNow}
	a, b := newWSFixture(t, "prod", clk), newWSFixture(t, "edge", clk)
	m := newMulti([]Workspace{a.workspace(clk), b.workspace(clk)}, 2)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	_, cmd := m.Update(keyMsg("r"))
	var run func(tea.Cmd)
	run = func(c tea.Cmd) {
		if c == nil {
			return
		}
		if batch, ok := c().(tea.BatchMsg); ok {
			for _, x := range batch {
				run(x)
			}
		}
	}
	run(cmd)
	for _, f := range []*wsFixture{a, b} {
		select {
		case s := <-f.src.ch:
			if s == nil {
				t.Fatalf("%s: no snapshot", f.name)
			}
		default:
			t.Fatalf("r in the all view did not re-read %s", f.name)
		}
	}
	if f := ansi.Strip(m.all.Render()); contains(f, "no live source") {
		t.Fatalf("r in the all view:\n%s", f)
	}
	m.Update(keyMsg("H"))
	if f := ansi.Strip(m.all.Render()); !contains(f, "history is each workspace's own: W opens one") {
		t.Fatalf("H in the all view:\n%s", f)
	}
}
