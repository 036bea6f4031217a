package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"steward/govern"
	"steward/govern/actionid"
)

// Client is a typed MCP client of steward mcp's worker tools (the demo's MCP workers and
// the tests use it). One Client is one connection, acting as one worker session.
type Client struct {
	cs      *sdk.ClientSession
	session string
}

// Connect opens a client session over t for the worker session named session.
func Connect(ctx context.Context, t sdk.Transport, session string) (*Client, error) {
	c := sdk.NewClient(&sdk.Implementation{Name: "steward-worker", Version: "1"}, nil)
	cs, err := c.Connect(ctx, t, nil)
	if err != nil {
		return nil, err
	}
	return &Client{cs: cs, session: session}, nil
}

// tokenTransport adds the bearer token to every request.
type tokenTransport struct {
	token string
	next  http.RoundTripper
}

func (t tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.next.RoundTrip(r)
}

// HTTPTransport is the streamable client transport for url, sending token when it is set.
func HTTPTransport(url, token string) sdk.Transport {
	hc := &http.Client{}
	if token != "" {
		hc.Transport = tokenTransport{token: token, next: http.DefaultTransport}
	}
	return &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true}
}

// Session returns the worker session the client acts as.
func (c *Client) Session() string { return c.session }

// SDK returns the underlying client session.
func (c *Client) SDK() *sdk.ClientSession { return c.cs }

// Close closes the connection.
func (c *Client) Close() error { return c.cs.Close() }

// Call calls tool with args and decodes its structured result into out. isError is the
// result's isError flag; err is a protocol or transport error (then the outcome of a
// mutating tool is unknown).
func (c *Client) Call(ctx context.Context, tool string, args, out any) (isError bool, err error) {
	res, err := c.cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return false, err
	}
	if res.StructuredContent == nil {
		msg := "no structured result"
		for _, ct := range res.Content {
			if tc, ok := ct.(*sdk.TextContent); ok {
				msg = tc.Text
			}
		}
		return res.IsError, fmt.Errorf("%s: %s", tool, msg)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return res.IsError, err
	}
	return res.IsError, json.Unmarshal(b, out)
}

func (c *Client) outcome(ctx context.Context, tool string, args any) (Outcome, error) {
	var o Outcome
	_, err := c.Call(ctx, tool, args, &o)
	return o, err
}

// Claim calls claim as the client's session.
func (c *Client) Claim(ctx context.Context, a ClaimArgs) (Outcome, error) {
	if a.SessionID == "" {
		a.SessionID = c.session
	}
	return c.outcome(ctx, ToolClaim, a)
}

// Heartbeat calls heartbeat with f.
func (c *Client) Heartbeat(ctx context.Context, f Fence) (Outcome, error) {
	return c.outcome(ctx, ToolHeartbeat, FencedArgs{SessionID: c.session, Fence: &f})
}

// Release calls release with f.
func (c *Client) Release(ctx context.Context, f Fence) (Outcome, error) {
	return c.outcome(ctx, ToolRelease, FencedArgs{SessionID: c.session, Fence: &f})
}

// Ask calls ask with f and the question.
func (c *Client) Ask(ctx context.Context, f Fence, question string) (Outcome, error) {
	return c.outcome(ctx, ToolAsk, AskArgs{SessionID: c.session, Fence: &f, Question: question})
}

// GetAnswer calls get_answer.
func (c *Client) GetAnswer(ctx context.Context, id string) (Answer, error) {
	var a Answer
	_, err := c.Call(ctx, ToolGetAnswer, GetAnswerArgs{SessionID: c.session, ClarificationID: id}, &a)
	return a, err
}

// MyLeases calls my_leases.
func (c *Client) MyLeases(ctx context.Context) (MyLeases, error) {
	var m MyLeases
	_, err := c.Call(ctx, ToolMyLeases, SessionArgs{SessionID: c.session}, &m)
	return m, err
}

// ItemStatus calls item_status.
func (c *Client) ItemStatus(ctx context.Context, it ItemRef) (ItemStatus, error) {
	var s ItemStatus
	_, err := c.Call(ctx, ToolStatus, ItemArgs{SessionID: c.session, Item: &it}, &s)
	return s, err
}

