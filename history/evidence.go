package history

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"steward/gitea/gitearec"
	"steward/leases/leaserec"
	"steward/locks/lockrec"
	"steward/termsafe"
)

// SourceState is what one source gave: whether it was read, from when it holds evidence,
// and its own gaps.
type SourceState struct {
	Source Source `json:"source"`
	// Read is set when the source was read (wholly or in part).
	Read bool `json:"read"`
	// Reason says why it was not read, or what its read lacks.
	Reason string `json:"reason,omitempty"`
	// From is the earliest instant it holds evidence of (zero when it holds none).
	From time.Time `json:"from,omitzero"`
	// Entries counts what it gave.
	Entries int `json:"entries"`
}

// LeaseSpan is one lease's life as the DB (or, without its row, its events) tells it.
type LeaseSpan struct {
	Lease   string `json:"lease"`
	Session string `json:"session"`
	Item    Item   `json:"item"`
	Role    string `json:"role,omitempty"`
	// Start is when it was claimed (zero: unrecorded).
	Start time.Time `json:"start,omitzero"`
	// Ended is set when the lease is no longer active; End is when (zero with Ended: the
	// end was not recorded — the lease may have been live at any instant after Start).
	Ended  bool      `json:"ended"`
	End    time.Time `json:"end,omitzero"`
	Status string    `json:"status,omitempty"`
	Reason string    `json:"end_reason,omitempty"`
	// ExpiresAt is the row's expiry now (the last renewal's); expiry only moves forward.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// Expiries are the expiries the claim and each renewal recorded (steward's events
	// carry them in detail_json; the seed's five-column events do not), oldest first.
	Expiries []ExpiryMark `json:"expiries,omitempty"`
	Source   Source       `json:"source"`
}

// ExpiryMark is an expiry a claim or renewal set at At.
type ExpiryMark struct {
	At      time.Time `json:"at"`
	Expires time.Time `json:"expires"`
}

// LockSpan is one lock generation: from its claim (work_lease.created_at) until it was
// archived under retired/ (End), or still live.
type LockSpan struct {
	File string `json:"file"`
	// LiveName is the lock's name in the directory (an archive's live_name).
	LiveName   string    `json:"live_name"`
	Item       Item      `json:"item"`
	Session    string    `json:"session,omitempty"` // owner_session
	Claimant   string    `json:"claimant,omitempty"`
	Generation int64     `json:"generation"`
	Start      time.Time `json:"start,omitzero"`
	Live       bool      `json:"live"`
	End        time.Time `json:"end,omitzero"`
	ArchivedBy string    `json:"archived_by,omitempty"` // the action and attempt that archived it
	ExpiresAt  time.Time `json:"expires_at,omitzero"`
}

// Evidence is everything read from the sources, ready for the questions: the entries of
// every source, the lease and lock spans, and each source's state. Build it with the Add
// methods (or by hand in tests); it is never changed by a question.
type Evidence struct {
	// Read is when the evidence was read: "now" for every question.
	Read    time.Time
	Entries []Entry
	Leases  []LeaseSpan
	Locks   []LockSpan
	States  []SourceState
	Gaps    []Gap
	// sessionGaps apply only to questions about one session.
	SessionGaps []Gap
	expiries    []leaseExpiry
	// rows are the lease rows' entries, merged at Finish with what the events record.
	rows   []Entry
	sorted bool
}

// State returns the state of one source (Read false when it was never added).
func (e *Evidence) State(s Source) SourceState {
	for _, st := range e.States {
		if st.Source == s {
			return st
		}
	}
	return SourceState{Source: s, Reason: "not read"}
}

func (e *Evidence) setState(st SourceState) {
	for i := range e.States {
		if e.States[i].Source == st.Source {
			e.States[i] = st
			return
		}
	}
	e.States = append(e.States, st)
}

// Unread records a source that was not read, and why: its whole history is a gap.
func (e *Evidence) Unread(s Source, reason string) {
	e.setState(SourceState{Source: s, Reason: reason})
	e.Gaps = append(e.Gaps, Gap{Kind: GapUnread, Source: s, Reason: "not read: " + reason})
}

