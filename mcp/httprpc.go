package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
)

// maxHTTPBody bounds one request body over HTTP (the SDK's default, stated here so the
// guard below and the SDK agree).
const maxHTTPBody = 4 << 20

// sessionHeader is the streamable transport's session header.
const sessionHeader = "Mcp-Session-Id"

// jsonrpcHTTP holds the streamable HTTP transport to the JSON-RPC rules stdio keeps, where
// the SDK's handler does not:
//
//   - a POST without Mcp-Session-Id that is not an initialize request is refused 400 with a
//     JSON-RPC error naming the request (the SDK opened a session for it and answered
//     200 with an error of code 0);
//   - a request for a method the server does not serve is answered -32601 (method not
//     found) with its id, as over stdio (the SDK answered a plain-text 400), and a
//     notification of one is accepted and ignored (202), as JSON-RPC asks.
//
// It reads a POST's body whole (up to maxHTTPBody; a longer one is left to the SDK, which
// refuses it 413) and hands the same bytes on.
func (s *Server) jsonrpcHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxHTTPBody+1))
		r.Body.Close()
		if err != nil {
			http.Error(w, "the request body could not be read", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if len(body) > maxHTTPBody {
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), strings.NewReader("x")))
			next.ServeHTTP(w, r)
			return
		}
		msgs, ok := decodeMessages(body)
		if !ok {
			next.ServeHTTP(w, r) // not JSON-RPC: the SDK answers it
			return
		}
		if r.Header.Get(sessionHeader) == "" && !hasInitialize(msgs) {
			writeRPCError(
				w,
				http.StatusBadRequest,
				firstID(msgs),
				codeInvalidRequest,
				"Bad Request: no Mcp-Session-Id header; a session starts with an initialize request, and every later request "+
					"names it",
			)
			return
		}
		rec := &notHandled{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if !rec.held {
			return
		}
		m := notHandledRE.FindSubmatch(rec.buf.Bytes())
		if m == nil {
			rec.release()
			return
		}
		var method string
		_ = json.Unmarshal(m[1], &method)
		for _, msg := range msgs {
			if msg.Method == method && len(msg.ID) > 0 {
				writeRPCError(w, http.StatusOK, msg.ID, codeMethodNotFound, "Method not found: "+method)
				return
			}
		}
		w.WriteHeader(http.StatusAccepted) // a notification of an unknown method: ignored
	})
}

// codeMethodNotFound is JSON-RPC 2.0's "method not found".
const codeMethodNotFound = -32601

// notHandledRE is the SDK's plain-text refusal of a method it does not serve.
var notHandledRE = regexp.MustCompile(`^JSON RPC not handled: ("(?:[^"\\]|\\.)*") unsupported`)

// rpcMessage is what the guard reads of a JSON-RPC message.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// decodeMessages reads a body as one JSON-RPC message or a batch of them.
func decodeMessages(body []byte) ([]rpcMessage, bool) {
	t := bytes.TrimSpace(body)
	if len(t) == 0 {
		return nil, false
	}
	if t[0] == '[' {
		var ms []rpcMessage
		if json.Unmarshal(t, &ms) != nil || len(ms) == 0 {
			return nil, false
		}
		return ms, true
	}
	var m rpcMessage
	if json.Unmarshal(t, &m) != nil {
		return nil, false
	}
	return []rpcMessage{m}, true
}

func hasInitialize(ms []rpcMessage) bool {
	for _, m := range ms {
		if m.Method == "initialize" {
			return true
		}
	}
	return false
}

// firstID is the id of the first request among ms that has a usable one (string or
// number), else null.
func firstID(ms []rpcMessage) json.RawMessage {
	for _, m := range ms {
		if id := idOf(append([]byte(`{"id":`), append(m.ID, '}')...)); id != nil {
			return id
		}
	}
	return nil
}

// writeRPCError answers with one JSON-RPC error response as application/json.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(errorLine(id, code, msg))
}

// notHandled holds back a 400 response so the guard can tell the SDK's "not handled"
// refusal from any other; everything else passes straight through.
type notHandled struct {
	http.ResponseWriter
	held    bool
	status  int
	started bool
	buf     bytes.Buffer
}

func (n *notHandled) WriteHeader(code int) {
	if !n.started && code == http.StatusBadRequest {
		n.started, n.held, n.status = true, true, code
		return
	}
	n.started = true
	n.ResponseWriter.WriteHeader(code)
}

func (n *notHandled) Write(p []byte) (int, error) {
	if !n.started {
		n.WriteHeader(http.StatusOK)
	}
	if n.held {
		return n.buf.Write(p)
	}
	return n.ResponseWriter.Write(p)
}

// Flush passes a flush on (the SDK streams events), unless the response is held.
func (n *notHandled) Flush() {
	if f, ok := n.ResponseWriter.(http.Flusher); ok && !n.held {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (n *notHandled) Unwrap() http.ResponseWriter { return n.ResponseWriter }

// release sends a held response as it was.
func (n *notHandled) release() {
	n.ResponseWriter.WriteHeader(n.status)
	_, _ = n.ResponseWriter.Write(n.buf.Bytes())
}
