package tui

import (
	"strings"
	"testing"
	"time"

	"steward/govern"
	"steward/model"
)

// hostile strings an attacker could put in a lock file, a DB row or a Gitea comment.
var hostile = []string{
	"\x1b]0;pwned title\x07",
	"\x1b[2J",
	"\x1b]52;c;cm0gLXJmIH4=\x07",
	"\u202eevil\u202c",
	"\u2066iso\u2069",
	"\x1bP+q\x1b\\",
	"\x9b31m",
	strings.Repeat("N", 10<<10),
}

func hostileSnapshot() *model.Snapshot {
	s := populated()
	h := strings.Join(hostile, "|")
	it := &model.Item{Kind: "issue", Number: 666, Org: h, Repo: h, Remote: h}
	ev := []model.Evidence{{Source: model.SourceLocks, Field: h, Value: h, At: fixedNow}}
	s.Sources.DB.Reason = h
	s.Sources.Gitea = model.SourceHealth{Status: model.StatusDegraded, Reason: h, ScannedAt: fixedNow}
	s.Claims = append(s.Claims, &model.Claim{Item: it, Role: h, TaskClass: h, Claimant: &model.Claimant{Username: h, Profile: h},
		SessionID: h, Phase: h, Contract: h, Freshness: h, LockFile: h, LeaseID: h, LeaseStatus: h, Evidence: ev, ExpiresAt: fixedNow.Add(time.Minute)})
	s.Contention = append(s.Contention, &model.Contention{Kind: model.ContentionLockLeaseMismatch, Item: it, Sessions: []string{h, h}, LockFiles: []string{h}, LeaseIDs: []string{h}, Evidence: ev})
	s.Clarifications = append(s.Clarifications, model.Clarification{Item: *it, Title: h, Marker: h, Question: "# " + h + "\n\n" + h, Rule: h, AskedBy: h, AskedAt: fixedNow, URL: h})
	s.Orphans = append(s.Orphans, &model.Orphan{Kind: model.OrphanKind(h), Item: it, LockFile: h, LeaseID: h, SessionID: h, Evidence: ev, InspectOnlyReason: h})
	s.Sessions = append(s.Sessions, &model.Session{SessionID: h, Role: h, Profile: h, Host: h, Status: h, Leases: []string{h}})
	s.Activity = append(s.Activity, model.Event{Key: h, Type: h, Item: it, SessionID: h, Message: h, At: fixedNow})
	s.Findings = []string{h}
	return s
}

// bad are the raw sequences no frame may contain.
var bad = []string{"\x1b]0;", "\x1b[2J", "\x1b]52", "\u202e", "\u2066", "\u2069", "\x1bP", "\x9b", "\x07", strings.Repeat("N", 300)}

func checkClean(t *testing.T, where, f string) {
	t.Helper()
	for _, b := range bad {
		if strings.Contains(f, b) {
			t.Errorf("%s: frame contains %q raw", where, b)
		}
	}
}

// TestHostileStrings feeds terminal attacks through every view, the detail pane, the menus,
// the confirm dialog, the answer editor and the toasts.
func TestHostileStrings(t *testing.T) {
	for _, sz := range sizes {
		r := newTestRoot(t, sz.w, sz.h, false)
		send(r, SnapshotMsg{hostileSnapshot()})
		h := strings.Join(hostile, "|")
		r.env.data.Audit = []event{{At: fixedNow, Source: "steward", Kind: line(h), Item: cut(h), Result: "unknown", Attempt: cut(h), Message: cut(h)}}
		r.env.data.merge()
		r.setRows()
		for i, id := range pageOrder {
			send(r, keyMsg(string(rune('1'+i))), keyMsg("G"))
			checkClean(t, id.title(), r.Render())
			send(r, keyMsg("enter"))
			checkClean(t, id.title()+" detail", r.Render())
			send(r, keyMsg("ctrl+d"), keyMsg("ctrl+d"))
			checkClean(t, id.title()+" detail scrolled", r.Render())
			send(r, keyMsg("a"))
			checkClean(t, id.title()+" actions", r.Render())
			send(r, keyMsg("esc"), keyMsg("esc"))
		}
		pv := allowedPreview()
		pv.Effects = []string{h}
		pv.Evidence = []string{h}
		pv.Refusal = &govern.Refusal{Code: h, Message: h}
		r.push(newConfirm(r.env.keys, []govern.Preview{pv}, 0, actorOf(r.opts.Core), nil))
		checkClean(t, "confirm", r.Render())
		r.stack.pop()
		r.push(newAnswerEditor(r.env.keys, &govern.Item{Org: h, Repo: h, Number: 1}, "# "+h, "", ""))
		send(r, typeText("\x1b]0;x\x07")...)
		checkClean(t, "editor", r.Render())
		r.stack.pop()
		// An unknown attempt whose audit record carries the attacks, through auditEvents, the
		// resolve dialog and the verify and resolve toasts.
		hr := &govern.Record{At: fixedNow.Add(time.Minute).Format(time.RFC3339Nano), Attempt: h, Kind: govern.KindIntent, Action: h, Message: h, Code: h,
			Target: govern.Target{LeaseID: h, Session: h, Item: &govern.Item{Org: h, Repo: h, Number: 1}}, Actor: govern.Actor{GiteaLogin: h}}
		r.env.data.Audit = auditEvents([]govern.Attempt{{ID: h, Intent: hr}})
		r.env.data.merge()
		r.setRows()
		send(r, keyMsg("6"), keyMsg("g"))
		if sel := r.list().tbl.selected(); sel == nil || sel.Unsettled == nil {
			t.Fatal("the hostile unknown attempt is not selectable")
		}
		send(r, keyMsg("R"), keyMsg("down"))
		send(r, typeText("\x1b]0;x\x07"+h[:40])...)
		if _, ok := r.stack.top().(*resolveDialog); !ok {
			t.Fatalf("R opened %T, not the resolve dialog", r.stack.top())
		}
		checkClean(t, "resolve dialog", r.Render())
		r.stack.pop()
		vm := verified(h, r.toasts.push(toastPending, "x", fixedNow), []govern.Verification{{Attempt: h, Action: h, Result: govern.ResultUnknown, Note: h, Evidence: []string{h}}}, nil)
		send(r, vm)
		checkClean(t, "verify toast", r.Render())
		id := r.toasts.push(toastPending, "x", fixedNow)
		r.toasts.settle(id, govern.Outcome{Attempt: h, Action: h, Result: govern.ResultUnknown, Code: h, Message: h}, fixedNow)
		r.resize()
		checkClean(t, "toast", r.Render())
		checkFrame(t, r.Render(), sz.w, sz.h)
	}
}
