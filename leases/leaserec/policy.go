package leaserec

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// TaskClass names a lease policy class (seed #790 Slice A).
type TaskClass string

// The seed's task classes.
const (
	ClassAuthorIssueWork TaskClass = "author_issue_work"
	ClassReviewerPR      TaskClass = "reviewer_pr"
	classMergerPR        TaskClass = "merger_pr"
	ClassConflictFix     TaskClass = "conflict_fix"
)

// classUnmapped names the policy of a lease whose task class cannot be told: it records
// none, and its role and work kind match no row of the seed's table (a controller's or a
// reconciler's lease, a reviewer's lease on an issue, an unknown role). It is steward's
// name, not the seed's; see conservativePolicy.
const classUnmapped TaskClass = "unmapped"

// lifecycleVersion is the heartbeat lifecycle marker reported by Describe.
const lifecycleVersion = "heartbeat-v1"

// envPrefix is the prefix of every lease policy override variable.
const envPrefix = "GITEA_LEASE_POLICY"

// Policy field names, exactly as the seed spells them.
const (
	FieldInitialTTLMinutes           = "initial_ttl_minutes"
	FieldHeartbeatCadenceMinutes     = "heartbeat_cadence_minutes"
	FieldStaleWarningMinutes         = "stale_warning_minutes"
	FieldMissedHeartbeatGraceMinutes = "missed_heartbeat_grace_minutes"
	FieldAbsoluteCapHours            = "absolute_cap_hours"
	FieldRecoveryGraceMinutes        = "recovery_grace_minutes"
	FieldTerminalRaceDrainMinutes    = "terminal_race_drain_minutes"
	FieldTerminalRetirementEligible  = "terminal_retirement_eligible"
	FieldHeartbeatLifecycleActive    = "heartbeat_lifecycle_active"
)

// PolicyFields lists every policy field in the seed's order.
var PolicyFields = []string{
	FieldInitialTTLMinutes, FieldHeartbeatCadenceMinutes, FieldStaleWarningMinutes,
	FieldMissedHeartbeatGraceMinutes, FieldAbsoluteCapHours, FieldRecoveryGraceMinutes,
	FieldTerminalRaceDrainMinutes, FieldTerminalRetirementEligible, FieldHeartbeatLifecycleActive,
}

// Policy is the lease policy of one task class: minutes except
// AbsoluteCapHours, whose nil means "no maximum".
type Policy struct {
	TaskClass                   TaskClass
	InitialTTLMinutes           float64
	HeartbeatCadenceMinutes     float64
	StaleWarningMinutes         float64
	MissedHeartbeatGraceMinutes float64
	AbsoluteCapHours            *float64
	RecoveryGraceMinutes        float64
	TerminalRaceDrainMinutes    float64
	TerminalRetirementEligible  bool
	HeartbeatLifecycleActive    bool
}

// KnownTaskClasses returns the seed's task classes in table order.
func KnownTaskClasses() []TaskClass {
	return []TaskClass{ClassAuthorIssueWork, ClassReviewerPR, classMergerPR, ClassConflictFix}
}

// DefaultPolicy returns the seed's built-in policy for class; an unknown or
// empty class gets the author policy (the most conservative migrated class).
func DefaultPolicy(class TaskClass) Policy {
	p := Policy{
		TaskClass: class, InitialTTLMinutes: 10, HeartbeatCadenceMinutes: 2,
		StaleWarningMinutes: 5, MissedHeartbeatGraceMinutes: 10,
		RecoveryGraceMinutes: 10, TerminalRaceDrainMinutes: 2,
	}
	switch class {
	case ClassReviewerPR, classMergerPR:
	case ClassConflictFix:
		p.InitialTTLMinutes = 120
	default:
		eight := 8.0
		p.TaskClass = ClassAuthorIssueWork
		p.AbsoluteCapHours = &eight
		p.TerminalRetirementEligible = true
		p.HeartbeatLifecycleActive = true
	}
	return p
}

// EnvVarName returns GITEA_LEASE_POLICY_<CLASS>_<FIELD>, upper-cased.
func EnvVarName(class TaskClass, field string) string {
	return strings.ToUpper(envPrefix + "_" + string(class) + "_" + field)
}

// Override reports one override variable that was set: applied, or ignored
// with the reason (for `config check`).
type Override struct {
	Var     string
	Class   TaskClass
	Field   string
	Value   string
	Applied bool
	Reason  string // why it was ignored; empty when applied
}

