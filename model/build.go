package model

import (
	"encoding/json"
	"strconv"
	"time"

	"steward/gitea/gitearec"
)

// Build derives the snapshot of in at now. It is pure: every observation that
// needed IO is already in in (see live.Load). The live model keeps the same derivation
// current incrementally.
func Build(in *Input, cfg Config, now time.Time) *Snapshot {
	e := NewEngine(cfg)
	e.load(in)
	e.SetClock(in.Clock)
	e.Flush(now)
	return e.Publish(now)
}

func (e *Engine) load(in *Input) {
	e.env.locks, e.env.db, e.env.gitea, e.env.sect = in.LocksHealth, in.DBHealth, in.GiteaHealth, in.DB
	for _, w := range in.WorkItems {
		e.PutWorkItem(w)
	}
	e.sessionsOmitted = in.SessionsOmitted
	for i := range in.Sessions {
		e.SetSession(in.Sessions[i].Session.SessionID, &in.Sessions[i])
	}
	for i := range in.Leases {
		e.SetLease(in.Leases[i].Lease.LeaseID, &in.Leases[i])
	}
	if e.env.locksObserved() {
		for id, l := range in.RefLeases {
			e.refs[id] = l
		}
		for i := range in.Locks {
			e.SetLock(in.Locks[i].Entry.Name, &in.Locks[i])
		}
	}
	e.AddEvents(in.Events)
	e.setGitea(in.Gitea, e.clarifications(in.Clarifications), in.GiteaHealth)
	e.findings = append(e.findings, in.Findings...)
}

// clarifications converts Gitea's clarification items for the configured repository.
func (e *Engine) clarifications(cs []gitearec.Clarification) []Clarification {
	out := make([]Clarification, 0, len(cs))
	c := e.env.cfg
	for _, x := range cs {
		kind := string(x.Kind)
		if kind == "" {
			kind = "issue"
		}
		out = append(out, Clarification{Item: Item{Kind: kind, Number: x.Number, Remote: c.Remote, Org: c.Org, Repo: c.Repo},
			Title: x.Title, Marker: x.Marker, Question: x.Question, QuestionComment: questionComment(x), Rule: x.Rule,
			AskedBy: x.AskedBy, AskedAt: x.AskedAt, URL: x.URL})
	}
	return out
}

// questionComment names the question as the governed core's answer does (its
// question_comment parameter): the comment's id, "body" for the issue body, "none".
func questionComment(x gitearec.Clarification) string {
	switch {
	case x.QuestionCommentID > 0:
		return strconv.FormatInt(x.QuestionCommentID, 10)
	case x.Rule == gitearec.RuleIssueBody:
		return "body"
	}
	return "none"
}

// claimJSON adds the ages, relative to the snapshot's generated_at.
type claimJSON struct {
	*Claim
	HeartbeatAgeS *int64 `json:"heartbeat_age_s"`
	TimeLeftS     *int64 `json:"time_left_s"`
}

type sourceJSON struct {
	SourceHealth
	AgeS int64 `json:"age_s"`
}

// sourcesJSON is the sources as the snapshot's JSON has them: each one's health and its
// age_s relative to generated_at.
type sourcesJSON struct {
	Locks sourceJSON `json:"locks"`
	DB    sourceJSON `json:"db"`
	Gitea sourceJSON `json:"gitea"`
}

func (s *Snapshot) sourcesJSON() sourcesJSON {
	age := func(h SourceHealth) sourceJSON {
		j := sourceJSON{SourceHealth: h}
		if !h.ScannedAt.IsZero() {
			j.AgeS = int64(s.GeneratedAt.Sub(h.ScannedAt) / time.Second)
		}
		return j
	}
	return sourcesJSON{age(s.Sources.Locks), age(s.Sources.DB), age(s.Sources.Gitea)}
}

// MarshalJSON renders the snapshot in the stable `steward status --json`
// format: claims carry heartbeat_age_s and time_left_s, sources age_s, all
// relative to generated_at; empty lists are [] never null.
func (s *Snapshot) MarshalJSON() ([]byte, error) {
	type plain Snapshot
	cs := make([]claimJSON, len(s.Claims))
	for i, c := range s.Claims {
		cs[i].Claim = c
		if !c.LastHeartbeat.IsZero() {
			v := int64(s.GeneratedAt.Sub(c.LastHeartbeat) / time.Second)
			cs[i].HeartbeatAgeS = &v
		}
		if !c.ExpiresAt.IsZero() {
			v := int64(c.ExpiresAt.Sub(s.GeneratedAt) / time.Second)
			cs[i].TimeLeftS = &v
		}
	}
	p := (*plain)(s)
	return json.Marshal(struct {
		*plain
		Sources        sourcesJSON     `json:"sources"`
		Claims         []claimJSON     `json:"claims"`
		Contention     []*Contention   `json:"contention"`
		Clarifications []Clarification `json:"clarifications"`
		Orphans        []*Orphan       `json:"orphans"`
		Sessions       []*Session      `json:"sessions"`
		Items          []*ItemState    `json:"items"`
		Activity       []Event         `json:"activity"`
	}{plain: p, Sources: s.sourcesJSON(),
		Claims: cs, Contention: nonNil(s.Contention), Clarifications: nonNil(s.Clarifications), Orphans: nonNil(s.Orphans),
		Sessions: nonNil(s.Sessions), Items: nonNil(s.Items), Activity: nonNil(s.Activity)})
}

