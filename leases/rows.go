package leases

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

// foldSQL is Fold as a SQLite expression over a column (sqliteSQL.fold).
func foldSQL(col string) string { return sqliteSQL.fold(col) }

// itemIdentity is the SQL condition over work_items that matches the rows of one item,
// and its arguments: the remote as written, the org and repo folded (Gitea owner and
// repository names are case-insensitive: acme/widgets#60 and ACME/Widgets#60 are one
// item), the work kind folded as the seed compares it, the number. Every query that finds
// an item by its natural key uses it, and so must the lock files' identity
// (lockrec.Key.Identity).
func itemIdentity(d dialect, w WorkRef) (string, []any) {
	return `remote = ? AND ` + d.fold("org") + ` = ? AND ` + d.fold("repo") + ` = ? AND ` +
			d.fold("work_kind") + ` = ? AND work_number = ?`,
		[]any{w.Remote, Fold(w.Org), Fold(w.Repo), Fold(string(w.Kind)), w.Number}
}

// SessionActive reports whether a session's status column reads active in any case.
func SessionActive(status string) bool { return Fold(status) == string(StatusActive) }

// Lease phases seen in the seed.
const (
	PhaseAllocated       = "allocated"
	PhaseAwaitingHandoff = "awaiting_handoff"
	PhaseImplementing    = "implementing"
	PhasePublishing      = "publishing"
	PhaseMerging         = "merging"
)

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

// getter reads one column of a row: its text and whether it was present
// (column exists and value not NULL).
type getter func(col string) (string, bool)

// decoder accumulates problems while decoding one row.
type decoder struct {
	get      getter
	problems []string
}

func (d *decoder) str(col string) string { v, _ := d.get(col); return v }

func (d *decoder) int(col string) int64 {
	v, _ := d.get(col)
	n, ok := parseInt(v)
	if !ok {
		d.problems = append(d.problems, col+" is not an integer")
	}
	return n
}

func (d *decoder) ts(col string, required bool) Timestamp {
	v, _ := d.get(col)
	t := ParseTimestamp(v)
	if t.State == TimeUnparseable || (required && t.State == TimeMissing) {
		d.problems = append(d.problems, col+" "+string(t.State))
	}
	return t
}

func (d *decoder) list(col string) []string {
	v, _ := d.get(col)
	l, ok := ParseStringList(v)
	if !ok {
		d.problems = append(d.problems, col+" is not a list of strings")
	}
	return l
}

func (d *decoder) object(col string) map[string]any {
	v, _ := d.get(col)
	m, ok := ParseJSONObject(v)
	if !ok {
		d.problems = append(d.problems, col+" is not a JSON object")
	}
	return m
}

// decodeLease turns one leases row into a Lease; it never fails, it records
// problems instead (an unparseable expiry keeps the claim held).
func decodeLease(get getter) Lease {
	d := &decoder{get: get}
	l := Lease{
		LeaseID: d.str("lease_id"), WorkItemID: d.int("work_item_id"),
		SessionID: d.str("session_id"), Role: d.str("role"),
		TaskClass: TaskClass(d.str("task_class")), Phase: d.str("phase"),
		Status: Status(Fold(d.str("status"))), StatusRaw: d.str("status"),
		CreatedAt: d.ts("created_at", false), ExpiresAt: d.ts("expires_at", true),
		LastHeartbeatAt: d.ts("last_heartbeat_at", false), HeartbeatCount: d.int("heartbeat_count"),
		ReleasedAt: d.ts("released_at", false), ExpectedHeadSHA: d.str("expected_head_sha"),
		AllowedActions: d.list("allowed_actions"), ForbiddenActions: d.list("forbidden_actions"),
		ProvenanceRaw: d.str("provenance_json"), Provenance: d.object("provenance_json"),
		OwnerPID: d.int("owner_pid"), OwnerHost: d.str("owner_host"),
		WorktreePath: d.str("worktree_path"), AdoptedBySessionID: d.str("adopted_by_session_id"),
		AdoptedFromSessionID: d.str("adopted_from_session_id"), EndReason: d.str("end_reason"),
	}
	if _, ok := get("lease_generation_id"); ok {
		l.Generation, l.HasGeneration = d.int("lease_generation_id"), true
	}
	l.Problems = d.problems
	return l
}

func decodeSession(get getter) Session {
	d := &decoder{get: get}
	s := Session{
		SessionID: d.str("session_id"), Role: d.str("role"), Profile: d.str("profile"),
		PID: d.int("pid"), Host: d.str("host"), ControllerInstanceID: d.str("controller_instance_id"),
		Status: d.str("status"), StartedAt: d.ts("started_at", false),
		LastHeartbeatAt: d.ts("last_heartbeat_at", false), EndedAt: d.ts("ended_at", false),
	}
	s.Problems = d.problems
	return s
}

func decodeWorkItem(get getter) WorkItem {
	d := &decoder{get: get}
	w := WorkItem{
		WorkItemID: d.int("work_item_id"),
		WorkRef: WorkRef{Remote: d.str("remote"), Org: d.str("org"), Repo: d.str("repo"),
			Kind: WorkKind(Fold(d.str("work_kind"))), Number: d.int("work_number")},
		Title: d.str("title"), State: d.str("state"),
	}
	w.Problems = d.problems
	return w
}

func decodeAssignment(get getter) Assignment {
	d := &decoder{get: get}
	a := Assignment{
		AssignmentID: d.str("assignment_id"), LeaseID: d.str("lease_id"),
		SessionID: d.str("session_id"), WorkItemID: d.int("work_item_id"), Role: d.str("role"),
		CreatedAt: d.ts("created_at", false), Status: d.str("status"),
	}
	a.Problems = d.problems
	return a
}

func decodeEvent(get getter) Event {
	d := &decoder{get: get}
	e := Event{
		EventID: d.int("event_id"), WorkItemID: d.int("work_item_id"),
		EventType: d.str("event_type"), Message: d.str("message"),
		CreatedAt: d.ts("created_at", false), SessionID: d.str("session_id"),
		DetailRaw: d.str("detail_json"), Detail: d.object("detail_json"),
	}
	e.Problems = d.problems
	return e
}
