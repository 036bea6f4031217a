package tui

import (
	"testing"
	"time"

	"steward/govern"
	"steward/govern/actionid"
)

func allowedPreview() govern.Preview {
	return govern.Preview{
		Request:  govern.Request{Action: actionid.ReclaimExpired, Target: govern.Target{LeaseID: "L-103"}},
		Spec:     govern.Spec{ID: actionid.ReclaimExpired, Title: "Reclaim an expired lease", MinRole: govern.RoleOperator, Tier: govern.TierGatedWrite},
		Allowed:  true,
		Effects:  []string{"lease L-103: active → expired", "lock acme_widgets_103.json archived to retired/ with a recovery block"},
		Fences:   []string{"lease L-103 status active, expires_at 2026-05-04T11:56:00Z, holder sess-c3", "lock_generation 7 + task_session_id ts-103"},
		Evidence: []string{"expires_at passed 4m00s ago", "owner pid 312 dead on bench"},
		Inverse:  &govern.Request{Action: actionid.RestoreLock},
		At:       fixedNow,
	}
}

func refusedPreview() govern.Preview {
	p := allowedPreview()
	p.Request = govern.Request{Action: actionid.RetireLock, Target: govern.Target{LockFile: "acme_widgets_106.json"}}
	p.Spec = govern.Spec{ID: actionid.RetireLock, Title: "Retire a dead or expired lock", MinRole: govern.RoleController, Tier: govern.TierPrivileged}
	p.Allowed = false
	p.Refusal = &govern.Refusal{Code: govern.CodeRoleTooLow, Message: "lock.retire needs role controller; you are operator — ask a controller"}
	p.Effects = nil
	return p
}

func destructivePreview() govern.Preview {
	p := allowedPreview()
	p.Request = govern.Request{Action: actionid.AbandonStale, Target: govern.Target{LeaseID: "L-103"}}
	p.Spec = govern.Spec{ID: actionid.AbandonStale, Title: "Abandon a stale lease with proof", MinRole: govern.RoleOperator, Tier: govern.TierDestructive}
	p.ConfirmPhrase = "abandon L-103"
	return p
}

// unknownAttempt is an interrupted reclaim as auditEvents describes it.
func unknownAttempt() *attemptRef {
	return &attemptRef{ID: "att-20260504T115800-0a1b2c3d4e5f", Action: actionid.ReclaimExpired, Target: "lease L-103",
		Actor: "maint", Message: "no outcome recorded: interrupted, or still in flight", At: fixedNow.Add(-2 * time.Minute)}
}

