package tui

import (
	"bytes"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"steward/attention"
	"steward/gitea"
	"steward/gitea/fakegitea"
	"steward/govern"
	"steward/govern/actionid"
	"steward/model"
)

// TestFlowAttentionAck: a worker's question appears while the workbench runs →
// the program writes the bell and the desktop notification (OSC 9 and OSC 777) once, with
// the hostile part of the title removed → `A` on the inbox row opens the core's preview →
// applying it records attention.ack in the audit log and its mark beside it → the entry
// leaves the inbox (and the next snapshots ring no more).
func TestFlowAttentionAck(t *testing.T) {
	fake := fakegitea.New()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	fake.SetBaseURL(srv.URL)
	fake.AddUser("maint", "tok-maint-0123456789")
	repo := fake.CreateRepo("acme", "widgets")
	repo.CreateLabel("status:blocked-pending-clarification", "d93f0b")
	n := repo.CreateIssue("maint", "Which API?\x1b]52;c;cGF3bmVk\x07", "body")
	cl, err := gitea.New(gitea.Config{Login: gitea.Login{URL: srv.URL, Token: gitea.NewToken("tok-maint-0123456789")}, Owner: "acme", Repo: "widgets", RequestTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Now().UTC()}
	c, ws, audit := testCoreGitea(t, cl, clk.Now)
	src := &diskSource{ws: ws, now: clk.Now, ch: make(chan *model.Snapshot, 4), gitea: cl}
	tm := startFlow(t, Options{Core: c, Source: src, AuditPath: audit, Now: clk.Now,
		Attention: AttentionOptions{Bell: true, Desktop: true, SLAs: attention.DefaultSLAs}}, src)
	src.ch <- src.build()
	waitText(t, tm, "Attention inbox")

	// The worker asks.
	repo.AddComment("worker", n, "Should this use the **v2** API?")
	repo.AddLabel("worker", n, "status:blocked-pending-clarification")
	src.ch <- src.build()
	var out bytes.Buffer
	const osc9 = "\x1b]9;steward: entered: clarification: acme/widgets#1 Which API?\x1b\\"
	const osc777 = "\x1b]777;notify;steward: entered;clarification: acme/widgets#1 Which API?\x1b\\"
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		out.Reset()
		out.Write(b)
		return bytes.Contains(b, []byte(osc777))
	}, teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	if !bytes.Contains(out.Bytes(), []byte("\a"+osc9+osc777)) {
		t.Fatalf("no bell and desktop notification in the output:\n%q", out.String())
	}
	waitText(t, tm, "asks:")

	// The same question in the next snapshots rings no more.
	src.ch <- src.build()
	src.ch <- src.build()
	pressAll(tm, "A")
	waitText(t, tm, "Apply", "acknowledges clarification:acme/widgets#1 at level 0")
	pressAll(tm, "tab", "enter")
	waitText(t, tm, "SUCCEEDED")
	teatest.WaitFor(t, &screen{tm: tm}, func(b []byte) bool {
		if i := bytes.LastIndex(b, []byte(frameMark)); i >= 0 {
			b = b[i:]
		}
		return bytes.Contains(b, []byte("Attention inbox")) && !bytes.Contains(b, []byte("asks:"))
	}, teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	src.ch <- src.build()

	tm.Send(tea.QuitMsg{})
	r := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Root)
	rest := tm.FinalOutput(t, teatest.WithFinalTimeout(5*time.Second))
	all := out.String() + string(readAll(rest))
	if k := strings.Count(all, "\x1b]777;notify;"); k != 1 {
		t.Fatalf("%d desktop notifications, want exactly 1", k)
	}
	if k := strings.Count(all, "\x1b]9;"); k != 1 {
		t.Fatalf("%d OSC 9 notifications, want exactly 1", k)
	}
	if strings.Contains(all, "\x1b]52") {
		t.Fatal("the title's clipboard sequence reached the terminal")
	}
	for _, x := range r.tabs[pageOverview].list().tbl.rows {
		if strings.Contains(x.Key, "clar:") {
			t.Fatalf("the acknowledged question is still in the inbox: %q", x.Cells)
		}
	}
	if len(r.tabs[pageClarifications].list().tbl.rows) != 1 {
		t.Fatal("the question left the Clarifications view: an acknowledgement answers nothing")
	}
	recs, _, _ := govern.ReadAudit(audit)
	var acked bool
	for _, a := range govern.Attempts(recs) {
		acked = acked || (a.Intent != nil && a.Intent.Action == actionid.AttentionAck && a.Intent.Target.Entry == "clarification:acme/widgets#1" && a.Status() == govern.ResultSucceeded)
	}
	if !acked {
		t.Fatal("no succeeded attention.ack in the audit log")
	}
	if ms, _, _ := govern.ReadAttention(audit); len(ms) != 1 || ms[0].Kind != "ack" {
		t.Fatalf("attention file: %+v", ms)
	}
}

func readAll(r interface{ Read([]byte) (int, error) }) []byte {
	var b bytes.Buffer
	_, _ = b.ReadFrom(r)
	return b.Bytes()
}
