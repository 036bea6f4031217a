package leaserec

import (
	"strings"
	"testing"
	"time"
)

func lookupFrom(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestDefaultPolicyTable(t *testing.T) {
	t.Parallel()
	eight := 8.0
	tests := []struct {
		class TaskClass
		ttl   float64
		cap   *float64
		retir bool
		hb    bool
	}{
		{ClassAuthorIssueWork, 10, &eight, true, true},
		{ClassReviewerPR, 10, nil, false, false},
		{classMergerPR, 10, nil, false, false},
		{ClassConflictFix, 120, nil, false, false},
	}
	set := DefaultPolicies()
	for _, tc := range tests {
		t.Run(string(tc.class), func(t *testing.T) {
			p := set.For(tc.class)
			if p.TaskClass != tc.class || p.InitialTTLMinutes != tc.ttl || p.HeartbeatCadenceMinutes != 2 ||
				p.StaleWarningMinutes != 5 || p.MissedHeartbeatGraceMinutes != 10 ||
				p.RecoveryGraceMinutes != 10 || p.TerminalRaceDrainMinutes != 2 ||
				p.TerminalRetirementEligible != tc.retir || p.HeartbeatLifecycleActive != tc.hb {
				t.Fatalf("policy %+v", p)
			}
			c, ok := p.AbsoluteCap()
			if (tc.cap == nil) == ok || (ok && c != 8*time.Hour) {
				t.Fatalf("cap %v %v", c, ok)
			}
			if p.InitialTTL() != time.Duration(tc.ttl)*time.Minute || p.HeartbeatCadence() != 2*time.Minute ||
				p.StaleWarning() != 5*time.Minute || p.MissedHeartbeatGrace() != 10*time.Minute ||
				p.RecoveryGrace() != 10*time.Minute || p.TerminalRaceDrain() != 2*time.Minute {
				t.Fatalf("durations wrong: %+v", p)
			}
			d := set.Describe(tc.class)
			if d["lifecycle_version"] != lifecycleVersion || d["task_class"] != string(tc.class) || len(d) != 11 {
				t.Fatalf("describe %v", d)
			}
		})
	}
}

func TestUnknownClassIsAuthor(t *testing.T) {
	t.Parallel()
	for _, c := range []TaskClass{"", "nonsense", "AUTHOR_ISSUE_WORK"} {
		if p := DefaultPolicies().For(c); p.TaskClass != ClassAuthorIssueWork {
			t.Errorf("%q -> %s", c, p.TaskClass)
		}
		if p := (PolicySet{}).For(c); p.TaskClass != ClassAuthorIssueWork {
			t.Errorf("zero set %q -> %s", c, p.TaskClass)
		}
	}
}

func TestEnvVarName(t *testing.T) {
	t.Parallel()
	if got := EnvVarName(ClassAuthorIssueWork, FieldInitialTTLMinutes); got != "GITEA_LEASE_POLICY_AUTHOR_ISSUE_WORK_INITIAL_TTL_MINUTES" {
		t.Fatal(got)
	}
}

func TestOverrides(t *testing.T) {
	t.Parallel()
	num := func(p Policy, f string) float64 {
		v := p.Describe()[f]
		if v == nil {
			return -1
		}
		return v.(float64)
	}
	fields := []string{FieldInitialTTLMinutes, FieldHeartbeatCadenceMinutes, FieldStaleWarningMinutes,
		FieldMissedHeartbeatGraceMinutes, FieldAbsoluteCapHours, FieldRecoveryGraceMinutes, FieldTerminalRaceDrainMinutes}
	for _, c := range KnownTaskClasses() {
		for _, f := range fields {
			def := num(DefaultPolicy(c), f)
			tests := []struct {
				val     string
				applied bool
				want    float64
				reason  string
			}{
				{"42.5", true, 42.5, ""},
				{" 7 ", true, 7, ""},
				{"abc", false, def, "malformed"},
				{"NaN", false, def, "malformed"},
				{"+Inf", false, def, "malformed"},
				{"0", false, def, "> 0"},
				{"-3", false, def, "> 0"},
				{"", false, def, "malformed"},
			}
			for _, tc := range tests {
				name := EnvVarName(c, f)
				set := LoadPolicies(lookupFrom(map[string]string{name: tc.val}))
				if got := num(set.For(c), f); got != tc.want {
					t.Errorf("%s=%q: got %v want %v", name, tc.val, got, tc.want)
				}
				if len(set.Overrides) != 1 || set.Overrides[0].Applied != tc.applied ||
					!strings.Contains(set.Overrides[0].Reason, tc.reason) {
					t.Errorf("%s=%q: report %+v", name, tc.val, set.Overrides)
				}
				if len(set.Ignored()) != map[bool]int{true: 0, false: 1}[tc.applied] {
					t.Errorf("%s=%q: ignored %+v", name, tc.val, set.Ignored())
				}
				for _, other := range KnownTaskClasses() {
					if other != c && num(set.For(other), f) != num(DefaultPolicy(other), f) {
						t.Errorf("%s leaked into %s", name, other)
					}
				}
			}
		}
	}
}

func TestBooleanFieldsNotOverridable(t *testing.T) {
	t.Parallel()
	set := LoadPolicies(lookupFrom(map[string]string{
		EnvVarName(ClassReviewerPR, FieldHeartbeatLifecycleActive):   "true",
		EnvVarName(ClassReviewerPR, FieldTerminalRetirementEligible): "1",
	}))
	p := set.For(ClassReviewerPR)
	if p.HeartbeatLifecycleActive || p.TerminalRetirementEligible || len(set.Ignored()) != 2 {
		t.Fatalf("%+v %+v", p, set.Overrides)
	}
}

// TestClassOfSeedRoles: without a task_class the policy row follows the lease's role and
// work kind (compared folded), one case per role of the seed (usage_events role list,
// #651: author, reviewer, merger, reconciler, controller) plus the conflict-fix window; a
// lease that maps to no row is read conservatively — no absolute cap, no missed-heartbeat
// staleness — so a heartbeating reviewer, controller or reconciler lease older than 8 h
// reads active, never stale_absolute_cap (the core would let it be abandoned).
func TestClassOfSeedRoles(t *testing.T) {
	t.Parallel()
	now := t0.Add(9 * time.Hour) // past the author cap
	live := Evidence{Owner: ProcessAlive, Worktree: WorktreePresent}
	for _, tc := range []struct {
		role, kind, phase, class string
		want                     TaskClass
		fresh                    Freshness
	}{
		{"author", "issue", "implementing", "", ClassAuthorIssueWork, FreshStaleAbsoluteCap},
		{"Author", "Issue", "", "", ClassAuthorIssueWork, FreshStaleAbsoluteCap},
		{"reviewer", "pr", "", "", ClassReviewerPR, FreshActive},
		{" REVIEWER ", "PR", "", "", ClassReviewerPR, FreshActive},
		{"merger", "pr", "merging", "", classMergerPR, FreshActive},
		{"author", "pr", "", "", ClassConflictFix, FreshActive},
		{"", "pr", "conflict_fix", "", ClassConflictFix, FreshActive},
		{"reconciler", "issue", "reconciling", "", classUnmapped, FreshActive},
		{"controller", "issue", "awaiting_handoff", "", classUnmapped, FreshActive},
		{"reviewer", "issue", "", "", classUnmapped, FreshActive},
		{"merger", "issue", "", "", classUnmapped, FreshActive},
		{"", "issue", "", "", classUnmapped, FreshActive},
		{"wizard", "pr", "", "", classUnmapped, FreshActive},
		{"author", "", "", "", classUnmapped, FreshActive},
		// A recorded task_class wins (steward's own column), in any case.
		{"reviewer", "pr", "", "author_issue_work", ClassAuthorIssueWork, FreshStaleAbsoluteCap},
		{"author", "issue", "", "Reviewer_PR", ClassReviewerPR, FreshActive},
		// An unknown recorded class falls back to role and kind.
		{"merger", "pr", "", "mystery", classMergerPR, FreshActive},
	} {
		t.Run(tc.role+"/"+tc.kind+"/"+tc.phase+"/"+tc.class, func(t *testing.T) {
			l := Lease{LeaseID: "l", Status: StatusActive, Role: tc.role, Phase: tc.phase, TaskClass: TaskClass(tc.class),
				Work: WorkRef{Kind: WorkKind(tc.kind), Number: 1}, CreatedAt: ts(t0),
				ExpiresAt: ts(now.Add(5 * time.Minute)), LastHeartbeatAt: ts(now.Add(-time.Minute))}
			got, why := classOf(l)
			if got != tc.want || why == "" {
				t.Fatalf("class %q (%s), want %q", got, why, tc.want)
			}
			p, _ := DefaultPolicies().ForLease(l)
			if p.TaskClass != tc.want {
				t.Fatalf("policy %q, want %q", p.TaskClass, tc.want)
			}
			if f := Classify(l, p, live, now).Value; f != tc.fresh {
				t.Fatalf("freshness %s, want %s", f, tc.fresh)
			}
		})
	}
	// The conservative reading never goes stale by the clock alone: not even a lease
	// whose last heartbeat is a day old (only its recorded expiry ends it).
	c := conservativePolicy()
	l := Lease{LeaseID: "l", Status: StatusActive, Role: "controller", CreatedAt: ts(t0.Add(-48 * time.Hour)),
		LastHeartbeatAt: ts(t0.Add(-24 * time.Hour)), ExpiresAt: ts(t0.Add(time.Minute))}
	if f := Classify(l, c, Evidence{Owner: ProcessUnknown, Worktree: WorktreeUnknown}, t0); f.Value != FreshActive {
		t.Fatalf("conservative: %s %v", f.Value, f.Reasons)
	}
	if _, capped := c.AbsoluteCap(); capped || c.HeartbeatLifecycleActive || DefaultPolicies().For(classUnmapped).TaskClass != classUnmapped {
		t.Fatalf("conservative policy %+v", c)
	}
}
