package pgproxy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// When says what a Cut does at its statement.
type When int

// What a cut does.
const (
	// Before closes the connection instead of forwarding the statement: the server never
	// sees it.
	Before When = iota + 1
	// ReplyLost forwards the statement (through its Sync) and closes the client side
	// without relaying any answer: the server may run and commit it, the client sees a
	// broken connection.
	ReplyLost
	// Hold closes the client side at once and keeps the statement until Fault.Release,
	// then forwards it as ReplyLost does.
	Hold
)

func (w When) String() string {
	switch w {
	case Before:
		return "before"
	case ReplyLost:
		return "reply-lost"
	case Hold:
		return "held"
	}
	return "?"
}

// Statement is one statement a client executed through the proxy.
type Statement struct {
	Seq  int    // its place among every statement the proxy saw, from 1
	Conn int    // the client connection, from 1 in accept order
	SQL  string // its text, whitespace collapsed
	// Write: the statement writes (INSERT, UPDATE, DELETE, or a notify).
	Write bool
	// InTx: it runs inside an explicit transaction (BEGIN itself excluded, COMMIT and
	// ROLLBACK included); TxWrote: a write of that transaction was sent before it.
	InTx, TxWrote bool
}

// Label names the statement for matching across runs of the same code: its text, and
// for a statement inside a transaction whether a write was sent before it (a COMMIT that
// ends writes is "commit|after-writes"; a read-only transaction's is "commit").
func (s Statement) Label() string {
	if s.TxWrote {
		return s.SQL + "|after-writes"
	}
	return s.SQL
}

// IsCommit reports whether the statement is a COMMIT (or END).
func (s Statement) IsCommit() bool {
	q := strings.ToLower(s.SQL)
	return q == "commit" || q == "end" || strings.HasPrefix(q, "commit ")
}

// Cut is a one-shot fault: at the N-th statement (from 1) that Match accepts, do When.
type Cut struct {
	Match func(Statement) bool
	N     int
	When  When
}

// Fault is an armed Cut.
type Fault struct {
	cut     Cut
	seen    int
	fired   chan struct{}
	done    chan struct{}
	release chan struct{}
	relOnce sync.Once
	mu      sync.Mutex
	st      Statement
}

// Fired is closed once the cut has happened.
func (f *Fault) Fired() <-chan struct{} { return f.fired }

// Done is closed once the server has ended the session of the connection cut: whatever
// it was sent has been run and committed or rolled back.
func (f *Fault) Done() <-chan struct{} { return f.done }

// Statement is the statement cut at (valid once Fired is closed).
func (f *Fault) Statement() Statement {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.st
}

// Release forwards a held statement (Hold).
func (f *Fault) Release() { f.relOnce.Do(func() { close(f.release) }) }

// Proxy is a running proxy.
type Proxy struct {
	ln     net.Listener
	target string
	url    string
	mu     sync.Mutex
	log    []Statement
	fault  *Fault
	conns  int
	open   map[net.Conn]struct{}
	held   []*Fault // fired faults: released on Close, so no connection waits forever
	closed bool
	wg     sync.WaitGroup
}

// Start starts a proxy on a free loopback port in front of the server serverURL names (a
// postgres:// URL) and stops it when t ends.
func Start(t testing.TB, serverURL string) *Proxy {
	t.Helper()
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatalf("pgproxy: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("pgproxy: %v", err)
	}
	p := &Proxy{ln: ln, target: u.Host, open: map[net.Conn]struct{}{}}
	u.Host = ln.Addr().String()
	p.url = u.String()
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// URL is serverURL with the proxy's address.
func (p *Proxy) URL() string { return p.url }

// Arm sets the one cut the proxy makes next (replacing one not yet fired).
func (p *Proxy) Arm(c Cut) *Fault {
	if c.N < 1 {
		c.N = 1
	}
	f := &Fault{cut: c, fired: make(chan struct{}), done: make(chan struct{}), release: make(chan struct{})}
	p.mu.Lock()
	p.fault = f
	p.mu.Unlock()
	return f
}

// Log returns every statement seen so far, in order.
func (p *Proxy) Log() []Statement {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Statement(nil), p.log...)
}

