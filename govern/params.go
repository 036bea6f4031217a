package govern

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"

	"steward/govern/actionid"
)

// Params is an action's parameters: one of the structs below, the one its action takes
// (paramsTable), or nil for an action that takes none. The surfaces decode what they are
// given into it once, at their edge — the command line's flags (DecodeParams), the MCP
// tools' arguments, the workbench's intents — and the actions read its fields, never a
// name.
//
// Each field is a parameter: its tag `param:"name"` is the name it has on the wire (the
// request's JSON form, a record's inverse and steps, docs/reliability.md) and in the table
// of argument limits (argLimits). The values stay text as the caller gave them: the action
// judges a malformed number or duration with the same finding on every surface.
type Params interface {
	// paramsOf seals the interface: only this package's parameter structs are Params.
	paramsOf() string
}

// HeldFence is the fence a worker holds from its claim or last heartbeat, passed to fence a
// heartbeat, release or ask. Each value given must equal what is read now, or the action is
// refused fence_moved; the lease and lock writes then compare the same values atomically
// (the lease's expires_at inside the transaction, the lock's generation and task_session_id
// under flock).
type HeldFence struct {
	ExpiresAt      string `param:"expect_expires_at"`
	LockGeneration string `param:"expect_lock_generation"`
	TaskSession    string `param:"expect_task_session_id"`
	// LeaseGeneration is the seed's lease_generation_id (0 where the DB records none).
	LeaseGeneration string `param:"expect_lease_generation"`
}

// OwnerProof is how a worker's call on its own lease proves it is the claimant (proveOwner).
type OwnerProof struct {
	// ClaimToken is the token the claim returned. Secret: never printed, logged, audited or
	// passed in argv (Request's JSON form redacts it).
	ClaimToken string `param:"claim_token"`
	// CallerPID names the process the call comes from, as its transport proves it (steward
	// mcp over stdio sets it to the process that started it; never a pid a client merely
	// declares). A lease recorded on this host for another process is refused not_owner.
	CallerPID string `param:"caller_pid"`
}

// ClaimParams are worker.claim's parameters.
type ClaimParams struct {
	Role     string `param:"role"`     // author, reviewer, merger or conflict-fix
	Profile  string `param:"profile"`  // the worker's profile
	PID      string `param:"pid"`      // the worker's process id
	TTL      string `param:"ttl"`      // the lease TTL (Go duration); default from the policy
	Branch   string `param:"branch"`   // default minted from the issue
	Worktree string `param:"worktree"` // default <repo-root>/branches/<branch>
	Title    string `param:"title"`    // the item's title, for the lease row
	Username string `param:"username"` // the claimant's Gitea username
	// ClaimToken is the secret the lease is bound to (NewClaimToken); see OwnerProof.
	ClaimToken string `param:"claim_token"`
}

// OwnLeaseParams are worker.heartbeat's and worker.release's parameters.
type OwnLeaseParams struct {
	HeldFence
	OwnerProof
}

// AskParams are clarification.ask's parameters.
type AskParams struct {
	Question string `param:"question"` // Markdown, for a maintainer
	HeldFence
	OwnerProof
}

// AnswerParams are clarification.answer's parameters.
type AnswerParams struct {
	Body string `param:"body"` // the answer, Markdown
	// QuestionComment, when set, is the id of the question comment the person saw: a
	// newer question refuses the answer.
	QuestionComment string `param:"question_comment"`
}

// RelabelParams are clarification.relabel's parameters.
type RelabelParams struct {
	Label string `param:"label"` // a configured clarification marker
}

// AttentionParams are attention.ack's and attention.snooze's parameters.
type AttentionParams struct {
	Evidence string `param:"evidence"` // the entry's evidence fingerprint, as seen
	Level    string `param:"level"`    // the level acknowledged (default 0)
	For      string `param:"for"`      // a snooze's length (Go duration); snooze only
}

func (ClaimParams) paramsOf() string    { return actionid.Claim }
func (OwnLeaseParams) paramsOf() string { return actionid.Heartbeat + " and " + actionid.Release }
func (AskParams) paramsOf() string      { return actionid.Ask }
func (AnswerParams) paramsOf() string   { return actionid.Answer }
func (RelabelParams) paramsOf() string  { return actionid.Relabel }
func (AttentionParams) paramsOf() string {
	return actionid.AttentionAck + " and " + actionid.AttentionSnooze
}
func (unknownParams) paramsOf() string { return "no action" }

// paramsTable is the parameter struct of every action that takes parameters; the others
// take none.
var paramsTable = map[string]Params{
	actionid.Claim:           ClaimParams{},
	actionid.Heartbeat:       OwnLeaseParams{},
	actionid.Release:         OwnLeaseParams{},
	actionid.Ask:             AskParams{},
	actionid.Answer:          AnswerParams{},
	actionid.Relabel:         RelabelParams{},
	actionid.AttentionAck:    AttentionParams{},
	actionid.AttentionSnooze: AttentionParams{},
}

// unknownParams carries, unjudged, parameters that did not decode into their action's
// struct (a name the action does not take, an action this steward does not know): a
// request read back from JSON keeps them, so the core refuses it invalid_request naming the
// parameter instead of acting on less than was asked.
type unknownParams map[string]string

// paramsFor returns req's parameters as the struct P its action takes; the zero P when it
// has none. Core.plan refuses a request whose parameters are another action's first.
func paramsFor[P Params](req Request) P {
	p, _ := req.Params.(P)
	return p
}