// PolicySet is the resolved policy of every known class plus the report of
// the overrides that were seen.
type PolicySet struct {
	policies  map[TaskClass]Policy
	Overrides []Override
}

// DefaultPolicies returns the seed's policies with no overrides.
func DefaultPolicies() PolicySet {
	return LoadPolicies(func(string) (string, bool) { return "", false })
}

// LoadPolicies resolves every known class, applying the overrides found
// through lookup (os.LookupEnv in production). Malformed, non-finite or <= 0
// values are ignored and reported; boolean fields are not overridable.
func LoadPolicies(lookup func(string) (string, bool)) PolicySet {
	s := PolicySet{policies: map[TaskClass]Policy{}}
	for _, c := range KnownTaskClasses() {
		p := DefaultPolicy(c)
		for _, f := range PolicyFields {
			name := EnvVarName(c, f)
			raw, ok := lookup(name)
			if !ok {
				continue
			}
			o := Override{Var: name, Class: c, Field: f, Value: raw}
			o.Reason = applyOverride(&p, f, raw)
			o.Applied = o.Reason == ""
			s.Overrides = append(s.Overrides, o)
		}
		s.policies[c] = p
	}
	return s
}

// applyOverride sets field f of p from raw; it returns why raw was ignored,
// or "" when it was applied.
func applyOverride(p *Policy, f, raw string) string {
	if f == FieldTerminalRetirementEligible || f == FieldHeartbeatLifecycleActive {
		return "not overridable: boolean field"
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return "malformed: not a finite number"
	}
	if v <= 0 {
		return "must be > 0 (a zero-length lease would make every claim instantly reclaimable)"
	}
	switch f {
	case FieldInitialTTLMinutes:
		p.InitialTTLMinutes = v
	case FieldHeartbeatCadenceMinutes:
		p.HeartbeatCadenceMinutes = v
	case FieldStaleWarningMinutes:
		p.StaleWarningMinutes = v
	case FieldMissedHeartbeatGraceMinutes:
		p.MissedHeartbeatGraceMinutes = v
	case FieldAbsoluteCapHours:
		p.AbsoluteCapHours = &v
	case FieldRecoveryGraceMinutes:
		p.RecoveryGraceMinutes = v
	case FieldTerminalRaceDrainMinutes:
		p.TerminalRaceDrainMinutes = v
	}
	return ""
}

// For returns the policy of class; unknown or empty classes get the author
// policy (the seed's policy_for); classUnmapped gets conservativePolicy. A zero
// PolicySet answers with the defaults.
func (s PolicySet) For(class TaskClass) Policy {
	if class == classUnmapped {
		return conservativePolicy()
	}
	if p, ok := s.policies[class]; ok {
		return p
	}
	if p, ok := s.policies[ClassAuthorIssueWork]; ok {
		return p
	}
	return DefaultPolicy(class)
}

// Ignored returns the overrides that were set but not applied.
func (s PolicySet) Ignored() []Override {
	var out []Override
	for _, o := range s.Overrides {
		if !o.Applied {
			out = append(out, o)
		}
	}
	return out
}

// Describe returns the serializable policy of class (unknown → author),
// including lifecycle_version.
func (s PolicySet) Describe(class TaskClass) map[string]any {
	return s.For(class).Describe()
}

// Describe returns p as a serializable map using the seed's field names plus
// task_class and lifecycle_version.
func (p Policy) Describe() map[string]any {
	var capv any
	if p.AbsoluteCapHours != nil {
		capv = *p.AbsoluteCapHours
	}
	return map[string]any{
		"task_class":                     string(p.TaskClass),
		"lifecycle_version":              lifecycleVersion,
		FieldInitialTTLMinutes:           p.InitialTTLMinutes,
		FieldHeartbeatCadenceMinutes:     p.HeartbeatCadenceMinutes,
		FieldStaleWarningMinutes:         p.StaleWarningMinutes,
		FieldMissedHeartbeatGraceMinutes: p.MissedHeartbeatGraceMinutes,
		FieldAbsoluteCapHours:            capv,
		FieldRecoveryGraceMinutes:        p.RecoveryGraceMinutes,
		FieldTerminalRaceDrainMinutes:    p.TerminalRaceDrainMinutes,
		FieldTerminalRetirementEligible:  p.TerminalRetirementEligible,
		FieldHeartbeatLifecycleActive:    p.HeartbeatLifecycleActive,
	}
}

func minutes(m float64) time.Duration { return time.Duration(m * float64(time.Minute)) }

