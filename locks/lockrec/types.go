package lockrec

import (
	"encoding/json"
	"time"
)

// Record is one lock record as written by the supervised system (seed #953,
// author_lock_contract.build_canonical_issue_lock) or by steward's govern
// package. Scalar fields hold the empty value when the key was absent, null,
// blank or of the wrong type (the decoder then reports a Finding); integer
// fields are pointers so that "absent" and 0 stay distinct.
//
// Unknown keys, and known keys whose value had the wrong type, are kept raw in
// Extra in file order, so that detail views can show them and a rewrite keeps
// them.
type Record struct {
	Remote          string      `json:"remote"`
	Org             string      `json:"org"`
	Repo            string      `json:"repo"`
	IssueNumber     *int64      `json:"issue_number"`
	Branch          string      `json:"branch,omitempty"`
	BranchName      string      `json:"branch_name"`
	WorktreePath    string      `json:"worktree_path"`
	WorkLease       *WorkLease  `json:"work_lease"`
	LockProvenance  *Provenance `json:"lock_provenance"`
	OwnerSession    string      `json:"owner_session,omitempty"`
	AssignmentID    string      `json:"assignment_id,omitempty"`
	LeaseID         string      `json:"lease_id,omitempty"`
	ExpectedBaseSHA string      `json:"expected_base_sha,omitempty"`
	LockGeneration  *int64      `json:"lock_generation,omitempty"`
	// Claimant is the legacy top-level placement (pre-#953 bootstrap).
	Claimant   *Claimant `json:"claimant,omitempty"`
	PID        *int64    `json:"pid,omitempty"`
	SessionPID *int64    `json:"session_pid,omitempty"`
	// BootstrapLockRecovery is the seed's #953 transition block, kept raw;
	// decode it with Record.BootstrapRecovery.
	BootstrapLockRecovery json.RawMessage `json:"bootstrap_lock_recovery,omitempty"`
	// LeaseRenewal is the seed's server-written renewal block, kept raw;
	// decode it with Record.Renewal.
	LeaseRenewal json.RawMessage `json:"lease_renewal,omitempty"`
	// StewardRecovery is steward's own block, written by Archive; decode it
	// with Record.Recovery.
	StewardRecovery json.RawMessage `json:"steward_recovery,omitempty"`

	// Keys lists every top-level key of the file in order (duplicates once).
	// An empty Keys means an empty (or undecodable) record.
	Keys []string `json:"-"`
	// UnknownKeys lists the top-level keys steward does not know.
	UnknownKeys []string `json:"-"`
	// Extra holds unknown and wrongly typed top-level fields, raw, in order.
	Extra []RawField `json:"-"`
	// Raw is the file's bytes as read (nil for records built in code).
	Raw []byte `json:"-"`
}

// RawField is one JSON member kept verbatim.
type RawField struct {
	Key   string
	Value json.RawMessage
}

// WorkLease is the work_lease block (seed #953 §2.3). TaskSessionID is the
// fencing token; LifecycleVersion is "heartbeat-v1" or absent (legacy).
type WorkLease struct {
	OperationType    string     `json:"operation_type"`
	IssueNumber      *int64     `json:"issue_number"`
	PRNumber         *int64     `json:"pr_number"`
	Branch           string     `json:"branch"`
	WorktreePath     string     `json:"worktree_path"`
	Claimant         *Claimant  `json:"claimant"`
	CreatedAt        Timestamp  `json:"created_at"`
	ExpiresAt        Timestamp  `json:"expires_at"`
	LastHeartbeatAt  Timestamp  `json:"last_heartbeat_at"`
	HeartbeatCount   *int64     `json:"heartbeat_count,omitempty"`
	TaskSessionID    string     `json:"task_session_id"`
	LifecycleVersion string     `json:"lifecycle_version,omitempty"`
	Keys             []string   `json:"-"`
	Extra            []RawField `json:"-"`
}

// Claimant is a {username, profile} pair, in work_lease (canonical), at the
// top level (legacy) or copied into lock_provenance.
type Claimant struct {
	Username string     `json:"username"`
	Profile  string     `json:"profile"`
	Extra    []RawField `json:"-"`
}

