package mcp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzParseClarification: a clarification id is external input (the model passes it back);
// whatever it holds, parsing never panics, and what parses names exactly one item and one
// marker id, printing back as the same id.
func FuzzParseClarification(f *testing.F) {
	for _, s := range []string{"acme/widgets#3/ans-0123456789abcdef", "a/b#1/ans-ffffffffffffffff", "", "a/b#0/ans-0123456789abcdef",
		"a/b/c#1/ans-0123456789abcdef", "acme/widgets#3/ans-0123456789abcdeF", " acme/widgets#12/ans-0123456789abcdef\n", "a/b#99999999999999999999/ans-0123456789abcdef"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		it, id, ok := parseClarification(s)
		if !ok {
			return
		}
		if it.Number <= 0 || it.Org == "" || it.Repo == "" || strings.ContainsAny(it.Org+it.Repo, "/# \t\n") || !strings.HasPrefix(id, "ans-") {
			t.Fatalf("%q parsed as %+v %q", s, it, id)
		}
		if back := clarificationID(it, id); back != strings.TrimSpace(s) {
			t.Fatalf("%q parsed and printed back as %q", s, back)
		}
	})
}

// FuzzStdioLine: a stdio line is the client's bytes, whatever they are. The guard never
// panics on one; what it passes on is a message the SDK decodes (or a batch of them), and
// what it refuses it answers with one line of JSON-RPC 2.0 error, -32700 or -32600, whose id
// is null or the line's own.
func FuzzStdioLine(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`, `not json`, `{"jsonrpc":"2.0","id":"x9"}`, `[]`, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`42`, `{"jsonrpc":"1.0","id":1,"method":"x"}`, `{"jsonrpc":"2.0","id":{},"method":"x"}`, "{\"a\":1}\x00", `{"jsonrpc":"2.0","id":1,"method":"x"} {}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		bad := check(line, false)
		if bad == nil {
			if !json.Valid(line) {
				t.Fatalf("%q passed on but is not JSON", line)
			}
			if t0 := bytes.TrimSpace(line); len(t0) > 0 && t0[0] != '[' {
				if _, err := jsonrpc.DecodeMessage(line); err != nil {
					t.Fatalf("%q passed on but the SDK cannot decode it: %v", line, err)
				}
			}
			return
		}
		var r struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if !bytes.HasSuffix(bad, []byte("\n")) || bytes.Count(bad, []byte("\n")) != 1 || json.Unmarshal(bad, &r) != nil || r.JSONRPC != "2.0" ||
			(r.Error.Code != codeParseError && r.Error.Code != codeInvalidRequest) || len(r.ID) == 0 {
			t.Fatalf("%q answered %q", line, bad)
		}
	})
}
