package lockrec

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func i64(n int64) *int64 { return &n }

// canonicalRecord builds a canonical lock expiring at exp.
func canonicalRecord(exp string) Record {
	cl := &Claimant{Username: "prgs-author-1", Profile: "author"}
	return Record{
		Remote: "prgs", Org: "o", Repo: "r", IssueNumber: i64(7), Branch: "feat/issue-7-x",
		BranchName: "feat/issue-7-x", WorktreePath: "/repo/branches/feat-issue-7",
		WorkLease: &WorkLease{OperationType: "author_issue_work", IssueNumber: i64(7), Branch: "feat/issue-7-x",
			WorktreePath: "/repo/branches/feat-issue-7", Claimant: cl,
			CreatedAt: ParseTimestamp("2026-07-24T05:00:00Z"), ExpiresAt: ParseTimestamp(exp),
			LastHeartbeatAt: ParseTimestamp("2026-07-24T05:30:00Z"), TaskSessionID: "tsid-1",
			LifecycleVersion: "heartbeat-v1", HeartbeatCount: i64(1)},
		LockProvenance: &Provenance{Source: "gitea_lock_issue", WrittenByTool: "gitea_lock_issue", Claimant: cl},
		LockGeneration: i64(1),
	}
}

func TestAssessExpiration(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 7, 24, 6, 0, 0, 0, time.UTC)
	tru, fal := true, false
	cases := []struct {
		name    string
		edit    func(*Record)
		state   ExpirationState
		expired *bool
		reason  string
	}{
		{"future", func(r *Record) {}, ExpirationRecorded, &fal, ""},
		{"past", func(r *Record) { r.WorkLease.ExpiresAt = ParseTimestamp("2026-07-24T05:59:59Z") }, ExpirationRecorded, &tru, ""},
		{"equal to now is expired", func(r *Record) { r.WorkLease.ExpiresAt = ParseTimestamp("2026-07-24T06:00:00Z") }, ExpirationRecorded, &tru, ""},
		{"one ns after now", func(r *Record) { r.WorkLease.ExpiresAt = ParseTimestamp("2026-07-24T06:00:00.000000001Z") }, ExpirationRecorded, &fal, ""},
		{"offset form", func(r *Record) { r.WorkLease.ExpiresAt = ParseTimestamp("2026-07-24T07:59:00+02:00") }, ExpirationRecorded, &tru, ""},
		{"blank", func(r *Record) { r.WorkLease.ExpiresAt = Timestamp{Text: "  "} }, ExpirationMissing, nil, reasonNoExpiration},
		{"no work_lease", func(r *Record) { r.WorkLease = nil }, ExpirationMissing, nil, reasonNoExpiration},
		{"unparseable", func(r *Record) { r.WorkLease.ExpiresAt = ParseTimestamp("soon") }, ExpirationUnparseable, nil, "unparseable expires_at 'soon'"},
		{"naive python form", func(r *Record) { r.WorkLease.ExpiresAt = ParseTimestamp("2026-07-24 06:10:00") }, ExpirationUnparseable, nil, "unparseable expires_at '2026-07-24 06:10:00'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := canonicalRecord("2026-07-24T06:10:00Z")
			c.edit(&r)
			a := Assess(&r, now)
			if a.Expiration.State != c.state {
				t.Fatalf("state %s, want %s", a.Expiration.State, c.state)
			}
			if (a.Expiration.Expired == nil) != (c.expired == nil) || (c.expired != nil && *a.Expiration.Expired != *c.expired) {
				t.Errorf("expired %v, want %v", a.Expiration.Expired, c.expired)
			}
			if c.state != ExpirationRecorded && a.Contract == ContractCanonical {
				t.Error("a lock without a recorded expiry read as canonical")
			}
			if c.reason != "" && !slices.Contains(a.Reasons, c.reason) {
				t.Errorf("reasons %q lack %q", a.Reasons, c.reason)
			}
		})
	}
}

