package gitea

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"steward/gitea/gitearec"
)

func TestTokenNeverPrints(t *testing.T) {
	t.Parallel()
	const secret = "0123456789abcdef0123456789abcdef01234567"
	l := Login{Name: "x", URL: "http://127.0.0.1:1", Token: NewToken(secret)}
	var logBuf bytes.Buffer
	slog.New(slog.NewTextHandler(&logBuf, nil)).Info("login", "token", l.Token, "login", l)
	js, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	outs := map[string]string{
		"%v": fmt.Sprintf("%v", l), "%+v": fmt.Sprintf("%+v", l), "%#v": fmt.Sprintf("%#v", l),
		"%s": fmt.Sprintf("%s", l.Token), "%q": fmt.Sprintf("%q", l.Token), "%x": fmt.Sprintf("%x", l.Token),
		"String": l.Token.String(), "json": string(js), "slog": logBuf.String(),
	}
	for name, out := range outs {
		if strings.Contains(out, secret) || !strings.Contains(out, "[redacted]") {
			t.Errorf("%s printed %q", name, out)
		}
	}
}

func TestScrub(t *testing.T) {
	t.Parallel()
	tok := NewToken("s3cr3t-token-value-xyz")
	cases := map[string]string{
		`Get "http://bob:hunter2@127.0.0.1:3000/api": refused`: "hunter2",
		"message: s3cr3t-token-value-xyz is invalid":           "s3cr3t-token-value-xyz",
		"Authorization: token abcdef0123456789":                "abcdef0123456789",
	}
	for in, secret := range cases {
		if out := scrub(in, tok); strings.Contains(out, secret) {
			t.Errorf("scrub(%q) = %q still holds %q", in, out, secret)
		}
	}
	if out := scrub("head sha 0123456789abcdef0123456789abcdef01234567", tok); !strings.Contains(out, "0123456789abcdef") {
		t.Errorf("scrub removed a SHA: %q", out)
	}
}

func TestAnswerMarker(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]string{
		"att-1":        "<!-- steward:answer id=att-1 -->",
		"a b-->x<!--y": "<!-- steward:answer id=a_b-__x__-_y -->",
	} {
		if got := gitearec.AnswerMarker(id); got != want {
			t.Errorf("AnswerMarker(%q) = %q, want %q", id, got, want)
		}
		if got := gitearec.AnswerMarker(id); strings.Count(got, "-->") != 1 {
			t.Errorf("AnswerMarker(%q) = %q closes the comment early", id, got)
		}
	}
	if got := gitearec.WithMarker("answer\n", "<!-- m -->"); got != "answer\n\n<!-- m -->" {
		t.Errorf("WithMarker = %q", got)
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err  error
		want Outcome
	}{
		{nil, OutcomeNone},
		{&callError{op: "x", class: ErrNotSent}, OutcomeNotSent},
		{&callError{op: "x", class: ErrOutcomeUnknown}, OutcomeUnknown},
		{&HTTPError{Op: "x", Status: 422}, OutcomeRefused},
		{&HTTPError{Op: "x", Status: 404}, OutcomeRefused},
		{&HTTPError{Op: "x", Status: 502}, OutcomeUnknown},
		{fmt.Errorf("wrapped: %w", ErrLabelNotFound), OutcomeNotSent},
		{fmt.Errorf("something odd"), OutcomeUnknown},
	}
	for _, tc := range cases {
		if got := Classify(tc.err); got != tc.want {
			t.Errorf("Classify(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
