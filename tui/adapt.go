package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"steward/gitea/gitearec"
	"steward/govern"
	"steward/govern/actionid"
	"steward/leases/leaserec"
	"steward/model"
	"steward/termsafe"
)

// digestCfg is what the digest needs besides the snapshot.
type digestCfg struct {
	policies leaserec.PolicySet
	sla      time.Duration
	itemURL  func(model.Item) string
	knows    func(action string) bool
	at       time.Time // the snapshot's generated_at, for evidence ages
	// cache, when set, keeps the rows of the previous digest by model pointer. One cache
	// serves one goroutine (Run's bridge has its own, the root another).
	cache *rowCache
}

// rowCache keeps digested rows by the model's pointers. Published snapshots are immutable
// and the live model keeps the pointer of every claim, orphan and session whose unit was not
// re-derived (model/sorted.go), so an unchanged entry digests to the same row: a change costs
// its own rows, and the lists are merged from the last digest's (digest_list.go) rather than
// rebuilt and sorted. Each digest keeps only the current snapshot's entries.
// A cached row holds nothing that depends on anything but its entry and the program's fixed
// configuration: a claim's actions (from the orphans) are added per digest, and the detail
// sections, whose evidence ages depend on the snapshot's time, are built when drawn.
type rowCache struct {
	claims   map[*model.Claim]*row
	orphans  map[*model.Orphan]*row
	sessions map[*model.Session]*row
	// The last digest's lists (digest_list.go), and the orphans' actions by lease id and
	// lock file it gave the claims.
	claimList   listState[*model.Claim]
	orphanList  listState[*model.Orphan]
	sessionList listState[*model.Session]
	orphansBy   map[string][]actionRef
}

func newRowCache() *rowCache {
	return &rowCache{
		claims:   map[*model.Claim]*row{},
		orphans:  map[*model.Orphan]*row{},
		sessions: map[*model.Session]*row{},
	}
}

// digest turns a snapshot into the pages' rows once, so that frames only format visible rows.
// Every external string passes through termsafe here.
func digest(s *model.Snapshot, cfg digestCfg) *data {
	if s == nil {
		return nil
	}
	d := &data{Loaded: true, Generated: s.GeneratedAt, Clock: s.Clock, Rows: map[pageID][]*row{}}
	cfg.at = s.GeneratedAt
	d.Sources = []health{
		healthOf("locks", s.Sources.Locks), healthOf("db", s.Sources.DB), healthOf("gitea", s.Sources.Gitea),
	}
	cache := cfg.cache
	if cache == nil {
		cache = newRowCache() // uncached: a fresh cache each time
	}
	d.Rows[pageOrphans], _, _ = digestList(
		&cache.orphanList,
		&cache.orphans,
		s.Orphans,
		func(o *model.Orphan) row { return orphanRow(o, cfg) },
	)
	orphansBy := map[string][]actionRef{}
	for _, o := range s.Orphans {
		for _, k := range []string{o.LeaseID, o.LockFile} {
			if k != "" {
				orphansBy[k] = append(orphansBy[k], cache.orphans[o].Actions...)
			}
		}
	}
	d.Rows[pageClaims] = claimRows(cache, s, orphansBy, cfg)
	cache.orphansBy = orphansBy
	for _, c := range s.Contention {
		d.Rows[pageContention] = append(d.Rows[pageContention], ptrTo(contentionRow(c, cfg)))
	}
	for i := range s.Clarifications {
		d.Rows[pageClarifications] = append(d.Rows[pageClarifications], ptrTo(clarRow(&s.Clarifications[i], cfg)))
	}
	d.Rows[pageSessions], _, _ = digestList(&cache.sessionList, &cache.sessions, s.Sessions, sessionRow)
	d.hints = map[pageID]rowsHint{pageClaims: cache.claimList.hint(d.Rows[pageClaims]),
		pageOrphans: cache.orphanList.hint(d.Rows[pageOrphans]), pageSessions: cache.sessionList.hint(d.Rows[pageSessions])}
	for _, id := range []pageID{pageContention, pageClarifications} {
		byAttention(d.Rows[id])
	}
	for _, e := range s.Activity {
		it := itemStr(e.Item)
		d.Events = append(d.Events, event{At: e.At, Source: "db", Kind: line(e.Type), Item: it, Target: it, TargetFull: it,
			Session: cut(line(e.SessionID)), Message: cut(line(e.Message)), Attempt: cut(line(e.Key))})
	}
	c := s.Count()
	var sessNote string
	if s.SessionsOmitted > 0 {
		sessNote = fmt.Sprintf("%d older ended not listed", s.SessionsOmitted)
	}
	d.Counts = []count{
		{
			"claims",
			c.Claims,
			"",
			pageClaims,
		}, {"contention", c.Contention, fmt.Sprintf("%d collisions", c.Collisions), pageContention},
		{
			"clarifications",
			c.Clarifications,
			"",
			pageClarifications,
		}, {"orphans", c.Orphans, "", pageOrphans}, {"sessions", c.Sessions, sessNote, pageSessions},
	}
	for _, b := range []model.Bucket{model.BucketRunnable, model.BucketLeased, model.BucketBlocked,
		model.BucketNeedsController, model.BucketTerminalComplete, model.BucketUnknown} {
		d.Buckets = append(d.Buckets, count{Label: string(b), N: c.Buckets[b]})
	}
	d.incidents = incidentsOf(s)
	d.Inbox = inbox(d)
	d.merge()
	return d
}

