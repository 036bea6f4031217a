package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"steward/alloc"
	"steward/govern"
	"steward/leases"
	"steward/leases/leaserec"
	"steward/termsafe"
)

// Config sets up a Server.
type Config struct {
	// Core is the workspace's governed core, acting as whoever runs steward mcp (its role
	// gates every worker action). The server binds it to each call's worker session.
	Core *govern.Core
	// ClientPID is the worker process of a stdio connection (the process that started
	// steward mcp). Claims record it for liveness unless a pid is given, and every later
	// call on those leases must come from it. 0 over HTTP.
	ClientPID int64
	// Remote is the workspace's configured Gitea remote (gitea.remote): the remote name an
	// item is given when a call names none. "origin" when empty.
	Remote string
	// Version is reported to clients.
	Version string
	// Now is the clock of the read-only tools (time left); time.Now when nil.
	Now func() time.Time
}

// Server is the MCP server of the worker tools.
type Server struct {
	cfg   Config
	sdk   *sdk.Server
	bind  *binder
	host  string
	reads *readers
	// schemas are each tool's input and output schemas, by name.
	schemas map[string][2]toolSchema
	// retries are the answers of calls with a request_id (retry.go).
	retries *retries
	// inflight counts tool calls that may be applying; Wait waits for them, so a client
	// that goes away never cuts an apply short.
	inflight sync.WaitGroup
}

// New returns the server with every worker tool registered. It opens nothing until a tool
// is called.
func New(cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Remote = strings.TrimSpace(cfg.Remote); cfg.Remote == "" {
		cfg.Remote = defaultRemote
	}
	host, _ := leases.HostName()
	s := &Server{cfg: cfg, bind: newBinder(), host: host, schemas: map[string][2]toolSchema{}, retries: newRetries()}
	s.reads = &readers{ws: cfg.Core.Workspace()}
	s.sdk = sdk.NewServer(&sdk.Implementation{Name: "steward", Title: "steward worker tools", Version: cfg.Version},
		&sdk.ServerOptions{Instructions: instructions, Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
			SupportedProtocolVersions: protocolVersions})
	s.register()
	return s
}

// defaultRemote is an item's remote when neither the call nor the workspace's configuration
// (gitea.remote) names one.
const defaultRemote = "origin"

// protocolVersions are the MCP protocol versions steward serves: those with sessions. The
// SDK also speaks the draft 2026-07-28 protocol, whose requests carry no session, so each
// call would be a connection of its own and no session could be bound to one; it is not
// served (a request naming it is refused 400 by the SDK).
var protocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

const instructions = `steward's worker tools: claim an item (or the next runnable one), heartbeat it, release it, ` +
	`or ask a maintainer and poll for the answer. Pass your session_id on every call. Keep the fence each ` +
	`claim and heartbeat returns and pass it back: a stale fence is refused, never retried. A refusal is ` +
	`an ordinary result (success false, code, next): do what next says; never retry a refused claim. ` +
	`An unknown result may have taken effect: read my_leases or item_status before acting again. ` +
	`Give each mutation a fresh random request_id and send the same call with the same request_id when its reply ` +
	`was lost: you get the first answer, never a second action. After reconnecting, present your claim_token ` +
	`(my_leases) to take your session up.`

// SDK returns the underlying MCP server (to run it on a transport).
func (s *Server) SDK() *sdk.Server { return s.sdk }

// Close waits for tool calls still applying, then closes the read handles. The core
// belongs to the caller.
func (s *Server) Close() error {
	s.inflight.Wait()
	return s.reads.close()
}

// Wait waits for every tool call that may be applying to finish.
func (s *Server) Wait() { s.inflight.Wait() }

// tool names. The seed's names for the same jobs are registered beside them (seed.go).
const (
	ToolClaim     = "claim"
	ToolHeartbeat = "heartbeat"
	ToolRelease   = "release"
	ToolAsk       = "ask"
	ToolGetAnswer = "get_answer"
	ToolMyLeases  = "my_leases"
	ToolStatus    = "item_status"
	ToolInspect   = "inspect_lock_contract"
)

func ptr[T any](v T) *T { return &v }