// Provenance is the lock_provenance block (seed #953 §2.4, #447).
type Provenance struct {
	Source        string     `json:"source"`
	WrittenByTool string     `json:"written_by_tool"`
	Claimant      *Claimant  `json:"claimant,omitempty"`
	Extra         []RawField `json:"-"`
}

// Timestamp is an RFC 3339 timestamp as found in a lock: the original text
// next to the parsed value. Valid is false when Text is empty or does not
// parse; Time is then zero.
type Timestamp struct {
	Text  string
	Time  time.Time
	Valid bool
}

// FormatTime renders t in the durable form the seed writes: UTC, whole
// seconds, "Z" suffix (e.g. 2026-07-24T06:00:00Z).
func FormatTime(t time.Time) string {
	return t.UTC().Truncate(time.Second).Format("2006-01-02T15:04:05Z")
}

// NewTimestamp returns the Timestamp of t in the durable form.
func NewTimestamp(t time.Time) Timestamp {
	s := FormatTime(t)
	return Timestamp{Text: s, Time: t.UTC().Truncate(time.Second), Valid: true}
}

// ParseTimestamp parses RFC 3339 text. Offsets other than Z are accepted and
// converted to UTC (the decoder reports them as a non-UTC finding); anything
// else, including Python's naive "YYYY-MM-DD HH:MM:SS", is not Valid.
func ParseTimestamp(text string) Timestamp {
	t, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		return Timestamp{Text: text}
	}
	return Timestamp{Text: text, Time: t.UTC(), Valid: true}
}

// BootstrapLockRecovery is the seed's bootstrap_lock_recovery transition block
// (#953 §3.4, build_recovery_record).
type BootstrapLockRecovery struct {
	RecoveryKind             string   `json:"recovery_kind"`
	RecoveredAt              string   `json:"recovered_at"`
	PriorContract            string   `json:"prior_contract"`
	PriorMissingFields       []string `json:"prior_missing_fields"`
	PriorClaimantPlacement   string   `json:"prior_claimant_placement"`
	PriorExpirationState     string   `json:"prior_expiration_state"`
	PriorGeneration          *int64   `json:"prior_generation"`
	PriorOwnerSession        string   `json:"prior_owner_session"`
	PriorFreshness           string   `json:"prior_freshness"`
	ReplacementTaskSessionID string   `json:"replacement_task_session_id"`
	PreservedHead            string   `json:"preserved_head"`
	BranchReset              bool     `json:"branch_reset"`
	BaseEquivalenceRequired  bool     `json:"base_equivalence_required"`
}

// LeaseRenewal is the seed's server-written lease_renewal block. It is valid
// only when PRHeadSHA == HeadSHA == RemoteHeadSHA.
type LeaseRenewal struct {
	Renewed       bool   `json:"renewed"`
	BranchName    string `json:"branch_name"`
	PRHeadSHA     string `json:"pr_head_sha"`
	HeadSHA       string `json:"head_sha"`
	RemoteHeadSHA string `json:"remote_head_sha"`
	PRNumber      *int64 `json:"pr_number"`
	Identity      string `json:"identity"`
	Profile       string `json:"profile"`
}

// RecoveryBlock is steward's own steward_recovery block, written into the
// archived copy of a lock by Archive: who retired it, when, why, under which
// governed action and audit attempt, and the evidence. Archive fills
// ArchivedAt, LiveName, PriorGeneration and PriorTaskSessionID itself.
type RecoveryBlock struct {
	Action             string          `json:"action"`
	ActionID           string          `json:"action_id"`
	AuditAttemptID     string          `json:"audit_attempt_id"`
	Actor              Actor           `json:"actor"`
	Reason             string          `json:"reason"`
	Evidence           json.RawMessage `json:"evidence,omitempty"`
	ArchivedAt         string          `json:"archived_at"`
	LiveName           string          `json:"live_name"`
	PriorGeneration    int64           `json:"prior_generation"`
	PriorTaskSessionID string          `json:"prior_task_session_id"`
}

// Actor names who performed a governed action: Gitea login, OS user, host.
type Actor struct {
	Login  string `json:"login"`
	OSUser string `json:"os_user"`
	Host   string `json:"host"`
}