// claimRows are the claims' rows in attention order (digestList), each with the actions of
// the orphans that share its lease or lock file: the new rows, and those whose orphans'
// actions changed since the last digest (all of them when the orphans were rebuilt).
func claimRows(cache *rowCache, s *model.Snapshot, orphansBy map[string][]actionRef, cfg digestCfg) []*row {
	rows, idx, fresh := digestList(
		&cache.claimList,
		&cache.claims,
		s.Claims,
		func(c *model.Claim) row { return claimRow(c, cfg) },
	)
	// A decorated row is a new row: the one it replaces is the cache's and the previous
	// digest's, which may be on the screen while this digest runs.
	decorate := func(j int) {
		c := s.Claims[idx[j]]
		x := *rows[j]
		x.Actions = claimActions(c, orphansBy)
		x.Recover = recoverable(x.ItemRef, x.Actions, cfg)
		rows[j] = &x
		cache.claims[c] = &x
	}
	ol := &cache.orphanList
	switch {
	case cache.claimList.rebuilt || ol.rebuilt:
		if len(orphansBy) > 0 || len(cache.orphansBy) > 0 {
			rows = cache.claimList.own(rows)
			for j := range rows {
				decorate(j)
			}
		}
		return rows
	case len(ol.came) > 0 || len(ol.left) > 0:
		touched := map[string]bool{}
		for _, o := range append(append([]*model.Orphan(nil), ol.came...), ol.left...) {
			touched[o.LeaseID], touched[o.LockFile] = true, true
		}
		delete(touched, "")
		rows = cache.claimList.own(rows)
		for j := range rows {
			if c := s.Claims[idx[j]]; touched[c.LeaseID] || touched[c.LockFile] {
				decorate(j)
			}
		}
	}
	if len(orphansBy) > 0 {
		for _, j := range fresh {
			decorate(j)
		}
	}
	return rows
}

func healthOf(name string, h model.SourceHealth) health {
	state := string(h.Status)
	if state == "" {
		state = "unavailable"
	}
	if h.Partial && h.Status == model.StatusOK {
		state = "degraded"
	}
	notes := make([]string, len(h.Notes))
	for i, n := range h.Notes {
		notes[i] = cut(line(n))
	}
	return health{
		Name:      name,
		State:     state,
		Reason:    line(h.Reason),
		ScannedAt: h.ScannedAt,
		Scan:      h.ScanDuration,
		Notes:     notes,
	}
}

func line(s string) string { return termsafe.Line(s) }

// cut bounds an external string before it is stored in a row (10 kB names stay cheap).
func cut(s string) string { return termsafe.Truncate(s, 200) }

func itemStr(it *model.Item) string {
	if it == nil {
		return ""
	}
	return cut(it.String())
}

func govItem(it *model.Item) *govern.Item {
	if it == nil {
		return nil
	}
	return &govern.Item{Remote: it.Remote, Org: it.Org, Repo: it.Repo, Kind: it.Kind, Number: it.Number}
}

// evidenceLines words evidence, each aged against at (the snapshot's time; zero: no ages).
func evidenceLines(ev []model.Evidence, at time.Time) []string {
	if len(ev) == 0 {
		return []string{"none recorded"}
	}
	out := make([]string, 0, len(ev))
	for _, e := range ev {
		s := fmt.Sprintf("%s %s = %s", e.Source, cut(e.Field), cut(e.Value))
		if !e.At.IsZero() && !at.IsZero() {
			s += " (seen " + since(e.At, at) + " before the snapshot)"
		}
		out = append(out, s)
	}
	return out
}

