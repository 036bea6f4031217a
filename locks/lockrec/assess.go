package lockrec

import (
	"strings"
	"time"
)

// Contract is the structural verdict on a lock record (seed #953 §2.7).
type Contract string

// The four contract verdicts.
const (
	// ContractCanonical: every required field, claimant in work_lease, an
	// expiry recorded, and the #447 provenance guard proven.
	ContractCanonical Contract = "canonical"
	// ContractLegacy: not canonical, claimant at the top level with both
	// username and profile (pre-#953 bootstrap).
	ContractLegacy Contract = "legacy"
	// ContractIncomplete: any other non-empty record.
	ContractIncomplete Contract = "incomplete"
	// ContractAbsent: no record, or an empty one.
	ContractAbsent Contract = "absent"
)

// Placement says where the claimant was found (seed claimant_placement).
type Placement string

// The claimant placements; work_lease wins when both exist.
const (
	PlacementWorkLease Placement = "work_lease"
	PlacementTopLevel  Placement = "top_level"
	PlacementAbsent    Placement = "absent"
)

// ExpirationState classifies the recorded expiry (seed AC12).
type ExpirationState string

// The expiration states. Missing and unparseable are never "not expired".
const (
	ExpirationRecorded    ExpirationState = "recorded"
	ExpirationMissing     ExpirationState = "missing"
	ExpirationUnparseable ExpirationState = "unparseable"
)

// Lifecycle is the lease lifecycle marker (seed #790 AC-N8).
type Lifecycle string

// The known lifecycle markers. Any other non-empty work_lease.lifecycle_version
// is reported as it is written.
const (
	lifecycleHeartbeatV1 Lifecycle = "heartbeat-v1"
	lifecycleLegacy      Lifecycle = "legacy"
)

// sanctionedSources are exactly the five sanctioned lock_provenance.source
// values (seed issue_lock_provenance.SANCTIONED_LOCK_SOURCES).
var sanctionedSources = []string{
	"gitea_lock_issue",
	"gitea_lock_issue_adoption",
	"operator_override",
	"gitea_recover_dirty_orphaned_issue_worktree",
	"gitea_rebind_dirty_same_claimant_author_session",
}

// sanctioned reports whether source is one of sanctionedSources.
func sanctioned(source string) bool {
	for _, s := range sanctionedSources {
		if s == source {
			return true
		}
	}
	return false
}

// ClaimantRef is the claimant pair an assessment reports (trimmed).
type ClaimantRef struct {
	Username string `json:"username"`
	Profile  string `json:"profile"`
}

// Expiration is the seed's expiration_state: State, the recorded text
// (ExpiresAt, "" when missing) and Expired, which is nil unless State is
// recorded. Time is the parsed expiry (zero unless recorded).
type Expiration struct {
	State     ExpirationState `json:"state"`
	ExpiresAt string          `json:"expires_at"`
	Expired   *bool           `json:"expired"`
	Time      time.Time       `json:"-"`
}

// Assessment is the result of Assess, with the seed's output keys plus
// lifecycle.
type Assessment struct {
	Contract          Contract    `json:"contract"`
	Canonical         bool        `json:"canonical"`
	MissingFields     []string    `json:"missing_fields"`
	Claimant          ClaimantRef `json:"claimant"`
	ClaimantPlacement Placement   `json:"claimant_placement"`
	Expiration        Expiration  `json:"expiration"`
	Heartbeatable     bool        `json:"heartbeatable"`
	CreatePREligible  bool        `json:"create_pr_eligible"`
	Lifecycle         Lifecycle   `json:"lifecycle"`
	LockGeneration    *int64      `json:"lock_generation"`
	TaskSessionID     string      `json:"task_session_id"`
	Reasons           []string    `json:"reasons"`
}

