package tui

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"steward/govern"
	"steward/govern/actionid"
	"steward/model"
)

// attemptOf returns the audit log's attempt of action, failing when there is not exactly one.
func attemptOf(t *testing.T, audit, action string) govern.Attempt {
	t.Helper()
	recs, _, err := govern.ReadAudit(audit)
	if err != nil {
		t.Fatal(err)
	}
	var out []govern.Attempt
	for _, a := range govern.Attempts(recs) {
		if a.Intent != nil && a.Intent.Action == action {
			out = append(out, a)
		}
	}
	if len(out) != 1 {
		t.Fatalf("want one %s attempt in the audit log, got %d", action, len(out))
	}
	return out[0]
}

// activityRow returns the Activity row of attempt.
func activityRow(t *testing.T, r *Root, attempt string) row {
	t.Helper()
	for _, x := range r.tabs[pageActivity].list().tbl.rows {
		if x.Cells[1] == "steward" && strings.Contains(x.Key, attempt) {
			return *x
		}
	}
	t.Fatalf("no Activity row for attempt %s", attempt)
	return row{}
}

// TestFlowVerifyUnknownAnswer: an answer whose comment POST gets a 500 ends unknown (the
// request was sent); from Activity, v runs the core's verifier — with Gitea unreadable the
// evidence cannot settle it and the toast says it stays unknown; once Gitea answers, v
// settles it as failed (no comment carries the marker), the Activity row and the apply's
// own toast say so, and the audit log holds a machine resolution. Real files, real DB, the
// in-process Gitea subset.
func TestFlowVerifyUnknownAnswer(t *testing.T) {
	fake, cl := clarificationGitea(t)
	fake.SetFault(func(q *http.Request) int {
		if q.Method == http.MethodPost && strings.HasSuffix(q.URL.Path, "/comments") {
			return http.StatusInternalServerError
		}
		return 0
	})

	tm, src, audit := answerUpToApply(t, cl)
	pressAll(tm, "tab", "enter")
	waitText(t, tm, "[UNKNOWN] clarification.answer outcome UNKNOWN")
	att := attemptOf(t, audit, actionid.Answer)
	if !att.Unresolved() {
		t.Fatalf("the answer is not unknown: %s", att.Status())
	}

	// Gitea unreadable: the verifier cannot tell, and says so.
	fake.SetFault(func(*http.Request) int { return http.StatusInternalServerError })
	pressAll(tm, "6")
	waitText(t, tm, "clarification.answer", "unknown")
	pressAll(tm, "/")
	for _, m := range typeText("clarification.answer") {
		tm.Send(m)
	}
	pressAll(tm, "enter", "v")
	waitText(t, tm, "verify: attempt "+att.ID+" (clarification.answer) stays UNKNOWN")
	if a := attemptOf(t, audit, actionid.Answer); !a.Unresolved() {
		t.Fatalf("the verifier settled it without evidence: %s", a.Status())
	}

	// Gitea back: the verifier reads the comments and settles it.
	fake.SetFault(nil)
	pressAll(tm, "v")
	waitText(t, tm, "verify: attempt "+att.ID+" (clarification.answer) settled as failed from evidence")
	waitText(t, tm, "resolved by machine as failed")

	tm.Send(tea.QuitMsg{})
	r := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Root)
	a := attemptOf(t, audit, actionid.Answer)
	if a.Status() != govern.ResultFailed || len(a.Resolutions) != 1 || a.Resolutions[0].ResolvedBy != govern.ResolvedByMachine {
		t.Fatalf("audit log: status %s, resolutions %+v", a.Status(), a.Resolutions)
	}
	x := activityRow(t, r, att.ID)
	if x.Cells[6] != "failed" || x.Unsettled != nil || len(x.Actions) != 0 {
		t.Fatalf("Activity row after verify: result %q, unsettled %v, actions %d", x.Cells[6], x.Unsettled, len(x.Actions))
	}
	for _, ts := range r.toasts.list {
		if ts.attempt == att.ID && ts.state == toastUnknown {
			t.Fatalf("the apply's toast still says unknown: %q", ts.text)
		}
	}
	for _, in := range r.tabs[pageOverview].list().tbl.rows {
		if in.Unsettled != nil {
			t.Fatalf("the inbox still asks to verify: %v", in.Cells)
		}
	}
	if got := src.build(); len(got.Clarifications) != 1 {
		t.Fatalf("nothing was posted, yet %d clarifications are left", len(got.Clarifications))
	}
}