// InitialTTL is the lease window a claim or heartbeat grants.
func (p Policy) InitialTTL() time.Duration { return minutes(p.InitialTTLMinutes) }

// HeartbeatCadence is how often a holder should heartbeat.
func (p Policy) HeartbeatCadence() time.Duration { return minutes(p.HeartbeatCadenceMinutes) }

// StaleWarning is the heartbeat age at which a lease shows a warning.
func (p Policy) StaleWarning() time.Duration { return minutes(p.StaleWarningMinutes) }

// MissedHeartbeatGrace is the heartbeat age after which a heartbeat-lifecycle
// lease is stale_missed_heartbeat.
func (p Policy) MissedHeartbeatGrace() time.Duration {
	return minutes(p.MissedHeartbeatGraceMinutes)
}

// RecoveryGrace is the recovery grace window.
func (p Policy) RecoveryGrace() time.Duration { return minutes(p.RecoveryGraceMinutes) }

// TerminalRaceDrain is the terminal race drain window.
func (p Policy) TerminalRaceDrain() time.Duration { return minutes(p.TerminalRaceDrainMinutes) }

// AbsoluteCap returns the maximum lease lifetime from created_at, and false
// when the class has none.
func (p Policy) AbsoluteCap() (time.Duration, bool) {
	if p.AbsoluteCapHours == nil {
		return 0, false
	}
	return time.Duration(*p.AbsoluteCapHours * float64(time.Hour)), true
}

// conservativePolicy is the reading of a lease whose class cannot be told: the seed's
// shared windows (10 minute TTL, 2 minute cadence, 5 minute warning, 10 minute grace, as
// every class of the #790 table has), no absolute cap and no heartbeat lifecycle. So no
// clock alone ever makes it stale: only a recorded expiry that passed, an owner proven
// dead or a worktree proven missing ends it — never a verdict that would let the core
// abandon a lease the seed would call active (the seed's author default, with its 8 h cap
// and missed-heartbeat staleness, would, for a heartbeating controller or reviewer).
func conservativePolicy() Policy {
	return Policy{TaskClass: classUnmapped, InitialTTLMinutes: 10, HeartbeatCadenceMinutes: 2,
		StaleWarningMinutes: 5, MissedHeartbeatGraceMinutes: 10, RecoveryGraceMinutes: 10, TerminalRaceDrainMinutes: 2}
}

// classOf tells which row of the seed's policy table (#790 Slice A) governs a lease, and
// why. A recorded task_class naming a known class wins (steward's own column). Without
// one the class follows the lease's role and work kind, compared folded as the seed
// compares them, the way the table's classes are named: author on an issue is
// author_issue_work; reviewer on a PR reviewer_pr; merger on a PR merger_pr; a PR lease in
// the conflict_fix phase, or held by the author (the PR work lease whose window the
// table's conflict_fix row mirrors, pr_work_lease), conflict_fix. Everything else —
// controller, reconciler, a role on the wrong kind of item, no role — is classUnmapped.
func classOf(l Lease) (TaskClass, string) {
	if c := TaskClass(Fold(string(l.TaskClass))); c != "" {
		for _, k := range KnownTaskClasses() {
			if c == k {
				return k, "task_class " + string(k) + " recorded"
			}
		}
	}
	role, kind, phase := Fold(l.Role), WorkKind(Fold(string(l.Work.Kind))), Fold(l.Phase)
	from := "role " + quote(l.Role) + " on a " + string(kind)
	if kind == "" {
		from = "role " + quote(l.Role) + " on an item of unknown kind"
	}
	switch {
	case role == "author" && kind == KindIssue:
		return ClassAuthorIssueWork, from + " (no task_class recorded)"
	case role == "reviewer" && kind == KindPR:
		return ClassReviewerPR, from + " (no task_class recorded)"
	case role == "merger" && kind == KindPR:
		return classMergerPR, from + " (no task_class recorded)"
	case kind == KindPR &&
		(phase == "conflict_fix" || role == "author" || role == "conflict_fix" || role == "conflict-fix"):
		return ClassConflictFix, from + ", phase " + quote(l.Phase) + " (no task_class recorded)"
	}
	return classUnmapped, from + " matches no row of the seed's policy table: read conservatively (no absolute cap, " +
		"no missed-heartbeat staleness)"
}

// ForLease returns the policy that governs l (classOf) and why it was chosen.
func (s PolicySet) ForLease(l Lease) (Policy, string) {
	c, why := classOf(l)
	return s.For(c), why
}