// claimRow digests a claim; its actions (from the orphans) are added by claimActions, its
// detail sections built when drawn.
func claimRow(c *model.Claim, cfg digestCfg) row {
	item := itemStr(c.Item)
	role := cut(c.Role)
	if c.TaskClass != "" {
		role += "/" + cut(c.TaskClass)
	}
	var who string
	if c.Claimant != nil {
		who = cut(c.Claimant.Username) + "/" + cut(c.Claimant.Profile)
	}
	owner := string(c.OwnerLiveness)
	if owner == "" {
		owner = "unknown"
	}
	fresh := firstNonEmpty(cut(c.Freshness), "—")
	if c.LeaseStatus == "" {
		// No lease row backs the claim (the lock names none, or one that ended): the
		// freshness is the lock's own.
		fresh = "lock only · " + fresh
	}
	r := row{
		Key: "claim:" + c.LockFile + "\x00" + c.LeaseID + "\x00" + item,
		ID:  "claim:" + firstNonEmpty(c.LockFile, c.LeaseID, item),
		Cells: []string{
			item,
			role,
			who,
			cut(c.SessionID),
			firstNonEmpty(cut(c.Phase), "—"),
			"",
			"",
			cut(c.Contract),
			fresh,
			owner,
		},
		Heartbeat: c.LastHeartbeat, Deadline: c.ExpiresAt, Item: item, ItemRef: govItem(c.Item),
		Warn:  cfg.policies.For(leaserec.TaskClass(c.TaskClass)).StaleWarning(),
		Title: "Claim on " + item, LockFile: c.LockFile,
		detail: func(at time.Time) []section { return claimSections(c, cut(c.OwnerText()), at) },
		Rank:   claimRank(c), Urgent: c.ExpiresAt,
	}
	r.CopyID, r.CopyWhat = copyOf(c.LeaseID, c.LockFile, item)
	if c.Item != nil && cfg.itemURL != nil {
		r.URL = cut(cfg.itemURL(*c.Item))
	}
	r.finish(cut(c.LeaseID), cut(c.LockFile))
	return r
}

// claimSections is a claim's detail: evidence (aged against the snapshot's time at), the
// lease row and the lock file (whose raw JSON the detail pane loads).
func claimSections(c *model.Claim, owner string, at time.Time) []section {
	lease := []string{
		"lease_id = " + cut(c.LeaseID), "status = " + cut(c.LeaseStatus), "phase = " + cut(c.Phase),
		"expires_at = " + stamp(c.ExpiresAt), "last_heartbeat_at = " + stamp(c.LastHeartbeat),
		"freshness = " + cut(c.Freshness), "owner liveness = " + owner,
	}
	if c.LeaseStatus == "" {
		// A lock no live lease row backs: say so instead of blank fields (after a reclaim the
		// detail showed "status =" and "phase =").
		named := "names no lease"
		if c.LeaseID != "" {
			named = "names lease " + cut(c.LeaseID) + ", which has ended or is not in the DB"
		}
		lease = []string{"no live lease row backs this claim: its lock " + named,
			"expiry and heartbeat below are the lock file's own",
			"expires_at = " + stamp(c.ExpiresAt), "last_heartbeat_at = " + stamp(c.LastHeartbeat),
			"freshness (of the lock) = " + firstNonEmpty(cut(c.Freshness), "—"), "owner liveness = " + owner,
			"the lock file remains: retire it (lock.retire) or recover the item"}
	}
	out := []section{
		{Title: "Evidence", Lines: evidenceLines(c.Evidence, at)},
		{Title: "Lease row", Lines: lease},
	}
	if c.LockFile != "" {
		return append(out, section{Title: "Lock file " + cut(c.LockFile)})
	}
	return append(out, section{Title: "Lock file", Lines: []string{"no lock file joined to this lease"}})
}

