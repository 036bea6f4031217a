package model

import (
	"container/heap"
	"slices"
	"strconv"
	"strings"
	"time"

	"steward/leases/leaserec"
)

// unit is one item (or one file or lease that names no item) and the keys of
// what it contributed to the sorted output lists.
type unit struct {
	key  string
	item *Item
	// alias is the item's key without its remote (aliasKey), "" for no item.
	alias   string
	locks   set
	leases  set
	refused []refusal
	next    time.Time
	keys    [4][]string // claims, orphans, contention, items
}

func (u *unit) empty() bool {
	return u.locks.len() == 0 && u.leases.len() == 0 && len(u.refused) == 0
}

// Engine is Build kept current: it holds the sources as read, indexed by file
// name, lease id, session and item, and the derived output kept sorted; a
// change re-derives only the units it touches. Build runs one over an Input;
// the live model (model/live) feeds one what its watchers re-read and
// publishes its snapshots. It does no IO and reads no clock: every method that
// derives takes now. It is not safe for concurrent use.
type Engine struct {
	env        env
	clock      Clock // the clock the snapshots are judged at (SetClock)
	locks      map[string]*LockObs
	lockUnit   map[string]string
	leases     map[string]*LeaseObs
	leaseUnit  map[string]string
	refs       map[string]*LeaseObs
	refUnits   map[string]set  // lease id → units whose locks name it
	refPending map[string]bool // lease ids locks name that neither leases nor refs hold: look up
	itemLeases map[int64]set   // work_item_id → lease ids held
	sessions   map[string]*SessionObs
	sessLeases map[string]set
	workItems  map[int64]Item
	units      map[string]*unit
	branches   map[string]set // lock branch_name → lock names
	heads      map[string]set // PR head branch → unit keys
	facts      map[string]*GiteaFact
	clar       map[string]bool
	clarList   []Clarification
	// gitea is Gitea's last read as given (SetGitea, SetHealth): its facts are filed under
	// the remote env.remote settles (applyGitea), again whenever that changes.
	gitea struct {
		facts  []GiteaFact
		clars  []Clarification
		health SourceHealth
	}
	// wiRemotes and lockRemotes count the remotes the work items and the live lock files
	// of the configured repository name (resolveRemote).
	wiRemotes, lockRemotes remoteCount
	// aliases: an item's key without its remote → the units of that item under any remote.
	aliases    map[string]set
	claims     sorted[Claim]
	orphans    sorted[Orphan]
	contention sorted[Contention]
	items      sorted[ItemState]
	sessOut    sorted[Session]
	sessKeys   map[string][]string
	// sessionsOmitted counts the ended sessions the last full DB read left out.
	sessionsOmitted int
	activity        []Event
	// activityNew is set when events were added since the last publish: an event-only
	// commit (a foreign writer's, e.g. the supervised system's own) changes no row an item
	// derives from, yet the Activity view must show it.
	activityNew bool
	findings    []string
	dl          deadlines
	dirty       map[string]bool // unit keys to derive again at the next Flush
	dirtySess   map[string]bool // session ids to derive again (a set of its own: no unit key can pass for one)
}

// NewEngine returns an empty engine classifying with cfg.
func NewEngine(cfg Config) *Engine {
	e := &Engine{env: env{cfg: cfg.WithDefaults()}, clock: Clock{Source: ClockHost},
		locks: map[string]*LockObs{}, lockUnit: map[string]string{}, leases: map[string]*LeaseObs{},
		leaseUnit: map[string]string{}, refs: map[string]*LeaseObs{}, refUnits: map[string]set{},
		refPending: map[string]bool{}, itemLeases: map[int64]set{},
		sessions: map[string]*SessionObs{}, sessLeases: map[string]set{}, workItems: map[int64]Item{},
		units: map[string]*unit{}, branches: map[string]set{}, heads: map[string]set{},
		facts: map[string]*GiteaFact{}, clar: map[string]bool{}, sessKeys: map[string][]string{}, dirty: map[string]bool{},
		dirtySess: map[string]bool{},
		wiRemotes: remoteCount{}, lockRemotes: remoteCount{}, aliases: map[string]set{}}
	e.env.remote = e.resolveRemote()
	return e
}

func addTo[K comparable](m map[K]set, k K, v string) {
	s := m[k]
	s.add(v)
	m[k] = s
}

func delFrom[K comparable](m map[K]set, k K, v string) {
	if s, ok := m[k]; ok {
		s.del(v)
		if s.len() == 0 {
			delete(m, k)
		} else {
			m[k] = s
		}
	}
}