// EncodeJSON renders the same bytes as MarshalJSON, handed to emit in pieces: the fields
// before the lists, then each list one element at a time. `steward status --json` streams
// it, so a fleet of 100,000 claims is never held encoded whole (json.Marshal's buffer grew
// to about twice the output). A piece is only valid during its call to emit.
func (s *Snapshot) EncodeJSON(emit func([]byte) error) error {
	return s.encodeJSON(emit, lists{
		claims:   marshalEach(len(s.Claims), func(i int) any { return s.claimJSON(s.Claims[i]) }),
		sessions: marshalEach(len(s.Sessions), func(i int) any { return s.Sessions[i] }),
		items:    marshalEach(len(s.Items), func(i int) any { return s.Items[i] }),
	})
}

// lists hands encodeJSON the elements of the long lists, each encoded: s's own, or a
// stream's (StreamJSON).
type lists struct {
	claims, sessions, items func(put func([]byte) error) error
}

func (s *Snapshot) claimJSON(c *Claim) claimJSON {
	j := claimJSON{Claim: c}
	if !c.LastHeartbeat.IsZero() {
		v := int64(s.GeneratedAt.Sub(c.LastHeartbeat) / time.Second)
		j.HeartbeatAgeS = &v
	}
	if !c.ExpiresAt.IsZero() {
		v := int64(c.ExpiresAt.Sub(s.GeneratedAt) / time.Second)
		j.TimeLeftS = &v
	}
	return j
}

func (s *Snapshot) encodeJSON(emit func([]byte) error, ls lists) error {
	type plain Snapshot
	// The lists are shadowed by empty omitempty fields of the same names: the head holds
	// every other field, in MarshalJSON's order (the embedded fields first, then sources).
	head, err := json.Marshal(struct {
		*plain
		Sources        sourcesJSON     `json:"sources"`
		Claims         []claimJSON     `json:"claims,omitempty"`
		Contention     []*Contention   `json:"contention,omitempty"`
		Clarifications []Clarification `json:"clarifications,omitempty"`
		Orphans        []*Orphan       `json:"orphans,omitempty"`
		Sessions       []*Session      `json:"sessions,omitempty"`
		Items          []*ItemState    `json:"items,omitempty"`
		Activity       []Event         `json:"activity,omitempty"`
	}{plain: (*plain)(s), Sources: s.sourcesJSON()})
	if err != nil {
		return err
	}
	if err := emit(head[:len(head)-1]); err != nil {
		return err
	}
	var buf []byte
	list := func(name string, each func(put func([]byte) error) error) error {
		buf = append(append(append(buf[:0], ",\""...), name...), "\":["...)
		first := true
		err := each(func(b []byte) error {
			if !first {
				buf = append(buf, ',')
			}
			first = false
			buf = append(buf, b...)
			if len(buf) >= 32<<10 {
				if err := emit(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
			return nil
		})
		if err != nil {
			return err
		}
		buf = append(buf, ']')
		return emit(buf)
	}
	steps := []struct {
		name string
		each func(put func([]byte) error) error
	}{
		{"claims", ls.claims},
		{"contention", marshalEach(len(s.Contention), func(i int) any { return s.Contention[i] })},
		{"clarifications", marshalEach(len(s.Clarifications), func(i int) any { return s.Clarifications[i] })},
		{"orphans", marshalEach(len(s.Orphans), func(i int) any { return s.Orphans[i] })},
		{"sessions", ls.sessions},
		{"items", ls.items},
		{"activity", marshalEach(len(s.Activity), func(i int) any { return s.Activity[i] })},
	}
	for _, st := range steps {
		if err := list(st.name, st.each); err != nil {
			return err
		}
	}
	return emit([]byte{'}'})
}

// marshalEach is a list of n elements encoded one at a time: each element's JSON handed to
// put as soon as it is made.
func marshalEach(n int, elem func(i int) any) func(put func([]byte) error) error {
	return func(put func([]byte) error) error {
		for i := range n {
			b, err := json.Marshal(elem(i))
			if err != nil {
				return err
			}
			if err := put(b); err != nil {
				return err
			}
		}
		return nil
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