// interrupted writes an intent with no outcome into the audit log, as a steward killed
// mid-apply leaves it, through govern's audit API.
func interrupted(t *testing.T, audit string, req govern.Request, at time.Time) string {
	t.Helper()
	log, err := govern.OpenAudit(audit, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	id := govern.NewAttemptID(at)
	rec := govern.Record{V: 1, At: at.UTC().Format(time.RFC3339Nano), Attempt: id, Kind: govern.KindIntent, Action: req.Action,
		Target: req.Target, Actor: testActor, Fences: []string{"lease status active"}}
	if err := log.Append(rec); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestFlowResolveByHand: an interrupted reclaim (intent, no outcome) shows in Activity as
// unknown; from the palette, Resolve by hand opens the dialog, Record stays disabled until a
// result is chosen and a reason typed, and recording goes through Core.ResolveByHuman: the
// row shows the attempt settled, the audit log holds the human resolution with the reason.
func TestFlowResolveByHand(t *testing.T) {
	clk := &clock{t: fixedNow}
	c, ws, audit := testCore(t, false, clk.Now)
	claimShort(t, c, 401, "sess-4")
	src := &diskSource{ws: ws, now: clk.Now, ch: make(chan *model.Snapshot, 4)}
	lease := src.build().Claims[0].LeaseID
	id := interrupted(t, audit, govern.Request{Action: actionid.ReclaimExpired, Target: govern.Target{LeaseID: lease}}, clk.Now())
	clk.Add(time.Minute)

	tm := startFlow(t, Options{Core: c, Source: src, AuditPath: audit, Now: clk.Now}, src)
	src.ch <- src.build()
	pressAll(tm, "1")
	waitText(t, tm, "unknown outcome of lease.reclaim-expired")
	// Its inbox row is aged from the attempt (it showed "—").
	teatest.WaitFor(t, &screen{tm: tm}, func(b []byte) bool {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "unknown outcome of lease.reclaim-expired") && strings.Contains(l, " 1m00s ") {
				return true
			}
		}
		return false
	}, teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	pressAll(tm, "6", "/")
	for _, m := range typeText("reclaim-expired unknown") {
		tm.Send(m)
	}
	pressAll(tm, "enter")
	waitText(t, tm, "Activity · 1 of", "no outcome recorded: interrupted")
	pressAll(tm, ":")
	for _, m := range typeText("resolve by hand") {
		tm.Send(m)
	}
	pressAll(tm, "enter")
	waitText(t, tm, "Resolve attempt "+id+" by hand", "( ) failed")
	pressAll(tm, "tab", "enter") // Record is disabled: nothing chosen, no reason — enter says so
	waitText(t, tm, "Record needs a result")
	pressAll(tm, "esc")
	waitText(t, tm, "Activity · 1 of", "cancelled — nothing was done")
	pressAll(tm, "/", "ctrl+u")
	for _, m := range typeText("reclaim-expired") {
		tm.Send(m)
	}
	pressAll(tm, "enter", "R")
	waitText(t, tm, "Resolve attempt "+id+" by hand")
	pressAll(tm, "down", "down")
	waitText(t, tm, "(•) failed")
	for _, m := range typeText("lease still active in the DB, no reclaim event") {
		tm.Send(m)
	}
	pressAll(tm, "tab", "enter")
	waitText(t, tm, "attempt "+id+" resolved as failed by a human: lease still active")
	waitText(t, tm, "resolved by human as failed")

	tm.Send(tea.QuitMsg{})
	r := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Root)
	a := attemptOf(t, audit, actionid.ReclaimExpired)
	if a.Status() != govern.ResultFailed || len(a.Resolutions) != 1 {
		t.Fatalf("audit log: status %s, resolutions %+v", a.Status(), a.Resolutions)
	}
	res := a.Resolutions[0]
	if res.ResolvedBy != govern.ResolvedByHuman || res.Actor != testActor || !strings.Contains(res.Message, "lease still active in the DB, no reclaim event") {
		t.Fatalf("resolution: %+v", res)
	}
	if x := activityRow(t, r, id); x.Cells[6] != "failed" || x.Unsettled != nil {
		t.Fatalf("Activity row after the resolution: result %q, unsettled %v", x.Cells[6], x.Unsettled)
	}
	if got := src.build(); len(got.Claims) != 1 || got.Claims[0].LeaseStatus != "active" {
		t.Fatal("a resolution changed the supervised system")
	}
}

