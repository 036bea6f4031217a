package model

import (
	"fmt"
	"strings"
	"time"

	"steward/locks/lockrec"
)

// Snapshot is one consistent picture of the workspace at GeneratedAt. A
// published Snapshot is immutable: the live model (model/live) hands out a new one per change.
type Snapshot struct {
	GeneratedAt time.Time `json:"generated_at"`
	// Clock says which clock GeneratedAt — every freshness verdict of the snapshot — was
	// read from: the control-plane DB's (PostgreSQL) or this host's.
	Clock          Clock           `json:"clock"`
	Sources        Sources         `json:"sources"`
	Claims         []*Claim        `json:"claims"`
	Contention     []*Contention   `json:"contention"`
	Clarifications []Clarification `json:"clarifications"`
	Orphans        []*Orphan       `json:"orphans"`
	Sessions       []*Session      `json:"sessions"`
	// SessionsOmitted counts ended sessions left out of Sessions, as of the
	// last full read of the DB: every session that may be live, every one a
	// non-terminal lease names and the most recent others are listed (see
	// leases.ReadOptions.RecentEnded).
	SessionsOmitted int          `json:"sessions_omitted,omitempty"`
	Items           []*ItemState `json:"items"`
	// ItemsInventory says whether Items holds every open item of the Gitea repository.
	ItemsInventory ItemsInventory `json:"items_inventory"`
	Activity       []Event        `json:"activity"`
	// Findings are source-level notes (an ignored policy override, a lock
	// file whose worktree is outside branches/, …).
	Findings []string `json:"findings,omitempty"`
}

// The clocks a snapshot is judged at (Clock.Source).
const (
	// ClockDB: the control-plane DB server's clock (PostgreSQL), the one every transition
	// fences against, read as an offset from this host's.
	ClockDB = "db"
	// ClockHost: this host's clock (SQLite, whose only clock it is; a DB whose clock could not
	// be read; or a fixed instant given to steward).
	ClockHost = "host"
)

// Clock is the clock a snapshot's verdicts were judged at. On PostgreSQL it is the DB's,
// read once per snapshot (at most once a second): every expiry, heartbeat age and SLA of
// the snapshot — on screen, in attention and in exit codes — is judged by the clock the
// governed core fences with, whatever this host's says.
type Clock struct {
	Source string `json:"source"`
	// Offset is the DB's clock minus this host's, as last read (zero on this host's clock):
	// a host 5 minutes fast reads -5m.
	Offset time.Duration `json:"offset_ns"`
	// ReadAt is when the DB's clock was last read (by this host's clock).
	ReadAt time.Time `json:"read_at,omitzero"`
}

// At is this host's instant host at the clock c: moved by the offset when it is the DB's.
// The surfaces draw ages, countdowns and SLAs between snapshots at it, so that they agree
// with the snapshot's verdicts.
func (c Clock) At(host time.Time) time.Time {
	if c.Source == ClockDB {
		return host.Add(c.Offset)
	}
	return host
}

// Skewed reports whether this host's clock is more than a second off the DB's — the
// surfaces then say so (the workbench's header, steward status).
func (c Clock) Skewed() bool {
	return c.Source == ClockDB && (c.Offset > time.Second || c.Offset < -time.Second)
}

// Sources is the health of each of the three sources.
type Sources struct {
	Locks SourceHealth `json:"locks"`
	DB    SourceHealth `json:"db"`
	Gitea SourceHealth `json:"gitea"`
}

// SourceHealth says whether a source was read fully, partly or not at all,
// why, when, and how long the scan took.
type SourceHealth struct {
	Status       Status        `json:"status"`
	Reason       string        `json:"reason,omitempty"`
	ScannedAt    time.Time     `json:"scanned_at"`
	ScanDuration time.Duration `json:"scan_duration_ns"`
	// Partial means some of the source was read and some was not: nothing
	// is concluded from what is missing.
	Partial bool `json:"partial"`
	// Notes say what the read lacks without making it partial: a column the
	// supervised system's DB does not have (steward's enrichments, or one
	// inferred from the seed) and what that costs, rows with undecodable values
	// (only their own items' verdicts are unproven).
	Notes []string `json:"notes,omitempty"`
}

// Usable reports whether the source was read at all (ok or degraded).
func (h SourceHealth) Usable() bool { return h.Status == StatusOK || h.Status == StatusDegraded }

// Complete reports whether the source was read fully: only then may absence
// in it be evidence.
func (h SourceHealth) Complete() bool { return h.Status == StatusOK && !h.Partial }

// Item names a Gitea issue or pull request (the lock key for issues).
type Item struct {
	Kind   string `json:"kind"` // issue | pr
	Number int64  `json:"number"`
	Remote string `json:"remote"`
	Org    string `json:"org"`
	Repo   string `json:"repo"`
}