// claimActions are the sanctioned actions of the orphans that share the claim's lease or
// lock file, once each.
func claimActions(c *model.Claim, orphansBy map[string][]actionRef) []actionRef {
	var out []actionRef
	var seen map[string]bool
	for _, k := range []string{c.LeaseID, c.LockFile} {
		for _, a := range orphansBy[k] {
			if seen == nil {
				seen = map[string]bool{}
			}
			id := a.Req.Action + "\x00" + a.Req.Target.LeaseID + "\x00" + a.Req.Target.LockFile
			if !seen[id] {
				seen[id] = true
				out = append(out, a)
			}
		}
	}
	return out
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format(time.RFC3339)
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// orphanRow digests an orphan. Its Evidence cell names what was seen without the ages (a
// cached row outlives its snapshot); the detail, built when drawn, ages each item.
func orphanRow(o *model.Orphan, cfg digestCfg) row {
	item := itemStr(o.Item)
	summary := strings.Join(evidenceLines(o.Evidence, time.Time{}), "; ")
	r := row{
		Key:  orphanKey(o),
		ID:   "orphan:" + o.LockFile + "\x00" + o.LeaseID + "\x00" + item,
		Item: item, ItemRef: govItem(o.Item), Title: cut(string(o.Kind)) + " " + item,
		Inspect: cut(o.InspectOnlyReason), Rank: orphanRank(o), Urgent: firstSeen(o.Evidence),
		detail: func(at time.Time) []section {
			return []section{{Title: "Evidence", Lines: evidenceLines(o.Evidence, at)},
				{
					Title: "Artifact",
					Lines: []string{"lock_file = " + cut(o.LockFile), "lease_id = " + cut(o.LeaseID), "session = " + cut(o.SessionID)},
				}}
		},
	}
	act := "inspect only: " + r.Inspect
	if o.Action != nil && (cfg.knows == nil || cfg.knows(o.Action.ID)) {
		ref := actionRef{
			Req: govern.Request{
				Action: o.Action.ID,
				Target: govern.Target{LeaseID: o.Action.Target.LeaseID, LockFile: o.Action.Target.LockFile},
			},
			Label:   cut(o.Action.ID),
			Allowed: o.Action.Allowed,
		}
		if o.Action.Refusal != nil {
			ref.Refusal = cut(o.Action.Refusal.Code + ": " + o.Action.Refusal.Message)
		}
		r.Actions = append(r.Actions, ref)
		act = ref.Label
		r.Inspect = ""
	} else if r.Inspect == "" {
		r.Inspect = "no sanctioned action for this kind"
		act = "inspect only"
	}
	r.CopyID, r.CopyWhat = copyOf(o.LeaseID, o.LockFile, item)
	r.Recover = recoverable(r.ItemRef, r.Actions, cfg)
	r.Cells = []string{cut(string(o.Kind)), item, summary, act}
	r.finish(cut(o.LeaseID), cut(o.LockFile), cut(o.SessionID))
	return r
}

func contentionRow(c *model.Contention, cfg digestCfg) row {
	item := itemStr(c.Item)
	sessions := make([]string, len(c.Sessions))
	for i, s := range c.Sessions {
		sessions[i] = cut(s)
	}
	class := "collision"
	if c.Need() == model.NeedRoutine {
		class = "routine"
	}
	window := ""
	if c.WindowS > 0 {
		window = age(time.Duration(c.WindowS) * time.Second)
	}
	r := row{
		Key:   "contention:" + string(c.Kind) + "\x00" + item + "\x00" + strings.Join(c.Sessions, ","),
		Cells: []string{cut(string(c.Kind)), class, item, strconv.Itoa(c.Count), strings.Join(sessions, ", "), window, ""},
		Count: c.Count, Item: item, ItemRef: govItem(c.Item), Class: class, Title: cut(string(c.Kind)) + " on " + item,
		CopyID: item, CopyWhat: "item", Rank: map[bool]int{true: 0, false: 1}[class == "collision"],
		Sections: []section{{Title: "Evidence", Lines: evidenceLines(c.Evidence, cfg.at)},
			{
				Title: "Involved",
				Lines: []string{
					"sessions: " + strings.Join(sessions, ", "),
					"lock files: " + cut(strings.Join(c.LockFiles, ", ")),
					"leases: " + cut(strings.Join(c.LeaseIDs, ", ")),
				},
			}},
	}
	if c.Item != nil && cfg.itemURL != nil {
		r.URL = cut(cfg.itemURL(*c.Item))
	}
	if len(c.Owners) > 0 {
		owners := make([]string, len(c.Owners))
		for i, o := range c.Owners {
			owners[i] = cut(o)
		}
		r.Cells[4] = strings.Join(owners, ", ")
		r.Sections[1].Lines[0] = "owners: " + r.Cells[4]
	}
	if n := c.Next; n != nil {
		r.Next = cut(n.Say)
		r.Cells[6] = r.Next
		for _, a := range n.Actions {
			if cfg.knows != nil && !cfg.knows(a.ID) {
				continue
			}
			ref := actionRef{
				Req: govern.Request{
					Action: a.ID,
					Target: govern.Target{LeaseID: a.Target.LeaseID, LockFile: a.Target.LockFile},
				},
				Label:   cut(a.ID) + " " + cut(firstNonEmpty(a.Target.LockFile, a.Target.LeaseID)),
				Allowed: a.Allowed,
			}
			if a.Refusal != nil {
				ref.Refusal = cut(a.Refusal.Code + ": " + a.Refusal.Message)
			}
			r.Actions = append(r.Actions, ref)
		}
		r.Sections = append(
			r.Sections,
			section{Title: "Resolution", Lines: []string{"who: " + cut(n.Who), "next: " + r.Next, "runbook: " + cut(n.Runbook)}},
		)
	}
	r.finish()
	return r
}

func clarRow(c *model.Clarification, cfg digestCfg) row {
	item := cut(c.Item.String())
	r := row{
		Key:   "clar:" + item,
		Cells: []string{item, cut(c.Title), "", ""},
		Since: c.AskedAt, SLA: cfg.sla, Item: item, ItemRef: govItem(&c.Item), URL: cut(c.URL),
		Title: item + " " + cut(c.Title), CopyID: item, CopyWhat: "item", Markdown: termsafe.Text(c.Question),
		QuestionID: cut(c.QuestionComment), Urgent: c.AskedAt, Rank: 1,
		Sections: []section{{Title: "Marker", Lines: []string{"label " + cut(c.Marker), "rule " + cut(c.Rule), ""}}},
		Asker:    asker{Account: cut(c.AskedBy), At: c.AskedAt},
	}
	if m, ok := gitearec.TrailingMark(c.Question); ok && m.Kind == "ask" {
		r.Asker.Mark = cut(m.ID)
	}
	r.Cells[2], r.Sections[0].Lines[2] = r.Asker.cell(), r.Asker.line()
	if r.URL == "" && cfg.itemURL != nil {
		r.URL = cut(cfg.itemURL(c.Item))
	}
	if cfg.knows == nil || cfg.knows(actionid.Answer) {
		r.Actions = []actionRef{
			{
				Req:   govern.Request{Action: actionid.Answer, Target: govern.Target{Item: govItem(&c.Item)}},
				Label: "answer the question",
			},
		}
	} else {
		r.Inspect = "this core has no " + actionid.Answer + " action yet"
	}
	if cfg.sla > 0 && !c.AskedAt.IsZero() && cfg.at.Sub(c.AskedAt) > cfg.sla {
		r.Rank = 0 // past its SLA
	}
	r.finish()
	return r
}

func sessionRow(x *model.Session) row {
	leaseIDs := make([]string, len(x.Leases))
	for i, l := range x.Leases {
		leaseIDs[i] = cut(l)
	}
	pid := "—"
	if x.PID > 0 {
		pid = strconv.FormatInt(x.PID, 10)
	}
	live := string(x.Liveness)
	if live == "" {
		live = "unknown"
	}
	id := cut(x.SessionID)
	if x.SessionID == "" {
		id = "(empty session_id)" // the DB holds such a row: it is named, never a blank cell
	}
	r := row{
		Key: "session:" + x.SessionID,
		Cells: []string{
			id,
			cut(x.Role),
			cut(x.Profile),
			pid,
			live,
			"",
			strconv.Itoa(len(x.Leases)),
			cut(x.Status),
		},
		Heartbeat: x.LastHeartbeat, Count: len(x.Leases), Title: "Session " + id,
		CopyID: cut(x.SessionID), CopyWhat: "session id",
		Rank: livenessRank(live), Urgent: x.LastHeartbeat,
		detail: func(time.Time) []section {
			return []section{{Title: "Session", Lines: []string{"host = " + cut(x.Host), "status = " + cut(x.Status),
				"last heartbeat = " + stamp(
					x.LastHeartbeat,
				), "ended = " + stamp(x.EndedAt), "leases = " + strings.Join(leaseIDs, ", ")}}}
		},
	}
	r.finish(leaseIDs...)
	return r
}

// clockNote says how far this host's clock is off the DB's, when more than a second.
func clockNote(c model.Clock) string {
	if !c.Skewed() {
		return ""
	}
	if c.Offset < 0 {
		return "host clock " + model.Span((-c.Offset).Round(time.Second)) + " ahead of the DB's"
	}
	return "host clock " + model.Span(c.Offset.Round(time.Second)) + " behind the DB's"
}