func (e *Engine) unitFor(key string, it *Item) *unit {
	u := e.units[key]
	if u == nil {
		u = &unit{key: key}
		e.units[key] = u
	}
	if u.item == nil && it != nil {
		u.item, u.alias = it, aliasKey(it)
		addTo(e.aliases, u.alias, key)
	}
	return u
}

func lockUnitKey(lo *LockObs) (string, *Item) {
	if lo.Entry.HasKey && lo.Entry.Unreadable == nil {
		it := itemOfKey(lo.Entry.Key)
		return it.key(), it
	}
	return "file\x00" + lo.Entry.Name, nil
}

func leaseUnitKey(lo *LeaseObs) (string, *Item) {
	if it := itemOfRef(lo.Lease.Work); it != nil {
		return it.key(), it
	}
	return "lease\x00" + lo.Lease.LeaseID, nil
}

// SetLock records a lock file's new state (nil: it is gone).
func (e *Engine) SetLock(name string, lo *LockObs) {
	if old, ok := e.locks[name]; ok {
		k := e.lockUnit[name]
		e.units[k].locks.del(name)
		e.dirty[k] = true
		id := old.Entry.Record.LeaseID
		delFrom(e.refUnits, id, k)
		if _, named := e.refUnits[id]; !named && (lo == nil || lo.Entry.Record.LeaseID != id) {
			// No lock names the lease any more: forget what was looked up for it (a
			// long-running model kept one entry per lease any lock ever named).
			delete(e.refs, id)
			delete(e.refPending, id)
		}
		e.setBranch(old.Entry.Record.BranchName, name, false)
		delete(e.locks, name)
		delete(e.lockUnit, name)
		e.countLock(old, -1)
	}
	if lo == nil || !e.env.locksObserved() {
		return // a lock directory on another host is not observed: no lock is concluded
	}
	e.countLock(lo, 1)
	k, it := lockUnitKey(lo)
	e.unitFor(k, it).locks.add(name)
	e.locks[name], e.lockUnit[name] = lo, k
	e.dirty[k] = true
	if id := lo.Entry.Record.LeaseID; id != "" && lo.Entry.Unreadable == nil {
		addTo(e.refUnits, id, k)
		if _, ok := e.leases[id]; !ok {
			if _, ok := e.refs[id]; !ok {
				e.refPending[id] = true
			}
		}
	}
	if lo.Entry.Unreadable == nil {
		e.setBranch(lo.Entry.Record.BranchName, name, true)
	}
}

func (e *Engine) setBranch(branch, name string, add bool) {
	if branch == "" {
		return
	}
	if add {
		addTo(e.branches, branch, name)
	} else {
		delFrom(e.branches, branch, name)
	}
	for k := range e.heads[branch].all() {
		e.dirty[k] = true
	}
}

// SetLease records a lease row's new state (nil: it left the read set).
func (e *Engine) SetLease(id string, lo *LeaseObs) {
	if old, ok := e.leases[id]; ok {
		k := e.leaseUnit[id]
		e.units[k].leases.del(id)
		e.dirty[k] = true
		delFrom(e.sessLeases, old.Lease.SessionID, id)
		e.sessionDirty(old.Lease.SessionID)
		delFrom(e.itemLeases, old.Lease.WorkItemID, id)
		delete(e.leases, id)
		delete(e.leaseUnit, id)
		if lo == nil && e.refUnits[id].len() > 0 {
			e.refPending[id] = true // locks still name it: read it back by id
		}
	}
	for k := range e.refUnits[id].all() {
		e.dirty[k] = true
	}
	if lo == nil {
		return
	}
	k, it := leaseUnitKey(lo)
	e.unitFor(k, it).leases.add(id)
	e.leases[id], e.leaseUnit[id] = lo, k
	e.dirty[k] = true
	addTo(e.sessLeases, lo.Lease.SessionID, id)
	e.sessionDirty(lo.Lease.SessionID)
	addTo(e.itemLeases, lo.Lease.WorkItemID, id)
}

func (e *Engine) sessionDirty(id string) { e.dirtySess[id] = true }

// SetSession records a session row's new state (nil: gone).
func (e *Engine) SetSession(id string, so *SessionObs) {
	if so == nil {
		delete(e.sessions, id)
	} else {
		e.sessions[id] = so
	}
	e.sessionDirty(id)
	for l := range e.sessLeases[id].all() {
		e.dirty[e.leaseUnit[l]] = true
	}
}

