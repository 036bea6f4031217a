package tui

import (
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"steward/govern"
	"steward/model"
)

// health is one source's state as the header and the pages draw it.
type health struct {
	Name      string // locks | db | gitea
	State     string // ok | degraded | unavailable | not_configured
	Reason    string
	ScannedAt time.Time
	Scan      time.Duration
	// Notes say what the read lacks without making it partial (the DB's missing enrichment
	// columns, for one), already safe.
	Notes []string
}

// ptrTo returns a pointer to a row of its own.
func ptrTo(r row) *row { return &r }

// usable reports whether the source answered at all.
func (h health) usable() bool { return h.State == "ok" || h.State == "degraded" }

// actionRef is an action the snapshot says applies to a row. Allowed/Refusal are the
// snapshot's hint; the dialog always shows the core's own preview.
type actionRef struct {
	Req     govern.Request
	Label   string
	Allowed *bool
	Refusal string
}

// section is one titled block of the detail pane.
type section struct {
	Title string
	Lines []string // already safe
	Raw   string   // preformatted (raw JSON), already safe
}

// row is one line of a list page, digested from the snapshot once per snapshot so that View
// only formats what is visible. Every string in it is already termsafe.
type row struct {
	// Key tells the row apart from every other row of its view; ID is the identity of what
	// it shows (its item, lease, lock or session), which the cursor, the detail and the
	// marks follow when the row's kind changes between snapshots.
	Key, ID   string
	Cells     []string
	w         []int  // the cells' widths, measured once (finish)
	Search    string // lower-case haystack for the filter
	Deadline  time.Time
	Heartbeat time.Time
	Since     time.Time
	Warn      time.Duration // time left below this is drawn as a warning
	SLA       time.Duration // age above this is drawn as overdue
	// SinceSeen: Since is when steward first saw the row's state, not a time its evidence
	// carries; the age is drawn as at least that ("≥4m").
	SinceSeen bool
	Count     int
	Class     string // attention class of an inbox row, result of an activity row
	Item      string // org/repo#n, for the item's timeline
	URL       string
	CopyID    string
	Title     string
	Markdown  string // a clarification's question
	Sections  []section
	// detail, when set, builds the detail sections at draw time (for the one row whose
	// detail is shown), aged against the snapshot's time; Sections is then unused.
	detail  func(at time.Time) []section
	Actions []actionRef
	Inspect string // why the row is inspect only
	// Next is the way out of a contention row (model.Resolution): what to do and whose job
	// it is; the inbox row, the action menu and the detail say it.
	Next     string
	ItemRef  *govern.Item
	LockFile string // the claim's lock file, whose raw JSON the detail pane loads
	// Unsettled is the audit attempt of the row whose outcome is unknown and not resolved
	// (Verify and Resolve by hand apply to it); nil for every other row.
	Unsettled *attemptRef
	// Recover is the row's item when one of its leases or locks has a sanctioned recovery
	// (the recover plan applies); nil otherwise.
	Recover *govern.Item
	// CopyWhat names CopyID for the note y leaves ("lease id", "attempt", …).
	CopyWhat string
	// Origin is where an inbox row comes from: its view and key there.
	Origin struct {
		page pageID
		key  string
	}
	// Rank orders rows by attention (lower first), then Urgent (earlier first).
	Rank   int
	Urgent time.Time
	// QuestionID is the Gitea comment a clarification's question is (the answer names it).
	QuestionID string
	// Asker is who asked a clarification: the Gitea account that posted it and, once the
	// audit log names it (data.attributeAsks), the worker session that asked.
	Asker asker
	// Workspace is, in the all view of a workbench over several workspaces, 1 + the index
	// of the workspace the row comes from; 0 elsewhere.
	Workspace int
}

// finish sets the row's identity (its key when none is given), its filter haystack from
// the cells and extra, and measures its cells.
func (r *row) finish(extra ...string) {
	if r.ID == "" {
		r.ID = r.Key
	}
	r.Search = haystack(append(append([]string{}, r.Cells...), extra...)...)
	r.w = make([]int, len(r.Cells))
	for i, c := range r.Cells {
		r.w[i] = ansi.StringWidth(c)
	}
}

// width is the width of cell i (measured by finish when it ran).
func (r *row) width(i int) int {
	if i < len(r.w) {
		return r.w[i]
	}
	return ansi.StringWidth(r.cell(i))
}

