package mcp

import (
	"fmt"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// binder binds each worker session id to the connection that used it first, for the life of
// this server. A connection has one worker process: over stdio the process that started
// steward mcp, over HTTP the pid its first claim declared (none until then).
type binder struct {
	mu    sync.Mutex
	conns map[*sdk.ServerSession]*conn
	owner map[string]*conn
	seq   int
	// ended is closed (and replaced) whenever a connection ends.
	ended chan struct{}
}

type conn struct {
	id     int
	pid    int64
	closed bool
	// tokens are the claim tokens this connection holds, by lease id: minted for its own
	// claims, or presented by it in a call the core accepted. Only this connection is ever
	// shown them again (my_leases); they go when the claim ends or the connection does.
	tokens map[string]string
	// pending are the tokens of claims whose outcome was unknown (the lease, if any, not
	// known): the first lease of the session one proves is then held like the others.
	pending []string
}

// maxPending bounds a connection's tokens of claims of unknown outcome.
const maxPending = 16

func newBinder() *binder {
	return &binder{conns: map[*sdk.ServerSession]*conn{}, owner: map[string]*conn{}, ended: make(chan struct{})}
}

// changed returns a channel closed when a connection next ends.
func (b *binder) changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ended
}

// connOf returns the connection's record, watching for its end the first time it is seen.
func (b *binder) connOf(ss *sdk.ServerSession, pid int64) *conn {
	c, ok := b.conns[ss]
	if ok {
		return c
	}
	b.seq++
	c = &conn{id: b.seq, pid: pid}
	b.conns[ss] = c
	if ss != nil {
		go func() {
			_ = ss.Wait()
			b.mu.Lock()
			c.closed = true
			delete(b.conns, ss)
			close(b.ended)
			b.ended = make(chan struct{})
			b.mu.Unlock()
		}()
	}
	return c
}

// enter binds session to the calling connection, or says why it may not act: the session
// is bound to another connection. A session whose connection has ended may be taken up by
// a new one when rebind says so (it holds no active lease); a session bound to any other
// connection, ended or not, when proven says so (the call proves one of its claims).
func (b *binder) enter(ss *sdk.ServerSession, session string, pid int64, rebind, proven func() bool) string {
	b.mu.Lock()
	c := b.connOf(ss, pid)
	o, ok := b.owner[session]
	if !ok || o == c {
		b.owner[session] = c
		b.mu.Unlock()
		return ""
	}
	closed := o.closed
	b.mu.Unlock()
	if (closed && rebind != nil && rebind()) || (proven != nil && proven()) {
		b.mu.Lock()
		defer b.mu.Unlock()
		if cur := b.owner[session]; cur == o {
			b.owner[session] = c
			return ""
		}
		return fmt.Sprintf("session %q was just taken up by another connection; use your own session id", session)
	}
	if closed {
		return fmt.Sprintf(
			"session %q belongs to a connection that has ended and still holds an active lease; to take it up, present the "+
				"claim_token of one of its claims (my_leases with claim_token, or the fence) or retry your last call with its "+
				"request_id",
			session,
		)
	}
	return fmt.Sprintf(
		"session %q is bound to another connection of this server; a worker acts only as its own session (a worker that "+
			"reconnected takes it up by presenting a claim_token of one of its claims, or by retrying a call with its "+
			"request_id)",
		session,
	)
}

// declare records the worker process a claim names for its connection: the first one
// sticks, and a different one later is refused.
func (b *binder) declare(ss *sdk.ServerSession, pid int64) (int64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.conns[ss]
	if !ok {
		return 0, false
	}
	if pid <= 0 {
		return c.pid, true
	}
	if c.pid == 0 {
		c.pid = pid
	}
	return c.pid, c.pid == pid
}

// hold records that the connection holds tok, the claim token of lease.
func (b *binder) hold(ss *sdk.ServerSession, lease, tok string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.conns[ss]
	if !ok || tok == "" || lease == "" {
		return
	}
	if c.tokens == nil {
		c.tokens = map[string]string{}
	}
	c.tokens[lease] = tok
}

// drop forgets the claim token of a lease that has ended.
func (b *binder) drop(ss *sdk.ServerSession, lease string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c, ok := b.conns[ss]; ok {
		delete(c.tokens, lease)
	}
}

// tokenOf is the claim token of lease this connection holds ("" when none).
func (b *binder) tokenOf(ss *sdk.ServerSession, lease string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c, ok := b.conns[ss]; ok {
		return c.tokens[lease]
	}
	return ""
}

// holdPending records the token of a claim whose outcome is unknown.
func (b *binder) holdPending(ss *sdk.ServerSession, tok string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c, ok := b.conns[ss]; ok {
		c.pending = append(c.pending, tok)
		if len(c.pending) > maxPending {
			c.pending = c.pending[len(c.pending)-maxPending:]
		}
	}
}

// pendingOf returns the connection's tokens of claims of unknown outcome.
func (b *binder) pendingOf(ss *sdk.ServerSession) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c, ok := b.conns[ss]; ok {
		return append([]string(nil), c.pending...)
	}
	return nil
}