// Skipped records a source not read because the question does not need it, or because it
// is not configured: a standing limit of this evidence, not a loss.
func (e *Evidence) Skipped(s Source, reason string) {
	e.setState(SourceState{Source: s, Reason: reason})
	e.Gaps = append(e.Gaps, Gap{Kind: GapLimit, Source: s, Reason: "not read: " + reason})
}

func (e *Evidence) add(en ...Entry) {
	e.Entries = append(e.Entries, en...)
	e.sorted = false
}

// EventsRead is how the events were read.
type EventsRead struct {
	// Health is the events section's health (a missing column degrades it).
	Health leaserec.Health
	// FirstID is the lowest event_id the table holds (0: empty): a first id above 1 means
	// older events were deleted (event_id only grows).
	FirstID int64
	// NamesSessions is set when the table has steward's session_id column; the seed's
	// events record no session.
	NamesSessions bool
	// Items maps work_item_id to the item (from work_items).
	Items map[int64]Item
	// Truncated is set when the read stopped at a limit before the table's end.
	Truncated bool
}

// AddEvents adds the control-plane events (every one the table holds, in id order).
func (e *Evidence) AddEvents(evs []leaserec.Event, r EventsRead) {
	st := SourceState{Source: SourceEvents, Read: r.Health.Status != leaserec.HealthUnavailable}
	if !st.Read {
		st.Reason = strings.Join(r.Health.Reasons, "; ")
		e.setState(st)
		e.Gaps = append(e.Gaps, Gap{Kind: GapUnread, Source: SourceEvents, Reason: "unreadable: " + st.Reason})
		return
	}
	if r.Health.Status == leaserec.HealthDegraded {
		st.Reason = "partly read: " + strings.Join(r.Health.Reasons, "; ")
		e.Gaps = append(e.Gaps, Gap{Kind: GapDamaged, Source: SourceEvents, Reason: st.Reason})
	}
	var first time.Time
	e.Entries = slices.Grow(e.Entries, len(evs))
	for _, ev := range evs {
		en := eventEntry(ev, r.Items)
		if len(ev.Problems) > 0 {
			e.Gaps = append(e.Gaps, Gap{Kind: GapDamaged, Source: SourceEvents, From: en.At, To: en.At,
				Reason: fmt.Sprintf("event %d is partly undecodable: %s", ev.EventID, strings.Join(ev.Problems, "; "))})
		}
		if !en.At.IsZero() && (first.IsZero() || en.At.Before(first)) {
			first = en.At
		}
		e.add(en)
		e.noteExpiry(ev, en)
	}
	st.From, st.Entries = first, len(evs)
	switch {
	case len(evs) == 0:
		e.Gaps = append(e.Gaps, Gap{Kind: GapBegins, Source: SourceEvents, Reason: "the events table holds no event"})
	case r.FirstID > 1:
		e.Gaps = append(e.Gaps, Gap{Kind: GapNotRetained, Source: SourceEvents, To: first,
			Reason: fmt.Sprintf(
				"events before %s were not retained (the first event kept is #%d; event ids only grow)",
				stamp(first),
				r.FirstID,
			)})
	default:
		// Event #1 is kept: the table has not lost its beginning, but it began when the
		// control plane first wrote — nothing is recorded before it.
		e.Gaps = append(e.Gaps, Gap{Kind: GapBegins, Source: SourceEvents, To: first,
			Reason: "the events table begins at " + stamp(first) + " (event #1)"})
	}
	if r.Truncated {
		e.Gaps = append(
			e.Gaps,
			Gap{
				Kind:   GapDamaged,
				Source: SourceEvents,
				Reason: "the read stopped at its limit; later events were not read",
			},
		)
	}
	if !r.NamesSessions {
		e.SessionGaps = append(e.SessionGaps, Gap{Kind: GapLimit, Source: SourceEvents,
			Reason: "this DB's events record no session (the seed's events table is event_id, work_item_id, event_type, " +
				"message, created_at); an event counts for a session only when its message names it"})
	}
	e.setState(st)
}

