package mcp_test

import (
	"context"
	"io"
	"testing"

	"steward/mcp/mcptest"
)

// TestStdioAnswersMalformedJSON: the stdio transport answers a line that is not a JSON-RPC
// message with a JSON-RPC error and keeps serving. Before, the SDK's decoder gave up on the
// first such line and the connection ended without an answer.
func TestStdioAnswersMalformedJSON(t *testing.T) {
	_, _, srv := inMemoryServer(t, nil)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(context.Background(), inR, outW) }()
	mcptest.StdioMalformed(t, inW, outR)
	inW.Close()
	go io.Copy(io.Discard, outR)
	if err := <-done; err != nil {
		t.Fatalf("ServeStdio after the client closed: %v", err)
	}
}