// Annotations, truthful: reads are read-only; claim adds a lease and a lock (not
// destructive, not idempotent: a second claim of next takes another item); heartbeat is
// idempotent under its fence (the same fence again is refused, nothing more happens);
// release and ask end a claim (destructive) and are idempotent the same way; ask posts to
// the team's tracker (open world).
var (
	readOnly = &sdk.ToolAnnotations{
		ReadOnlyHint:    true,
		IdempotentHint:  true,
		DestructiveHint: ptr(false),
		OpenWorldHint:   ptr(false),
	}
	readGitea = &sdk.ToolAnnotations{
		ReadOnlyHint:    true,
		IdempotentHint:  true,
		DestructiveHint: ptr(false),
		OpenWorldHint:   ptr(true),
	}
	additive    = &sdk.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: false, OpenWorldHint: ptr(false)}
	renewing    = &sdk.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)}
	ending      = &sdk.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)}
	endingGitea = &sdk.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(true)}
)

func (s *Server) register() {
	addTool(
		s,
		&sdk.Tool{
			Name:        ToolClaim,
			Title:       "Claim an item",
			Annotations: additive,
			Description: "Claim an issue for your session: a lease and a lock in one fenced step. " +
				"Name the item, or set next to claim the next runnable item by the allocation order (priority, what it " +
				"unblocks, oldest). " +
				"Returns the fence to pass to heartbeat, release and ask. A refusal (e.g. claimed_by_other_session) is normal: " +
				"pick other work, do not retry.",
		},
		s.claim,
	)
	addTool(
		s,
		&sdk.Tool{
			Name:        ToolHeartbeat,
			Title:       "Heartbeat a claim",
			Annotations: renewing,
			Description: "Renew your lease and its lock. " +
				"Pass the fence your claim or last heartbeat returned; returns the new fence. A stale fence is refused " +
				"fence_moved.",
		},
		s.heartbeat,
	)
	addTool(
		s,
		&sdk.Tool{
			Name:        ToolRelease,
			Title:       "Release a claim",
			Annotations: ending,
			Description: "Release your lease and archive its lock, fenced on the values you hold.",
		},
		s.release,
	)
	addTool(
		s,
		&sdk.Tool{
			Name:        ToolAsk,
			Title:       "Ask a maintainer",
			Annotations: endingGitea,
			Description: "Post a question on the claimed item, set the clarification marker label and release the claim. " +
				"Returns a clarification_id at once; poll get_answer with it. Do not keep working on the item.",
		},
		s.ask,
	)
	addTool(
		s,
		&sdk.Tool{
			Name:        ToolGetAnswer,
			Title:       "Poll for an answer",
			Annotations: readGitea,
			Description: "Read whether a maintainer answered a clarification (read-only).",
		},
		s.getAnswer,
	)
	addTool(
		s,
		&sdk.Tool{
			Name:        ToolMyLeases,
			Title:       "My leases",
			Annotations: readOnly,
			Description: "List your session's active leases with their current fences (read-only).",
		},
		s.myLeases,
	)
	addTool(
		s,
		&sdk.Tool{
			Name:        ToolStatus,
			Title:       "Item status",
			Annotations: readGitea,
			Description: "Who holds an item, its lock and labels, and whether it is claimable (read-only).",
		},
		s.itemStatus,
	)
	addTool(
		s,
		&sdk.Tool{
			Name:        ToolInspect,
			Title:       "Inspect a lock contract",
			Annotations: readOnly,
			Description: "Assess an issue's lock file against the canonical #953 contract, with the recommended action " +
				"(read-only).",
		},
		s.inspect,
	)
	s.registerSeedNames()
}

// result is what every handler returns: a value with success and code fields, which can
// also be built as a refusal before the handler runs (an argument that does not fit the
// tool's schema, a cancelled read).
type result[T any] interface {
	failed() bool
	refusal(code, msg string) T
}

// failed reports a result a client should show as an error: refused, failed or unknown.
// A dry run (previewed) did what was asked and is not one.
func (o Outcome) failed() bool    { return !o.Success && o.Result != string(govern.ResultPreviewed) }
func (a Answer) failed() bool     { return !a.Success }
func (m MyLeases) failed() bool   { return !m.Success }
func (i ItemStatus) failed() bool { return !i.Success }
func (c Contract) failed() bool   { return !c.Success }

