package tui

import (
	"bytes"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"steward/attention"
	"steward/attention/notify"
	"steward/gitea"
	"steward/gitea/fakegitea"
	"steward/govern"
	"steward/govern/actionid"
	"steward/model"
)

// attnFixture is a workspace with a Gitea whose issue acme/widgets#1 a worker asked about
// (the question is on the issue when the function returns), a real core on a test clock,
// and a source that builds real snapshots.
type attnFixture struct {
	clk   *clock
	core  *govern.Core
	src   *diskSource
	audit string
}

func newAttnFixture(t *testing.T) *attnFixture {
	t.Helper()
	fake := fakegitea.New()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	fake.SetBaseURL(srv.URL)
	fake.AddUser("maint", "tok-maint-0123456789")
	repo := fake.CreateRepo("acme", "widgets")
	repo.CreateLabel("status:blocked-pending-clarification", "d93f0b")
	n := repo.CreateIssue("maint", "Which API?", "body")
	cl, err := gitea.New(gitea.Config{Login: gitea.Login{URL: srv.URL, Token: gitea.NewToken("tok-maint-0123456789")}, Owner: "acme", Repo: "widgets", RequestTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Now().UTC()}
	c, ws, audit := testCoreGitea(t, cl, clk.Now)
	repo.AddComment("worker", n, "Should this use the **v2** API?")
	repo.AddLabel("worker", n, "status:blocked-pending-clarification")
	return &attnFixture{clk: clk, core: c, audit: audit, src: &diskSource{ws: ws, now: clk.Now, ch: make(chan *model.Snapshot, 4), gitea: cl}}
}

// inboxFrame waits until the Overview's inbox on screen has (has=true) or lacks the
// question's row.
func inboxFrame(t *testing.T, tm *teatest.TestModel, has bool, also ...string) {
	t.Helper()
	teatest.WaitFor(t, &screen{tm: tm}, func(b []byte) bool {
		if i := bytes.LastIndex(b, []byte(frameMark)); i >= 0 {
			b = b[i:]
		}
		if !bytes.Contains(b, []byte("Attention inbox")) || bytes.Contains(b, []byte("asks:")) != has {
			return false
		}
		for _, w := range also {
			if !bytes.Contains(b, []byte(w)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}

// TestFlowAttentionSnooze: the inbox shows the question's age and
// SLA → Z offers the snooze lengths → the chosen one goes to the core's preview (nothing
// recorded before Apply) → applied, attention.snooze is in the audit log and its mark beside
// it, and the question leaves the inbox → when the snooze ends it is back, and the person
// hears "returned" once → past its SLA the SLA cell says so and it escalates.
func TestFlowAttentionSnooze(t *testing.T) {
	f := newAttnFixture(t)
	tm := startFlow(t, Options{Core: f.core, Source: f.src, AuditPath: f.audit, Now: f.clk.Now, TickEvery: 20 * time.Millisecond,
		Attention: AttentionOptions{Bell: true, Desktop: true, SLAs: attention.SLAs{Clarification: 30 * time.Minute},
			Snooze: []time.Duration{15 * time.Minute, time.Hour}}}, f.src)
	f.src.ch <- f.src.build()
	inboxFrame(t, tm, true, "30m00s")

	pressAll(tm, "Z")
	waitText(t, tm, "Snooze clarification:acme/widgets#1", "for 15m00s", "for 1h00m")
	pressAll(tm, "enter")
	waitText(t, tm, "Apply", "snoozes clarification:acme/widgets#1 for 15m0s")
	if ms, _, _ := govern.ReadAttention(f.audit); len(ms) != 0 {
		t.Fatalf("the preview recorded a mark: %+v", ms)
	}
	pressAll(tm, "tab", "enter")
	waitText(t, tm, "SUCCEEDED")
	inboxFrame(t, tm, false)
	ms, _, _ := govern.ReadAttention(f.audit)
	if len(ms) != 1 || ms[0].Kind != "snooze" || ms[0].Entry != "clarification:acme/widgets#1" || !ms[0].Until.Equal(f.clk.Now().Add(15*time.Minute).UTC()) {
		t.Fatalf("attention file: %+v", ms)
	}
	recs, _, _ := govern.ReadAudit(f.audit)
	var snoozed bool
	for _, a := range govern.Attempts(recs) {
		snoozed = snoozed || (a.Intent != nil && a.Intent.Action == actionid.AttentionSnooze && a.Status() == govern.ResultSucceeded)
	}
	if !snoozed {
		t.Fatal("no succeeded attention.snooze in the audit log")
	}

	// Still snoozed a minute before its end; back after it (the tick notices, no snapshot).
	f.clk.Add(14 * time.Minute)
	f.src.ch <- f.src.build()
	inboxFrame(t, tm, false)
	f.clk.Add(2 * time.Minute)
	inboxFrame(t, tm, true, "30m00s")

	// Past its SLA, while the person looks at another view (on its selected row it would
	// escalate quietly): it escalates, and the SLA cell says so.
	pressAll(tm, "2")
	waitText(t, tm, "Claims ·")
	f.clk.Add(15 * time.Minute)
	var seen bytes.Buffer
	waitOutput(t, tm, &seen, "\x1b]777;notify;steward: escalated;")
	pressAll(tm, "1")
	inboxFrame(t, tm, true, "over 30m00s")

	tm.Send(tea.QuitMsg{})
	out := seen.String() + string(readAll(tm.FinalOutput(t, teatest.WithFinalTimeout(5*time.Second))))
	for _, ev := range []string{"entered", "returned", "escalated"} {
		if k := strings.Count(out, "\x1b]777;notify;steward: "+ev+";"); k != 1 {
			t.Errorf("%d desktop notifications %q, want 1", k, ev)
		}
	}
}

// TestFlowNotifyFailureIsAFinding: a notify command that fails is a failed
// toast and a finding in the inbox, which stays until a later run succeeds.
func TestFlowNotifyFailureIsAFinding(t *testing.T) {
	f := newAttnFixture(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "notify")
	// The first run fails (and leaves a mark); every later one succeeds.
	if err := os.WriteFile(script, []byte("#!/bin/sh\nif [ -e \"$0.ran\" ]; then exit 0; fi\n: > \"$0.ran\"\necho 'pager unreachable' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tm := startFlow(t, Options{Core: f.core, Source: f.src, AuditPath: f.audit, Now: f.clk.Now, TickEvery: 20 * time.Millisecond,
		Attention: AttentionOptions{Desktop: true, SLAs: attention.SLAs{Clarification: 30 * time.Minute}, Command: notify.Command{Argv: []string{script}, Timeout: 20 * time.Second}}}, f.src)
	f.src.ch <- f.src.build()
	waitText(t, tm, "notify command failed 1×", "pager unreachable")
	pressAll(tm, "t")
	waitText(t, tm, "[FAILED] notify command failed for entered clarification:acme/widgets#1")
	pressAll(tm, "esc")

	// The escalation's run succeeds (looked at from another view: on the selected row it
	// would escalate quietly): the finding goes.
	pressAll(tm, "2")
	waitText(t, tm, "Claims ·")
	f.clk.Add(31 * time.Minute)
	waitOutput(t, tm, &bytes.Buffer{}, "\x1b]777;notify;steward: escalated;")
	pressAll(tm, "1")
	teatest.WaitFor(t, &screen{tm: tm}, func(b []byte) bool {
		if i := bytes.LastIndex(b, []byte(frameMark)); i >= 0 {
			b = b[i:]
		}
		return bytes.Contains(b, []byte("over 30m00s")) && !bytes.Contains(b, []byte("notify command failed"))
	}, teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	tm.Send(tea.QuitMsg{})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}

// waitOutput waits until the program's output (read from here on) holds want, and adds what
// it read to seen.
func waitOutput(t *testing.T, tm *teatest.TestModel, seen *bytes.Buffer, want string) {
	t.Helper()
	var got []byte
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		got = b
		return bytes.Contains(b, []byte(want))
	}, teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	seen.Write(got)
}
