package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"steward/gitea"
	"steward/govern"
)

// serveHTTPFx serves the fixture's server over streamable HTTP on loopback, with a bearer
// token when token is set, and returns its URL.
func serveHTTPFx(t *testing.T, f *fx, token string) string {
	t.Helper()
	tf := ""
	if token != "" {
		tf = filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(tf, []byte(token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l, err := ListenHTTP("127.0.0.1:0", tf)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = f.srv.ServeHTTP(ctx, l); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return l.URL()
}

// rpcPost posts one JSON-RPC body and returns the status, the content type and the body
// (the data of the first event when the answer is an event stream).
func rpcPost(t *testing.T, url string, hdr map[string]string, body string) (int, string, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	ct := res.Header.Get("Content-Type")
	if strings.HasPrefix(ct, "text/event-stream") {
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				return res.StatusCode, ct, d, res.Header
			}
		}
		return res.StatusCode, ct, "", res.Header
	}
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, ct, string(b), res.Header
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// rpcErr reads a JSON-RPC error response.
func rpcErr(t *testing.T, body string) (id string, code int) {
	t.Helper()
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil || m.Error == nil {
		t.Fatalf("not a JSON-RPC error: %q (%v)", body, err)
	}
	return string(m.ID), m.Error.Code
}

// TestHTTPFollowsJSONRPC: over streamable HTTP the bearer scheme is matched without regard
// to case (RFC 9110 §11.1); a request other than initialize without Mcp-Session-Id is
// refused 400 with a JSON-RPC error naming it; a method the server does not serve is
// answered -32601 with the request's id, as over stdio, and a notification of one is
// accepted and ignored. (Each failed before: "bearer <token>" was 401, a request without a
// session got 200 with an error of code 0, an unknown method a plain-text 400.)
func TestHTTPFollowsJSONRPC(t *testing.T) {
	f := newFx(t, fxOpt{})
	const tok = "0123456789abcdef-http-token"
	url := serveHTTPFx(t, f, tok)
	for _, auth := range []string{"bearer " + tok, "BEARER  " + tok, "Bearer " + tok} {
		if st, _, body, _ := rpcPost(t, url, map[string]string{"Authorization": auth}, initBody); st != http.StatusOK || !strings.Contains(body, `"protocolVersion"`) {
			t.Fatalf("Authorization %q: %d %s", strings.Replace(auth, tok, "<token>", 1), st, body)
		}
	}
	for _, auth := range []string{"Basic " + tok, "Bearer wrong-token-0123456789", "Bearer", tok} {
		if st, _, _, _ := rpcPost(t, url, map[string]string{"Authorization": auth}, initBody); st != http.StatusUnauthorized {
			t.Fatalf("Authorization %q: %d, want 401", strings.Replace(auth, tok, "<token>", 1), st)
		}
	}
	auth := map[string]string{"Authorization": "Bearer " + tok}

	st, ct, body, _ := rpcPost(t, url, auth, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	if id, code := rpcErr(t, body); st != http.StatusBadRequest || !strings.HasPrefix(ct, "application/json") || id != "7" || code != -32600 {
		t.Fatalf("tools/list without a session: %d %s %s", st, ct, body)
	}

	st, _, body, hdr := rpcPost(t, url, auth, initBody)
	sid := hdr.Get("Mcp-Session-Id")
	if st != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %s", st, body)
	}
	in := map[string]string{"Authorization": "Bearer " + tok, "Mcp-Session-Id": sid}
	if st, _, _, _ := rpcPost(t, url, in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); st != http.StatusAccepted {
		t.Fatalf("initialized: %d", st)
	}
	st, ct, body, _ = rpcPost(t, url, in, `{"jsonrpc":"2.0","id":"x-9","method":"foo/bar"}`)
	if id, code := rpcErr(t, body); st != http.StatusOK || !strings.HasPrefix(ct, "application/json") || id != `"x-9"` || code != -32601 {
		t.Fatalf("an unknown method: %d %s %s", st, ct, body)
	}
	if st, _, body, _ := rpcPost(t, url, in, `{"jsonrpc":"2.0","method":"notifications/foo"}`); st != http.StatusAccepted {
		t.Fatalf("an unknown notification: %d %s", st, body)
	}
	// The session still serves.
	if st, _, body, _ := rpcPost(t, url, in, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`); st != http.StatusOK || !strings.Contains(body, `"claim"`) {
		t.Fatalf("tools/list in the session: %d %s", st, body)
	}
	// A protocol version without sessions is not served.
	if st, _, _, _ := rpcPost(t, url, map[string]string{"Authorization": "Bearer " + tok, "MCP-Protocol-Version": "2026-07-28"}, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`); st != http.StatusBadRequest {
		t.Fatalf("a sessionless protocol version: %d", st)
	}
}

// TestStdioUnknownMethod: over stdio an unknown method is -32601 too (the HTTP answer is
// held to it above).
func TestStdioUnknownMethod(t *testing.T) {
	f := newFx(t, fxOpt{clientPID: 4242})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { _ = f.srv.ServeStdio(context.Background(), inR, outW) }()
	t.Cleanup(func() { inW.Close(); go io.Copy(io.Discard, outR) })
	out := bufio.NewReader(outR)
	go func() {
		_, _ = io.WriteString(inW, initBody+"\n")
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":"x-9","method":"foo/bar"}`+"\n")
	}()
	if _, err := out.ReadBytes('\n'); err != nil {
		t.Fatal(err)
	}
	b, err := out.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	if id, code := rpcErr(t, string(b)); id != `"x-9"` || code != -32601 {
		t.Fatalf("an unknown method over stdio: %s", b)
	}
}

// hangingGitea is a Gitea transport that answers nothing: each request is announced on
// arrived and waits for its context to end.
type hangingGitea struct{ arrived chan struct{} }

func (h hangingGitea) RoundTrip(r *http.Request) (*http.Response, error) {
	select {
	case h.arrived <- struct{}{}:
	default:
	}
	<-r.Context().Done()
	return nil, r.Context().Err()
}

// TestCancelledReadIsNoSuccess: a read the client cancels (notifications/cancelled) while it
// waits on Gitea is answered success false, code cancelled — never a read that succeeded
// with "Gitea could not be read: context canceled". (It failed before: item_status answered
// success true.) The go-sdk answers a cancelled call at all; docs/mcp.md says so.
func TestCancelledReadIsNoSuccess(t *testing.T) {
	f := newFx(t, fxOpt{})
	h := hangingGitea{arrived: make(chan struct{}, 1)}
	g, err := gitea.New(gitea.Config{Login: gitea.Login{URL: "http://gitea.invalid", Token: gitea.NewToken("t0123456789abcdef")}, Owner: "acme", Repo: "widgets",
		Transport: h, RequestTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ws := f.ws
	ws.Gitea = g
	core := govern.New(ws, f.audit, govern.Options{Actor: govern.LocalActor(govern.RoleOperator, "mcp-test")})
	srv := New(Config{Core: core, Version: "test"})
	t.Cleanup(func() { srv.Close(); core.Close() })
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.SDK().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	send := func(s string) {
		t.Helper()
		m, err := jsonrpc.DecodeMessage([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.Write(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	send(initBody)
	if _, err := conn.Read(ctx); err != nil {
		t.Fatal(err)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"item_status","arguments":{"session_id":"w1","item":{"number":3}}}}`)
	<-h.arrived
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"the worker moved on"}}`)
	m, err := conn.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, ok := m.(*jsonrpc.Response)
	if !ok || res.Error != nil {
		t.Fatalf("want a result, got %#v", m)
	}
	var out struct {
		IsError           bool       `json:"isError"`
		StructuredContent ItemStatus `json:"structuredContent"`
	}
	if err := json.Unmarshal(res.Result, &out); err != nil {
		t.Fatal(err)
	}
	if s := out.StructuredContent; !out.IsError || s.Success || s.Code != codeCancelled || s.Claimable || strings.Contains(s.Message, "could not be read") {
		t.Fatalf("a cancelled item_status: %s", res.Result)
	}
}