func (Outcome) refusal(code, msg string) Outcome { return refused(code, msg) }
func (Answer) refusal(code, msg string) Answer {
	return Answer{Code: code, Message: termsafe.Text(msg), Next: nextFor(code)}
}
func (MyLeases) refusal(code, msg string) MyLeases {
	return MyLeases{Code: code, Message: termsafe.Text(msg), Next: nextFor(code)}
}
func (ItemStatus) refusal(code, msg string) ItemStatus {
	return ItemStatus{Code: code, Message: termsafe.Text(msg), Next: nextFor(code)}
}
func (Contract) refusal(code, msg string) Contract {
	return Contract{Code: code, Message: termsafe.Text(msg), Next: nextFor(code), RecommendedAction: nextFor(code)}
}

// maxResult bounds the structured result of every tool call, in bytes of JSON (its text
// content repeats it): list results page, text from the sources is clipped to maxText.
const maxResult = 256 << 10

// maxText bounds one text taken from a source into a result (a question, an answer).
const maxText = 64 << 10

// codeCancelled is the code of a call the client cancelled (notifications/cancelled) before
// it was answered: a read that was cut short, never a read that succeeded. A mutation is
// never cut short (it runs to its end and answers its real outcome).
const codeCancelled = "cancelled"

// addTool registers a typed handler. Its arguments are checked against the tool's input
// schema first (schema.go): one that does not fit is refused invalid_request as a result,
// with code and next, never with the validator's bare text. Its value is always the
// structured result, checked against the output schema; a refusal, unknown or failed
// outcome also sets isError so a client shows it, but it is a result the model reads,
// never a protocol error.
func addTool[In any, Out result[Out]](s *Server, t *sdk.Tool, h func(context.Context, *sdk.CallToolRequest, In) Out) {
	in, err := schemaFor[In](true)
	if err != nil {
		panic(fmt.Sprintf("mcp: tool %s: input schema: %v", t.Name, err))
	}
	out, err := schemaFor[Out](false)
	if err != nil {
		panic(fmt.Sprintf("mcp: tool %s: output schema: %v", t.Name, err))
	}
	tt := *t
	tt.InputSchema, tt.OutputSchema = in.schema, out.schema
	mutating := t.Annotations == nil || !t.Annotations.ReadOnlyHint
	s.schemas[t.Name] = [2]toolSchema{in, out}
	s.sdk.AddTool(&tt, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		s.inflight.Add(1)
		defer s.inflight.Done()
		var zero Out
		var res Out
		if err := in.checkArgs(t.Name, req.Params.Arguments); err != nil {
			res = zero.refusal(govern.CodeInvalidRequest, clip(err.Error()))
		} else {
			var args In
			if err := json.Unmarshal(argsOrEmpty(req.Params.Arguments), &args); err != nil {
				msg := "the arguments do not fit " + t.Name + "'s input schema: " + err.Error()
				res = zero.refusal(govern.CodeInvalidRequest, clip(msg))
			} else {
				res = once(s, ctx, req, t.Name, mutating, func(ctx context.Context) Out { return h(ctx, req, args) })
			}
		}
		if ctx.Err() != nil && !reachedCore(res) {
			// The client cancelled the call: whatever was read is cut short.
			res = zero.refusal(
				codeCancelled,
				"the call was cancelled before it was answered; nothing was changed, and what was read is not an answer. Call "+
					"again if you still need it",
			)
		}
		b, err := json.Marshal(res)
		if err != nil {
			return nil, fmt.Errorf("mcp: %s: marshal result: %w", t.Name, err)
		}
		if len(b) > maxResult && !reachedCore(res) {
			// Never reached with the bounds above (TestResultsStaySmallOnALargeFleet);
			// a read that would break one is refused rather than sent.
			res = zero.refusal(
				"result_too_large",
				fmt.Sprintf(
					"the result would be %d bytes, over the %d bytes every result stays within; narrow the call (limit, an item)",
					len(b),
					maxResult,
				),
			)
			if b, err = json.Marshal(res); err != nil {
				return nil, err
			}
		}
		var plain any
		if err := json.Unmarshal(b, &plain); err != nil {
			return nil, err
		}
		if err := out.resolved.Validate(plain); err != nil {
			return nil, fmt.Errorf("mcp: %s: the result does not fit the output schema: %w", t.Name, err)
		}
		return &sdk.CallToolResult{IsError: res.failed(), StructuredContent: json.RawMessage(b),
			Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}, nil
	})
}