// auditRoot is a root on a core acting as role, whose audit log holds one interrupted
// reclaim; it returns the root and the attempt id, with Activity showing the attempt.
func auditRoot(t *testing.T, role govern.Role) (*Root, string, string) {
	t.Helper()
	dir := t.TempDir()
	ws := govern.Workspace{LocksDir: filepath.Join(dir, "locks"), DBPath: filepath.Join(dir, "cp.sqlite3"), RepoRoot: filepath.Join(dir, "repo"), Host: "bench"}
	if err := govern.InitWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	audit := filepath.Join(dir, "audit.jsonl")
	log, err := govern.OpenAudit(audit, nil)
	if err != nil {
		t.Fatal(err)
	}
	actor := testActor
	actor.Role = role
	c := govern.New(ws, log, govern.Options{Actor: actor, Now: func() time.Time { return fixedNow }})
	t.Cleanup(func() { c.Close(); log.Close() })
	id := interrupted(t, audit, govern.Request{Action: actionid.ReclaimExpired, Target: govern.Target{LeaseID: "L-9"}}, fixedNow.Add(-time.Minute))
	r := New(Options{Core: c, AuditPath: audit, Now: func() time.Time { return fixedNow }})
	send(r, tea.WindowSizeMsg{Width: 160, Height: 48}, SnapshotMsg{empty()})
	r.agen++
	drain(r, auditCmd(audit, r.agen))
	send(r, keyMsg("6"))
	if sel := r.list().tbl.selected(); sel == nil || sel.Unsettled == nil || sel.Unsettled.ID != id {
		t.Fatalf("Activity does not select the unknown attempt: %+v", sel)
	}
	return r, id, audit
}

// TestResolveRefusedByCore: a viewer may open the dialog (the workbench hides nothing), but
// the core refuses the resolution; the toast shows the core's words and the attempt stays
// unknown, the audit log unchanged.
func TestResolveRefusedByCore(t *testing.T) {
	r, id, audit := auditRoot(t, govern.RoleViewer)
	before, _, _ := govern.ReadAudit(audit)
	send(r, keyMsg("R"), keyMsg("down"))
	send(r, typeText("looked at it")...)
	send(r, keyMsg("tab"), keyMsg("enter"))
	f := plain(r)
	if !contains(f, "[REFUSED] resolve by hand of attempt "+id+" refused by the core: resolving an unknown outcome needs role operator") {
		t.Fatalf("no refusal toast in the core's words:\n%s", f)
	}
	after, _, _ := govern.ReadAudit(audit)
	if len(after) != len(before) {
		t.Fatalf("a refused resolution wrote %d records", len(after)-len(before))
	}
	if sel := r.list().tbl.selected(); sel == nil || sel.Unsettled == nil {
		t.Fatal("the attempt no longer reads unknown after a refusal")
	}
}

// TestVerifyWaitsForOwnApplies: while an apply of this workbench is in flight, v does not
// run the verifier (it would record that apply as interrupted) and says why; the action menu
// of an unknown attempt offers Verify and Resolve by hand, without a preview.
func TestVerifyWaitsForOwnApplies(t *testing.T) {
	r, id, audit := auditRoot(t, govern.RoleOperator)
	r.applying = 1
	before, _, _ := govern.ReadAudit(audit)
	send(r, keyMsg("v"))
	if !contains(plain(r), "1 action(s) of this workbench are still running") || r.audits.busy() {
		t.Fatalf("verify ran during an apply:\n%s", plain(r))
	}
	if after, _, _ := govern.ReadAudit(audit); len(after) != len(before) {
		t.Fatal("the verifier wrote while an apply was in flight")
	}
	r.applying = 0
	send(r, keyMsg("a"))
	f := plain(r)
	for _, want := range []string{"Verify the outcome from evidence (v)", "Resolve by hand: succeeded or failed (R)"} {
		if !contains(f, want) {
			t.Fatalf("menu lacks %q:\n%s", want, f)
		}
	}
	send(r, keyMsg("enter")) // Verify: the verifier reads the DB (the lease is not there)
	if a := attemptOf(t, audit, actionid.ReclaimExpired); a.Outcome == nil || a.Outcome.Result != govern.ResultUnknown {
		t.Fatalf("the verifier did not record the missing outcome: %+v", a.Outcome)
	}
	if !contains(plain(r), "verify: attempt "+id+" (lease.reclaim-expired) stays UNKNOWN") {
		t.Fatalf("no verify toast:\n%s", plain(r))
	}
	if sel := r.list().tbl.selected(); sel == nil || sel.Unsettled == nil || sel.Unsettled.ID != id {
		t.Fatal("the selection left the attempt when its outcome record was written")
	}
}