// Key is a lock's identity: one lock per (remote, org, repo, issue). Files are
// keyed by the record they hold, never by their file name.
type Key struct {
	Remote string `json:"remote"`
	Org    string `json:"org"`
	Repo   string `json:"repo"`
	Issue  int64  `json:"issue_number"`
}

// Key returns the record's identity; ok is false when issue_number is absent.
func (r *Record) Key() (Key, bool) {
	if r.IssueNumber == nil {
		return Key{}, false
	}
	return Key{Remote: r.Remote, Org: r.Org, Repo: r.Repo, Issue: *r.IssueNumber}, true
}

// Generation returns lock_generation, 0 when absent (a fence on an
// unversioned lock expects 0).
func (r *Record) Generation() int64 {
	if r.LockGeneration == nil {
		return 0
	}
	return *r.LockGeneration
}

// TaskSessionID returns work_lease.task_session_id, "" when absent.
func (r *Record) TaskSessionID() string {
	if r.WorkLease == nil {
		return ""
	}
	return r.WorkLease.TaskSessionID
}

// BootstrapRecovery decodes the bootstrap_lock_recovery block; ok is false
// when it is absent or does not decode.
func (r *Record) BootstrapRecovery() (b BootstrapLockRecovery, ok bool) {
	return b, isObject(r.BootstrapLockRecovery) && json.Unmarshal(r.BootstrapLockRecovery, &b) == nil
}

// Renewal decodes the lease_renewal block; ok is false when it is absent or
// does not decode.
func (r *Record) Renewal() (l LeaseRenewal, ok bool) {
	return l, isObject(r.LeaseRenewal) && json.Unmarshal(r.LeaseRenewal, &l) == nil
}

// Recovery decodes steward's steward_recovery block; ok is false when it is
// absent or does not decode.
func (r *Record) Recovery() (b RecoveryBlock, ok bool) {
	return b, isObject(r.StewardRecovery) && json.Unmarshal(r.StewardRecovery, &b) == nil
}

func isObject(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '{' }

// Empty reports whether the record holds nothing: no key was decoded and no
// field is set (the seed's "no record or an empty one").
func (r *Record) Empty() bool {
	if r == nil {
		return true
	}
	if len(r.Keys) > 0 || len(r.Extra) > 0 {
		return false
	}
	return r.Remote == "" && r.Org == "" && r.Repo == "" && r.IssueNumber == nil && r.Branch == "" &&
		r.BranchName == "" && r.WorktreePath == "" && r.WorkLease == nil && r.LockProvenance == nil &&
		r.OwnerSession == "" && r.AssignmentID == "" && r.LeaseID == "" && r.ExpectedBaseSHA == "" &&
		r.LockGeneration == nil && r.Claimant == nil && r.PID == nil && r.SessionPID == nil &&
		len(r.BootstrapLockRecovery) == 0 && len(r.LeaseRenewal) == 0 && len(r.StewardRecovery) == 0
}

// Detach drops Raw, first copying out the raw fields that share its bytes (the Extra values
// of the record and of its blocks, and the raw blocks), so that a record kept for long holds
// what was decoded and not the whole file: the live model keeps one record per lock. A
// reader that needs the bytes reads the file again (ReadFile, as the detail pane does).
func (r *Record) Detach() {
	if r.Raw == nil {
		return
	}
	r.Raw = nil
	r.BootstrapLockRecovery = cloneRaw(r.BootstrapLockRecovery)
	r.LeaseRenewal = cloneRaw(r.LeaseRenewal)
	r.StewardRecovery = cloneRaw(r.StewardRecovery)
	detachExtra(r.Extra)
	if w := r.WorkLease; w != nil {
		detachExtra(w.Extra)
		detachClaimant(w.Claimant)
	}
	if p := r.LockProvenance; p != nil {
		detachExtra(p.Extra)
		detachClaimant(p.Claimant)
	}
	detachClaimant(r.Claimant)
}

func detachClaimant(c *Claimant) {
	if c != nil {
		detachExtra(c.Extra)
	}
}

func detachExtra(fs []RawField) {
	for i := range fs {
		fs[i].Value = cloneRaw(fs[i].Value)
	}
}

func cloneRaw(b json.RawMessage) json.RawMessage {
	if b == nil {
		return nil
	}
	return append(make(json.RawMessage, 0, len(b)), b...)
}