func TestGoldenDialogs(t *testing.T) {
	cases := []struct {
		name  string
		setup func(r *Root)
	}{
		{"confirm-allowed", func(r *Root) {
			r.push(newConfirm(r.env.keys, []govern.Preview{allowedPreview()}, 0, actorOf(r.opts.Core), nil))
		}},
		{"confirm-refused", func(r *Root) {
			r.push(newConfirm(r.env.keys, []govern.Preview{refusedPreview()}, 0, actorOf(r.opts.Core), nil))
		}},
		{"confirm-typed", func(r *Root) {
			r.push(newConfirm(r.env.keys, []govern.Preview{destructivePreview()}, 0, actorOf(r.opts.Core), nil))
			send(r, typeText("abandon L-")...)
		}},
		{"confirm-bulk", func(r *Root) {
			r.push(newConfirm(r.env.keys, []govern.Preview{allowedPreview(), allowedPreview(), refusedPreview()}, 2, actorOf(r.opts.Core), nil))
		}},
		{"menu", func(r *Root) {
			r.push(&actionMenu{keys: r.env.keys, names: []string{"Claim on acme/widgets#103", "live-lock-dead-owner acme/widgets#106"}, hidden: 1, opts: []menuOption{
				{action: actionid.ReclaimExpired, title: "Reclaim an expired lease", previews: []govern.Preview{allowedPreview()}},
				{action: actionid.RetireLock, title: "Retire a dead or expired lock", previews: []govern.Preview{refusedPreview()}},
			}})
		}},
		{"answer-editor", func(r *Root) {
			send(r, keyMsg("4"))
			sel := r.list().tbl.selected()
			r.push(newAnswerEditor(r.env.keys, sel.ItemRef, sel.Markdown, "", ""))
			send(r, typeText("Use **YAML**.")...)
			send(r, keyMsg("enter"))
			send(r, typeText("- matches the docs")...)
		}},
		{"answer-preview", func(r *Root) {
			send(r, keyMsg("4"))
			sel := r.list().tbl.selected()
			r.push(newAnswerEditor(r.env.keys, sel.ItemRef, sel.Markdown, "", ""))
			send(r, typeText("Use **YAML**.")...)
			send(r, keyMsg("ctrl+p"))
		}},
		{"resolve", func(r *Root) { r.push(newResolveDialog(r.env.keys, unknownAttempt(), actorOf(r.opts.Core))) }},
		{"resolve-filled", func(r *Root) {
			r.push(newResolveDialog(r.env.keys, unknownAttempt(), actorOf(r.opts.Core)))
			send(r, keyMsg("down"), keyMsg("down"))
			send(r, typeText("lease still active in the DB; no reclaim event")...)
			send(r, keyMsg("tab"))
		}},
		{"menu-unknown", func(r *Root) {
			var x row
			x.setUnsettled(unknownAttempt())
			drain(r, r.intent(actIntent{rows: []*row{&x}}))
		}},
		{"help", func(r *Root) { send(r, keyMsg("2"), keyMsg("?")) }},
		{"palette", func(r *Root) { send(r, keyMsg("2"), keyMsg(":"), keyMsg("s")) }},
		{"detail-claim", func(r *Root) {
			send(r, keyMsg("2"), keyMsg("j"), keyMsg("j"))
			r.tabs[pageClaims].list().detail = true
			r.tabs[pageClaims].list().layout()
			r.raw.got["acme_widgets_103.json"] = "{\n  \"issue_number\": 103,\n  \"lock_generation\": 7\n}"
		}},
		{"detail-clarification", func(r *Root) { send(r, keyMsg("4"), keyMsg("enter")) }},
		{"toasts-pending-succeeded", func(r *Root) {
			now := r.opts.Now()
			r.toasts.push(toastPending, "lease.reclaim-expired on lease L-101 …", now)
			id := r.toasts.push(toastPending, "", now)
			r.toasts.settle(id, govern.Outcome{Attempt: "att-1", Action: actionid.ReclaimExpired, Result: govern.ResultSucceeded, Effects: []string{"lease L-103 expired"}}, now)
			r.resize()
		}},
		{"toasts-refused-failed-unknown", func(r *Root) {
			now := r.opts.Now()
			for i, res := range []govern.Result{govern.ResultRefused, govern.ResultFailed, govern.ResultUnknown} {
				id := r.toasts.push(toastPending, "", now)
				r.toasts.settle(id, govern.Outcome{Attempt: "att-" + string(rune('1'+i)), Action: actionid.ReclaimExpired, Result: res,
					Code: "fence_moved", Message: "the lease moved since the preview; preview again", Effects: []string{"lease L-103 expired"}}, now)
			}
			r.resize()
		}},
	}
	for _, sz := range sizes {
		for _, c := range cases {
			t.Run(sz.name+"/"+c.name, func(t *testing.T) {
				r := newTestRoot(t, sz.w, sz.h, false)
				send(r, SnapshotMsg{populated()})
				c.setup(r)
				requireGolden(t, r)
			})
		}
	}
}

// TestToastLifetimes: settled toasts expire after their time to live; unknown stays until
// dismissed; pending stays until its answer.
func TestToastLifetimes(t *testing.T) {
	var ts toasts
	now := fixedNow
	p := ts.push(toastPending, "pending", now)
	u := ts.push(toastPending, "", now)
	ts.settle(u, govern.Outcome{Attempt: "att-9", Result: govern.ResultUnknown}, now)
	s := ts.push(toastPending, "", now)
	ts.settle(s, govern.Outcome{Result: govern.ResultSucceeded}, now)
	ts.expire(now.Add(time.Hour))
	if len(ts.list) != 2 || ts.list[0].id != p || ts.list[1].id != u {
		t.Fatalf("after expiry: %+v", ts.list)
	}
	ts.dismiss()
	if len(ts.list) != 1 || ts.list[0].id != p {
		t.Fatalf("dismiss should remove the unknown toast and keep the pending one: %+v", ts.list)
	}
}
