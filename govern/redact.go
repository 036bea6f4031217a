package govern

import (
	"regexp"
	"sync"
)

// Redactor removes secrets from text before it is audited: every registered secret value,
// every claim token (by its stw_ct_ prefix), URL userinfo (https://user:pass@host), and
// values that follow a token-like key.
type Redactor struct {
	mu        sync.RWMutex
	secrets   []string
	scrubbers []func(string) string
}

// NewRedactor returns a redactor that knows no secret values yet; the patterns always apply.
func NewRedactor() *Redactor { return &Redactor{} }

// Add registers secret values (tokens, passwords) that must never appear in a record.
// Values shorter than 4 bytes are ignored: they would blank ordinary words.
func (r *Redactor) Add(secrets ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range secrets {
		if len(s) >= 4 {
			r.secrets = append(r.secrets, s)
		}
	}
}

const redacted = "[redacted]"

var (
	userinfoRE = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]+@`)
	tokenKVRE  = regexp.MustCompile(
		`(?i)\b(token|access_token|claim_token|password|passwd|secret|authorization)` +
			`(["']?\s*[:=]\s*["']?)(token\s+|bearer\s+|basic\s+)?[^\s"'&,;]+`,
	)
)

// String returns s with every secret removed.
func (r *Redactor) String(s string) string {
	if s == "" {
		return s
	}
	s = r.secretsOnly(s)
	s = claimTokenAnywhereRE.ReplaceAllString(s, redacted)
	s = userinfoRE.ReplaceAllString(s, "${1}"+redacted+"@")
	s = tokenKVRE.ReplaceAllString(s, "${1}${2}"+redacted)
	return s
}

func (r *Redactor) strings(in []string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = r.String(s)
	}
	return out
}

func (r *Redactor) redactRecord(rec Record) Record {
	rec.Message = r.String(rec.Message)
	rec.Effects = r.strings(rec.Effects)
	rec.Fences = r.strings(rec.Fences)
	rec.Evidence = r.strings(rec.Evidence)
	rec.Actor.GiteaLogin = r.String(rec.Actor.GiteaLogin)
	rec.Target = rec.Target.redact(r)
	if rec.Inverse != nil {
		inv := r.request(*rec.Inverse)
		rec.Inverse = &inv
	}
	if rec.Steps != nil {
		steps := make([]Request, len(rec.Steps))
		for i, s := range rec.Steps {
			steps[i] = r.request(s)
		}
		rec.Steps = steps
	}
	return rec
}

// request is req with its target and parameters redacted (a record's inverse and steps).
func (r *Redactor) request(req Request) Request {
	req.Target = req.Target.redact(r)
	req.Params = withValues(req.Params, func(_, v string) string { return r.String(v) })
	return req
}