// String renders the item as org/repo#n (org/repo!n for a PR).
func (it Item) String() string {
	sep := "#"
	if it.Kind == "pr" {
		sep = "!"
	}
	return fmt.Sprintf("%s/%s%s%d", it.Org, it.Repo, sep, it.Number)
}

// key is the item's identity inside the model: the remote as written (trimmed), the org and
// repository folded as lockrec.Key.Identity and leaserec.Fold fold them — Gitea's owner and repository
// names are case-insensitive, and the supervised system keys its work items by lower(org),
// lower(repo) — the kind and the number. ACME/Widgets#7 and acme/widgets#7 are one item; the
// Item shown is the spelling first read.
func (it Item) key() string {
	return strings.TrimSpace(
		it.Remote,
	) + "\x00" + lockrec.Fold(
		it.Org,
	) + "\x00" + lockrec.Fold(
		it.Repo,
	) + "\x00" + it.Kind + "\x00" + fmt.Sprintf(
		"%012d",
		it.Number,
	)
}

// InRepo reports whether it is in the repository org/repo, compared folded.
func (it Item) InRepo(org, repo string) bool {
	return lockrec.Fold(it.Org) == lockrec.Fold(org) && lockrec.Fold(it.Repo) == lockrec.Fold(repo)
}

// Evidence is one fact a derivation rests on: where it was read, which
// field, its value, and when it was observed (age is relative to the
// snapshot's generated_at).
type Evidence struct {
	Source Source    `json:"source"`
	Field  string    `json:"field"`
	Value  string    `json:"value"`
	At     time.Time `json:"at,omitzero"`
}

// Claimant is the user and profile a lock names.
type Claimant struct {
	Username string `json:"username"`
	Profile  string `json:"profile"`
}

// Claim is one claim on an item: a lock file joined with its lease, the
// lease's session and the item. Either side may be missing (a lock without a
// lease row, a lease without a lock file); the evidence says which.
type Claim struct {
	Item          *Item     `json:"item,omitempty"`
	Role          string    `json:"role,omitempty"`
	TaskClass     string    `json:"task_class,omitempty"`
	Claimant      *Claimant `json:"claimant,omitempty"`
	SessionID     string    `json:"session_id,omitempty"`
	Phase         string    `json:"phase,omitempty"`
	LastHeartbeat time.Time `json:"last_heartbeat_at,omitzero"`
	ExpiresAt     time.Time `json:"expires_at,omitzero"`
	HeartbeatAgeS *int64    `json:"heartbeat_age_s"`
	TimeLeftS     *int64    `json:"time_left_s"`
	Warning       bool      `json:"warning"`
	Contract      string    `json:"contract,omitempty"`
	Freshness     string    `json:"freshness,omitempty"`
	OwnerLiveness Liveness  `json:"owner_liveness"`
	// OwnerOtherHost names the owner's host when it is not this one: its liveness is then
	// "unknown, other host" — not observed from here, never dead.
	OwnerOtherHost string `json:"owner_other_host,omitempty"`
	LockFile       string `json:"lock_file,omitempty"`
	LeaseID        string `json:"lease_id,omitempty"`
	LeaseStatus    string `json:"lease_status,omitempty"`
	// LeaseGeneration is the seed's lease_generation_id fencing counter, where the DB
	// records one (seed HA ADR #668).
	LeaseGeneration *int64     `json:"lease_generation_id,omitempty"`
	Evidence        []Evidence `json:"evidence"`
}

// Contention is an item several workers went for: refused claims over a
// window (routine information) or a real collision.
type Contention struct {
	Kind      ContentionKind `json:"kind"`
	Item      *Item          `json:"item,omitempty"`
	Sessions  []string       `json:"sessions"`
	LockFiles []string       `json:"lock_files,omitempty"`
	LeaseIDs  []string       `json:"lease_ids,omitempty"`
	// Count is, for refused claims, how many in the window; for a collision, how many
	// claims collide (Owners).
	Count   int   `json:"count,omitempty"`
	WindowS int64 `json:"window_s,omitempty"`
	// Owners are a collision's claims by who holds each: its session, else (a legacy lock
	// names none) its process and lock file.
	Owners   []string   `json:"owners,omitempty"`
	Evidence []Evidence `json:"evidence"`
	// Next is the way out: the sanctioned actions that resolve it, else whose job it is.
	Next *Resolution `json:"next"`
}