// noteExpiry records a claim's or renewal's expiry on its lease span (from steward's
// detail_json), creating a span from the events alone when the lease row is absent.
func (e *Evidence) noteExpiry(ev leaserec.Event, en Entry) {
	if en.Lease == "" || (en.Kind != KindClaim && en.Kind != KindHeartbeat) {
		return
	}
	exp, ok := detailTime(ev.Detail, "expires_at")
	if !ok || en.At.IsZero() {
		return
	}
	e.expiries = append(e.expiries, leaseExpiry{lease: en.Lease, mark: ExpiryMark{At: en.At, Expires: exp}})
}

type leaseExpiry struct {
	lease string
	mark  ExpiryMark
}

func detailTime(d map[string]any, k string) (time.Time, bool) {
	s, ok := d[k].(string)
	if !ok {
		return time.Time{}, false
	}
	ts := leaserec.ParseTimestamp(s)
	return ts.Time.UTC(), ts.OK()
}

func detailString(d map[string]any, k string) string {
	s, _ := d[k].(string)
	return s
}

// eventKinds maps the control-plane event types steward knows.
var eventKinds = map[string]Kind{
	"lease.claim": KindClaim, "lease.renew": KindHeartbeat, "lease.release": KindRelease,
	"claim.refused": KindRefused, "lease.reclaim": KindReclaim, "lease.abandon": kindAbandon,
	"lease.expire": kindExpire,
}

func eventEntry(ev leaserec.Event, items map[int64]Item) Entry {
	en := Entry{Source: SourceEvents, Ref: fmt.Sprintf("events#%d", ev.EventID), Kind: kindEvent,
		Item: items[ev.WorkItemID], Session: ev.SessionID, Text: clean(ev.EventType + ": " + ev.Message)}
	if ev.CreatedAt.OK() {
		en.At = ev.CreatedAt.Time.UTC()
	}
	if k, ok := eventKinds[ev.EventType]; ok {
		en.Kind = k
	}
	if en.Session == "" {
		// A session_id-less table: steward names the session at the message's end.
		if i := strings.LastIndex(ev.Message, " [session "); i >= 0 && strings.HasSuffix(ev.Message, "]") {
			en.Session = ev.Message[i+len(" [session ") : len(ev.Message)-1]
		}
	}
	d := ev.Detail
	en.Lease = detailString(d, "lease_id")
	en.Attempt = detailString(d, leaserec.DetailAttempt)
	switch en.Kind {
	case KindRefused:
		en.Code = detailString(d, "reason")
		en.Holder = detailString(d, "holding_session_id")
		if s := detailString(d, "requesting_session_id"); s != "" {
			en.Session = s
		}
		if en.Lease == "" {
			en.Lease = detailString(d, "holding_lease_id")
		}
	case KindReclaim, kindAbandon:
		// The event's session is who acted; the lease's holder is in the detail.
		if h := detailString(d, "holding_session_id"); h != "" {
			en.Actor, en.Session = en.Session, h
		}
	}
	return en
}

