package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"steward/gitea/gitearec"
	"steward/govern"
	"steward/govern/actionid"
	"steward/model"
)

// askedSnapshot is the fixture with its question posted by steward's ask: the shared Gitea
// account bot-a, the ask's marker at the end of the comment.
func askedSnapshot(mark string) *model.Snapshot {
	s := populated()
	c := &s.Clarifications[0]
	c.Question = gitearec.WithMarker(c.Question, gitearec.Mark{Kind: "ask", ID: mark}.String())
	return s
}

// askAttempt is steward's audit record of a worker session's ask, as the core writes its
// intent: the worker's session as actor (over MCP) or as the request's target session (a
// worker's own core, as the demo's), its lease as target, and the question's marker among
// the evidence.
func askAttempt(mark, session, lease string) govern.Attempt {
	return govern.Attempt{ID: "att-ask-1", Intent: &govern.Record{V: 1, Kind: govern.KindIntent, Action: actionid.Ask, Attempt: "att-ask-1",
		At: fixedNow.Format("2006-01-02T15:04:05Z07:00"), Actor: govern.Actor{GiteaLogin: "bot-a", Session: session, Role: govern.RoleOperator},
		Target: govern.Target{LeaseID: lease}, Evidence: []string{"idempotency marker: " + mark}}}
}

// The demo's workers ask through their own core: the session is the request's, the actor
// has none.
func TestAskedByFromTheRequestSession(t *testing.T) {
	a := askAttempt("ans-0123456789abcdef", "", "L-107")
	a.Intent.Target.Session = "sim-worker-2-s1"
	r := newTestRoot(t, 200, 50, false)
	send(r, SnapshotMsg{askedSnapshot("ans-0123456789abcdef")}, keyMsg("4"))
	send(r, auditMsg{gen: r.agen, events: auditEvents([]govern.Attempt{a})})
	if got := r.list().tbl.rows[0].cell(2); got != "sim-worker-2-s1" {
		t.Fatalf("Asked by = %q, want the request's session", got)
	}
}

// "Asked by" showed the Gitea account every worker shares (bot-a) as if it had asked. Now it
// names the worker session that asked, from steward's record of the ask (the attempt whose
// marker the question carries), in the view and the detail; where steward has no record it
// says "session unknown" and names the account as the account.
func TestAskedByNamesTheSession(t *testing.T) {
	for _, sz := range decideSizes {
		t.Run(sz.name, func(t *testing.T) {
			r := newTestRoot(t, sz.w, sz.h, false)
			send(r, SnapshotMsg{askedSnapshot("ans-0123456789abcdef")}, keyMsg("4"))
			if got := r.list().tbl.rows[0].cell(2); got != "session unknown (bot-a)" {
				t.Fatalf("before the audit log is read, Asked by = %q", got)
			}
			send(r, auditMsg{gen: r.agen, events: auditEvents([]govern.Attempt{askAttempt("ans-0123456789abcdef", "sess-c3", "L-107")})})
			f := plain(r)
			if got := r.list().tbl.rows[0].cell(2); got != "sess-c3" || !strings.Contains(f, "sess-c3") {
				t.Fatalf("Asked by = %q, want the session sess-c3:\n%s", got, f)
			}
			if d := detailText(r); !strings.Contains(d, "asked by session sess-c3 (lease L-107") || !strings.Contains(d, "posted as Gitea account bot-a") {
				t.Fatalf("the detail does not name the session and the account apart:\n%s", d)
			}
		})
	}
}

// An ask of another question (another marker) names nobody: the row says the session is
// unknown, and a question with no marker says it was not asked through steward.
func TestAskedByUnknownSaysSo(t *testing.T) {
	r := newTestRoot(t, 200, 50, false)
	send(r, SnapshotMsg{askedSnapshot("ans-0123456789abcdef")}, keyMsg("4"))
	send(r, auditMsg{gen: r.agen, events: auditEvents([]govern.Attempt{askAttempt("ans-ffffffffffffffff", "sess-x9", "L-1")})})
	if got := r.list().tbl.rows[0].cell(2); got != "session unknown (bot-a)" {
		t.Fatalf("another question's ask named %q", got)
	}
	if d := detailText(r); !strings.Contains(d, "steward's audit log has no ask of this question") {
		t.Fatalf("the detail does not say why the session is unknown:\n%s", d)
	}
	r = newTestRoot(t, 200, 50, false)
	send(r, SnapshotMsg{populated()}, keyMsg("4"))
	if d, c := detailText(r), r.list().tbl.rows[0].cell(2); !strings.Contains(d, "not asked through steward") || c != "session unknown (bot-a)" {
		t.Fatalf("a question without a marker: cell %q, detail:\n%s", c, d)
	}
}

// detailText is the selected row's detail sections, as the detail pane draws them.
func detailText(r *Root) string {
	var b strings.Builder
	for _, s := range r.list().tbl.selected().sections(fixedNow) {
		b.WriteString(s.Title + "\n" + strings.Join(s.Lines, "\n") + "\n")
	}
	return b.String()
}

// A worker asks after the workbench read the audit log: the question arrives with a marker
// no ask read so far names, and the workbench reads the log again for it (once), so the
// row names the asking session without a key pressed.
func TestFlowAskedByRereadsTheAuditLog(t *testing.T) {
	c, _, audit := testCore(t, false, func() time.Time { return fixedNow })
	src := &diskSource{now: func() time.Time { return fixedNow }, ch: make(chan *model.Snapshot, 1)}
	tm := startFlowAt(t, Options{Core: c, AuditPath: audit, Now: func() time.Time { return fixedNow }}, src, 200, 50)
	tm.Send(SnapshotMsg{Snapshot: populated()})
	pressAll(tm, "4")
	waitText(t, tm, "session unknown (bot-a)")
	log, err := govern.OpenAudit(audit, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := log.Append(*askAttempt("ans-0123456789abcdef", "sess-late", "L-107").Intent); err != nil {
		t.Fatal(err)
	}
	log.Close()
	tm.Send(SnapshotMsg{Snapshot: askedSnapshot("ans-0123456789abcdef")})
	waitText(t, tm, "sess-late")
	tm.Send(tea.QuitMsg{})
	tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second))
}
