package history

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Source names where an entry's evidence comes from.
type Source string

// The sources, in the order an entry of one instant sorts (the DB's own record first).
const (
	SourceEvents Source = "events" // the control-plane events table
	SourceLeases Source = "leases" // the control-plane lease rows
	SourceLocks  Source = "locks"  // live lock files and retired/ archives
	SourceAudit  Source = "audit"  // steward's audit log
	SourceGitea  Source = "gitea"  // the item's comments and label events
)

// sources lists every source in sort order.
var sources = []Source{SourceEvents, SourceLeases, SourceLocks, SourceAudit, SourceGitea}

func (s Source) rank() int {
	for i, x := range sources {
		if x == s {
			return i
		}
	}
	return len(sources)
}

// Kind says what an entry records.
type Kind string

// The kinds of entry.
const (
	KindClaim     Kind = "claim"     // a lease was taken
	KindHeartbeat Kind = "heartbeat" // a lease was renewed
	KindRelease   Kind = "release"   // a lease was released by its holder
	KindRefused   Kind = "refused"   // a claim was refused (contention)
	KindReclaim   Kind = "reclaim"   // an expired lease was reclaimed
	kindAbandon   Kind = "abandon"   // a stale lease was abandoned
	kindExpire    Kind = "expire"    // a lease was expired by a sweep
	KindAttempt   Kind = "attempt"   // a governed attempt of steward's (audit)
	KindLock      Kind = "lock"      // a lock generation (live, or archived under retired/)
	kindComment   Kind = "comment"   // a Gitea comment
	kindLabel     Kind = "label"     // a Gitea label added or removed
	kindEvent     Kind = "event"     // another control-plane event (a type steward does not know)
)

// Item names one issue or pull request. Org and repo compare case-insensitively, as the
// lock files and the DB compare them.
type Item struct {
	Org    string `json:"org"`
	Repo   string `json:"repo"`
	Number int64  `json:"number"`
}

// String is "org/repo#n".
func (i Item) String() string { return i.Org + "/" + i.Repo + "#" + strconv.FormatInt(i.Number, 10) }

// Zero reports whether the item names nothing.
func (i Item) Zero() bool { return i.Number == 0 && i.Org == "" && i.Repo == "" }

// Key is the item's identity: org and repo folded.
func (i Item) Key() Item {
	return Item{
		Org:    strings.ToLower(strings.TrimSpace(i.Org)),
		Repo:   strings.ToLower(strings.TrimSpace(i.Repo)),
		Number: i.Number,
	}
}

// Same reports whether two items are one.
func (i Item) Same(o Item) bool { return i.Key() == o.Key() }

// ParseItem reads "org/repo#n" (also "org/repo/n").
func ParseItem(s string) (Item, error) {
	s = strings.TrimSpace(s)
	path, num, ok := strings.Cut(s, "#")
	if !ok {
		if i := strings.LastIndexByte(s, '/'); i > 0 {
			path, num, ok = s[:i], s[i+1:], true
		}
	}
	org, repo, ok2 := strings.Cut(path, "/")
	n, err := strconv.ParseInt(num, 10, 64)
	if !ok || !ok2 || org == "" || repo == "" || strings.Contains(repo, "/") || err != nil || n <= 0 {
		return Item{}, fmt.Errorf("item %q: give it as ORG/REPO#N, e.g. acme/widgets#7", s)
	}
	return Item{Org: org, Repo: repo, Number: n}, nil
}

// Entry is one line of a timeline: one thing a source recorded, with where it came from.
type Entry struct {
	// At is when it happened as the source recorded it; zero when the source recorded no
	// usable time (such entries sort last and say "time unknown").
	At     time.Time `json:"at"`
	Source Source    `json:"source"`
	// Ref names the record in its source: "events#12", "audit:<attempt>",
	// "locks:retired/<file>", "gitea:comment/5" — enough to find it again.
	Ref  string `json:"ref"`
	Kind Kind   `json:"kind"`
	Item Item   `json:"item,omitzero"`
	// Session is the worker session the entry is about ("" when the source does not say).
	Session string `json:"session,omitempty"`
	// Actor is who acted when that is not the session (an operator, a Gitea login).
	Actor string `json:"actor,omitempty"`
	Lease string `json:"lease,omitempty"`
	// Lock is the live lock file name an attempt acted on.
	Lock string `json:"lock,omitempty"`
	// Attempt is the governed attempt that wrote it, when the source names one.
	Attempt string `json:"attempt,omitempty"`
	// Result is an audit attempt's outcome (succeeded, refused, failed, unknown).
	Result string `json:"result,omitempty"`
	// Code is a refusal's code.
	Code string `json:"code,omitempty"`
	Text string `json:"text"`
	// Holder is, for a refused claim, the session that held the item.
	Holder string `json:"holder,omitempty"`
}

// GapKind says why a gap is there.
type GapKind string

// The kinds of gap.
const (
	// GapUnread: the source could not be read (or was not, for this question).
	GapUnread GapKind = "unread"
	// GapDamaged: part of the source is unreadable or partly decodable.
	GapDamaged GapKind = "damaged"
	// GapNotRetained: the source lost what it held before a point (pruned).
	GapNotRetained GapKind = "not_retained"
	// GapBegins: the source began at a point; nothing of it exists before (not a loss).
	GapBegins GapKind = "begins"
	// GapLimit: the source never records this (a heartbeat's rewrite, a seed event's session).
	GapLimit GapKind = "limit"
)

// Lost reports whether the gap is a loss of evidence (unread or damaged), not a standing
// limit of the source or its beginning.
func (g Gap) Lost() bool { return g.Kind == GapUnread || g.Kind == GapDamaged }

// Gap is a stretch of time (or a question) one source cannot answer. A gap is shown, never
// filled in: "events before … were not retained" is not "nothing happened before …".
type Gap struct {
	Kind   GapKind `json:"kind"`
	Source Source  `json:"source"`
	// From and To bound the gap; a zero From reaches back without limit, a zero To up to
	// the time the evidence was read.
	From time.Time `json:"from,omitzero"`
	To   time.Time `json:"to,omitzero"`
	// Item, when set, limits the gap to one item.
	Item   Item   `json:"item,omitzero"`
	Reason string `json:"reason"`
}

// overlaps reports whether the gap touches [from, to] (zero bounds are open).
func (g Gap) overlaps(from, to time.Time) bool {
	if !to.IsZero() && !g.From.IsZero() && g.From.After(to) {
		return false
	}
	if !from.IsZero() && !g.To.IsZero() && g.To.Before(from) {
		return false
	}
	return true
}

// String says the gap in words.
func (g Gap) String() string {
	var when string
	switch {
	case g.From.IsZero() && g.To.IsZero():
		when = "at any time"
	case g.From.IsZero():
		when = "before " + stamp(g.To)
	case g.To.IsZero():
		when = "after " + stamp(g.From)
	default:
		when = stamp(g.From) + " – " + stamp(g.To)
	}
	s := string(g.Source) + ", " + when
	if !g.Item.Zero() {
		s += " (" + g.Item.String() + ")"
	}
	return s + ": " + g.Reason
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

// Stamp formats an instant the way history prints it.
func Stamp(t time.Time) string {
	if t.IsZero() {
		return "time unknown"
	}
	return stamp(t)
}
