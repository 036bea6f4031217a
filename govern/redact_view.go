package govern

import (
	"encoding/json"
	"reflect"
	"strings"

	"steward/model"
)

// AddScrubber registers a function that removes a secret the Redactor cannot hold as a
// value — gitea.Token.Scrub, for a token that never reveals itself. String and Snapshot
// apply it.
func (r *Redactor) AddScrubber(f func(string) string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scrubbers = append(r.scrubbers, f)
}

// secretsOnly removes the registered secrets (values and scrubbers) from s; it applies no
// pattern.
func (r *Redactor) secretsOnly(s string) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, sec, redacted)
	}
	for _, f := range r.scrubbers {
		s = f(s)
	}
	return s
}

func (r *Redactor) hasSecrets() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.secrets)+len(r.scrubbers) > 0
}

// Snapshot returns s with steward's registered secrets removed from every string it holds
// (reasons, evidence, names, titles, questions, event details). Everything else — what a
// worker, a lock file or a server wrote — is shown as written: no pattern is applied. s is
// returned as it is when it holds no secret (the common case costs one pass of
// comparisons); otherwise a redacted copy, for published snapshots are shared and never
// changed.
func (r *Redactor) Snapshot(s *model.Snapshot) *model.Snapshot {
	if s == nil || !r.hasSecrets() || !anyString(reflect.ValueOf(s), func(v string) bool { return r.secretsOnly(v) != v }) {
		return s
	}
	b, err := json.Marshal(s)
	if err != nil {
		return &model.Snapshot{GeneratedAt: s.GeneratedAt, Sources: model.Sources{
			Locks: model.SourceHealth{Status: model.StatusUnavailable, Reason: "snapshot withheld: it held a secret and could not be redacted"}}}
	}
	// The JSON of a string holding the secret holds it too (tokens have no characters JSON
	// escapes), so redacting the encoded text redacts every string.
	var out model.Snapshot
	if err := json.Unmarshal([]byte(r.secretsOnly(string(b))), &out); err != nil {
		return &model.Snapshot{GeneratedAt: s.GeneratedAt, Sources: model.Sources{
			Locks: model.SourceHealth{Status: model.StatusUnavailable, Reason: "snapshot withheld: it held a secret and could not be redacted"}}}
	}
	return &out
}

// anyString reports whether some string reachable from v satisfies f.
func anyString(v reflect.Value, f func(string) bool) bool {
	switch v.Kind() {
	case reflect.String:
		return f(v.String())
	case reflect.Pointer, reflect.Interface:
		return !v.IsNil() && anyString(v.Elem(), f)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && anyString(v.Field(i), f) {
				return true
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if anyString(v.Index(i), f) {
				return true
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if anyString(it.Key(), f) || anyString(it.Value(), f) {
				return true
			}
		}
	}
	return false
}
