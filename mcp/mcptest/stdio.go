package mcptest

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// rpcLine is one JSON-RPC message as the test reads it off the server's stdout.
type rpcLine struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// stdioSession speaks raw newline-delimited JSON-RPC to a stdio server.
type stdioSession struct {
	t   *testing.T
	in  io.Writer
	out *bufio.Reader
}

func (s stdioSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("write %q: %v", line, err)
	}
}

func (s stdioSession) read() rpcLine {
	s.t.Helper()
	b, err := s.out.ReadBytes('\n')
	if err != nil {
		s.t.Fatalf("the server answered nothing more (%v): it stopped serving", err)
	}
	var r rpcLine
	if err := json.Unmarshal(b, &r); err != nil {
		s.t.Fatalf("the server wrote %q: %v", b, err)
	}
	return r
}

// StdioMalformed drives a stdio server through lines that are not JSON-RPC messages — not
// JSON, cut short, JSON of the wrong shape, an empty batch — between well-formed calls:
// each is answered with a JSON-RPC error (-32700 parse error for what is not JSON, -32600
// invalid request for the rest, with the request's id when it has one) and the server
// keeps serving: the calls after it are answered. in and out are the server's stdin and
// stdout.
func StdioMalformed(t *testing.T, in io.Writer, out io.Reader) {
	s := stdioSession{t: t, in: in, out: bufio.NewReader(out)}
	s.send(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},` +
			`"clientInfo":{"name":"raw","version":"1"}}}`,
	)
	if r := s.read(); string(r.ID) != "1" || r.Error != nil {
		t.Fatalf("initialize: %+v", r)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i, tc := range []struct {
		line string
		code int
		id   string
	}{
		{`this is not json`, -32700, "null"},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/list"`, -32700, "null"},
		{"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/list\"}\x1b[31m", -32700, "null"},
		{`{"jsonrpc":"2.0","id":"x9"}`, -32600, `"x9"`},
		{`{"hello":"world"}`, -32600, "null"},
		{`[]`, -32600, "null"},
		{`42`, -32600, "null"},
	} {
		s.send(tc.line)
		r := s.read()
		if r.Error == nil || r.Error.Code != tc.code || string(r.ID) != tc.id || strings.Contains(r.Error.Message, "hello") {
			t.Fatalf("%q: answered %+v (id %s), want error %d with id %s", tc.line, r, r.ID, tc.code, tc.id)
		}
		// And it keeps serving.
		id := 100 + i
		s.send(`{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"tools/list"}`)
		if r := s.read(); string(r.ID) != itoa(id) || r.Error != nil || !strings.Contains(string(r.Result), `"claim"`) {
			t.Fatalf("tools/list after %q: %+v", tc.line, r)
		}
	}
	s.send(
		`{"jsonrpc":"2.0","id":200,"method":"tools/call","params":{"name":"my_leases","arguments":{"session_id":"raw-w1"}}}`,
	)
	if r := s.read(); string(r.ID) != "200" || r.Error != nil || !strings.Contains(string(r.Result), `"success":true`) {
		t.Fatalf("my_leases after the malformed lines: %+v %s", r, r.Result)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