// Close stops the proxy and every connection through it.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	for c := range p.open {
		c.Close()
	}
	for _, f := range p.held {
		f.Release()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.open[c] = struct{}{}
	return true
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			return
		}
		p.mu.Lock()
		p.conns++
		id := p.conns
		p.mu.Unlock()
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serve(id, c)
		}()
	}
}

// decide logs st and says what to do with it: 0 to forward, or the armed cut's When.
func (p *Proxy) decide(st *Statement) (When, *Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st.Seq = len(p.log) + 1
	p.log = append(p.log, *st)
	f := p.fault
	if f == nil || !f.cut.Match(*st) {
		return 0, nil
	}
	if f.seen++; f.seen < f.cut.N {
		return 0, nil
	}
	p.fault = nil
	p.held = append(p.held, f)
	f.mu.Lock()
	f.st = *st
	f.mu.Unlock()
	close(f.fired)
	return f.cut.When, f
}

// conn is one client connection and its connection to the server.
type conn struct {
	id             int
	client, server net.Conn
	mu             sync.Mutex
	discard        bool          // after a cut: the server's answers are read and dropped
	ended          chan struct{} // closed when the server's side has ended
	stmts          map[string]string
	inTx, wrote    bool
}

func (p *Proxy) serve(id int, client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	if !p.track(server) {
		client.Close()
		return
	}
	c := &conn{id: id, client: client, server: server, ended: make(chan struct{}), stmts: map[string]string{}}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		c.relay()
	}()
	defer func() {
		client.Close()
		halfClose(server)
		<-c.ended
		server.Close()
		p.mu.Lock()
		delete(p.open, client)
		delete(p.open, server)
		p.mu.Unlock()
	}()
	r := bufio.NewReader(client)
	if !c.startup(r) {
		return
	}
	for {
		msg, err := readTyped(r)
		if err != nil {
			return
		}
		st := c.statement(msg)
		if st == nil {
			if _, err := server.Write(msg); err != nil {
				return
			}
			continue
		}
		when, f := p.decide(st)
		c.after(st)
		switch when {
		case 0:
			if _, err := server.Write(msg); err != nil {
				return
			}
			continue
		case Before:
			c.cut(nil, f, nil)
		case ReplyLost:
			c.cut(c.through(r, msg), f, nil)
		case Hold:
			c.cut(c.through(r, msg), f, f.release)
		}
		return
	}
}

// startup forwards the untyped packets that open a session (an SSL or GSS request, then
// the startup message, or a cancel request).
func (c *conn) startup(r *bufio.Reader) bool {
	for {
		var hdr [8]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return false
		}
		n := int(binary.BigEndian.Uint32(hdr[:4]))
		if n < 8 || n > 1<<20 {
			return false
		}
		pkt := make([]byte, n)
		copy(pkt, hdr[:])
		if _, err := io.ReadFull(r, pkt[8:]); err != nil {
			return false
		}
		if _, err := c.server.Write(pkt); err != nil {
			return false
		}
		switch binary.BigEndian.Uint32(hdr[4:]) {
		case 80877103, 80877104: // SSLRequest, GSSENCRequest: the server answers N, then the startup follows
			continue
		}
		return true
	}
}

// readTyped reads one typed frontend message, whole (type byte, length, body).
func readTyped(r *bufio.Reader) ([]byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(hdr[1:]))
	if n < 4 || n > 1<<30 {
		return nil, errors.New("pgproxy: bad message length")
	}
	msg := make([]byte, 1+n)
	copy(msg, hdr[:])
	if _, err := io.ReadFull(r, msg[5:]); err != nil {
		return nil, err
	}
	return msg, nil
}

