package gather

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"steward/gitea"
	"steward/govern"
	"steward/history"
	"steward/leases"
	"steward/leases/leaserec"
	"steward/locks"
)

// Sources names the workspace's sources.
type Sources struct {
	LocksDir string
	// LocksNotObserved, when set, says why the lock directory is not read: it is on
	// another host (model.LocksHere). The lock source is then skipped with that reason —
	// a standing limit of the evidence (not a loss), never "no locks".
	LocksNotObserved string
	DB               leases.Target
	AuditPath        string
	// Gitea reads an item's thread; nil when none is configured.
	Gitea *gitea.Client
}

// Options tune a read.
type Options struct {
	// Item, when set, has its Gitea thread read (comments and label events).
	Item history.Item
	// Now is when the evidence is read (time.Now when nil).
	Now func() time.Time
	// MaxEvents bounds the events read (default 5,000,000); a read stopped by it is a gap.
	MaxEvents int
}

// page is how many events one query reads.
const page = 5000

// Read reads every source read-only into finished evidence.
func Read(ctx context.Context, src Sources, opt Options) *history.Evidence {
	now := time.Now
	if opt.Now != nil {
		now = opt.Now
	}
	ev := &history.Evidence{Read: now().UTC()}
	readDB(ctx, ev, src.DB, opt)
	if src.LocksNotObserved != "" {
		ev.Skipped(history.SourceLocks, src.LocksNotObserved)
	} else {
		ev.AddLocks(locks.LoadDir(src.LocksDir, locks.LoadOptions{Retired: true}))
	}
	readAudit(ev, src.AuditPath)
	readGitea(ctx, ev, src.Gitea, opt.Item)
	ev.Finish()
	return ev
}

func readDB(ctx context.Context, ev *history.Evidence, t leases.Target, opt Options) {
	r, err := leases.OpenReader(t)
	if err != nil {
		ev.Unread(history.SourceEvents, err.Error())
		ev.Unread(history.SourceLeases, err.Error())
		return
	}
	defer r.Close()
	snap, err := r.Snapshot(ctx, leases.ReadOptions{RecentTerminal: 1 << 30, RecentEnded: -1})
	if err != nil {
		ev.Unread(history.SourceLeases, err.Error())
		ev.Unread(history.SourceEvents, err.Error())
		return
	}
	items := make(map[int64]history.Item, len(snap.WorkItems))
	for _, w := range snap.WorkItems {
		items[w.WorkItemID] = history.Item{Org: w.Org, Repo: w.Repo, Number: w.Number}
	}
	if snap.WorkItemsHealth.Status == leaserec.HealthUnavailable {
		ev.Gaps = append(ev.Gaps, history.Gap{Source: history.SourceLeases,
			Reason: "work_items unreadable (" + strings.Join(
				snap.WorkItemsHealth.Reasons,
				"; ",
			) + "): events and leases name no item"})
	}
	ev.AddLeases(snap.Leases, items, snap.LeasesHealth)
	max := opt.MaxEvents
	if max <= 0 {
		max = 5_000_000
	}
	var all []leaserec.Event
	var h leaserec.Health
	cursor := int64(0)
	truncated := false
	for {
		evs, hh, err := r.EventsSince(ctx, cursor, page)
		if err != nil {
			ev.Unread(history.SourceEvents, err.Error())
			return
		}
		h = hh
		all = append(all, evs...)
		if len(evs) < page || hh.Status == leaserec.HealthUnavailable {
			break
		}
		cursor = evs[len(evs)-1].EventID
		if len(all) >= max {
			truncated = true
			break
		}
	}
	names, _ := r.HasColumn(ctx, "events", "session_id")
	var first int64
	if len(all) > 0 {
		first = all[0].EventID
	}
	ev.AddEvents(
		all,
		history.EventsRead{Health: h, FirstID: first, NamesSessions: names, Items: items, Truncated: truncated},
	)
}

func readAudit(ev *history.Evidence, path string) {
	if path == "" {
		ev.Unread(history.SourceAudit, "no audit log configured")
		return
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		ev.Unread(history.SourceAudit, "no audit log at "+path)
		return
	}
	recs, finds, err := govern.ReadAudit(path)
	if err != nil {
		ev.Unread(history.SourceAudit, err.Error())
		return
	}
	out := make([]history.AuditRecord, 0, len(recs))
	for _, r := range recs {
		out = append(out, record(r))
	}
	hf := make([]history.AuditFinding, 0, len(finds))
	for _, f := range finds {
		hf = append(hf, history.AuditFinding{Line: f.Line, Reason: f.Reason})
	}
	ev.AddAudit(out, hf, nil)
}

// record converts one audit record.
func record(r govern.Record) history.AuditRecord {
	out := history.AuditRecord{
		Attempt:    r.Attempt,
		Kind:       string(r.Kind),
		Action:     r.Action,
		Lease:      r.Target.LeaseID,
		LockFile:   r.Target.LockFile,
		Session:    r.Actor.Session,
		Actor:      ActorName(r.Actor),
		Role:       r.Actor.Role.String(),
		Result:     string(r.Result),
		Code:       r.Code,
		Message:    r.Message,
		ResolvedBy: string(r.ResolvedBy),
	}
	if out.Session == "" {
		out.Session = r.Target.Session
	}
	if t, err := time.Parse(time.RFC3339Nano, r.At); err == nil {
		out.At = t.UTC()
	}
	if it := r.Target.Item; it != nil {
		out.Item = history.Item{Org: it.Org, Repo: it.Repo, Number: it.Number}
	}
	return out
}

// ActorName is how history names an actor: the Gitea login, else os_user@host.
func ActorName(a govern.Actor) string {
	if a.GiteaLogin != "" {
		return a.GiteaLogin
	}
	return a.OSUser + "@" + a.Host
}

func readGitea(ctx context.Context, ev *history.Evidence, cl *gitea.Client, it history.Item) {
	switch {
	case it.Zero():
		ev.Skipped(history.SourceGitea, "comments and labels are read for one item's timeline only")
		return
	case cl == nil:
		ev.Skipped(history.SourceGitea, "no Gitea is configured")
		return
	}
	owner, repo := cl.Repository()
	if !strings.EqualFold(owner, it.Org) || !strings.EqualFold(repo, it.Repo) {
		ev.Unread(
			history.SourceGitea,
			fmt.Sprintf("the configured Gitea repository is %s/%s, not %s/%s", owner, repo, it.Org, it.Repo),
		)
		return
	}
	th, err := cl.Thread(ctx, it.Number)
	if err != nil {
		ev.Unread(history.SourceGitea, "unreachable: "+err.Error())
		return
	}
	ev.AddThread(it, th)
}
