package mcp

import (
	"context"
	"fmt"

	"steward/alloc"
	"steward/gitea"
	"steward/gitea/gitearec"
	"steward/govern"
	"steward/locks"
	"steward/reponame"
	"steward/termsafe"
)

// issueLister is the Gitea read the allocation needs: the open backlog.
type issueLister interface {
	OpenIssues(ctx context.Context) ([]gitearec.Issue, gitea.Health)
}

// picked is the head of the allocation order.
type picked struct {
	item    ItemRef
	title   string
	skipped []alloc.Skip
	// skippedTotal counts every item passed over; skipped holds the first maxSkipped.
	skippedTotal int
}

// next reads the backlog (Gitea's open issues), the active leases and the live lock files,
// and returns the head of the allocation order (alloc.Order). It never allocates from a
// backlog or claims it could not read whole: an unreadable source refuses
// source_unavailable. It picks one item; if the claim of it is refused, the worker asks
// again — the server never retries a claim on its own.
func (s *Server) next(ctx context.Context, session string, exclude []int64) (*picked, *Outcome) {
	g := s.reads.ws.Gitea
	lister, ok := g.(issueLister)
	if g == nil || !ok {
		o := refused(
			"no_gitea",
			"claiming the next runnable item needs the backlog from a configured Gitea repository; name the item instead",
		)
		return nil, &o
	}
	issues, h := lister.OpenIssues(ctx)
	if !h.OK() {
		o := refused(
			govern.CodeSourceUnavailable,
			"the backlog could not be read whole ("+h.Reason+"); nothing is allocated from a partial backlog",
		)
		return nil, &o
	}
	active, err := s.reads.activeLeases(ctx)
	if err != nil {
		o := refused(govern.CodeSourceUnavailable, "the control-plane DB could not be read: "+err.Error())
		return nil, &o
	}
	owner, repo := g.Repository()
	held := map[int64]string{}
	for _, l := range active {
		if reponame.SameRepo(l.Work.Org, l.Work.Repo, owner, repo) {
			held[l.Work.Number] = l.SessionID
		}
	}
	snap, err := locks.LoadDir(s.reads.ws.LocksDir, locks.LoadOptions{})
	if err != nil {
		o := refused(govern.CodeSourceUnavailable, "the locks directory could not be read: "+err.Error())
		return nil, &o
	}
	locked := map[int64]bool{}
	for _, e := range snap.Live {
		if e.HasKey && reponame.SameRepo(e.Key.Org, e.Key.Repo, owner, repo) {
			locked[e.Key.Issue] = true
		}
	}
	cs := make([]alloc.Candidate, 0, len(issues))
	for _, is := range issues {
		_, h := held[is.Number]
		cs = append(cs, alloc.Candidate{Number: is.Number, Title: is.Title, Body: is.Body, Labels: is.Labels,
			Open: is.State == "open", Claimed: h || locked[is.Number], HeldBy: held[is.Number]})
	}
	ranked, skipped := alloc.Order(cs, s.rules(), exclude)
	skipped, total := capSkipped(skipped)
	if len(ranked) == 0 {
		o := refused(
			"nothing_eligible",
			fmt.Sprintf("no open issue of %s/%s is runnable now (%d skipped)", owner, repo, total),
		)
		o.Skipped, o.SkippedTotal = skipped, total
		return nil, &o
	}
	head := ranked[0]
	return &picked{
		item:         ItemRef{Org: owner, Repo: repo, Number: head.Number, Remote: s.cfg.Remote},
		title:        head.Title,
		skipped:      skipped,
		skippedTotal: total,
	}, nil
}

// maxSkipped bounds the skip records a claim next returns: the first ones by issue number,
// with the count of all (a large backlog's skips would fill an agent's context).
const maxSkipped = 50

// capSkipped keeps the first maxSkipped skip records (their reasons on one line) and
// counts them all.
func capSkipped(all []alloc.Skip) ([]alloc.Skip, int) {
	n := len(all)
	if n > maxSkipped {
		all = all[:maxSkipped]
	}
	out := make([]alloc.Skip, len(all))
	for i, sk := range all {
		sk.Reason = clipTo(termsafe.Line(sk.Reason), 256)
		out[i] = sk
	}
	return out, n
}