// once runs a call's handler h, at most once per request_id (retry.go): a call whose
// request_id this server has answered for the session gets that answer again; one still
// running is waited for. It also hands the handler, through ctx, what the call presents as
// proof of the session's claims (for enter). Reads take no request_id.
func once[Out result[Out]](
	s *Server,
	ctx context.Context,
	req *sdk.CallToolRequest,
	tool string,
	mutating bool,
	h func(context.Context) Out,
) Out {
	var raw map[string]any
	_ = json.Unmarshal(argsOrEmpty(req.Params.Arguments), &raw)
	p := presented{tokens: proofIn(raw)}
	rid, _ := raw["request_id"].(string)
	session, _ := raw["session_id"].(string)
	session = strings.TrimSpace(session)
	if !mutating || rid == "" {
		return h(withProof(ctx, p))
	}
	var zero Out
	if len(rid) < minRequestID || len(rid) > maxRequestID ||
		strings.IndexFunc(rid, func(r rune) bool { return r < 0x21 || r == 0x7f }) >= 0 {
		return zero.refusal(
			govern.CodeInvalidRequest,
			fmt.Sprintf(
				"request_id must be %d to %d printable characters without spaces: a random id (a UUID) you send again "+
					"unchanged when you retry this call",
				minRequestID,
				maxRequestID,
			),
		)
	}
	key := retryKey(session, rid)
	p.retry = s.retries.known(key)
	ctx = withProof(ctx, p)
	c, first, same := s.retries.begin(key, fingerprint(tool, raw))
	switch {
	case !same:
		return zero.refusal(
			govern.CodeInvalidRequest,
			"this request_id was used for another call (another tool or other arguments); a retry sends the same call "+
				"again, a new call needs a new request_id",
		)
	case !first:
		// A retry: it takes up the session (the request_id proves it is the worker that
		// sent the first call), then gets the first call's answer.
		if _, bad := s.enter(ctx, req, session); bad != nil {
			return zero.refusal(bad.Code, bad.Message)
		}
		res, _ := s.retries.wait(c).(Out)
		s.holdReplayed(req, res)
		return res
	}
	res := h(ctx)
	s.retries.finish(key, c, res, reachedCore(res))
	return res
}

// holdReplayed gives the connection a replayed answer went to the claim token it carries,
// as the first call's connection was given it.
func (s *Server) holdReplayed(req *sdk.CallToolRequest, res any) {
	if o, ok := res.(Outcome); ok && o.Success && o.Fence != nil && o.Fence.ClaimToken != "" {
		s.bind.hold(req.Session, o.Fence.LeaseID, o.Fence.ClaimToken)
	}
}

// reachedCore reports whether a result is the governed core's outcome of an attempt: it
// is real whatever happened to the call since, and is answered as it is.
func reachedCore(r any) bool {
	o, ok := r.(Outcome)
	return ok && o.Attempt != ""
}

func argsOrEmpty(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return json.RawMessage("{}")
	}
	return raw
}

// clip bounds a refusal's message built from what a caller sent.
func clip(s string) string { return clipTo(s, 1024) }

// clipTo cuts s to at most max bytes (and an ellipsis), on a character boundary.
func clipTo(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "…"
}