// AddEvents takes control-plane events past the cursor: refused claims for
// contention, every event for Activity.
func (e *Engine) AddEvents(evs []leaserec.Event) {
	if len(evs) > 0 {
		e.activityNew = true
	}
	for _, x := range evs {
		it, ok := e.workItems[x.WorkItemID]
		var ip *Item
		if ok {
			ip = &it
		}
		e.activity = append(
			e.activity,
			Event{Key: "cp:" + strconv.FormatInt(x.EventID, 10), EventID: x.EventID, Type: x.EventType,
				Item: ip, SessionID: x.SessionID, Message: x.Message, At: x.CreatedAt.Time, Detail: x.Detail},
		)
		if x.EventType != "claim.refused" {
			continue
		}
		k := "wi\x00" + strconv.FormatInt(x.WorkItemID, 10)
		if ip != nil {
			k = ip.key()
		}
		u := e.unitFor(k, ip)
		req, _ := x.Detail["requesting_session_id"].(string)
		hold, _ := x.Detail["holding_session_id"].(string)
		if req == "" {
			req = x.SessionID
		}
		u.refused = append(u.refused, refusal{at: x.CreatedAt.Time, requesting: req, holding: hold, eventID: x.EventID})
		if len(u.refused) > 1000 {
			u.refused = u.refused[len(u.refused)-1000:]
		}
		e.dirty[k] = true
	}
	if n := e.env.cfg.ActivityLimit; len(e.activity) > 2*n {
		e.activity = append([]Event(nil), e.activity[len(e.activity)-n:]...)
	}
}

// setGitea replaces every Gitea fact (a poll) and files them (applyGitea).
func (e *Engine) setGitea(facts []GiteaFact, clars []Clarification, h SourceHealth) {
	e.gitea.facts, e.gitea.clars, e.gitea.health = facts, clars, h
	e.applyGitea()
}

// applyGitea files Gitea's last read under the remote env.remote settles: a fact or
// clarification that names no remote takes it. When the records name several remotes and
// none is configured, nothing of Gitea's is joined with an item (the clarifications are
// still listed) and the source reads degraded and partial, saying why.
func (e *Engine) applyGitea() {
	for k := range e.facts {
		e.dirty[k] = true
	}
	for k := range e.clar {
		e.dirty[k] = true
	}
	e.facts, e.clar, e.heads = map[string]*GiteaFact{}, map[string]bool{}, map[string]set{}
	r := e.env.remote
	ambiguous := r.How == remoteAmbiguous
	file := func(it *Item) bool {
		if it.Remote != "" {
			return true
		}
		it.Remote = r.Remote
		return !ambiguous
	}
	facts := slices.Clone(e.gitea.facts)
	for i := range facts {
		f := &facts[i]
		if !file(&f.Item) {
			continue
		}
		it := f.Item
		k := it.key()
		e.unitFor(k, &it)
		e.facts[k] = f
		e.dirty[k] = true
		if f.HeadBranch != "" {
			addTo(e.heads, f.HeadBranch, k)
		}
	}
	clars := slices.Clone(e.gitea.clars)
	for i := range clars {
		c := &clars[i]
		if !file(&c.Item) {
			continue
		}
		k := c.Item.key()
		it := c.Item
		e.unitFor(k, &it)
		e.clar[k] = true
		e.dirty[k] = true
	}
	e.clarList = clars
	h := e.gitea.health
	if note, finding := e.remoteNote(); note != "" || finding != "" {
		h.Notes = slices.Clone(h.Notes)
		if note != "" {
			h.Notes = append(h.Notes, note)
		}
		if finding != "" {
			h.Status, h.Partial = StatusDegraded, true
			h.Reason = strings.TrimPrefix(h.Reason+"; "+finding, "; ")
		}
	}
	e.setHealth(&e.env.gitea, h)
}

// setHealth changes a source's health; when its usability changes every unit
// is re-derived (honesty rules depend on it).
func (e *Engine) setHealth(dst *SourceHealth, h SourceHealth) {
	changed := dst.Status != h.Status || dst.Partial != h.Partial
	*dst = h
	if changed {
		for k := range e.units {
			e.dirty[k] = true
		}
	}
}

func (e *Engine) SetSections(s DBSections) {
	if s != e.env.sect {
		e.env.sect = s
		for k := range e.units {
			e.dirty[k] = true
		}
	}
}