// AddLeases adds the lease rows (every lease the DB holds, whatever its status).
func (e *Evidence) AddLeases(ls []leaserec.Lease, items map[int64]Item, h leaserec.Health) {
	st := SourceState{Source: SourceLeases, Read: h.Status != leaserec.HealthUnavailable}
	if !st.Read {
		st.Reason = strings.Join(h.Reasons, "; ")
		e.setState(st)
		e.Gaps = append(e.Gaps, Gap{Kind: GapUnread, Source: SourceLeases, Reason: "unreadable: " + st.Reason})
		return
	}
	if h.Status == leaserec.HealthDegraded {
		st.Reason = "partly read: " + strings.Join(h.Reasons, "; ")
		e.Gaps = append(e.Gaps, Gap{Kind: GapDamaged, Source: SourceLeases, Reason: st.Reason})
	}
	e.Gaps = append(e.Gaps, columnGaps(h)...)
	beats := false
	for i := range ls {
		l := &ls[i]
		sp := LeaseSpan{Lease: l.LeaseID, Session: l.SessionID, Role: l.Role, Status: l.StatusText(),
			Reason: l.EndReason, Source: SourceLeases, Item: items[l.WorkItemID]}
		if sp.Item.Zero() && l.Work.Number != 0 {
			sp.Item = Item{Org: l.Work.Org, Repo: l.Work.Repo, Number: l.Work.Number}
		}
		if l.CreatedAt.OK() {
			sp.Start = l.CreatedAt.Time.UTC()
			if st.From.IsZero() || sp.Start.Before(st.From) {
				st.From = sp.Start
			}
		}
		if l.ExpiresAt.OK() {
			sp.ExpiresAt = l.ExpiresAt.Time.UTC()
		}
		if !l.Status.Active() && l.Status != "" {
			sp.Ended = true
			if l.ReleasedAt.OK() {
				sp.End = l.ReleasedAt.Time.UTC()
			} else {
				e.Gaps = append(e.Gaps, Gap{Kind: GapDamaged, Source: SourceLeases, From: sp.Start, Item: sp.Item,
					Reason: "lease " + l.LeaseID + " is " + l.StatusText() + " but records no end time: when it ended is unknown"})
			}
		}
		if sp.Start.IsZero() {
			e.Gaps = append(e.Gaps, Gap{Kind: GapDamaged, Source: SourceLeases, Item: sp.Item,
				Reason: "lease " + l.LeaseID + " records no usable created_at: when it began is unknown"})
		}
		if sp.Session == "" {
			e.Gaps = append(e.Gaps, Gap{Kind: GapDamaged, Source: SourceLeases, Item: sp.Item,
				Reason: "lease " + l.LeaseID + " records no session_id: who held it is unknown"})
		}
		e.Leases = append(e.Leases, sp)
		e.rows = append(e.rows, rowEntries(l, sp)...)
		e.sorted = false
		beats = beats || l.HeartbeatCount > 1
	}
	if beats {
		e.Gaps = append(
			e.Gaps,
			Gap{Kind: GapLimit, Source: SourceLeases, Reason: "a lease row keeps only its last heartbeat " +
				"(last_heartbeat_at, heartbeat_count): earlier heartbeats are known only where a lease.renew event recorded them"},
		)
	}
	st.Entries = len(ls)
	e.setState(st)
}

// AuditRecord is one record of steward's audit log, as history needs it (history does not
// import govern; gather converts govern.Record).
type AuditRecord struct {
	At      time.Time
	Attempt string
	Kind    string // intent, outcome, resolution
	Action  string
	Item    Item
	Lease   string
	// LockFile is the lock file the attempt names (a retire, a restore).
	LockFile string
	// Session is the worker session the attempt is about: the acting worker's, or the
	// session a claim names.
	Session    string
	Actor      string // login, else os_user@host
	Role       string
	Result     string
	Code       string
	Message    string
	ResolvedBy string
}

// AuditFinding is a line of the audit log that could not be read.
type AuditFinding struct {
	Line   int
	Reason string
}