// next steps by refusal code; a message from the core already says what to do, these say
// it in the terms of these tools.
var nextByCode = map[string]string{
	govern.CodeClaimedByOther: "Pick other work (claim with next, or another item). Do not retry this " +
		"claim: re-read and decide afresh.",
	string(leases.CodeAlreadyHeld): "You hold this item already: call my_leases for its fence and heartbeat it.",
	govern.CodeFenceMoved: "Your fence is stale. Call my_leases to read the current one and decide " +
		"again; never retry with the old values.",
	govern.CodeNotOwner: "Act only on your own claims: pass your own session_id and the fence with " +
		"the claim_token your claim returned, from the connection and process that claimed them. A claim you cannot " +
		"prove is not yours to change.",
	string(leases.CodeLeaseExpired): "The claim has expired. Stop work on it; claim the item afresh if it is " +
		"still free.",
	string(leases.CodeNotActive): "The claim is no longer active. Stop work on it; claim afresh if the item " +
		"is free.",
	string(leases.CodeAlreadyReleased): "The lease is released already; nothing to do.",
	string(leases.CodeAbsoluteCapReached): "The lease reached its absolute cap: release it and claim again if the " +
		"work continues.",
	govern.CodeNotFound: "Check the id or item; re-read with my_leases or item_status.",
	govern.CodeRoleTooLow: "This steward mcp runs with a role that may not act for workers. Ask its " +
		"operator to start it with --as-role operator.",
	govern.CodeReadOnly: "steward is read-only for this workspace: nothing can change here. Ask its " +
		"operator.",
	govern.CodeInvalidRequest: "Fix the arguments as the message says, then call again.",
	govern.CodeTooLarge: "An argument is longer than steward accepts (the message names it and its " +
		"limit; docs/mcp.md lists them all). Nothing was changed: shorten it and call again.",
	govern.CodeSourceUnavailable: "A source could not be read; nothing was changed. Try again later (an " +
		"unreadable source never means an item is free).",
	govern.CodeAuditUnavailable: "steward cannot record the attempt, so nothing was attempted. Ask its " +
		"operator to fix the audit log.",
	string(leases.CodeBusy):         "The control-plane DB was busy; nothing was changed. Re-read and decide again.",
	govern.CodeConfirmationRequired: "This action is not available to workers.",
	govern.CodeLockMissing:          "Your lease has no lock file naming it: release it and claim the item again.",
	string(leases.CodeSchemaUnsupported): "The control-plane DB lacks a column this action needs; nothing was " +
		"changed. Ask steward's operator.",
	govern.CodeUnknownAction: "Only the worker tools are served here.",
	"nothing_eligible":       "Nothing is runnable now. Wait, then call claim with next again.",
	alloc.SkipAwaitingMaintainer: "The item awaits a maintainer's answer to a clarification: pick other work " +
		"(claim with next); it is claimable again once the marker label is removed.",
	alloc.SkipBlocked: "The item is blocked: pick other work (claim with next).",
	alloc.SkipClosed:  "The item is closed: pick other work (claim with next).",
	alloc.SkipContainer: "The item is an epic or a child-only container: claim one of its child " +
		"issues instead.",
	alloc.SkipDependencyUnmet: "The item depends on an open item: pick other work, or the dependency.",
	"gitea_refused": "Gitea refused the write; nothing was changed. Ask a maintainer to check " +
		"steward's Gitea login.",
	"no_gitea": "No Gitea is configured for this steward; name the item explicitly.",
	"outcome_unknown": "The outcome is unknown: it may have taken effect. Read my_leases or " +
		"item_status before acting; never retry blindly. A supervisor settles it with `steward audit verify`.",
	"failed": "Nothing took effect. Read the message; re-read the state before trying " +
		"anything else.",
}

func nextFor(code string) string {
	if n, ok := nextByCode[code]; ok {
		return n
	}
	return "Read the message; re-read with my_leases or item_status before acting again."
}

// refused builds an outcome that never reached the core (a bad argument, the session
// binding): nothing was attempted or recorded.
func refused(code, msg string) Outcome {
	return Outcome{Result: string(govern.ResultRefused), Code: code, Message: termsafe.Text(msg), Next: nextFor(code)}
}

// outcomeOf maps the core's outcome onto the tool's result.
func outcomeOf(out govern.Outcome) Outcome {
	o := Outcome{Success: out.Result == govern.ResultSucceeded, Result: string(out.Result), Code: out.Code,
		Message: termsafe.Text(out.Message), Attempt: out.Attempt}
	for _, e := range out.Effects {
		o.Effects = append(o.Effects, termsafe.Text(e))
	}
	switch out.Result {
	case govern.ResultSucceeded:
		if o.Message == "done" {
			o.Message = ""
		}
	case govern.ResultUnknown:
		o.Code = "outcome_unknown"
		o.Next = nextFor(o.Code)
	case govern.ResultFailed:
		if o.Code == "" {
			o.Code = "failed"
		}
		o.Next = nextFor(o.Code)
	default:
		o.Next = nextFor(o.Code)
	}
	return o
}