// unitIn gathers what unit u's derivation reads.
func (e *Engine) unitIn(u *unit) *unitIn {
	in := &unitIn{item: u.item, refused: u.refused, fact: e.facts[u.key], clarified: e.clar[u.key],
		sessions: map[string]*SessionObs{}, refs: map[string]refLease{}}
	for _, n := range u.locks.sorted() {
		lo := e.locks[n]
		in.locks = append(in.locks, lo)
		if id := lo.Entry.Record.LeaseID; id != "" && !u.leases.has(id) {
			if l, ok := e.leases[id]; ok {
				in.refs[id] = refLease{obs: l, known: true}
			} else if l, ok := e.refs[id]; ok {
				in.refs[id] = refLease{obs: l, known: true}
			}
		}
	}
	for _, id := range u.leases.sorted() {
		lo := e.leases[id]
		in.leases = append(in.leases, lo)
		if s, ok := e.sessions[lo.Lease.SessionID]; ok {
			in.sessions[lo.Lease.SessionID] = s
		}
	}
	if in.fact != nil && in.fact.HeadBranch != "" {
		in.branchClaimed = e.branches[in.fact.HeadBranch].len() > 0
	}
	if u.alias != "" {
		for a := range e.aliases[u.alias].all() {
			if o := e.units[a]; a != u.key && o != nil && o.item != nil && e.unitClaimed(o) {
				in.claimedAs = append(in.claimedAs, *o.item)
			}
		}
	}
	return in
}

// unitClaimed reports whether a non-terminal lease or a readable live lock holds u.
func (e *Engine) unitClaimed(u *unit) bool {
	for id := range u.leases.all() {
		if lo := e.leases[id]; lo != nil && leaseActive(&lo.Lease) {
			return true
		}
	}
	for n := range u.locks.all() {
		if lo := e.locks[n]; lo != nil && lo.Entry.Unreadable == nil {
			return true
		}
	}
	return false
}

// Flush re-derives every dirty unit and session at now.
func (e *Engine) Flush(now time.Time) int {
	n := 0
	if d := len(e.dirty) + len(e.dirtySess); d > 64 && d > len(e.units)/16 {
		e.claims.begin()
		e.orphans.begin()
		e.contention.begin()
		e.items.begin()
		e.sessOut.begin()
		defer func() {
			e.claims.end()
			e.orphans.end()
			e.contention.end()
			e.items.end()
			e.sessOut.end()
		}()
	}
	// An item's units under other remote names read whether it is claimed there (a
	// Gitea item is not free while a lock or lease holds the same number under another
	// remote): they are derived again with it.
	for k := range e.dirty {
		if u := e.units[k]; u != nil && u.alias != "" {
			for a := range e.aliases[u.alias].all() {
				e.dirty[a] = true
			}
		}
	}
	for id := range e.dirtySess {
		delete(e.dirtySess, id)
		n++
		e.deriveSession(id, now)
	}
	for k := range e.dirty {
		delete(e.dirty, k)
		n++
		u := e.units[k]
		if u == nil {
			continue
		}
		var out unitOut
		if u.empty() && e.facts[k] == nil && !e.clar[k] {
			delete(e.units, k)
			if u.alias != "" {
				delFrom(e.aliases, u.alias, k)
			}
		} else {
			out = derive(e.unitIn(u), &e.env, now)
		}
		u.keys[0] = e.claims.replace(u.keys[0], k, out.claims)
		u.keys[1] = e.orphans.replace(u.keys[1], k, out.orphans)
		u.keys[2] = e.contention.replace(u.keys[2], k, out.contention)
		var its []*ItemState
		if out.item != nil {
			its = []*ItemState{out.item}
		}
		u.keys[3] = e.items.replace(u.keys[3], k, its)
		u.next = out.next
		if !out.next.IsZero() {
			heap.Push(&e.dl, deadline{at: out.next, key: k})
		}
	}
	return n
}

// Publish returns the current output as a new immutable snapshot.
func (e *Engine) Publish(now time.Time) *Snapshot {
	e.activityNew = false
	s := &Snapshot{
		GeneratedAt:    now,
		Clock:          e.clock,
		Sources:        Sources{Locks: e.env.locks, DB: e.env.db, Gitea: e.env.gitea},
		Claims:         e.claims.snapshot(),
		Orphans:        e.orphans.snapshot(),
		Contention:     e.contention.snapshot(),
		Items:          e.items.snapshot(),
		Sessions:       e.sessOut.snapshot(),
		Clarifications: append([]Clarification{}, e.clarList...),
		Findings: append(
			[]string(nil),
			e.findings...),
		SessionsOmitted: e.sessionsOmitted,
		ItemsInventory:  e.itemsInventory(),
	}
	if _, finding := e.remoteNote(); finding != "" {
		s.Findings = append(s.Findings, finding)
	}
	n := e.env.cfg.ActivityLimit
	act := e.activity
	if len(act) > n {
		act = act[len(act)-n:]
	}
	s.Activity = make([]Event, len(act))
	for i := range act {
		s.Activity[i] = act[len(act)-1-i] // newest first
	}
	return s
}
