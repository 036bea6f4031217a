package govern

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Role is a steward actor's authority. Roles are ordered: each includes the ones below it.
type Role int

// The roles, lowest first. The zero value is no role at all, which may do nothing.
const (
	RoleNone Role = iota
	RoleViewer
	RoleOperator
	RoleController
	RoleAdmin
)

var roleNames = [...]string{"none", "viewer", "operator", "controller", "admin"}

// String returns the role's name as it appears in config files and audit records.
func (r Role) String() string {
	if r < 0 || int(r) >= len(roleNames) {
		return "none"
	}
	return roleNames[r]
}

// MarshalText encodes the role by name.
func (r Role) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText decodes a role by name; an unknown name is an error, never a default.
func (r *Role) UnmarshalText(b []byte) error {
	v, err := ParseRole(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// ParseRole returns the role named s.
func ParseRole(s string) (Role, error) {
	for i, n := range roleNames {
		if strings.EqualFold(n, s) {
			return Role(i), nil
		}
	}
	return RoleNone, fmt.Errorf("unknown role %q (want viewer, operator, controller or admin)", s)
}

// Tier is an action's risk tier.
type Tier string

// The risk tiers. A destructive action always needs a typed confirmation phrase.
const (
	TierGatedWrite  Tier = "gated_write"
	TierPrivileged  Tier = "privileged"
	TierDestructive Tier = "destructive"
)

// Actor is who acts: the Gitea login when known, the OS user and host, and the role steward
// grants them. Its identity is written into every audit record.
type Actor struct {
	GiteaLogin string `json:"gitea_login,omitempty"`
	OSUser     string `json:"os_user"`
	Host       string `json:"host"`
	Role       Role   `json:"role"`
	// Session is set when a worker acts: its control-plane session id.
	Session string `json:"session,omitempty"`
}

// Name is who acted, as every surface shows it (the workbench's Activity, `steward audit`,
// refusals): the worker's session when the attempt was made on a worker's behalf (a core
// bound with ForSession: `steward mcp`, the CLI's worker commands), else the Gitea login
// (a simulated worker's own core acts as its login), else the OS user. The OS user of a
// worker's process is not the worker: a fleet's workers share one.
func (a Actor) Name() string {
	switch {
	case a.Session != "":
		return a.Session
	case a.GiteaLogin != "":
		return a.GiteaLogin
	}
	return a.OSUser
}

// Item names one Gitea issue or pull request.
type Item struct {
	Remote string `json:"remote,omitempty"`
	Org    string `json:"org,omitempty"`
	Repo   string `json:"repo,omitempty"`
	Kind   string `json:"kind,omitempty"` // issue | pr
	Number int64  `json:"number,omitempty"`
}

// String renders the item as org/repo#n.
func (it Item) String() string {
	k := "#"
	if it.Kind == "pr" {
		k = "!"
	}
	return fmt.Sprintf("%s/%s%s%d", it.Org, it.Repo, k, it.Number)
}

// Target is what an action acts on. Only the fields the action needs are set.
type Target struct {
	LeaseID  string `json:"lease_id,omitempty"`
	LockFile string `json:"lock_file,omitempty"`
	Item     *Item  `json:"item,omitempty"`
	Session  string `json:"session,omitempty"`
	// Attempt names an earlier audit attempt (undo).
	Attempt string `json:"attempt,omitempty"`
	// Entry names an attention entry by its key (attention.ack, attention.snooze).
	Entry string `json:"entry,omitempty"`
}

func (t Target) redact(r *Redactor) Target {
	t.LockFile = r.String(t.LockFile)
	t.Entry = r.String(t.Entry)
	return t
}

// Request asks for one action on one target. It is a plain value: the workbench, the CLI
// and the simulator build the same requests. Params is the struct the action takes
// (params.go), or nil.
type Request struct {
	Action string `json:"action"`
	Target Target `json:"target"`
	Params Params `json:"params,omitempty"`
}

// requestJSON is a request's JSON form: the parameters as an object of strings by name, as
// audit records have always kept them.
type requestJSON struct {
	Action string            `json:"action"`
	Target Target            `json:"target"`
	Params map[string]string `json:"params,omitempty"`
}

// MarshalJSON writes the request with its claim token, a secret, redacted: a request is
// printed (a preview's --json), recorded (an inverse, a plan's steps) and logged, and the
// token must reach none of them.
func (r Request) MarshalJSON() ([]byte, error) {
	p := mapParams(withValues(r.Params, func(name, v string) string {
		if name == "claim_token" {
			return redacted
		}
		return v
	}))
	return json.Marshal(requestJSON{Action: r.Action, Target: r.Target, Params: p})
}

// UnmarshalJSON reads a request back (an audit record's inverse and steps): its parameters
// decode into the struct its action takes, or stay unknownParams for the core to refuse.
func (r *Request) UnmarshalJSON(b []byte) error {
	var w struct {
		Action string          `json:"action"`
		Target Target          `json:"target"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	p, err := decodeParamsJSON(w.Action, w.Params)
	if err != nil {
		return err
	}
	*r = Request{Action: w.Action, Target: w.Target, Params: p}
	return nil
}

// Refusal is a stable code and a message that ends with what to do instead.
type Refusal struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// maxMessage caps refusal and outcome messages; longer text is cut with an ellipsis.
const maxMessage = 800

// Cap cuts s to at most 800 characters, ending with an ellipsis when it cut.
func Cap(s string) string {
	if utf8.RuneCountInString(s) <= maxMessage {
		return s
	}
	r := []rune(s)
	return string(r[:maxMessage-1]) + "…"
}

func refuse(code, msg string) *Refusal {
	return &Refusal{Code: code, Message: Cap(msg)}
}

// Error makes a Refusal usable where an error is expected.
func (r *Refusal) Error() string { return r.Code + ": " + r.Message }

// The stable refusal codes of the core. Actions add their sources' codes (the leases and
// locks packages' outcome codes) unchanged.
const (
	CodeReadOnly             = "read_only"
	CodeRoleTooLow           = "role_too_low"
	CodeUnknownAction        = "unknown_action"
	CodeInvalidRequest       = "invalid_request"
	CodeConfirmationRequired = "confirmation_required"
	CodeFenceMoved           = "fence_moved"
	CodeAuditUnavailable     = "audit_unavailable"
	CodeSourceUnavailable    = "source_unavailable"
	CodeNotFound             = "not_found"
	codeAlreadyReleased      = "already_released"
	codeFreshForeignLease    = "fresh_foreign_lease"
	codeLivenessUnproven     = "liveness_unproven"
	codeInspectOnly          = "inspect_only"
	codeClaimedSince         = "claimed_since"
	codeNoInverse            = "no_inverse"
	CodeNotOwner             = "not_owner"
	CodePathOutside          = "path_outside"
	CodeClaimedByOther       = "claimed_by_other_session"
	CodeLockMissing          = "lock_missing"
)

// Spec is what an action declares about itself.
type Spec struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	MinRole Role   `json:"min_role"`
	Tier    Tier   `json:"tier"`
	// Worker marks actions a worker takes on its own claim (claim, heartbeat, release, ask).
	Worker bool `json:"worker,omitempty"`
	// Undoable says the action records an inverse that undo can apply.
	Undoable bool `json:"undoable,omitempty"`
}
