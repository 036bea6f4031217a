package leaserec

import "strings"

// Status is a lease row's status column.
type Status string

// Lease statuses (seed #613).
const (
	StatusActive    Status = "active"
	StatusReleased  Status = "released"
	StatusExpired   Status = "expired"
	StatusAbandoned Status = "abandoned"
)

// Terminal reports whether s ends the lease (every status but active; an
// unknown status is not terminal, so it keeps protecting the item). A Status
// read from the DB is already folded (see Fold); the comparison folds again
// so a Status built by hand compares the way the seed compares.
func (s Status) Terminal() bool {
	switch Status(Fold(string(s))) {
	case StatusReleased, StatusExpired, StatusAbandoned:
		return true
	}
	return false
}

// Active reports whether s is the active status, in any case (seed:
// status.strip().lower() == "active").
func (s Status) Active() bool { return Fold(string(s)) == string(StatusActive) }

// Fold is how the supervised system compares its statuses, roles and work
// kinds: surrounding white space stripped, lower-cased (the seed's
// str(x).strip().lower(), e.g. the restart coordinator's session and lease
// rows and is_active_ownership_status). Every comparison of those columns in
// steward goes through it, in readers and inside every transaction.
func Fold(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// SessionActive reports whether a session's status column reads active in any case.
func SessionActive(status string) bool { return Fold(status) == string(StatusActive) }

// PhaseAllocated is the lease phase a claim gets when its caller names none (a phase seen in
// the seed).
const PhaseAllocated = "allocated"

// WorkKind is work_items.work_kind.
type WorkKind string

// Work kinds.
const (
	KindIssue WorkKind = "issue"
	KindPR    WorkKind = "pr"
)

// WorkRef names one work item by its natural key.
type WorkRef struct {
	Remote string
	Org    string
	Repo   string
	Kind   WorkKind
	Number int64
}

// WorkItem is a work_items row.
type WorkItem struct {
	WorkItemID int64
	WorkRef
	Title    string
	State    string
	Problems []string
}

// Session is a sessions row.
type Session struct {
	SessionID            string
	Role                 string
	Profile              string
	PID                  int64
	Host                 string
	ControllerInstanceID string
	Status               string
	StartedAt            Timestamp
	LastHeartbeatAt      Timestamp
	EndedAt              Timestamp
	Problems             []string
}

// Lease is a leases row (Work is filled from work_items when readable).
type Lease struct {
	LeaseID    string
	WorkItemID int64
	SessionID  string
	Role       string
	TaskClass  TaskClass
	Phase      string
	// Status is the status column folded (Fold): "ACTIVE" reads active.
	// StatusRaw is the text as written, for display and evidence.
	Status               Status
	StatusRaw            string
	CreatedAt            Timestamp
	ExpiresAt            Timestamp
	LastHeartbeatAt      Timestamp
	HeartbeatCount       int64
	ReleasedAt           Timestamp
	ExpectedHeadSHA      string
	AllowedActions       []string
	ForbiddenActions     []string
	ProvenanceRaw        string
	Provenance           map[string]any
	OwnerPID             int64
	OwnerHost            string
	WorktreePath         string
	AdoptedBySessionID   string
	AdoptedFromSessionID string
	EndReason            string
	// Generation is the seed's lease_generation_id fencing counter (HA ADR #668);
	// HasGeneration is set when the row records one. Without the column both are zero
	// and transitions fence as before.
	Generation    int64
	HasGeneration bool
	Work          WorkRef
	Problems      []string
}

// StatusText is the status as the row wrote it (the folded value for a Lease built by
// hand).
func (l Lease) StatusText() string {
	if l.StatusRaw != "" {
		return l.StatusRaw
	}
	return string(l.Status)
}

// Assignment is an assignments row.
type Assignment struct {
	AssignmentID string
	LeaseID      string
	SessionID    string
	WorkItemID   int64
	Role         string
	CreatedAt    Timestamp
	Status       string
	Problems     []string
}

// Event is an events row. SessionID and Detail are steward additions and are
// empty on databases that lack those columns.
type Event struct {
	EventID    int64
	WorkItemID int64
	EventType  string
	Message    string
	CreatedAt  Timestamp
	SessionID  string
	DetailRaw  string
	Detail     map[string]any
	Problems   []string
}

// DetailAttempt is the events.detail_json key naming the governed attempt that wrote the
// event (leases.WithAttempt puts it there).
const DetailAttempt = "steward_attempt"