// param is one parameter by its wire name.
type param struct{ name, value string }

// pairs returns p's parameters that are set, by name, sorted (nil for none).
func pairs(p Params) []param {
	if p == nil {
		return nil
	}
	if u, ok := p.(unknownParams); ok {
		out := make([]param, 0, len(u))
		for k, v := range u {
			out = append(out, param{k, v})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
		return out
	}
	var out []param
	eachField(reflect.ValueOf(p), func(name string, v reflect.Value) {
		if s := v.String(); s != "" {
			out = append(out, param{name, s})
		}
	})
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// eachField calls fn with every tagged string field of the struct v, embedded ones included.
func eachField(v reflect.Value, fn func(name string, v reflect.Value)) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		switch {
		case f.Anonymous && f.Type.Kind() == reflect.Struct:
			eachField(v.Field(i), fn)
		case f.Tag.Get("param") != "" && f.Type.Kind() == reflect.String:
			fn(f.Tag.Get("param"), v.Field(i))
		}
	}
}

// mapParams returns p's set parameters by name (nil for none).
func mapParams(p Params) map[string]string {
	ps := pairs(p)
	if len(ps) == 0 {
		return nil
	}
	m := make(map[string]string, len(ps))
	for _, q := range ps {
		m[q.name] = q.value
	}
	return m
}

// withValues returns a copy of p with every set value replaced by fn(name, value).
func withValues(p Params, fn func(name, v string) string) Params {
	switch q := p.(type) {
	case nil:
		return nil
	case unknownParams:
		out := make(unknownParams, len(q))
		for k, v := range q {
			out[k] = fn(k, v)
		}
		return out
	}
	cp := reflect.New(reflect.TypeOf(p)).Elem()
	cp.Set(reflect.ValueOf(p))
	eachField(cp, func(name string, v reflect.Value) {
		if s := v.String(); s != "" {
			v.SetString(fn(name, s))
		}
	})
	return cp.Interface().(Params)
}

// ParamNames returns the names of the parameters action takes, sorted; none for an action
// that takes none or that this steward does not know.
func ParamNames(action string) []string {
	p, ok := paramsTable[action]
	if !ok {
		return nil
	}
	var out []string
	eachField(reflect.ValueOf(p), func(name string, _ reflect.Value) { out = append(out, name) })
	slices.Sort(out)
	return out
}

// DecodeParams decodes parameters given by name (the command line's flags, a request's
// JSON form) into the struct action takes. An empty value is left unset. A name the action
// does not take is an error that names it, and nothing is decoded.
func DecodeParams(action string, m map[string]string) (Params, error) {
	zero, ok := paramsTable[action]
	if !ok {
		for k, v := range m {
			if v != "" {
				return nil, fmt.Errorf("%s takes no parameters; %q is not one of its", action, clipParam(k))
			}
		}
		return nil, nil
	}
	p := reflect.New(reflect.TypeOf(zero)).Elem()
	set := map[string]reflect.Value{}
	eachField(p, func(name string, v reflect.Value) { set[name] = v })
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f, ok := set[k]
		if !ok {
			return nil, fmt.Errorf("%s takes no parameter %q (it takes %v)", action, clipParam(k), ParamNames(action))
		}
		f.SetString(m[k])
	}
	return p.Interface().(Params), nil
}

// decodeParamsJSON is the JSON form's decoder: a request read back (an audit record's
// inverse and steps, written before the parameters were typed or after) gets its action's
// struct, or unknownParams when they do not decode, for the core to refuse.
func decodeParamsJSON(action string, raw json.RawMessage) (Params, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	if len(m) == 0 {
		return nil, nil
	}
	p, err := DecodeParams(action, m)
	if err != nil {
		return unknownParams(m), nil
	}
	if len(pairs(p)) == 0 {
		return nil, nil // only empty values: unset, as they are written back (no params at all)
	}
	return p, nil
}

// checkParams refuses a request whose parameters are not its action's: another action's
// struct, or names no action takes (unknownParams).
func checkParams(req Request) *Refusal {
	switch p := req.Params.(type) {
	case nil:
		return nil
	case unknownParams:
		ks := pairs(p)
		for _, q := range ks {
			if _, ok := LimitOf(q.name); !ok {
				return refuse(CodeInvalidRequest, fmt.Sprintf("no action takes a parameter %q; nothing was changed. Check its "+
					"name (docs/reliability.md lists every parameter)", clipParam(q.name)))
			}
		}
		names := make([]string, len(ks))
		for i, q := range ks {
			names[i] = q.name
		}
		return refuse(CodeInvalidRequest, fmt.Sprintf("%s takes no parameter among %v; nothing was changed. Check the "+
			"names (docs/reliability.md lists every parameter)", req.Action, names))
	}
	want, ok := paramsTable[req.Action]
	if ok && reflect.TypeOf(want) == reflect.TypeOf(req.Params) {
		return nil
	}
	if !ok {
		if len(pairs(req.Params)) == 0 {
			return nil
		}
		return refuse(
			CodeInvalidRequest,
			fmt.Sprintf(
				"%s takes no parameters, and this request carries %s's; nothing was changed",
				req.Action,
				req.Params.paramsOf(),
			),
		)
	}
	return refuse(
		CodeInvalidRequest,
		fmt.Sprintf(
			"%s takes %T, and this request carries %s's parameters; nothing was changed",
			req.Action,
			want,
			req.Params.paramsOf(),
		),
	)
}