// AddAudit adds steward's audit log: one entry per attempt (at its intent, carrying its
// result as the log tells it now) and one per resolution. Undecodable lines are gaps.
func (e *Evidence) AddAudit(recs []AuditRecord, finds []AuditFinding, err error) {
	if err != nil {
		e.Unread(SourceAudit, err.Error())
		return
	}
	st := SourceState{Source: SourceAudit, Read: true}
	type att struct {
		first, intent, outcome *AuditRecord
		outcomes               int
	}
	byID := map[string]*att{}
	var order []string
	for i := range recs {
		r := &recs[i]
		a := byID[r.Attempt]
		if a == nil {
			a = &att{first: r}
			byID[r.Attempt] = a
			order = append(order, r.Attempt)
		}
		switch r.Kind {
		case "intent":
			a.intent = r
		case "outcome":
			a.outcomes++
			if a.outcome == nil {
				a.outcome = r
			}
		case "resolution":
			e.add(Entry{At: r.At, Source: SourceAudit, Ref: "audit:" + r.Attempt + "/resolution", Kind: KindAttempt,
				Item: r.Item, Session: r.Session, Actor: r.Actor, Lease: r.Lease, Attempt: r.Attempt, Result: r.Result,
				Text: clean(
					r.Action + " resolved as " + r.Result + " by " + r.ResolvedBy + " (" + r.Actor + ")" + msgSuffix(
						r.Message,
					),
				)})
		}
		if !r.At.IsZero() && (st.From.IsZero() || r.At.Before(st.From)) {
			st.From = r.At
		}
	}
	for _, id := range order {
		a := byID[id]
		base := a.first
		if a.intent != nil {
			base = a.intent
		}
		if base.Kind == "resolution" && a.intent == nil && a.outcome == nil {
			continue
		}
		res, code, msg := "unknown", "", ""
		note := ""
		if a.outcome != nil {
			res, code, msg = a.outcome.Result, a.outcome.Code, a.outcome.Message
		} else {
			note = " (no outcome recorded: in flight or interrupted)"
		}
		if a.intent == nil {
			note = " (its intent record is missing)"
		}
		text := base.Action + " " + res
		if code != "" {
			text += " [" + code + "]"
		}
		e.add(Entry{At: base.At, Source: SourceAudit, Ref: "audit:" + id, Kind: KindAttempt, Item: base.Item,
			Session: base.Session, Actor: base.Actor, Lease: firstNonEmpty(base.Lease, leaseOf(a.outcome)),
			Lock: base.LockFile, Attempt: id,
			Result: res, Code: code, Text: clean(text + note + msgSuffix(msg))})
	}
	for _, f := range finds {
		e.Gaps = append(
			e.Gaps,
			Gap{
				Kind:   GapDamaged,
				Source: SourceAudit,
				Reason: fmt.Sprintf(
					"line %d is unreadable (%s): what it recorded, and when, is unknown",
					f.Line,
					f.Reason,
				),
			},
		)
	}
	if len(recs) == 0 {
		e.Gaps = append(
			e.Gaps,
			Gap{
				Kind:   GapBegins,
				Source: SourceAudit,
				Reason: "the audit log holds no record (steward has not acted on this workspace, or the log is not this " +
					"workspace's)",
			},
		)
	} else {
		e.Gaps = append(e.Gaps, Gap{Kind: GapBegins, Source: SourceAudit, To: st.From, Reason: "steward's audit log " +
			"begins at " + stamp(st.From)})
	}
	st.Entries = len(order)
	e.setState(st)
}

func leaseOf(r *AuditRecord) string {
	if r == nil {
		return ""
	}
	return r.Lease
}