func TestAssessPlacementAndContract(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 7, 24, 6, 0, 0, 0, time.UTC)
	top := &Claimant{Username: "legacy-user", Profile: "author"}
	cases := []struct {
		name      string
		edit      func(*Record)
		placement Placement
		contract  Contract
		user      string
	}{
		{"work_lease", func(r *Record) {}, PlacementWorkLease, ContractCanonical, "prgs-author-1"},
		{"both: work_lease wins", func(r *Record) { r.Claimant = top }, PlacementWorkLease, ContractCanonical, "prgs-author-1"},
		{"top level only", func(r *Record) { r.WorkLease.Claimant = nil; r.Claimant = top }, PlacementTopLevel, ContractLegacy, "legacy-user"},
		{"top level without profile", func(r *Record) {
			r.WorkLease.Claimant = nil
			r.Claimant = &Claimant{Username: "u"}
		}, PlacementTopLevel, ContractIncomplete, "u"},
		{"absent", func(r *Record) { r.WorkLease.Claimant = nil }, PlacementAbsent, ContractIncomplete, ""},
		{"empty work_lease claimant still wins", func(r *Record) { r.WorkLease.Claimant = &Claimant{}; r.Claimant = top }, PlacementWorkLease, ContractIncomplete, ""},
		{"legacy thin bootstrap", func(r *Record) {
			r.WorkLease, r.LockProvenance, r.Claimant = nil, nil, top
		}, PlacementTopLevel, ContractLegacy, "legacy-user"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := canonicalRecord("2026-07-24T06:10:00Z")
			c.edit(&r)
			a := Assess(&r, now)
			if a.ClaimantPlacement != c.placement || a.Contract != c.contract || a.Claimant.Username != c.user {
				t.Errorf("got %s/%s/%q, want %s/%s/%q", a.ClaimantPlacement, a.Contract, a.Claimant.Username,
					c.placement, c.contract, c.user)
			}
			if a.Canonical != (a.Contract == ContractCanonical) {
				t.Error("canonical flag disagrees with the verdict")
			}
			hasTop := slices.Contains(a.Reasons, reasonTopLevelClaimant)
			if hasTop != (c.placement == PlacementTopLevel) {
				t.Errorf("top-level reason present=%v for placement %s", hasTop, c.placement)
			}
		})
	}
}

func TestAssessAbsent(t *testing.T) {
	t.Parallel()
	for name, r := range map[string]*Record{"nil": nil, "empty": {}, "decoded {}": func() *Record { r, _ := Decode([]byte("{}")); return &r }()} {
		a := Assess(r, time.Now())
		if a.Contract != ContractAbsent || !slices.Equal(a.MissingFields, []string{missingNoRecord}) ||
			!slices.Equal(a.Reasons, []string{reasonNoRecord}) || a.Expiration.Expired != nil || a.Heartbeatable {
			t.Errorf("%s: %+v", name, a)
		}
	}
}

func TestAssessMissingFieldNames(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 7, 24, 6, 0, 0, 0, time.UTC)
	cases := []struct {
		want string
		edit func(*Record)
	}{
		{"remote", func(r *Record) { r.Remote = "" }},
		{"org", func(r *Record) { r.Org = " " }},
		{"repo", func(r *Record) { r.Repo = "" }},
		{"issue_number", func(r *Record) { r.IssueNumber = nil }},
		{"branch_name", func(r *Record) { r.BranchName = "" }},
		{"worktree_path", func(r *Record) { r.WorktreePath = "" }},
		{"work_lease", func(r *Record) { r.WorkLease = nil }},
		{"lock_provenance", func(r *Record) { r.LockProvenance = nil }},
		{"work_lease.operation_type", func(r *Record) { r.WorkLease.OperationType = "" }},
		{"work_lease.issue_number", func(r *Record) { r.WorkLease.IssueNumber = nil }},
		{"work_lease.branch", func(r *Record) { r.WorkLease.Branch = "" }},
		{"work_lease.worktree_path", func(r *Record) { r.WorkLease.WorktreePath = "" }},
		{"work_lease.claimant", func(r *Record) { r.WorkLease.Claimant = nil }},
		{"work_lease.created_at", func(r *Record) { r.WorkLease.CreatedAt = Timestamp{} }},
		{"work_lease.expires_at", func(r *Record) { r.WorkLease.ExpiresAt = Timestamp{} }},
		{"work_lease.last_heartbeat_at", func(r *Record) { r.WorkLease.LastHeartbeatAt = Timestamp{} }},
		{"work_lease.task_session_id", func(r *Record) { r.WorkLease.TaskSessionID = "" }},
		{"work_lease.lifecycle_version", func(r *Record) { r.WorkLease.LifecycleVersion = "" }},
		{"lock_provenance.source (not sanctioned)", func(r *Record) { r.LockProvenance.Source = "x" }},
		{"lock_provenance.written_by_tool", func(r *Record) { r.LockProvenance.WrittenByTool = "" }},
		{"claimant.username", func(r *Record) { r.WorkLease.Claimant = &Claimant{Profile: "p"} }},
		{"claimant.profile", func(r *Record) { r.WorkLease.Claimant = &Claimant{Username: "u"} }},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			t.Parallel()
			r := canonicalRecord("2026-07-24T06:10:00Z")
			c.edit(&r)
			a := Assess(&r, now)
			if !slices.Contains(a.MissingFields, c.want) {
				t.Fatalf("missing %q not named in %q", c.want, a.MissingFields)
			}
			if a.Contract == ContractCanonical {
				t.Error("canonical with a missing field")
			}
			if !strings.HasPrefix(a.Reasons[0], reasonMissingPrefix) || !strings.Contains(a.Reasons[0], c.want) {
				t.Errorf("first reason %q", a.Reasons[0])
			}
		})
	}
	if m := missingFields(nil); !slices.Equal(m, []string{missingNoRecord}) {
		t.Errorf("MissingFields(nil) = %q", m)
	}
}