// fenceOf reads the fence the core returned in an outcome's detail.
func fenceOf(d map[string]string) *Fence {
	if d["lease_id"] == "" {
		return nil
	}
	f := &Fence{
		LeaseID:       d["lease_id"],
		ExpiresAt:     d["expires_at"],
		LockFile:      d["lock_file"],
		TaskSessionID: d["task_session_id"],
	}
	f.LockGeneration, _ = strconv.ParseInt(d["lock_generation"], 10, 64)
	f.LeaseGeneration, _ = strconv.ParseInt(d["lease_generation"], 10, 64)
	f.HeartbeatCount, _ = strconv.ParseInt(d["heartbeat_count"], 10, 64)
	return f
}

// run applies one worker request through the core, bound to the worker's session. The
// apply runs to its end even if the client goes away: cancelling it halfway would leave an
// attempt for the verifier that a finished one does not.
func (s *Server) run(ctx context.Context, session string, req govern.Request) (govern.Outcome, *Outcome) {
	if spec, ok := s.cfg.Core.Spec(req.Action); !ok || !spec.Worker {
		o := refused(govern.CodeUnknownAction, "only worker actions are served over MCP")
		return govern.Outcome{}, &o
	}
	// A connection's word for its session is no proof: the core demands the claim token
	// (or, over stdio, the claimant's own process) for every action on an existing lease.
	_, out, err := s.cfg.Core.ForSession(session).WithOwnerProof().Run(context.WithoutCancel(ctx), req, "")
	if err != nil {
		o := refused(govern.CodeSourceUnavailable, "the state could not be read ("+err.Error()+"); nothing was attempted")
		return out, &o
	}
	return out, nil
}

// validSession checks a session id's shape: what a session id may hold anywhere else.
func validSession(id string) (string, bool) {
	id = strings.TrimSpace(id)
	if id == "" || len(id) > 200 {
		return id, false
	}
	for _, r := range id {
		if r < 0x21 || r == 0x7f {
			return id, false
		}
	}
	return id, true
}

// enter checks the session argument and binds it to the calling connection.
func (s *Server) enter(ctx context.Context, req *sdk.CallToolRequest, session string) (string, *Outcome) {
	id, ok := validSession(session)
	if !ok {
		o := refused(govern.CodeInvalidRequest, "session_id is required: 1 to 200 printable characters, no spaces")
		return id, &o
	}
	rebind := func() bool {
		ls, err := s.reads.sessionLeases(ctx, id)
		return err == nil && len(ls) == 0
	}
	// A worker that proves one of the session's claims takes the session up from a new
	// connection, whether its old one has ended or not (an HTTP session outlives a client
	// that closed without ending it): it presents the claim's token, or retries a call of
	// the session by its request_id.
	proven := func() bool {
		p := proofOf(ctx)
		if p.retry {
			return true
		}
		if len(p.tokens) == 0 {
			return false
		}
		ls, err := s.reads.sessionLeases(ctx, id)
		if err != nil {
			return false
		}
		for _, l := range ls {
			for _, tok := range p.tokens {
				if govern.TokenMatches(l, tok) {
					return true
				}
			}
		}
		return false
	}
	if r := s.bind.enter(req.Session, id, s.cfg.ClientPID, rebind, proven); r != "" {
		o := refused(govern.CodeNotOwner, r)
		return id, &o
	}
	return id, nil
}

// proof adds to params what proves this call comes from a lease's claimant: over stdio the
// process that started steward mcp (the operating system says so, not the client); the
// claim token travels in the fence. A pid an HTTP connection declared is the client's word
// and proves nothing, so it is never passed as the caller's.
func (s *Server) proof(p *govern.OwnerProof) {
	if s.cfg.ClientPID > 0 {
		p.CallerPID = strconv.FormatInt(s.cfg.ClientPID, 10)
	}
}

func fmtDuration(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.Round(time.Second).String()
}

func (s *Server) cadence(role string) string {
	class := leaserec.TaskClass("author_issue_work")
	switch role {
	case "reviewer":
		class = "reviewer_pr"
	case "merger":
		class = "merger_pr"
	case "conflict-fix", "conflict_fix":
		class = "conflict_fix"
	}
	env := s.reads.ws.Env
	if env == nil {
		env = os.LookupEnv
	}
	return fmtDuration(leaserec.LoadPolicies(env).For(class).HeartbeatCadence())
}
