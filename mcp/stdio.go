package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// maxStdioLine bounds one message on stdio (a line), as the streamable HTTP transport
// bounds a request body (4 MiB, the SDK's default there). The SDK's own stdio limit is
// 16 MiB; nothing a worker sends needs more than a few hundred KiB.
const maxStdioLine = 4 << 20

// The JSON-RPC 2.0 error codes the stdio guard answers with.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// lockedWriter serialises whole messages onto the stdio stream: the SDK writes each of its
// messages with one Write, and so does the guard, so lines never interleave.
type lockedWriter struct {
	mu     sync.Mutex
	w      io.WriteCloser
	closed bool
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, io.ErrClosedPipe
	}
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	return l.w.Close()
}

// guardStdio stands between the client's stream and the SDK. The SDK's stdio transport
// decodes the stream with one json.Decoder, which cannot resynchronise: a line that is not
// JSON, or JSON that is not a JSON-RPC message, ends the connection without an answer. The
// guard reads line by line instead and passes on only lines that are messages (or batches
// of them); to any other it answers itself, as JSON-RPC 2.0 asks — -32700 (parse error) for
// a line that is not JSON, -32600 (invalid request) for JSON that is no message and for a
// line longer than maxStdioLine — and keeps serving. It returns the reader to give the SDK;
// out must be the writer the SDK writes to (a lockedWriter).
func guardStdio(in io.Reader, out *lockedWriter) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReaderSize(in, 64<<10)
		for {
			line, tooLong, err := readLine(br, maxStdioLine)
			if len(bytes.TrimSpace(line)) > 0 || tooLong {
				if bad := check(line, tooLong); bad != nil {
					if _, werr := out.Write(bad); werr != nil {
						pw.CloseWithError(werr)
						return
					}
				} else if _, werr := pw.Write(append(line, '\n')); werr != nil {
					return // the SDK closed its end
				}
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					pw.Close()
				} else {
					pw.CloseWithError(err)
				}
				return
			}
		}
	}()
	return pr
}

// readLine reads one line without its end (\n or \r\n). A line over max is read to its
// end and dropped: tooLong, and no bytes.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+2 { // +2: the line end itself
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimRight(line, "\r\n")
		return line, tooLong, err
	}
}

// check returns the error response for a line that is not a JSON-RPC message (or batch of
// them), nil for one that is.
func check(line []byte, tooLong bool) []byte {
	if tooLong {
		return errorLine(
			nil,
			codeInvalidRequest,
			fmt.Sprintf("Invalid Request: the message is longer than %d bytes", maxStdioLine),
		)
	}
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		return errorLine(nil, codeParseError, "Parse error: the line is not JSON ("+err.Error()+")")
	}
	if t := bytes.TrimSpace(line); t[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(t, &batch); err != nil || len(batch) == 0 {
			return errorLine(nil, codeInvalidRequest, "Invalid Request: an empty batch, or one that is not an array of messages")
		}
		for _, m := range batch {
			if err := message(m); err != nil {
				return errorLine(nil, codeInvalidRequest, "Invalid Request: a batch element: "+err.Error())
			}
		}
		return nil
	}
	if err := message(line); err != nil {
		return errorLine(idOf(line), codeInvalidRequest, "Invalid Request: "+err.Error())
	}
	return nil
}

// message checks that raw is one JSON-RPC 2.0 message as the SDK reads it, and — what the
// SDK does not check — that one without a method is a response: it has a result or an error
// (the SDK would take it for a response to nothing and drop it, answering nothing).
func message(raw []byte) error {
	if _, err := jsonrpc.DecodeMessage(raw); err != nil {
		return fmt.Errorf("not a JSON-RPC 2.0 message (%v)", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("not a JSON-RPC 2.0 message (%v)", err)
	}
	_, method := m["method"]
	_, result := m["result"]
	_, isErr := m["error"]
	if !method && !result && !isErr {
		return errors.New("neither a request (no method) nor a response (no result or error)")
	}
	return nil
}

// idOf is a request's id when it is a string or a number, else null.
func idOf(line []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(m.ID, &v) != nil {
		return nil
	}
	switch v.(type) {
	case string, float64:
		return m.ID
	}
	return nil
}

// errorLine is a JSON-RPC 2.0 error response, one line.
func errorLine(id json.RawMessage, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return append(b, '\n')
}
