package mcp

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves one client over in and out (newline-delimited JSON-RPC) until it
// closes its end or ctx ends, then waits for every tool call still applying. A line that is
// not a JSON-RPC message is answered with a JSON-RPC error (-32700 for one that is not JSON)
// and the server keeps serving (guardStdio).
func (s *Server) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	w := &lockedWriter{w: out}
	guarded := guardStdio(in, w)
	err := s.sdk.Run(ctx, &sdk.IOTransport{Reader: guarded, Writer: w, MaxLineLength: maxStdioLine + 2})
	in.Close() // the SDK closed the guard's end; this ends the guard's read of the client's
	s.Wait()
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// path is where the streamable HTTP transport is served.
const path = "/mcp"

// errTokenRequired refuses to serve HTTP on an address other than loopback without a token.
var errTokenRequired = errors.New(
	"steward mcp serves HTTP beyond loopback only with a bearer token: give --token-file (a file of mode 0600 holding " +
		"the token), or bind to 127.0.0.1 or ::1",
)

// loopback reports whether host (from host:port) names only this machine: localhost or a
// loopback IP literal. An empty host (every interface) or any other name is not.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	if i := strings.IndexByte(host, '%'); i >= 0 {
		host = host[:i]
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// maxToken bounds a token file; a token is one line of printable characters.
const maxToken = 4096

// readToken reads a bearer token from a file that only its owner may read. The token never
// leaves this process except in the comparison with a request's header.
func readToken(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	switch {
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("token file %s is not a regular file", path)
	case fi.Mode().Perm()&0o077 != 0:
		return nil, fmt.Errorf(
			"token file %s is readable or writable by group or others (mode %#o); run chmod 600 on it",
			path,
			fi.Mode().Perm(),
		)
	case fi.Size() > maxToken:
		return nil, fmt.Errorf("token file %s is larger than %d bytes; it must hold one token", path, maxToken)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxToken+1))
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	tok := []byte(strings.TrimSpace(string(b)))
	if len(tok) < 16 {
		return nil, fmt.Errorf("token file %s holds no token of at least 16 characters", path)
	}
	for _, c := range tok {
		if c <= ' ' || c >= 0x7f {
			return nil, fmt.Errorf("token file %s: the token must be one word of printable ASCII", path)
		}
	}
	return tok, nil
}

// HTTPListener is a bound HTTP transport: its listener and the token it requires (nil on
// loopback without a token file).
type HTTPListener struct {
	ln    net.Listener
	token []byte
}

// URL is the endpoint clients connect to.
func (l *HTTPListener) URL() string { return "http://" + l.ln.Addr().String() + path }

// Authenticated reports whether requests must carry the bearer token.
func (l *HTTPListener) Authenticated() bool { return l.token != nil }

// Close closes the listener (when it was never served).
func (l *HTTPListener) Close() error { return l.ln.Close() }

// ListenHTTP checks the address against the token policy and binds it. Beyond loopback a
// token file is required; with a token file every request needs the token, wherever bound.
func ListenHTTP(addr, tokenFile string) (*HTTPListener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--http %q: want host:port (127.0.0.1:8765): %v", addr, err)
	}
	var tok []byte
	if tokenFile != "" {
		if tok, err = readToken(tokenFile); err != nil {
			return nil, err
		}
	} else if !loopback(host) {
		return nil, errTokenRequired
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if tok == nil {
		// A name that resolved beyond loopback is refused too.
		if ta, ok := ln.Addr().(*net.TCPAddr); !ok || !ta.IP.IsLoopback() {
			ln.Close()
			return nil, errTokenRequired
		}
	}
	return &HTTPListener{ln: ln, token: tok}, nil
}

// bearer requires "Authorization: Bearer <token>", compared in constant time. The scheme
// is case-insensitive (RFC 9110 §11.1: "bearer" and "BEARER" are the same scheme).
func bearer(token []byte, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := bearerToken(r.Header.Get("Authorization"))
		if !ok || subtle.ConstantTimeCompare([]byte(got), token) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="steward"`)
			http.Error(w, "a bearer token is required", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bearerToken reads the token of an Authorization header of the Bearer scheme.
func bearerToken(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimLeft(tok, " ")
	return tok, tok != ""
}

// Handler is the HTTP handler of the server on l: the streamable transport at path, behind
// cross-origin protection, DNS-rebinding protection (the SDK's, on loopback), the
// JSON-RPC rules of the HTTP transport (jsonrpcHTTP) and, when l has one, the bearer token.
func (s *Server) Handler(l *HTTPListener) http.Handler {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.sdk },
		&sdk.StreamableHTTPOptions{SessionTimeout: 2 * time.Hour, MaxRequestBodyBytes: maxHTTPBody})
	var hh http.Handler = http.NewCrossOriginProtection().Handler(s.jsonrpcHTTP(h))
	if l.token != nil {
		hh = bearer(l.token, hh)
	}
	mux := http.NewServeMux()
	mux.Handle(path, hh)
	return mux
}

// ServeHTTP serves on l until ctx ends, then shuts the listener down and waits for every
// tool call still applying.
func (s *Server) ServeHTTP(ctx context.Context, l *HTTPListener) error {
	srv := &http.Server{Handler: s.Handler(l), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l.ln) }()
	var err error
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = srv.Shutdown(sctx)
		cancel()
		_ = srv.Close()
		<-errc
	case err = <-errc:
	}
	s.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