// cell is cell i's text, "" when the row has none.
func (r *row) cell(i int) string {
	if i < len(r.Cells) {
		return r.Cells[i]
	}
	return ""
}

// attemptRef names an audit attempt whose outcome is unknown, with what the resolve dialog
// shows of it. Every string is already termsafe.
type attemptRef struct {
	ID, Action, Target, Actor, Message string
	At                                 time.Time
}

// sections returns the row's detail sections, aged against the snapshot's time at.
func (r *row) sections(at time.Time) []section {
	if r.detail != nil {
		return r.detail(at)
	}
	return r.Sections
}

// event is one entry of the activity timeline.
type event struct {
	At                     time.Time
	Source, Kind, Actor    string
	Item, Session, Message string
	Result                 string
	// Target is what the event acted on, drawn in a cell (the item, else the lease, the
	// lock file, the session); TargetFull names every part.
	Target, TargetFull string
	Attempt            string
	// Ask is, for a clarification.ask attempt, who asked: the question's marker, the
	// worker session and its lease (steward's own record of the ask).
	Ask       asker
	Inverse   *govern.Request
	Unsettled *attemptRef // an audit attempt whose outcome is still unknown
	// Workspace names the event's workspace in the all view ("" elsewhere); wsIndex is 1 +
	// its index.
	Workspace string
	wsIndex   int
}

// data is everything the pages draw, digested from one snapshot (plus the audit log).
type data struct {
	Generated time.Time
	// Clock is the clock the snapshot was judged at: ages and countdowns are drawn at it.
	Clock   model.Clock
	Sources []health
	Counts  []count
	Inbox   []*row
	Rows    map[pageID][]*row
	Events  []event // snapshot events, newest first
	Buckets []count
	Loaded  bool
	routine int     // routine attention items, hidden from the inbox
	Routine []*row  // those items, shown with h
	Audit   []event // steward's own audit log, newest first
	merged  []event
	// AuditTotal and EventsTotal count the whole history when Audit and Events are its
	// newest part (0: unknown, or all of it is there).
	AuditTotal, EventsTotal int
	// heartbeatsFolded counts the heartbeat events folded into a count per item.
	heartbeatsFolded int
	// hints are, for the lists digested incrementally, what the table may reuse: each
	// cell's widest value, and which rows were carried over from the previous list.
	hints map[pageID]rowsHint
	// incidents are the dead workers' incidents: the inbox shows each as one row in place of
	// its parts' orphan rows.
	incidents []incident
}

// inboxRows is the overview's rows: the inbox, and the routine rows when routine is set.
func (d *data) inboxRows(routine bool) []*row {
	if !routine {
		return d.Inbox
	}
	return append(append(make([]*row, 0, len(d.Inbox)+len(d.Routine)), d.Inbox...), d.Routine...)
}

// timeline returns the snapshot's events and the audit log in one list, newest first.
func (d *data) timeline() []event { return d.merged }

// merge rebuilds the merged timeline after the events or the audit log changed, and names
// the sessions that asked the questions (attributeAsks).
func (d *data) merge() {
	defer d.attributeAsks()
	d.merged = append(append(make([]event, 0, len(d.Events)+len(d.Audit)), d.Events...), d.Audit...)
	slices.SortStableFunc(d.merged, func(a, b event) int {
		if a.At.IsZero() || b.At.IsZero() {
			return cmpTime(a.At, b.At)
		}
		return b.At.Compare(a.At)
	})
}

// count is a labelled number for the overview.
type count struct {
	Label string
	N     int
	Note  string
	Page  pageID // the view the number comes from (pageOverview: none)
}

// source returns the named source's health.
func (d *data) source(name string) health {
	for _, h := range d.Sources {
		if h.Name == name {
			return h
		}
	}
	return health{Name: name, State: "not_configured"}
}

func haystack(parts ...string) string { return strings.ToLower(strings.Join(parts, " ")) }

// down reports whether every source a page is built from is unusable: its count is unknown.
func (d *data) down(id pageID) bool {
	srcs := tabInfo[id].sources
	if len(srcs) == 0 {
		return false
	}
	for _, name := range srcs {
		if d.source(name).usable() {
			return false
		}
	}
	return true
}

// partial reports whether some source of a page is degraded or unusable (but not all).
func (d *data) partial(id pageID) bool {
	for _, name := range tabInfo[id].sources {
		if d.source(name).State != "ok" {
			return true
		}
	}
	return false
}
