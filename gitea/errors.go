package gitea

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"syscall"
)

// ErrNotSent means the request never left steward (dial refused, DNS failure, context done
// before the connection was used): the server cannot have acted on it, so a retry is safe.
var ErrNotSent = errors.New("gitea: request not sent")

// ErrOutcomeUnknown means the request was sent but no usable response came back (timeout,
// connection reset, EOF, a 5xx): it may have taken effect. Verify by reading back (for a
// comment, FindCommentWithMarker) before retrying.
var ErrOutcomeUnknown = errors.New("gitea: outcome unknown: the request was sent and may have taken effect")

// ErrLabelNotFound is returned by AddLabels and RemoveLabel when the repository has no label of
// that name. Nothing was sent to change the item.
var ErrLabelNotFound = errors.New("gitea: label not found in repository")

// Outcome classifies a failed call for the audit log.
type Outcome string

// Outcomes returned by Classify.
const (
	OutcomeNone    Outcome = ""         // no error
	OutcomeNotSent Outcome = "not_sent" // nothing reached the server
	OutcomeUnknown Outcome = "unknown"  // sent; may have taken effect
	OutcomeRefused Outcome = "refused"  // the server answered with a 4xx: it did not act
)

// HTTPError is a response with a non-2xx status. A 4xx is a refusal; a 5xx also matches
// ErrOutcomeUnknown with errors.Is, since the server may have acted before failing.
type HTTPError struct {
	Op      string // e.g. "create comment"
	Status  int    // HTTP status code
	Message string // the server's message, scrubbed
}

// Error describes the refusal.
func (e *HTTPError) Error() string {
	return fmt.Sprintf("gitea: %s: HTTP %d %s: %s", e.Op, e.Status, http.StatusText(e.Status), e.Message)
}

// Is makes a 5xx match ErrOutcomeUnknown.
func (e *HTTPError) Is(target error) bool { return target == ErrOutcomeUnknown && e.Status >= 500 }

// IsNotFound reports whether err is an HTTP 404 from the server.
func IsNotFound(err error) bool {
	var he *HTTPError
	return errors.As(err, &he) && he.Status == http.StatusNotFound
}

// Classify maps an error from this package to an Outcome. Errors it does not recognise are
// OutcomeUnknown: when in doubt, assume the write may have happened.
func Classify(err error) Outcome {
	var he *HTTPError
	switch {
	case err == nil:
		return OutcomeNone
	case errors.Is(err, ErrNotSent), errors.Is(err, ErrLabelNotFound):
		return OutcomeNotSent
	case errors.As(err, &he) && he.Status < 500:
		return OutcomeRefused
	default:
		return OutcomeUnknown
	}
}

// callError is a scrubbed transport-level failure. It unwraps to its class sentinel and to the
// well-known standard causes found in the original chain (never to the original error, whose
// text may carry secrets).
type callError struct {
	op     string
	class  error
	msg    string
	causes []error
}

func (e *callError) Error() string   { return "gitea: " + e.op + ": " + e.msg }
func (e *callError) Unwrap() []error { return append([]error{e.class}, e.causes...) }

var knownCauses = []error{context.DeadlineExceeded, context.Canceled, io.EOF, io.ErrUnexpectedEOF,
	os.ErrDeadlineExceeded, syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.EPIPE}

func safeCauses(err error) []error {
	var out []error
	for _, k := range knownCauses {
		if errors.Is(err, k) {
			out = append(out, k)
		}
	}
	return out
}

var (
	userinfoRe = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]+@`)
	authRe     = regexp.MustCompile(
		`(?i)((?:authorization|token)["':= ]+(?:token |bearer |basic )?)[A-Za-z0-9._~+/=-]{8,}`,
	)
)

// scrub removes the token and URL userinfo from s.
func scrub(s string, tok Token) string {
	if tok.value != "" {
		s = strings.ReplaceAll(s, tok.value, redacted)
	}
	s = userinfoRe.ReplaceAllString(s, "${1}"+redacted+"@")
	return authRe.ReplaceAllString(s, "${1}"+redacted)
}
