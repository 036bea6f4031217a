package govern

import (
	"bytes"
	"os"
	"path/filepath"
	"steward/govern/actionid"
	"testing"
)

// TestAuditRedactsEveryFieldThatCarriesText: a secret steward knows (its token), and text
// shaped like a credential (token=…, user:password@ in a URL), never reach the audit log's
// bytes from any field of a record that carries text from outside: the message, effects,
// fences, evidence, the Gitea login, the target's lock file and entry, the inverse's target
// and parameters, and each step's of a plan. Each case is written twice: through a
// redactor that does not know the secret (the bytes must hold it, or the case proves
// nothing; the two patterns apply in every redactor, so only the registered secret can be
// shown passing) and through the audit log's own.
func TestAuditRedactsEveryFieldThatCarriesText(t *testing.T) {
	const secret = "sekrit-0123456789abcdef"
	set := func(s string) []func(*Record) {
		return []func(*Record){
			func(r *Record) { r.Message = "refused: " + s },
			func(r *Record) { r.Effects = []string{"lock x written", "comment said " + s} },
			func(r *Record) { r.Fences = []string{"lease L1 unchanged", s} },
			func(r *Record) { r.Evidence = []string{"owner process is dead", "worker wrote " + s} },
			func(r *Record) { r.Actor.GiteaLogin = s },
			func(r *Record) { r.Target.LockFile = s + ".json" },
			func(r *Record) { r.Target.Entry = "orphan:" + s },
			func(r *Record) { r.Inverse = &Request{Action: actionid.RestoreLock, Target: Target{LockFile: s}} },
			func(r *Record) {
				r.Inverse = &Request{Action: actionid.Relabel, Target: Target{Item: item(1)}, Params: RelabelParams{Label: s}}
			},
			func(r *Record) { r.Steps = []Request{{Action: actionid.RetireLock, Target: Target{LockFile: s}}} },
			func(r *Record) {
				r.Steps = []Request{{Action: actionid.ReclaimExpired, Target: Target{LeaseID: "L1"}, Params: unknownParams{"reason": s}}}
			},
		}
	}
	for _, shape := range []struct {
		name, text, leak string
	}{
		{"registered secret", secret, secret},
		{"token=", "token=" + secret, secret},
		{"URL userinfo", "https://bot:" + secret + "@gitea.example/x", secret},
	} {
		for i, put := range set(shape.text) {
			rec := Record{Attempt: "att-1", Kind: KindIntent, Action: actionid.Claim, Actor: Actor{OSUser: "u", Host: "h"}}
			put(&rec)
			leaky := NewRedactor()
			leaky.Add("some-other-secret-value")
			if b := appendOne(t, leaky, rec); !bytes.Contains(b, []byte(shape.leak)) && shape.name == "registered secret" {
				t.Fatalf("%s, field %d: the record never carries the text, so the case proves nothing:\n%s", shape.name, i, b)
			}
			r := NewRedactor()
			r.Add(secret)
			b := appendOne(t, r, rec)
			if bytes.Contains(b, []byte(shape.leak)) || !bytes.Contains(b, []byte(redacted)) {
				t.Errorf("%s, field %d: the audit log holds the secret (or redacted nothing):\n%s", shape.name, i, b)
			}
		}
	}
}

// appendOne appends rec to a fresh audit log through r and returns the log's bytes.
func appendOne(t *testing.T, r *Redactor, rec Record) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := OpenAudit(path, r)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	if err := log.Append(rec); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRedactorKeepsShortWords: a registered secret of four bytes or more is removed; a
// shorter one is ignored, for it would blank ordinary words ("abc" in "abcd").
func TestRedactorKeepsShortWords(t *testing.T) {
	cases := []struct{ secret, in, want string }{
		{"wxyz", "key wxyz here", "key [redacted] here"},
		{"xyz", "key xyz here", "key xyz here"},
		{"", "key here", "key here"},
	}
	for _, c := range cases {
		r := NewRedactor()
		r.Add(c.secret)
		if got := r.String(c.in); got != c.want {
			t.Errorf("secret %q: %q redacted to %q, want %q", c.secret, c.in, got, c.want)
		}
	}
}