func TestAssessProvenanceSources(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 7, 24, 6, 0, 0, 0, time.UTC)
	if len(sanctionedSources) != 5 {
		t.Fatalf("%d sanctioned sources, the seed has five", len(sanctionedSources))
	}
	cases := []struct {
		source   string
		eligible bool
	}{
		{"gitea_lock_issue", true},
		{"gitea_lock_issue_adoption", true},
		{"operator_override", true},
		{"gitea_recover_dirty_orphaned_issue_worktree", true},
		{"gitea_rebind_dirty_same_claimant_author_session", true},
		{"gitea_bootstrap_author_issue_worktree", false},
		{"steward", false},
		{"", false},
		{"GITEA_LOCK_ISSUE", false},
	}
	for _, c := range cases {
		t.Run("source="+c.source, func(t *testing.T) {
			t.Parallel()
			r := canonicalRecord("2026-07-24T06:10:00Z")
			r.LockProvenance.Source = c.source
			a := Assess(&r, now)
			if a.CreatePREligible != c.eligible || (a.Contract == ContractCanonical) != c.eligible {
				t.Errorf("eligible=%v contract=%s", a.CreatePREligible, a.Contract)
			}
			if !c.eligible && !slices.Contains(a.Reasons, reasonUnsanctioned(c.source)) {
				t.Errorf("reasons %q", a.Reasons)
			}
		})
	}
	t.Run("no work_lease blocks the guard", func(t *testing.T) {
		r := canonicalRecord("2026-07-24T06:10:00Z")
		r.WorkLease = nil
		if a := Assess(&r, now); a.CreatePREligible || !slices.Contains(a.Reasons, reasonNoWorkLease) {
			t.Errorf("%+v", a)
		}
	})
}

func TestAssessLifecycleAndHeartbeat(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 7, 24, 6, 0, 0, 0, time.UTC)
	cases := []struct {
		name      string
		edit      func(*Record)
		lifecycle Lifecycle
		hb        bool
	}{
		{"heartbeat-v1", func(r *Record) {}, lifecycleHeartbeatV1, true},
		{"absent marker is legacy", func(r *Record) { r.WorkLease.LifecycleVersion = "" }, lifecycleLegacy, true},
		{"no work_lease is legacy", func(r *Record) {
			r.WorkLease = nil
			r.Claimant = &Claimant{Username: "u", Profile: "p"}
		}, lifecycleLegacy, false},
		{"other marker reported as written", func(r *Record) { r.WorkLease.LifecycleVersion = "heartbeat-v2" }, Lifecycle("heartbeat-v2"), true},
		{"no task session", func(r *Record) { r.WorkLease.TaskSessionID = " " }, lifecycleHeartbeatV1, false},
		{"top-level claimant heartbeatable", func(r *Record) {
			r.WorkLease.Claimant = nil
			r.Claimant = &Claimant{Username: "u", Profile: "p"}
		}, lifecycleHeartbeatV1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := canonicalRecord("2026-07-24T06:10:00Z")
			c.edit(&r)
			a := Assess(&r, now)
			if a.Lifecycle != c.lifecycle || a.Heartbeatable != c.hb {
				t.Errorf("lifecycle %s heartbeatable %v, want %s %v", a.Lifecycle, a.Heartbeatable, c.lifecycle, c.hb)
			}
		})
	}
}
