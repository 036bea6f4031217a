package tui

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"steward/govern"
	"steward/govern/actionid"
	"steward/locks"
	"steward/locks/lockrec"
	"steward/model"
)

// deadClaims makes n real claims through the core for processes that do not exist, their
// one-minute leases five minutes past: what dead workers leave behind.
func deadClaims(t *testing.T, c *govern.Core, clk *clock, first int64, n int) {
	t.Helper()
	for i := range n {
		claimShort(t, c, first+int64(i), "sess-"+strconv.FormatInt(first+int64(i), 10))
	}
	clk.Add(5 * time.Minute)
}

// On a dead claim's row, c shows the core's recover plan — every
// step, both on the first screen at 80×24 too, one typed phrase — and once the phrase matches, enter applies it (focus still on
// Cancel did not cancel): the lease ends, the lock is retired, and the audit log holds one
// attempt with a step record per step.
func TestFlowRecoverDeadClaim(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{80, 24}, {160, 48}} {
		t.Run(strconv.Itoa(sz.w)+"x"+strconv.Itoa(sz.h), func(t *testing.T) {
			clk := &clock{t: fixedNow}
			c, ws, audit := testCore(t, false, clk.Now)
			deadClaims(t, c, clk, 501, 1)
			src := &diskSource{ws: ws, now: clk.Now, ch: make(chan *model.Snapshot, 4)}
			tm := startFlowAt(t, Options{Core: c, Source: src, AuditPath: audit, Now: clk.Now}, src, sz.w, sz.h)
			src.ch <- src.build()
			pressAll(tm, "2")
			waitText(t, tm, "acme/widgets#501")
			pressAll(tm, "c")
			waitText(t, tm, "item.recover", "step 1 of 2, lease.reclaim-expired", "step 2 of 2, lock.retire", `type "recover acme/widgets#501"`)
			for _, m := range typeText("recover acme/widgets#501") {
				tm.Send(m)
			}
			pressAll(tm, "enter")
			waitText(t, tm, "SUCCEEDED")
			waitText(t, tm, "Claims · 0 of 0")
			tm.Send(tea.QuitMsg{})
			tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second))

			name, _ := locks.Name(lockrec.Key{Org: "acme", Repo: "widgets", Issue: 501})
			if e := locks.ReadFile(ws.LocksDir, name); !e.Missing {
				t.Error("the lock is still live")
			}
			recs, _, _ := govern.ReadAudit(audit)
			var rec *govern.Attempt
			for _, a := range govern.Attempts(recs) {
				if a.Intent != nil && a.Intent.Action == actionid.Recover {
					rec = &a
				}
			}
			if rec == nil || rec.Status() != govern.ResultSucceeded || len(rec.Steps) != 2 {
				t.Fatalf("the recover attempt: %+v", rec)
			}
		})
	}
}

// The reclaim preview names the owner's liveness and what remains (the
// lock file); after it the row shows the new state — a lock no lease backs — and the detail
// says so instead of blank "status =" and "phase =".
func TestFlowReclaimShowsWhatRemains(t *testing.T) {
	clk := &clock{t: fixedNow}
	c, ws, audit := testCore(t, false, clk.Now)
	deadClaims(t, c, clk, 601, 1)
	src := &diskSource{ws: ws, now: clk.Now, ch: make(chan *model.Snapshot, 4)}
	tm := startFlow(t, Options{Core: c, Source: src, AuditPath: audit, Now: clk.Now}, src)
	src.ch <- src.build()
	pressAll(tm, "5", "/")
	for _, m := range typeText("past") {
		tm.Send(m)
	}
	pressAll(tm, "enter", "a")
	waitText(t, tm, "Reclaim an expired lease", "(1 of 1 allowed)")
	pressAll(tm, "enter")
	waitText(t, tm, "owner pid 999999", "remains: lock file")
	pressAll(tm, "tab", "enter")
	waitText(t, tm, "SUCCEEDED")
	pressAll(tm, "2")
	waitText(t, tm, "lock only · expired")
	pressAll(tm, "enter")
	waitText(t, tm, "no live lease row backs this claim")
	tm.Send(tea.QuitMsg{})
	r := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Root)
	if f := plain(r); strings.Contains(f, "status = \n") || strings.Contains(f, "phase = \n") {
		t.Fatalf("blank fields in the detail:\n%s", f)
	}
}