func msgSuffix(m string) string {
	if m == "" {
		return ""
	}
	return ": " + m
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// AddLocks adds the lock directory: every live lock (its current generation) and every
// archived generation under retired/ (read with locks.LoadOptions{Retired: true}).
func (e *Evidence) AddLocks(s *lockrec.Snapshot, err error) {
	if err != nil {
		e.Unread(SourceLocks, err.Error())
		return
	}
	st := SourceState{Source: SourceLocks, Read: true}
	if s.RetiredUnavailable != nil {
		st.Reason = "retired/ unreadable: " + s.RetiredUnavailable.Detail
		e.Gaps = append(
			e.Gaps,
			Gap{
				Kind:   GapUnread,
				Source: SourceLocks,
				Reason: "the archived generations under retired/ could not be read (" +
					s.RetiredUnavailable.Detail + "): released and retired locks are unknown",
			},
		)
	}
	for _, en := range slices.Concat(s.Live, s.Retired) {
		if en.Unreadable != nil || !en.HasKey {
			why := "no issue_number"
			if en.Unreadable != nil {
				why = string(en.Unreadable.Reason)
				if en.Unreadable.Detail != "" {
					why += ": " + en.Unreadable.Detail
				}
			}
			e.Gaps = append(
				e.Gaps,
				Gap{
					Kind:   GapDamaged,
					Source: SourceLocks,
					Reason: "lock file " + clean(
						en.Name,
					) + " is unreadable (" + clean(
						why,
					) + "): the generation it held is unknown",
				},
			)
			continue
		}
		rec := en.Record
		sp := LockSpan{File: en.Name, Item: Item{Org: en.Key.Org, Repo: en.Key.Repo, Number: en.Key.Issue},
			Session: rec.OwnerSession, Generation: rec.Generation(), Live: en.Class != lockrec.ClassRetired, LiveName: en.Name}
		if wl := rec.WorkLease; wl != nil {
			if wl.CreatedAt.Valid {
				sp.Start = wl.CreatedAt.Time.UTC()
			}
			if wl.ExpiresAt.Valid {
				sp.ExpiresAt = wl.ExpiresAt.Time.UTC()
			}
			if wl.Claimant != nil {
				sp.Claimant = wl.Claimant.Username
			}
			if sp.Session == "" {
				sp.Session = wl.TaskSessionID
			}
		}
		if !sp.Live {
			if b, ok := rec.Recovery(); ok {
				if t := lockrec.ParseTimestamp(b.ArchivedAt); t.Valid {
					sp.End = t.Time.UTC()
				}
				sp.ArchivedBy, sp.LiveName = b.Action, b.LiveName
				if b.AuditAttemptID != "" {
					sp.ArchivedBy += " (audit " + b.AuditAttemptID + ")"
				}
			}
			if sp.End.IsZero() {
				e.Gaps = append(
					e.Gaps,
					Gap{
						Kind:   GapDamaged,
						Source: SourceLocks,
						Item:   sp.Item,
						Reason: "archive " + clean(
							en.Name,
						) + " records no archived_at: when that generation ended is unknown",
					},
				)
			}
		}
		if !sp.Start.IsZero() && (st.From.IsZero() || sp.Start.Before(st.From)) {
			st.From = sp.Start
		}
		e.Locks = append(e.Locks, sp)
		who := firstNonEmpty(sp.Session, sp.Claimant, "an unnamed owner")
		e.add(
			Entry{
				At:      sp.Start,
				Source:  SourceLocks,
				Ref:     "locks:" + en.Name,
				Kind:    KindLock,
				Item:    sp.Item,
				Session: sp.Session,
				Actor:   sp.Claimant,
				Text: clean(
					fmt.Sprintf(
						"lock taken by %s (generation %d now %s)",
						who,
						sp.Generation,
						map[bool]string{true: "live", false: "archived"}[sp.Live],
					),
				),
			},
		)
		if !sp.Live && !sp.End.IsZero() {
			e.add(
				Entry{
					At:      sp.End,
					Source:  SourceLocks,
					Ref:     "locks:" + en.Name + "/archived",
					Kind:    KindLock,
					Item:    sp.Item,
					Session: sp.Session,
					Text: clean(
						fmt.Sprintf(
							"lock generation %d archived to retired/ by %s",
							sp.Generation,
							firstNonEmpty(sp.ArchivedBy, "an unnamed action"),
						),
					),
				},
			)
		}
	}
	e.Gaps = append(e.Gaps, Gap{Kind: GapLimit, Source: SourceLocks,
		Reason: "a lock file's heartbeats rewrite it in place and leave no archive, and a worker that deletes its own " +
			"lock leaves none either: lock evidence shows a generation's start and archive, not every heartbeat or end"})
	st.Entries = len(s.Live) + len(s.Retired)
	e.setState(st)
}

// AddThread adds one item's Gitea comments and label events.
func (e *Evidence) AddThread(it Item, th gitearec.Thread) {
	st := e.State(SourceGitea)
	st.Read = true
	st.Reason = ""
	for _, c := range th.Comments {
		first, _, _ := strings.Cut(strings.TrimSpace(c.Body), "\n")
		if m, ok := gitearec.TrailingMark(c.Body); ok {
			first += " [steward " + m.Kind + "]"
		}
		e.add(
			Entry{
				At:     c.CreatedAt.UTC(),
				Source: SourceGitea,
				Ref:    fmt.Sprintf("gitea:comment/%d", c.ID),
				Kind:   kindComment,
				Item:   it,
				Actor:  c.Author,
				Text:   clean("comment by " + c.Author + ": " + first),
			},
		)
		st.Entries++
		if st.From.IsZero() || c.CreatedAt.Before(st.From) {
			st.From = c.CreatedAt.UTC()
		}
	}
	for _, l := range th.Labels {
		verb := "removed"
		if l.Added {
			verb = "added"
		}
		e.add(Entry{At: l.At.UTC(), Source: SourceGitea, Ref: fmt.Sprintf("gitea:label/%d", l.ID), Kind: kindLabel,
			Item: it, Actor: l.By, Text: clean("label " + l.Label + " " + verb + " by " + l.By)})
		st.Entries++
	}
	e.setState(st)
}

// clean makes an external string one safe line.
func clean(s string) string {
	s = termsafe.Line(s)
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}
