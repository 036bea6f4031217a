package attention

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"

	"steward/model"
)

// Kind is what an entry is about.
type Kind string

// The kinds of entry.
const (
	KindClarification Kind = "clarification"
	KindCollision     Kind = "collision"
	KindOrphan        Kind = "orphan"
	KindSource        Kind = "source"
	// KindIncident: one root cause behind several orphans (model.Incident) — a worker that
	// died holding claims is one entry, its lease and lock files its parts.
	KindIncident Kind = "incident"
)

// SinceFrom says where an entry's age comes from.
type SinceFrom string

// The origins of an age: a time the snapshot's evidence carries, or — when it carries none —
// the first snapshot in which the tracker saw the entry (said so, never passed off as
// evidence).
const (
	SinceEvidence  SinceFrom = "evidence"
	SinceFirstSeen SinceFrom = "first-seen"
)

// Entry is one attention entry of a snapshot.
type Entry struct {
	// Key is the entry's stable identity: kind, sub-kind and what it is about.
	Key  string `json:"key"`
	Kind Kind   `json:"kind"`
	// Sub is the orphan or collision kind, or the source's name.
	Sub  string     `json:"sub,omitempty"`
	Need model.Need `json:"need"`
	// Item is org/repo#n when the entry is about an item.
	Item  string `json:"item,omitempty"`
	Title string `json:"title,omitempty"`
	URL   string `json:"url,omitempty"`
	// Since is when the entry entered its state (zero: not known from the evidence; the
	// tracker fills in when it first saw it).
	Since     time.Time     `json:"since,omitzero"`
	SinceFrom SinceFrom     `json:"since_from,omitempty"`
	SLA       time.Duration `json:"-"`
	// Evidence is a fingerprint of the facts that make the entry what it is (the question's
	// time, the lease, the lock file, the expiry): when it changes, it is a new entry to the
	// person, and an acknowledgement of the old one no longer holds.
	Evidence string `json:"evidence"`
	// Sources are the sources the entry is derived from: its absence from a snapshot where
	// one of them was not read completely proves nothing, so it is not cleared.
	Sources []model.Source `json:"-"`
	// Items and Parts are an incident's: every item it holds, and the orphans it stands for
	// (each with its kind, as the orphan's own entry would have had it).
	Items []string `json:"items,omitempty"`
	Parts []Part   `json:"parts,omitempty"`
}

// Part is one orphan an incident stands for: the key its own entry would have, its orphan
// kind, its item, lease and lock file.
type Part struct {
	Key      string `json:"key"`
	Sub      string `json:"sub"`
	Item     string `json:"item,omitempty"`
	LeaseID  string `json:"lease_id,omitempty"`
	LockFile string `json:"lock_file,omitempty"`
}

// SLAs are how long each kind of entry may wait before it is overdue.
type SLAs struct {
	Clarification time.Duration
	Orphan        time.Duration
	Collision     time.Duration
	Source        time.Duration
}

// DefaultSLAs are the SLAs when none is configured: a question a day (config
// clarification_sla), an orphan an hour, a collision and an unreadable source 15 minutes.
var DefaultSLAs = SLAs{
	Clarification: 24 * time.Hour,
	Orphan:        time.Hour,
	Collision:     15 * time.Minute,
	Source:        15 * time.Minute,
}

func (s SLAs) of(k Kind) time.Duration {
	var d time.Duration
	switch k {
	case KindClarification:
		d = s.Clarification
	case KindOrphan, KindIncident:
		d = s.Orphan
	case KindCollision:
		d = s.Collision
	case KindSource:
		d = s.Source
	}
	if d <= 0 {
		return DefaultSLAs.of(k)
	}
	return d
}

// Unread lists the sources a snapshot did not read completely.
type Unread map[model.Source]bool