// A bulk preview of six targets can be read in full before apply 6 is
// typed: pgdn pages through every target, the dialog says how many were read until all
// were, and then the apply runs on all six.
func TestFlowBulkPreviewReadInFull(t *testing.T) {
	clk := &clock{t: fixedNow}
	c, ws, audit := testCore(t, false, clk.Now)
	deadClaims(t, c, clk, 701, 6)
	src := &diskSource{ws: ws, now: clk.Now, ch: make(chan *model.Snapshot, 4)}
	tm := startFlowAt(t, Options{Core: c, Source: src, AuditPath: audit, Now: clk.Now}, src, 80, 24)
	src.ch <- src.build()
	pressAll(tm, "5", "/")
	for _, m := range typeText("past") {
		tm.Send(m)
	}
	pressAll(tm, "enter", "ctrl+a", "a")
	waitText(t, tm, "(6 of 6 allowed)")
	pressAll(tm, "enter")
	waitText(t, tm, "bulk: 6 targets", "you have read 1 of 6 targets")
	seen := map[string]bool{}
	for i := 0; i < 20 && len(seen) < 6; i++ {
		pressAll(tm, "pgdown")
		for n := 701; n <= 706; n++ {
			if frameHas(t, tm, "item acme/widgets#"+strconv.Itoa(n)) {
				seen[strconv.Itoa(n)] = true
			}
		}
	}
	if len(seen) != 6 {
		t.Fatalf("pgdn showed %d of the 6 targets: %v", len(seen), seen)
	}
	waitGone(t, tm, "you have read")
	for _, m := range typeText("apply 6") {
		tm.Send(m)
	}
	pressAll(tm, "enter")
	waitText(t, tm, "Orphans · 0 of")
	// A lease's row leaves with its commit; the apply writes its outcome just after: wait
	// for the sixth outcome (a minute is a hang).
	succeeded := func() int {
		recs, _, _ := govern.ReadAudit(audit)
		n := 0
		for _, a := range govern.Attempts(recs) {
			if a.Intent != nil && a.Intent.Action == actionid.ReclaimExpired && a.Status() == govern.ResultSucceeded {
				n++
			}
		}
		return n
	}
	for deadline := time.Now().Add(time.Minute); succeeded() < 6 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	tm.Send(tea.QuitMsg{})
	tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second))
	if n := succeeded(); n != 6 {
		t.Fatalf("%d reclaims succeeded, want 6", n)
	}
}

// frameHas reports whether the screen shows s now (after every message sent before).
func frameHas(t *testing.T, tm *teatest.TestModel, s string) bool {
	t.Helper()
	return strings.Contains(currentFrame(t, tm), s)
}

func currentFrame(t *testing.T, tm *teatest.TestModel) string {
	t.Helper()
	ch := make(chan string, 1)
	tm.Send(probeMsg{ch})
	select {
	case f := <-ch:
		return f
	case <-time.After(10 * time.Second):
		t.Fatal("the program did not answer a probe")
	}
	return ""
}

// waitGone waits until the screen no longer shows s.
func waitGone(t *testing.T, tm *teatest.TestModel, s string) {
	t.Helper()
	teatest.WaitFor(t, &screen{tm: tm}, func(b []byte) bool {
		if i := bytes.LastIndex(b, []byte(frameMark)); i >= 0 {
			b = b[i:]
		}
		return len(b) > 0 && !bytes.Contains(b, []byte(s))
	}, teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}