// Act performs a worker request through the MCP tools and reports it as the core's
// outcome: the simulator's workers act through it unchanged. Heartbeat, release and ask
// take the fence and the claim token from the request's parameters (govern.HeldFence,
// govern.OwnerProof); a claim's or heartbeat's outcome carries the token in its detail
// (govern.DetailClaimToken). A transport error after the call was sent is an unknown
// outcome, returned with the error.
func (c *Client) Act(ctx context.Context, req govern.Request) (govern.Outcome, error) {
	var o Outcome
	var err error
	fence := func(h govern.HeldFence, proof govern.OwnerProof) Fence {
		g, _ := strconv.ParseInt(h.LockGeneration, 10, 64)
		lg, _ := strconv.ParseInt(h.LeaseGeneration, 10, 64)
		return Fence{LeaseID: req.Target.LeaseID, ExpiresAt: h.ExpiresAt, LockGeneration: g, TaskSessionID: h.TaskSession,
			LeaseGeneration: lg, ClaimToken: proof.ClaimToken}
	}
	own, _ := req.Params.(govern.OwnLeaseParams)
	switch req.Action {
	case actionid.Claim:
		p, _ := req.Params.(govern.ClaimParams)
		a := ClaimArgs{SessionID: req.Target.Session, Role: p.Role, Profile: p.Profile, Username: p.Username,
			Branch: p.Branch, Worktree: p.Worktree, TTL: p.TTL}
		a.PID, _ = strconv.ParseInt(p.PID, 10, 64)
		if it := req.Target.Item; it != nil {
			a.Item = &ItemRef{Org: it.Org, Repo: it.Repo, Number: it.Number, Remote: it.Remote}
		} else {
			a.Next = true
		}
		o, err = c.outcome(ctx, ToolClaim, a)
	case actionid.Heartbeat:
		f := fence(own.HeldFence, own.OwnerProof)
		o, err = c.outcome(ctx, ToolHeartbeat, FencedArgs{SessionID: req.Target.Session, Fence: &f})
	case actionid.Release:
		f := fence(own.HeldFence, own.OwnerProof)
		o, err = c.outcome(ctx, ToolRelease, FencedArgs{SessionID: req.Target.Session, Fence: &f})
	case actionid.Ask:
		p, _ := req.Params.(govern.AskParams)
		f := fence(p.HeldFence, p.OwnerProof)
		o, err = c.outcome(ctx, ToolAsk, AskArgs{SessionID: req.Target.Session, Fence: &f, Question: p.Question})
	default:
		return govern.Outcome{
				Action: req.Action,
				Result: govern.ResultRefused,
				Code:   govern.CodeUnknownAction,
			}, errors.New(
				"not a worker action: " + req.Action,
			)
	}
	out := govern.Outcome{
		Action:  req.Action,
		Attempt: o.Attempt,
		Result:  govern.Result(o.Result),
		Code:    o.Code,
		Message: o.Message,
		Effects: o.Effects,
	}
	if err != nil {
		out.Result, out.Code, out.Message = govern.ResultUnknown, "outcome_unknown", err.Error()
		return out, err
	}
	if f := o.Fence; f != nil {
		out.Detail = map[string]string{"lease_id": f.LeaseID, "expires_at": f.ExpiresAt, "lock_file": f.LockFile,
			"lock_generation": strconv.FormatInt(f.LockGeneration, 10), "task_session_id": f.TaskSessionID,
			"heartbeat_count": strconv.FormatInt(
				f.HeartbeatCount,
				10,
			), "lease_generation": strconv.FormatInt(f.LeaseGeneration, 10)}
		if f.ClaimToken != "" {
			// The claim token, for the caller to pass back as the request's claim_token
			// parameter (sim keeps it with the fence). A secret: never printed.
			out.Detail[govern.DetailClaimToken] = f.ClaimToken
		}
	}
	if o.ClarificationID != "" {
		if out.Detail == nil {
			out.Detail = map[string]string{}
		}
		out.Detail["clarification_id"] = o.ClarificationID
	}
	return out, nil
}
