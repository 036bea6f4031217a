package gitea

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// redacted is what a Token prints in every format.
const redacted = "[redacted]"

// Token is a Gitea access token. Its value can only be read inside this package; every way of
// printing it (String, GoString, Format, MarshalJSON, MarshalText, LogValue) yields
// "[redacted]".
type Token struct{ value string }

// NewToken wraps a raw access token.
func NewToken(raw string) Token { return Token{value: raw} }

// IsZero reports whether the token is empty.
func (t Token) IsZero() bool { return t.value == "" }

// String returns "[redacted]".
func (t Token) String() string { return redacted }

// GoString returns "[redacted]" so %#v does not show the value either.
func (t Token) GoString() string { return redacted }

// Format writes "[redacted]" for every verb.
func (t Token) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

// MarshalJSON encodes the token as the JSON string "[redacted]".
func (t Token) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// MarshalText returns "[redacted]" (used by YAML and other text encoders).
func (t Token) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// LogValue makes slog print "[redacted]".
func (t Token) LogValue() slog.Value { return slog.StringValue(redacted) }

var (
	_ fmt.Formatter  = Token{}
	_ fmt.GoStringer = Token{}
	_ slog.LogValuer = Token{}
)

// Scrub returns s with every occurrence of the token's value replaced by "[redacted]", so
// that text steward shows — including what a worker or a server wrote — never shows its own
// token. It reveals nothing: the result holds the value only where s did not.
func (t Token) Scrub(s string) string {
	if len(t.value) < 4 || !strings.Contains(s, t.value) {
		return s
	}
	return strings.ReplaceAll(s, t.value, redacted)
}