// The seed's reason strings (plus steward's wording for the #447 guard,
// whose own strings the seed does not show).
const (
	reasonNoRecord         = "no durable lock record"
	reasonMissingPrefix    = "missing canonical fields: "
	reasonTopLevelClaimant = "claimant recorded at the lock top level rather than in work_lease (legacy/bootstrap " +
		"placement)"
	reasonNoExpiration      = "no expiration recorded; the lock is neither expirable nor renewable until it is upgraded"
	reasonNoProvenance      = "create-PR guard (#447): no lock_provenance recorded"
	reasonNoWorkLease       = "create-PR guard (#447): no work_lease recorded"
	missingNoRecord         = "<no lock record>"
	missingSourceUnsanction = "lock_provenance.source (not sanctioned)"
)

// reasonUnparseable returns the seed's reason for an unparseable expiry.
func reasonUnparseable(text string) string { return "unparseable expires_at '" + text + "'" }

// reasonUnsanctioned returns steward's #447 reason for an unsanctioned source.
func reasonUnsanctioned(source string) string {
	return "create-PR guard (#447): lock_provenance.source '" + source + "' is not sanctioned"
}

// Assess returns the contract verdict on rec at time now. It is pure: no IO,
// no clock. A nil or empty record is absent. An expiry equal to now is
// expired.
func Assess(rec *Record, now time.Time) Assessment {
	if rec.Empty() {
		return Assessment{
			Contract:          ContractAbsent,
			MissingFields:     []string{missingNoRecord},
			ClaimantPlacement: PlacementAbsent,
			Expiration:        Expiration{State: ExpirationMissing},
			Lifecycle:         lifecycleLegacy,
			Reasons:           []string{reasonNoRecord},
		}
	}
	a := Assessment{
		MissingFields:     missingFields(rec),
		ClaimantPlacement: claimantPlacement(rec),
		Expiration:        ExpirationOf(rec, now),
		LockGeneration:    rec.LockGeneration,
		Lifecycle:         lifecycleLegacy,
	}
	a.Claimant = claimantOf(rec)
	proven, guard := provenanceGuard(rec)
	a.CreatePREligible = proven
	a.Canonical = len(a.MissingFields) == 0 && a.ClaimantPlacement == PlacementWorkLease &&
		a.Expiration.State == ExpirationRecorded && proven
	switch {
	case a.Canonical:
		a.Contract = ContractCanonical
	case a.ClaimantPlacement == PlacementTopLevel && a.Claimant.Username != "" && a.Claimant.Profile != "":
		a.Contract = ContractLegacy
	default:
		a.Contract = ContractIncomplete
	}
	if wl := rec.WorkLease; wl != nil {
		a.TaskSessionID = strings.TrimSpace(wl.TaskSessionID)
		if v := strings.TrimSpace(wl.LifecycleVersion); v != "" {
			a.Lifecycle = Lifecycle(v)
		}
	}
	a.Heartbeatable = a.Claimant.Username != "" && a.Claimant.Profile != "" && a.TaskSessionID != ""
	if len(a.MissingFields) > 0 {
		a.Reasons = append(a.Reasons, reasonMissingPrefix+strings.Join(a.MissingFields, ", "))
	}
	if a.ClaimantPlacement == PlacementTopLevel {
		a.Reasons = append(a.Reasons, reasonTopLevelClaimant)
	}
	switch a.Expiration.State {
	case ExpirationMissing:
		a.Reasons = append(a.Reasons, reasonNoExpiration)
	case ExpirationUnparseable:
		a.Reasons = append(a.Reasons, reasonUnparseable(a.Expiration.ExpiresAt))
	}
	a.Reasons = append(a.Reasons, guard...)
	if a.MissingFields == nil {
		a.MissingFields = []string{}
	}
	if a.Reasons == nil {
		a.Reasons = []string{}
	}
	return a
}

