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

// HoldsSecrets reports whether any secret is registered: Snapshot then looks at every string.
func (r *Redactor) HoldsSecrets() bool { return r.hasSecrets() }

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
	if s == nil || !r.hasSecrets() ||
		!anyString(reflect.ValueOf(s), func(v string) bool { return r.secretsOnly(v) != v }) {
		return s
	}
	b, err := json.Marshal(s)
	if err != nil {
		return &model.Snapshot{GeneratedAt: s.GeneratedAt, Sources: model.Sources{
			Locks: model.SourceHealth{
				Status: model.StatusUnavailable,
				Reason: "snapshot withheld: it held a secret and could not be redacted",
			}}}
	}
	// The JSON of a string holding the secret holds it too (tokens have no characters JSON
	// escapes), so redacting the encoded text redacts every string.
	var out model.Snapshot
	if err := json.Unmarshal([]byte(r.secretsOnly(string(b))), &out); err != nil {
		return &model.Snapshot{GeneratedAt: s.GeneratedAt, Sources: model.Sources{
			Locks: model.SourceHealth{
				Status: model.StatusUnavailable,
				Reason: "snapshot withheld: it held a secret and could not be redacted",
			}}}
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

// SnapshotStream redacts a stream of snapshots from one live model as Redactor.Snapshot
// does, but looks at each claim, orphan, contention, session and item once: published
// entries are immutable and the live model makes a new value for every entry that
// changed, so an entry seen in the previous snapshot keeps its verdict (clean: the same
// value; holding a secret: the same redacted copy). The screen's per-entry caches then keep
// working when a secret is configured, and a snapshot costs what changed. Not safe for
// concurrent use.
type SnapshotStream struct {
	r        *Redactor
	claims   map[*model.Claim]*model.Claim
	orphans  map[*model.Orphan]*model.Orphan
	conts    map[*model.Contention]*model.Contention
	sessions map[*model.Session]*model.Session
	items    map[*model.ItemState]*model.ItemState
}

// NewStream returns a SnapshotStream over r.
func (r *Redactor) NewStream() *SnapshotStream { return &SnapshotStream{r: r} }

// Snapshot returns s with the registered secrets removed from every string it holds: s
// itself when it holds none.
func (st *SnapshotStream) Snapshot(s *model.Snapshot) *model.Snapshot {
	if s == nil || !st.r.hasSecrets() {
		return s
	}
	ok := true
	claims, c1 := redactList(st.r, s.Claims, &st.claims, &ok)
	orphans, c2 := redactList(st.r, s.Orphans, &st.orphans, &ok)
	conts, c3 := redactList(st.r, s.Contention, &st.conts, &ok)
	sessions, c4 := redactList(st.r, s.Sessions, &st.sessions, &ok)
	items, c5 := redactList(st.r, s.Items, &st.items, &ok)
	rest := *s
	rest.Claims, rest.Orphans, rest.Contention, rest.Sessions, rest.Items = nil, nil, nil, nil, nil
	restOut, c6 := redactValue(st.r, &rest, &ok)
	if !ok {
		return withheld(s)
	}
	if !(c1 || c2 || c3 || c4 || c5 || c6) {
		return s
	}
	out := *restOut
	out.Claims, out.Orphans, out.Contention, out.Sessions, out.Items = claims, orphans, conts, sessions, items
	return &out
}

// redactList redacts each entry of in, reusing the verdicts cached in *cache for entries
// seen before; the cache is replaced by this list's entries. changed reports whether any
// entry held a secret; ok turns false when one could not be redacted.
func redactList[T any](r *Redactor, in []*T, cache *map[*T]*T, ok *bool) (out []*T, changed bool) {
	next := make(map[*T]*T, len(in))
	out = make([]*T, len(in))
	for i, p := range in {
		q, seen := (*cache)[p]
		if !seen {
			var c bool
			q, c = redactValue(r, p, ok)
			if !c {
				q = p
			}
		}
		next[p], out[i] = q, q
		changed = changed || q != p
	}
	*cache = next
	if !changed {
		return in, false
	}
	return out, true
}

// redactValue returns a redacted copy of *p and true when it holds a secret, else p and
// false. The copy goes through JSON (what the snapshot shows is what it encodes); ok turns
// false when that fails.
func redactValue[T any](r *Redactor, p *T, ok *bool) (*T, bool) {
	if p == nil || !anyString(reflect.ValueOf(p), func(v string) bool { return r.secretsOnly(v) != v }) {
		return p, false
	}
	b, err := json.Marshal(p)
	if err != nil {
		*ok = false
		return p, false
	}
	out := new(T)
	if err := json.Unmarshal([]byte(r.secretsOnly(string(b))), out); err != nil {
		*ok = false
		return p, false
	}
	return out, true
}

func withheld(s *model.Snapshot) *model.Snapshot {
	return &model.Snapshot{GeneratedAt: s.GeneratedAt, Sources: model.Sources{
		Locks: model.SourceHealth{
			Status: model.StatusUnavailable,
			Reason: "snapshot withheld: it held a secret and could not be redacted",
		}}}
}
