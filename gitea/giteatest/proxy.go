package giteatest

import (
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Mode is what a Proxy does with new connections.
type Mode int

// Proxy modes.
const (
	// Forward passes bytes both ways.
	Forward Mode = iota
	// DropResponse forwards the request, waits for the server's first response bytes (so the
	// server has acted), then closes the client connection without passing them on.
	DropResponse
	// Delay holds a new connection for the configured delay, then forwards it.
	Delay
	// Refuse closes the listening socket: connections are refused (nothing is sent).
	Refuse
	// Hold accepts a new connection and holds it, forwarding nothing: a server that does not
	// answer at all. Release forwards the held connections (as Delay does once its delay
	// passed); a mode change drops them unanswered. Held counts the connections waiting.
	Hold
)

// Proxy is a loopback TCP proxy in front of a server, for fault tests. Mode applies to
// connections accepted after it is set; setting it also closes the connections already open,
// so no kept-alive connection escapes the new mode.
type Proxy struct {
	URL    string // http://127.0.0.1:<port>
	addr   string
	target string
	t      testing.TB

	mu      sync.Mutex
	mode    Mode
	delay   time.Duration
	ln      net.Listener
	conns   map[net.Conn]struct{}
	closed  bool
	done    chan struct{}
	wg      sync.WaitGroup
	dropped atomic.Int64
	// release is closed by Release (held connections are forwarded), drop when the mode
	// changes (they end unanswered).
	release, drop chan struct{}
	held          atomic.Int64
}

// NewProxy listens on a free loopback port and forwards to targetURL (http://host:port). It is
// closed when t ends.
func NewProxy(t testing.TB, targetURL string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("giteatest: proxy listen: %v", err)
	}
	p := &Proxy{addr: ln.Addr().String(), target: strings.TrimPrefix(strings.TrimSuffix(targetURL, "/"), "http://"),
		t: t, ln: ln, conns: map[net.Conn]struct{}{}, done: make(chan struct{}),
		release: make(chan struct{}), drop: make(chan struct{})}
	p.URL = "http://" + p.addr
	p.serve(ln)
	t.Cleanup(p.Close)
	return p
}

// SetMode switches the mode; d is the delay for Delay. Leaving Refuse listens again on the
// same address.
func (p *Proxy) SetMode(m Mode, d time.Duration) {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode, p.delay = m, d
	close(p.drop)
	p.drop = make(chan struct{})
	for c := range p.conns {
		_ = c.Close()
	}
	switch {
	case m == Refuse && p.ln != nil:
		_ = p.ln.Close()
		p.ln = nil
	case m != Refuse && p.ln == nil && !p.closed:
		ln, err := net.Listen("tcp", p.addr)
		if err != nil {
			p.t.Fatalf("giteatest: proxy re-listen on %s: %v", p.addr, err)
		}
		p.ln = ln
		p.serve(ln)
	}
}

// Dropped returns how many responses DropResponse has swallowed.
func (p *Proxy) Dropped() int64 { return p.dropped.Load() }

// Held returns how many connections Hold is holding now.
func (p *Proxy) Held() int64 { return p.held.Load() }

// Release forwards every connection Hold is holding now (the mode stays Hold for new ones).
func (p *Proxy) Release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.release)
	p.release = make(chan struct{})
}

// Close stops listening, closes every connection and waits for the proxy's goroutines.
func (p *Proxy) Close() {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.done)
		if p.ln != nil {
			_ = p.ln.Close()
		}
		for c := range p.conns {
			_ = c.Close()
		}
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *Proxy) serve(ln net.Listener) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			if p.closed {
				p.mu.Unlock()
				_ = c.Close()
				return
			}
			p.conns[c] = struct{}{}
			mode, d, release, drop := p.mode, p.delay, p.release, p.drop
			p.wg.Add(1)
			p.mu.Unlock()
			go func() {
				defer p.wg.Done()
				defer p.forget(c)
				if mode == Hold && !p.hold(release, drop) {
					return // dropped: the connection ends unanswered
				}
				p.handle(c, mode, d)
			}()
		}
	}()
}

func (p *Proxy) forget(c net.Conn) {
	_ = c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// hold waits until the held connection is released (true) or dropped (false).
func (p *Proxy) hold(release, drop chan struct{}) bool {
	p.held.Add(1)
	defer p.held.Add(-1)
	select {
	case <-release:
		return true
	case <-drop:
	case <-p.done:
	}
	return false
}

func (p *Proxy) handle(c net.Conn, mode Mode, d time.Duration) {
	if mode == Delay {
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-p.done:
			return
		}
	}
	up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		return
	}
	p.mu.Lock()
	p.conns[up] = struct{}{}
	p.mu.Unlock()
	defer p.forget(up)
	go func() {
		_, _ = io.Copy(up, c)
		// In Forward mode a client that went away has nothing left to receive. In the fault
		// modes (a released Hold too) the upstream stays open so the server finishes the request it was sent (a
		// half-closed connection would make Go's server cancel the request's context).
		if mode == Forward {
			_ = up.Close()
		}
	}()
	if mode == DropResponse {
		buf := make([]byte, 1)
		if n, _ := up.Read(buf); n > 0 {
			p.dropped.Add(1)
		}
		return // closes both: the client sees its connection end with no response
	}
	_, _ = io.Copy(c, up)
}