// missingFields names every canonical field rec lacks, as the seed's
// missing_contract_fields names them.
func missingFields(rec *Record) []string {
	if rec == nil {
		return []string{missingNoRecord}
	}
	var missing []string
	add := func(cond bool, name string) {
		if cond {
			missing = append(missing, name)
		}
	}
	add(isBlank(rec.Remote), "remote")
	add(isBlank(rec.Org), "org")
	add(isBlank(rec.Repo), "repo")
	add(rec.IssueNumber == nil, "issue_number")
	add(isBlank(rec.BranchName), "branch_name")
	add(isBlank(rec.WorktreePath), "worktree_path")
	add(rec.WorkLease == nil, "work_lease")
	add(rec.LockProvenance == nil, "lock_provenance")
	if wl := rec.WorkLease; wl != nil {
		add(isBlank(wl.OperationType), "work_lease.operation_type")
		add(wl.IssueNumber == nil, "work_lease.issue_number")
		add(isBlank(wl.Branch), "work_lease.branch")
		add(isBlank(wl.WorktreePath), "work_lease.worktree_path")
		add(wl.Claimant == nil, "work_lease.claimant")
		add(isBlank(wl.CreatedAt.Text), "work_lease.created_at")
		add(isBlank(wl.ExpiresAt.Text), "work_lease.expires_at")
		add(isBlank(wl.LastHeartbeatAt.Text), "work_lease.last_heartbeat_at")
		add(isBlank(wl.TaskSessionID), "work_lease.task_session_id")
		add(isBlank(wl.LifecycleVersion), "work_lease.lifecycle_version")
	}
	if p := rec.LockProvenance; p != nil {
		add(!sanctioned(strings.TrimSpace(p.Source)), missingSourceUnsanction)
		add(isBlank(p.WrittenByTool), "lock_provenance.written_by_tool")
	}
	c := claimantOf(rec)
	add(c.Username == "", "claimant.username")
	add(c.Profile == "", "claimant.profile")
	return missing
}

// claimantPlacement returns where rec's claimant is: work_lease wins over the
// legacy top level.
func claimantPlacement(rec *Record) Placement {
	switch {
	case rec == nil:
		return PlacementAbsent
	case rec.WorkLease != nil && rec.WorkLease.Claimant != nil:
		return PlacementWorkLease
	case rec.Claimant != nil:
		return PlacementTopLevel
	}
	return PlacementAbsent
}

// claimantOf returns the claimant from the placement claimantPlacement
// chose, trimmed; empty when absent.
func claimantOf(rec *Record) ClaimantRef {
	var c *Claimant
	switch claimantPlacement(rec) {
	case PlacementWorkLease:
		c = rec.WorkLease.Claimant
	case PlacementTopLevel:
		c = rec.Claimant
	default:
		return ClaimantRef{}
	}
	return ClaimantRef{Username: strings.TrimSpace(c.Username), Profile: strings.TrimSpace(c.Profile)}
}

// ExpirationOf classifies rec's work_lease.expires_at at now. Expired is
// true when the expiry is at or before now, and nil when the expiry is
// missing or unparseable.
func ExpirationOf(rec *Record, now time.Time) Expiration {
	if rec == nil || rec.WorkLease == nil || isBlank(rec.WorkLease.ExpiresAt.Text) {
		return Expiration{State: ExpirationMissing}
	}
	ts := rec.WorkLease.ExpiresAt
	text := strings.TrimSpace(ts.Text)
	if !ts.Valid {
		return Expiration{State: ExpirationUnparseable, ExpiresAt: text}
	}
	expired := !ts.Time.After(now)
	return Expiration{State: ExpirationRecorded, ExpiresAt: text, Expired: &expired, Time: ts.Time}
}

// provenanceGuard is steward's reading of the #447 create-PR guard
// (assess_lock_file_for_create_pr): proven iff lock_provenance carries a
// sanctioned source and a work_lease exists.
func provenanceGuard(rec *Record) (bool, []string) {
	var reasons []string
	if rec.LockProvenance == nil {
		reasons = append(reasons, reasonNoProvenance)
	} else if src := strings.TrimSpace(rec.LockProvenance.Source); !sanctioned(src) {
		reasons = append(reasons, reasonUnsanctioned(src))
	}
	if rec.WorkLease == nil {
		reasons = append(reasons, reasonNoWorkLease)
	}
	return len(reasons) == 0, reasons
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }
