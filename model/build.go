package model

import (
	"encoding/json"
	"time"

	"steward/gitea"
)

// Build derives the snapshot of in at now. It is pure: every observation that
// needed IO is already in in (see live.Load). The live model keeps the same derivation
// current incrementally.
func Build(in *Input, cfg Config, now time.Time) *Snapshot {
	e := NewEngine(cfg)
	e.load(in)
	e.Flush(now)
	return e.Publish(now)
}

func (e *Engine) load(in *Input) {
	e.env.locks, e.env.db, e.env.gitea, e.env.sect = in.LocksHealth, in.DBHealth, in.GiteaHealth, in.DB
	for _, w := range in.WorkItems {
		if it := itemOfRef(w.WorkRef); it != nil {
			e.workItems[w.WorkItemID] = *it
		}
	}
	e.sessionsOmitted = in.SessionsOmitted
	for i := range in.Sessions {
		e.SetSession(in.Sessions[i].Session.SessionID, &in.Sessions[i])
	}
	for i := range in.Leases {
		e.SetLease(in.Leases[i].Lease.LeaseID, &in.Leases[i])
	}
	for id, l := range in.RefLeases {
		e.refs[id] = l
	}
	for i := range in.Locks {
		e.SetLock(in.Locks[i].Entry.Name, &in.Locks[i])
	}
	e.AddEvents(in.Events)
	e.setGitea(in.Gitea, e.clarifications(in.Clarifications), in.GiteaHealth)
	e.findings = append(e.findings, in.Findings...)
}

// clarifications converts Gitea's clarification items for the configured repository.
func (e *Engine) clarifications(cs []gitea.Clarification) []Clarification {
	out := make([]Clarification, 0, len(cs))
	c := e.env.cfg
	for _, x := range cs {
		kind := string(x.Kind)
		if kind == "" {
			kind = "issue"
		}
		out = append(out, Clarification{Item: Item{Kind: kind, Number: x.Number, Remote: c.Remote, Org: c.Org, Repo: c.Repo},
			Title: x.Title, Marker: x.Marker, Question: x.Question, Rule: x.Rule, AskedBy: x.AskedBy, AskedAt: x.AskedAt, URL: x.URL})
	}
	return out
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
	age := func(h SourceHealth) sourceJSON {
		j := sourceJSON{SourceHealth: h}
		if !h.ScannedAt.IsZero() {
			j.AgeS = int64(s.GeneratedAt.Sub(h.ScannedAt) / time.Second)
		}
		return j
	}
	p := (*plain)(s)
	return json.Marshal(struct {
		*plain
		Sources struct {
			Locks sourceJSON `json:"locks"`
			DB    sourceJSON `json:"db"`
			Gitea sourceJSON `json:"gitea"`
		} `json:"sources"`
		Claims         []claimJSON     `json:"claims"`
		Contention     []*Contention   `json:"contention"`
		Clarifications []Clarification `json:"clarifications"`
		Orphans        []*Orphan       `json:"orphans"`
		Sessions       []*Session      `json:"sessions"`
		Items          []*ItemState    `json:"items"`
		Activity       []Event         `json:"activity"`
	}{plain: p, Sources: struct {
		Locks sourceJSON `json:"locks"`
		DB    sourceJSON `json:"db"`
		Gitea sourceJSON `json:"gitea"`
	}{age(s.Sources.Locks), age(s.Sources.DB), age(s.Sources.Gitea)},
		Claims: cs, Contention: nonNil(s.Contention), Clarifications: nonNil(s.Clarifications), Orphans: nonNil(s.Orphans),
		Sessions: nonNil(s.Sessions), Items: nonNil(s.Items), Activity: nonNil(s.Activity)})
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
