package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// TestStdioRefusesAnOverlongLine: a line longer than maxStdioLine is read to its end and
// answered -32600, never held whole, and the next line is served.
func TestStdioRefusesAnOverlongLine(t *testing.T) {
	f := newFx(t, fxOpt{clientPID: 4242})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { _ = f.srv.ServeStdio(context.Background(), inR, outW) }()
	t.Cleanup(func() { inW.Close(); go io.Copy(io.Discard, outR) })
	out := bufio.NewReader(outR)
	type answer struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	read := func() answer {
		t.Helper()
		b, err := out.ReadBytes('\n')
		var a answer
		if err != nil || json.Unmarshal(b, &a) != nil {
			t.Fatalf("read %q: %v", b, err)
		}
		return a
	}
	go func() {
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`+strings.Repeat("x", maxStdioLine+10)+`"}}`+"\n")
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`+"\n")
	}()
	if a := read(); a.Error == nil || a.Error.Code != -32600 || !strings.Contains(a.Error.Message, "longer than") || string(a.ID) != "null" {
		t.Fatalf("an overlong line: %+v", a)
	}
	if a := read(); string(a.ID) != "2" || a.Error != nil {
		t.Fatalf("initialize after an overlong line: %+v", a)
	}
}