// Clarification is an item carrying the clarification marker: the worker's
// question and who asked it when.
type Clarification struct {
	Item     Item   `json:"item"`
	Title    string `json:"title"`
	Marker   string `json:"marker"`
	Question string `json:"question"`
	// QuestionComment names the question: its Gitea comment id, "body" (the issue body) or
	// "none". An answer names it, so that the core refuses it when the question changed.
	QuestionComment string    `json:"question_comment,omitempty"`
	Rule            string    `json:"rule"`
	AskedBy         string    `json:"asked_by"`
	AskedAt         time.Time `json:"asked_at,omitzero"`
	URL             string    `json:"url,omitempty"`
}

// ActionTarget is what a reconciling action acts on.
type ActionTarget struct {
	LeaseID  string `json:"lease_id,omitempty"`
	LockFile string `json:"lock_file,omitempty"`
}

// Refusal is the governed core's refusal of a previewed action.
type Refusal struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ActionRef names the governed action that reconciles an orphan. Allowed and
// Refusal are nil until the layer above previews it (govern.Annotate).
type ActionRef struct {
	ID      string       `json:"id"`
	Target  ActionTarget `json:"target"`
	Allowed *bool        `json:"allowed"`
	Refusal *Refusal     `json:"refusal"`
}

// Orphan is a reconcilable artifact: its kind, the evidence, and the
// sanctioned action — or, when there is none, why it is inspect only.
type Orphan struct {
	Kind              OrphanKind `json:"kind"`
	Item              *Item      `json:"item,omitempty"`
	LockFile          string     `json:"lock_file,omitempty"`
	LeaseID           string     `json:"lease_id,omitempty"`
	SessionID         string     `json:"session_id,omitempty"`
	Evidence          []Evidence `json:"evidence"`
	Action            *ActionRef `json:"action,omitempty"`
	InspectOnlyReason string     `json:"inspect_only_reason,omitempty"`
}

// Session is one worker session of the fleet.
type Session struct {
	SessionID     string    `json:"session_id"`
	Role          string    `json:"role"`
	Profile       string    `json:"profile"`
	PID           int64     `json:"pid"`
	Host          string    `json:"host,omitempty"`
	Status        string    `json:"status"`
	Liveness      Liveness  `json:"liveness"`
	Live          bool      `json:"live"`
	LastHeartbeat time.Time `json:"last_heartbeat_at,omitzero"`
	EndedAt       time.Time `json:"ended_at,omitzero"`
	Leases        []string  `json:"leases"`
}

// ItemsInventory says whether items[] lists every open issue and pull request the Gitea
// repository has (each in one bucket), and, when not, why: Gitea not configured or not
// read, read in part (a listing cut short after some pages), or not joined with the other
// sources' items. Items the lock files and the DB name are listed either way.
type ItemsInventory struct {
	Complete bool   `json:"complete"`
	Reason   string `json:"reason,omitempty"`
}

// ItemState is one item's traffic bucket with the reasons behind it.
type ItemState struct {
	Item     Item       `json:"item"`
	Title    string     `json:"title,omitempty"`
	Bucket   Bucket     `json:"bucket"`
	Reasons  []string   `json:"reasons"`
	Evidence []Evidence `json:"evidence"`
}

// Event is one control-plane event for the Activity view (key cp:<event_id>).
type Event struct {
	Key       string         `json:"key"`
	EventID   int64          `json:"event_id"`
	Type      string         `json:"event_type"`
	Item      *Item          `json:"item,omitempty"`
	SessionID string         `json:"session_id,omitempty"`
	Message   string         `json:"message"`
	At        time.Time      `json:"created_at,omitzero"`
	Detail    map[string]any `json:"detail,omitempty"`
}

// Counts summarises a snapshot.
type Counts struct {
	Claims, Contention, Collisions, Clarifications, Orphans, Sessions int
	Buckets                                                           map[Bucket]int
}

// Count returns the snapshot's counts.
func (s *Snapshot) Count() Counts {
	c := Counts{Claims: len(s.Claims), Contention: len(s.Contention), Clarifications: len(s.Clarifications),
		Orphans: len(s.Orphans), Sessions: len(s.Sessions), Buckets: map[Bucket]int{}}
	for _, x := range s.Contention {
		if x.Kind != ContentionClaimRefused {
			c.Collisions++
		}
	}
	for _, it := range s.Items {
		c.Buckets[it.Bucket]++
	}
	return c
}

// OwnerText is the owner's liveness as shown: "unknown, other host (NAME)" for an owner on
// another node, whose process table this host cannot see.
func (c *Claim) OwnerText() string {
	s := string(c.OwnerLiveness)
	if s == "" {
		s = string(LivenessUnknown)
	}
	if c.OwnerOtherHost != "" && c.OwnerLiveness != LivenessAlive && c.OwnerLiveness != LivenessDead {
		s += ", other host (" + c.OwnerOtherHost + ")"
	}
	return s
}
