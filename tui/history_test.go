package tui

import (
	"context"
	"strconv"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"steward/govern"
	"steward/govern/actionid"
	"steward/history"
	"steward/history/gather"
	"steward/leases"
	"steward/model"
)

// TestFlowHistoryCursor: the History view opens at now, where a claim released since is
// gone; stepping the time cursor back shows the fleet as it was then — the claim live, with
// when it ended — under a header saying the view is reconstructed.
func TestFlowHistoryCursor(t *testing.T) {
	clk := &clock{t: fixedNow}
	c, ws, audit := testCore(t, false, clk.Now)
	req := govern.Request{Action: actionid.Claim, Target: govern.Target{Session: "sess-1",
		Item: &govern.Item{Org: "acme", Repo: "widgets", Kind: "issue", Number: 301}},
		Params: govern.ClaimParams{Role: "author", Username: "bot-sess-1", PID: strconv.Itoa(999999)}}
	_, out, err := c.Run(context.Background(), req, "")
	if err != nil || out.Result != govern.ResultSucceeded {
		t.Fatalf("claim: %v %+v", err, out)
	}
	clk.Add(6 * time.Minute)
	_, out, err = c.Run(context.Background(), govern.Request{Action: actionid.Release,
		Target: govern.Target{LeaseID: out.Detail["lease_id"], Session: "sess-1"}}, "")
	if err != nil || out.Result != govern.ResultSucceeded {
		t.Fatalf("release: %v %+v", err, out)
	}
	clk.Add(6 * time.Minute) // now: 12:12; the claim lived 12:00 – 12:06
	src := &diskSource{ws: ws, now: clk.Now, ch: make(chan *model.Snapshot, 4)}
	hsrc := gather.Sources{LocksDir: ws.LocksDir, DB: leases.Target{Loc: ws.DBPath}, AuditPath: audit}
	tm := startFlow(t, Options{Core: c, Source: src, AuditPath: audit, Now: clk.Now,
		History: func(ctx context.Context) (*history.Evidence, error) {
			return gather.Read(ctx, hsrc, gather.Options{Now: clk.Now}), nil
		}}, src)
	src.ch <- src.build()

	pressAll(tm, "H")
	waitText(t, tm, "as of 2026-05-04 12:12:00Z, reconstructed", "actions disabled", "Claims live then (0)")
	pressAll(tm, "[") // 12:07: released a minute before
	waitText(t, tm, "as of 2026-05-04 12:07:00Z, reconstructed", "Claims live then (0)")
	pressAll(tm, "[") // 12:02: live then
	waitText(t, tm, "as of 2026-05-04 12:02:00Z, reconstructed", "Claims live then (1)", "acme/widgets#301", "sess-1",
		"ended 2026-05-04 12:06:00Z")
	pressAll(tm, "a") // no action reaches a page while looking at the past
	pressAll(tm, "enter")
	waitText(t, tm, "Timeline of acme/widgets#301", "lease.claim", "lease.release", "worker.release succeeded")
	pressAll(tm, "esc", "esc")
	waitText(t, tm, "Claims")

	tm.Send(tea.QuitMsg{})
	r := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Root)
	if r.histOn || r.stack.open() {
		t.Fatalf("history still open (%v) or a dialog opened (%T)", r.histOn, r.stack.top())
	}
}

// heatEvidence is a fixed contention history: four sessions over five items in an hour.
func heatEvidence() *history.Evidence {
	t0 := fixedNow.Add(-time.Hour)
	it := func(n int64) history.Item { return history.Item{Org: "acme", Repo: "widgets", Number: n} }
	sp := func(id, s string, n int64, from, to time.Duration) history.LeaseSpan {
		l := history.LeaseSpan{Lease: id, Session: s, Item: it(n), Start: t0.Add(from), ExpiresAt: t0.Add(from + 10*time.Minute), Source: history.SourceLeases}
		if to > 0 {
			l.Ended, l.End, l.Status = true, t0.Add(to), "released"
		}
		return l
	}
	ev := &history.Evidence{Read: fixedNow, States: []history.SourceState{
		{Source: history.SourceEvents, Read: true, From: t0}, {Source: history.SourceLeases, Read: true, From: t0},
		{Source: history.SourceLocks, Read: true}, {Source: history.SourceAudit, Read: true}}}
	ev.Leases = []history.LeaseSpan{
		sp("L1", "sim-worker-1", 12, 0, 20*time.Minute), sp("L2", "sim-worker-2", 12, 10*time.Minute, 30*time.Minute),
		sp("L3", "sim-worker-3", 7, 5*time.Minute, 25*time.Minute), sp("L4", "sim-worker-1", 3, 30*time.Minute, 0),
		sp("L5", "sim-worker-4", 21, 40*time.Minute, 0),
	}
	n := 0
	ref := func(s, holder string, item int64, d time.Duration) history.Entry {
		n++
		return history.Entry{At: t0.Add(d), Source: history.SourceEvents, Ref: "events#" + strconv.Itoa(n), Kind: history.KindRefused,
			Item: it(item), Session: s, Holder: holder, Text: "claim.refused"}
	}
	for i := 0; i < 6; i++ {
		ev.Entries = append(ev.Entries, ref("sim-worker-4", "sim-worker-1", 12, time.Duration(i+1)*time.Minute))
	}
	ev.Entries = append(ev.Entries, ref("sim-worker-2", "sim-worker-3", 7, 11*time.Minute), ref("sim-worker-2", "sim-worker-3", 7, 12*time.Minute),
		ref("sim-worker-3", "sim-worker-1", 3, 35*time.Minute), ref("sim-worker-1", "sim-worker-4", 21, 45*time.Minute))
	ev.Gaps = []history.Gap{{Kind: history.GapDamaged, Source: history.SourceAudit, Reason: "line 17 is unreadable (torn record): what it recorded, and when, is unknown"}}
	ev.Finish()
	return ev
}

// TestGoldenHistoryHeat: the heatmap at 80×24 and 160×48 — hottest items (the collision on
// #12) and the most refused sessions first, shades readable without colour.
func TestGoldenHistoryHeat(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			r := newTestRoot(t, sz.w, sz.h, false)
			ev := heatEvidence()
			r.opts.History = func(context.Context) (*history.Evidence, error) { return ev, nil }
			send(r, keyMsg("H"), keyMsg("m"))
			requireGolden(t, r)
		})
	}
}

// BenchmarkHistoryTimelineView10k draws an item timeline of 10,000 entries at 160×48
// (≤ 50 ms), scrolled to its middle.
func BenchmarkHistoryTimelineView10k(b *testing.B) {
	it := history.Item{Org: "acme", Repo: "widgets", Number: 1}
	tl := history.Timeline{Entries: make([]history.Entry, 10000)}
	for i := range tl.Entries {
		tl.Entries[i] = history.Entry{At: fixedNow.Add(time.Duration(i) * time.Second), Source: history.SourceEvents,
			Ref: "events#" + strconv.Itoa(i), Kind: history.KindHeartbeat, Item: it, Session: "sess-1", Text: "lease.renew: lease renewed"}
	}
	h := newHistoryView(defaultKeyMap().History)
	h.ev, h.cursor = &history.Evidence{Read: fixedNow}, fixedNow
	h.tl, h.tlName = &tl, it.String()
	h.SetSize(160, 48)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.scroll = 5000
		if v := h.View(); len(v) == 0 {
			b.Fatal("empty")
		}
	}
}
