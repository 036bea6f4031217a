package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
)

// A mutation may carry a request_id: the worker's name for this one call, sent again
// unchanged when it retries the call (its reply was lost, its connection broke). The server
// keeps the answer of every call with a request_id that reached the governed core, and
// answers a retry with it instead of acting twice; a retry arriving while the first call is
// still running waits for it. The answers live in this server's memory (the last
// maxRetained, and every call still running): a retry that reaches another steward mcp, or
// this one after a restart, is a new call (docs/mcp.md, "Recovering a claim").
//
// A request_id is proof as the claim token is: a retry that presents one this server
// answered for the session is the worker that sent it, and may take up the session from a
// new connection. It is a secret the worker chooses (at least minRequestID characters:
// a random UUID), never logged or audited.

// maxRetained bounds the finished answers kept for retries.
const maxRetained = 4096

// minRequestID and maxRequestID bound a request_id's length.
const (
	minRequestID = 16
	maxRequestID = 200
)

// retries holds the calls with a request_id: running and answered.
type retries struct {
	mu    sync.Mutex
	calls map[string]*call
	order []string // finished keys, oldest first
	// onWait, in tests, is called when a retry starts waiting for a running call.
	onWait func()
}

type call struct {
	fp   string // what was asked: the tool and its arguments but the request_id
	done chan struct{}
	res  any // the answer, once done
	kept bool
}

func newRetries() *retries { return &retries{calls: map[string]*call{}} }

// retryKey names a call by its session and request id (hashed: the id is the worker's
// secret, and is held only as its hash).
func retryKey(session, requestID string) string {
	h := sha256.Sum256([]byte(session + "\x00" + requestID))
	return hex.EncodeToString(h[:])
}

// fingerprint is what a retry must ask again: the tool and every argument but the
// request_id, in a canonical form.
func fingerprint(tool string, args map[string]any) string {
	cp := make(map[string]any, len(args))
	for k, v := range args {
		if k != "request_id" {
			cp[k] = v
		}
	}
	b, _ := json.Marshal(cp) // map keys marshal sorted
	h := sha256.Sum256(append([]byte(tool+"\x00"), b...))
	return hex.EncodeToString(h[:])
}

// known reports whether key names a call this server is running or answered.
func (r *retries) known(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.calls[key]
	return ok
}

// begin starts the call named key, or finds it: first is true when this call is to act;
// otherwise c is the call already running or answered, and same says whether it asked the
// same thing.
func (r *retries) begin(key, fp string) (c *call, first, same bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.calls[key]; ok {
		return c, false, c.fp == fp
	}
	c = &call{fp: fp, done: make(chan struct{})}
	r.calls[key] = c
	return c, true, true
}

// wait waits for a call to be answered and returns its answer.
func (r *retries) wait(c *call) any {
	select {
	case <-c.done:
	default:
		if r.onWait != nil {
			r.onWait()
		}
		<-c.done
	}
	return c.res
}

// finish answers the call. An answer that reached the core (keep) is kept for retries; one
// refused before it changed nothing, so a retry of it is answered afresh.
func (r *retries) finish(key string, c *call, res any, keep bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c.res, c.kept = res, keep
	close(c.done)
	if !keep {
		delete(r.calls, key)
		return
	}
	r.order = append(r.order, key)
	for len(r.order) > maxRetained {
		delete(r.calls, r.order[0])
		r.order = r.order[1:]
	}
}

// proofKey carries what a call presents as proof of its session's claims to enter.
type proofKey struct{}

// presented is a call's proof: the claim tokens it carries (fence.claim_token,
// claim_token) and whether it retries a call of the session this server knows.
type presented struct {
	tokens []string
	retry  bool
}

func withProof(ctx context.Context, p presented) context.Context {
	return context.WithValue(ctx, proofKey{}, p)
}

func proofOf(ctx context.Context) presented {
	p, _ := ctx.Value(proofKey{}).(presented)
	return p
}

// proofIn reads the claim tokens a call's arguments carry.
func proofIn(args map[string]any) []string {
	var out []string
	if t, ok := args["claim_token"].(string); ok && t != "" {
		out = append(out, t)
	}
	if f, ok := args["fence"].(map[string]any); ok {
		if t, ok := f["claim_token"].(string); ok && t != "" {
			out = append(out, t)
		}
	}
	return out
}