// cstrings splits a message body into its leading NUL-terminated strings.
func cstrings(body []byte, n int) []string {
	var out []string
	for range n {
		i := bytes.IndexByte(body, 0)
		if i < 0 {
			break
		}
		out = append(out, string(body[:i]))
		body = body[i+1:]
	}
	return out
}

// statement returns the statement msg executes (a Query, or a Bind of a parsed
// statement), or nil; it remembers parsed statements by name.
func (c *conn) statement(msg []byte) *Statement {
	body := msg[5:]
	var q string
	switch msg[0] {
	case 'P':
		if s := cstrings(body, 2); len(s) == 2 {
			c.stmts[s[0]] = s[1]
		}
		return nil
	case 'Q':
		s := cstrings(body, 1)
		if len(s) == 0 {
			return nil
		}
		q = s[0]
	case 'B':
		s := cstrings(body, 2)
		if len(s) < 2 {
			return nil
		}
		q = c.stmts[s[1]]
	default:
		return nil
	}
	q = strings.Join(strings.Fields(q), " ")
	st := &Statement{Conn: c.id, SQL: q, Write: isWrite(q)}
	lower := strings.ToLower(q)
	if strings.HasPrefix(lower, "begin") || strings.HasPrefix(lower, "start transaction") {
		c.inTx, c.wrote = false, false
		return st
	}
	st.InTx, st.TxWrote = c.inTx, c.wrote
	return st
}

// after moves the connection's transaction state past st.
func (c *conn) after(st *Statement) {
	lower := strings.ToLower(st.SQL)
	switch {
	case strings.HasPrefix(lower, "begin") || strings.HasPrefix(lower, "start transaction"):
		c.inTx = true
	case st.IsCommit() || strings.HasPrefix(lower, "rollback") || lower == "abort":
		c.inTx, c.wrote = false, false
	case st.Write && c.inTx:
		c.wrote = true
	}
}

// isWrite reports whether q writes: INSERT, UPDATE, DELETE, or a notify.
func isWrite(q string) bool {
	u := strings.ToUpper(q)
	for _, w := range []string{"INSERT", "UPDATE", "DELETE", "NOTIFY"} {
		if strings.HasPrefix(u, w) {
			return true
		}
	}
	return strings.Contains(u, "PG_NOTIFY(")
}

// through returns msg and, for a Bind, the messages after it up to and including its Sync
// (Describe, Execute, …), read from the client as it sent them.
func (c *conn) through(r *bufio.Reader, msg []byte) []byte {
	out := append([]byte(nil), msg...)
	if msg[0] != 'B' {
		return out
	}
	for {
		m, err := readTyped(r)
		if err != nil {
			return out
		}
		out = append(out, m...)
		if m[0] == 'S' {
			return out
		}
	}
}

// cut drops the client: from now on the server's answers are read and dropped. send, when
// set, is forwarded (after hold is closed, when set); then the proxy's side to the server
// is closed for writing, and f.Done closes once the server has ended the session.
func (c *conn) cut(send []byte, f *Fault, hold chan struct{}) {
	c.mu.Lock()
	c.discard = true
	c.mu.Unlock()
	if send == nil || hold != nil {
		c.client.Close()
	}
	if hold != nil {
		<-hold
	}
	if send != nil {
		_, _ = c.server.Write(send)
	}
	c.client.Close()
	halfClose(c.server)
	go func() {
		<-c.ended
		close(f.done)
	}()
}

// relay copies the server's answers to the client until a cut, then reads and drops them,
// until the server ends the connection.
func (c *conn) relay() {
	defer close(c.ended)
	buf := make([]byte, 32<<10)
	for {
		n, err := c.server.Read(buf)
		if n > 0 {
			c.mu.Lock()
			drop := c.discard
			c.mu.Unlock()
			if !drop {
				if _, werr := c.client.Write(buf[:n]); werr != nil {
					c.mu.Lock()
					c.discard = true
					c.mu.Unlock()
				}
			}
		}
		if err != nil {
			c.client.Close()
			return
		}
	}
}

func halfClose(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
		return
	}
	c.Close()
}
