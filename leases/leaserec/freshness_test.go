package leaserec

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 7, 23, 10, 0, 0, 0, time.UTC)

func ts(t time.Time) Timestamp { return ParseTimestamp(FormatTime(t)) }

func activeLease(created, exp, hb Timestamp) Lease {
	return Lease{LeaseID: "l1", Status: StatusActive, CreatedAt: created, ExpiresAt: exp, LastHeartbeatAt: hb}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	author, reviewer := DefaultPolicy(ClassAuthorIssueWork), DefaultPolicy(ClassReviewerPR)
	live := Evidence{Owner: ProcessAlive, Worktree: WorktreePresent}
	unknown := Evidence{Owner: ProcessUnknown, Worktree: WorktreeUnknown}
	base := activeLease(ts(t0), ts(t0.Add(10*time.Minute)), ts(t0))
	with := func(f func(*Lease)) Lease { l := base; f(&l); return l }
	tests := []struct {
		name     string
		l        Lease
		p        Policy
		ev       Evidence
		now      time.Time
		want     Freshness
		reason   string
		deadline time.Time
		warn     bool
	}{
		{"active", base, author, live, t0.Add(time.Minute), FreshActive, "", t0.Add(10 * time.Minute), false},
		{"warning at 5 min", base, author, live, t0.Add(5 * time.Minute), FreshActive, "", t0.Add(10 * time.Minute), true},
		{"expiry equal to now is expired", base, author, live, t0.Add(10 * time.Minute), FreshExpired, "not after now", time.Time{}, false},
		{"past expiry", base, author, live, t0.Add(time.Hour), FreshExpired, "", time.Time{}, false},
		{"missing expiry kept held", with(func(l *Lease) { l.ExpiresAt = ParseTimestamp("") }), reviewer, live, t0.Add(time.Hour), FreshActive, "missing", time.Time{}, true},
		{"unparseable expiry kept held", with(func(l *Lease) { l.ExpiresAt = ParseTimestamp("not-a-date") }), reviewer, live, t0.Add(time.Hour), FreshActive, "unparseable", time.Time{}, true},
		{"dead owner", base, author, Evidence{Owner: ProcessDead}, t0.Add(time.Minute), FreshStaleDeadProcess, "dead", t0.Add(10 * time.Minute), false},
		{"missing worktree", base, author, Evidence{Worktree: WorktreeMissing}, t0.Add(time.Minute), FreshStaleMissingWorktree, "missing", t0.Add(10 * time.Minute), false},
		{"unknown evidence is not stale", base, reviewer, unknown, t0.Add(time.Minute), FreshActive, "", t0.Add(10 * time.Minute), false},
		{"absolute cap", with(func(l *Lease) {
			l.CreatedAt = ts(t0.Add(-8 * time.Hour))
		}), author, live, t0.Add(time.Minute), FreshStaleAbsoluteCap, "absolute cap", t0.Add(10 * time.Minute), false},
		{"cap ahead is a deadline", with(func(l *Lease) {
			l.CreatedAt = ts(t0.Add(-8*time.Hour + 2*time.Minute))
		}), author, live, t0.Add(time.Minute), FreshActive, "", t0.Add(2 * time.Minute), false},
		{"no cap for reviewer", with(func(l *Lease) {
			l.CreatedAt = ts(t0.Add(-80 * time.Hour))
		}), reviewer, live, t0.Add(time.Minute), FreshActive, "", t0.Add(10 * time.Minute), false},
		{"missed heartbeat with missing expiry", with(func(l *Lease) {
			l.ExpiresAt = ParseTimestamp("")
		}), author, live, t0.Add(10 * time.Minute), FreshStaleMissedHeartbeat, "no heartbeat", t0.Add(8 * time.Hour), true},
		{"missed heartbeat deadline", with(func(l *Lease) {
			l.ExpiresAt = ParseTimestamp("")
		}), author, live, t0.Add(time.Minute), FreshActive, "missing", t0.Add(10 * time.Minute), false},
		{"released passes through", with(func(l *Lease) { l.Status = StatusReleased }), author, live, t0, freshReleased, "", time.Time{}, false},
		{"abandoned passes through", with(func(l *Lease) { l.Status = StatusAbandoned }), author, live, t0, freshAbandoned, "", time.Time{}, false},
		{"status expired", with(func(l *Lease) { l.Status = StatusExpired }), author, live, t0, FreshExpired, "", time.Time{}, false},
		{"unknown status held", with(func(l *Lease) { l.Status = "weird" }), reviewer, live, t0, FreshActive, "unknown status", t0.Add(10 * time.Minute), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := Classify(tc.l, tc.p, tc.ev, tc.now)
			if r.Value != tc.want || !r.NextDeadline.Equal(tc.deadline) || r.Warning != tc.warn {
				t.Fatalf("got %+v", r)
			}
			if tc.reason != "" && !strings.Contains(strings.Join(r.Reasons, "|"), tc.reason) {
				t.Fatalf("reasons %v lack %q", r.Reasons, tc.reason)
			}
		})
	}
}

func TestSessionLive(t *testing.T) {
	t.Parallel()
	s := Session{Status: "active", LastHeartbeatAt: ts(t0)}
	cases := []struct {
		s    Session
		p    ProcessState
		now  time.Time
		want bool
	}{
		{s, ProcessAlive, t0.Add(14 * time.Minute), true},
		{s, ProcessUnknown, t0.Add(14 * time.Minute), true},
		{s, ProcessAlive, t0.Add(15 * time.Minute), false},
		{s, ProcessDead, t0, false},
		{Session{Status: "ended"}, ProcessAlive, t0, false},
	}
	for i, c := range cases {
		if got := SessionLive(c.s, c.p, c.now); got != c.want {
			t.Errorf("case %d: %v", i, got)
		}
	}
}
func TestParseTimestamp(t *testing.T) {
	t.Parallel()
	want := time.Date(2026, 7, 23, 10, 0, 0, 0, time.UTC)
	for _, s := range []string{"2026-07-23T10:00:00Z", "2026-07-23T10:00:00+00:00", "2026-07-23T12:00:00+02:00",
		"2026-07-23T10:00:00", "2026-07-23 10:00:00", "2026-07-23T10:00:00.000000Z", "2026-07-23T10:00Z"} {
		if got := ParseTimestamp(s); !got.OK() || !got.Time.Equal(want) {
			t.Errorf("%q -> %+v", s, got)
		}
	}
	if ParseTimestamp(" ").State != TimeMissing || ParseTimestamp("not-a-date").State != TimeUnparseable {
		t.Error("states wrong")
	}
}