// FromSnapshot derives the attention entries of s — every entry that needs a person or an
// operator (routine ones are not attention) — and the sources it did not read completely.
func FromSnapshot(s *model.Snapshot, slas SLAs) ([]Entry, Unread) {
	unread := Unread{}
	var out []Entry
	for _, x := range []struct {
		src model.Source
		h   model.SourceHealth
	}{{model.SourceLocks, s.Sources.Locks}, {model.SourceDB, s.Sources.DB}, {model.SourceGitea, s.Sources.Gitea}} {
		if x.h.Status == model.StatusNotConfigured {
			continue
		}
		if x.h.Status == model.StatusNotObserved {
			unread[x.src] = true // not read from this host: no entry, nothing is broken
			continue
		}
		if !x.h.Complete() {
			unread[x.src] = true
		}
		if sourceNeed(x.h) != model.NeedHuman {
			continue
		}
		out = append(out, Entry{Key: "source:" + string(x.src), Kind: KindSource, Sub: string(x.src), Need: model.NeedHuman,
			Title: string(x.src) + " unavailable: " + x.h.Reason, Evidence: "unavailable", SLA: slas.of(KindSource)})
	}
	for _, c := range s.Clarifications {
		e := Entry{
			Key:      "clarification:" + c.Item.String(),
			Kind:     KindClarification,
			Need:     model.NeedHuman,
			Item:     c.Item.String(),
			Title:    c.Title,
			URL:      c.URL,
			SLA:      slas.of(KindClarification),
			Sources:  []model.Source{model.SourceGitea},
			Evidence: fingerprint(c.AskedAt.UTC().Format(time.RFC3339Nano), c.AskedBy),
		}
		if !c.AskedAt.IsZero() {
			e.Since, e.SinceFrom = c.AskedAt, SinceEvidence
		}
		out = append(out, e)
	}
	for _, c := range s.Contention {
		if contentionNeed(c) == model.NeedRoutine {
			continue
		}
		it := itemString(c.Item)
		ss := append([]string(nil), c.Sessions...)
		sort.Strings(ss)
		ls := append(append([]string(nil), c.LeaseIDs...), c.LockFiles...)
		sort.Strings(ls)
		out = append(out, Entry{Key: "collision:" + string(c.Kind) + ":" + it, Kind: KindCollision, Sub: string(c.Kind),
			Need: contentionNeed(c), Item: it, Title: string(c.Kind) + " on " + it + " (" + strings.Join(ss, ", ") + ")",
			SLA: slas.of(KindCollision), Sources: []model.Source{model.SourceLocks, model.SourceDB},
			Evidence: fingerprint(strings.Join(ss, ","), strings.Join(ls, ","))})
	}
	incidents := model.Incidents(s.Orphans, s.Sessions)
	part := map[*model.Orphan]bool{}
	for _, in := range incidents {
		for _, o := range in.Orphans {
			part[o] = true
		}
	}
	for _, o := range s.Orphans {
		need := orphanNeed(o)
		if need == model.NeedRoutine || part[o] {
			continue
		}
		it := itemString(o.Item)
		what := o.LockFile
		if o.LeaseID != "" {
			what = "lease " + o.LeaseID
		}
		exp := expiry(o.Evidence)
		e := Entry{Key: OrphanKey(string(o.Kind), o.LeaseID, o.LockFile), Kind: KindOrphan, Sub: string(o.Kind),
			Need: need, Item: it, Title: string(o.Kind) + " " + what, SLA: slas.of(KindOrphan),
			Sources:  []model.Source{model.SourceLocks, model.SourceDB},
			Evidence: fingerprint(o.LeaseID, o.LockFile, o.SessionID, exp.Format(time.RFC3339Nano))}
		if o.Item != nil {
			e.Title = string(o.Kind) + " on " + it + " (" + what + ")"
		}
		// An expired lease or lock entered its state when it expired; other orphans carry no
		// time of their own.
		if !exp.IsZero() && !exp.After(s.GeneratedAt) {
			e.Since, e.SinceFrom = exp, SinceEvidence
		}
		out = append(out, e)
	}
	for _, in := range incidents {
		out = append(out, incidentEntry(in, s.GeneratedAt, slas))
	}
	return out, unread
}

// IncidentKey is the attention key of an incident: "incident:<kind>:<session>".
func IncidentKey(in *model.Incident) string { return "incident:" + in.Key() }

// incidentEntry is the one entry of an incident: its parts' facts are its evidence (a new
// part, a new lease generation, a new lock is a new entry), its age the earliest passed
// expiry among them, its title in plain words.
func incidentEntry(in *model.Incident, now time.Time, slas SLAs) Entry {
	e := Entry{Key: IncidentKey(in), Kind: KindIncident, Sub: string(in.Kind), Need: model.NeedOperator,
		SLA: slas.of(KindIncident), Sources: []model.Source{model.SourceLocks, model.SourceDB}}
	for _, it := range in.Items {
		e.Items = append(e.Items, it.String())
	}
	e.Item = e.Items[0]
	e.Title = IncidentTitle(in.SessionID, e.Items)
	prints := make([]string, 0, len(in.Orphans))
	for _, o := range in.Orphans {
		exp := expiry(o.Evidence)
		e.Parts = append(e.Parts, Part{Key: OrphanKey(string(o.Kind), o.LeaseID, o.LockFile), Sub: string(o.Kind),
			Item: itemString(o.Item), LeaseID: o.LeaseID, LockFile: o.LockFile})
		prints = append(prints, fingerprint(string(o.Kind), o.LeaseID, o.LockFile, o.SessionID, exp.Format(time.RFC3339Nano)))
		if !exp.IsZero() && !exp.After(now) && (e.Since.IsZero() || exp.Before(e.Since)) {
			e.Since, e.SinceFrom = exp, SinceEvidence
		}
	}
	sort.Strings(prints)
	e.Evidence = fingerprint(append([]string{in.SessionID}, prints...)...)
	return e
}

// IncidentTitle says a dead worker's incident in plain words: "worker S died holding
// acme/widgets#7", "worker S died holding 3 items: acme/widgets#7, acme/widgets#8, …".
func IncidentTitle(session string, items []string) string {
	if len(items) == 1 {
		return "worker " + session + " died holding " + items[0]
	}
	shown := items
	if len(shown) > 3 {
		shown = append(append([]string(nil), shown[:3]...), "…")
	}
	return fmt.Sprintf("worker %s died holding %d items: %s", session, len(items), strings.Join(shown, ", "))
}

// OrphanKey is the attention key of an orphan: "orphan:<kind>:<lease id>:<lock file>", the
// lock file's field left out when there is none ("orphan:<kind>:<lease id>"; a lock without
// a lease keeps the empty lease field, "orphan:<kind>::<lock file>", so that the fields
// still read by position). An orphan of a lease alone ended in an empty field.
func OrphanKey(kind, leaseID, lockFile string) string {
	k := "orphan:" + kind + ":" + leaseID
	if lockFile != "" {
		k += ":" + lockFile
	}
	return k
}

// expiry is the expires_at an orphan's evidence names (lease or lock), zero when none parses.
func expiry(ev []model.Evidence) time.Time {
	for _, e := range ev {
		if e.Field != "leases.expires_at" && e.Field != "work_lease.expires_at" {
			continue
		}
		v, _, _ := strings.Cut(e.Value, " (")
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05", "2006-01-02T15:04:05"} {
			if t, err := time.Parse(layout, strings.TrimSpace(v)); err == nil {
				return t
			}
		}
	}
	return time.Time{}
}

func itemString(it *model.Item) string {
	if it == nil {
		return ""
	}
	return it.String()
}

func fingerprint(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(h[:8])
}
