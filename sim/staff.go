package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"steward/govern"
	"steward/govern/actionid"
	"steward/leases/leaserec"
	"steward/model"
)

// Staff are the people around a fleet, simulated, so that a demo left alone stays like a
// real fleet's day instead of silting up with dead claims: an on-call operator who recovers
// an orphan through the governed core once it has been on screen a while (the person at the
// keyboard gets there first if they want to), and a maintainer who answers clarifications
// through the core after a while and, on the in-process Gitea, closes stale pull requests and
// now and then closes an item a worker is on (a duplicate, or fixed elsewhere) and files a
// new one. Durations are supervised time (before compression), like the lease policy's.
type Staff struct {
	// Every is how often the staff look at the workspace (default 3 minutes).
	Every time.Duration
	// RecoverAfter is how long an orphan with a sanctioned action is left alone before the
	// on-call operator applies it (0: no on-call operator).
	RecoverAfter time.Duration
	// AnswerAfter is how long a clarification waits before the maintainer answers it (0: no
	// answers).
	AnswerAfter time.Duration
	// CloseStalePRAfter is how long a stale-pr-no-claim stands before the maintainer closes
	// the pull request (0: never; needs Desk).
	CloseStalePRAfter time.Duration
	// CloseClaimedEvery is the mean time between the maintainer closing an item a worker
	// holds, and filing a new one (0: never; needs Desk).
	CloseClaimedEvery time.Duration
	// Model is what the staff's snapshot is judged by: the workbench's thresholds.
	Model model.Config
	// Desk is the maintainer's hands on the tracker beyond the coordination state (nil with a
	// real Gitea: the maintainer only answers).
	Desk Desk
}

// Desk is what a maintainer does on the tracker that is not coordination state and so not
// the governed core's: closing an issue or pull request, filing an issue (like PRMaker, the
// in-process Gitea's seeding helpers).
type Desk interface {
	Close(ctx context.Context, number int64) error
	File(ctx context.Context, title, body string, labels ...string) (int64, error)
}

// The names the staff act under: the audit log and the Activity view show them.
const (
	onCallName     = "sim-oncall"
	maintainerName = "sim-maintainer"
)

// staff runs the Staff on the scheduler goroutine.
type staff struct {
	f          *Fleet
	cfg        Staff
	oncall     *govern.Core
	maintainer *govern.Core
	// seen is when the staff first saw each orphan's action target, or stale PR.
	seen map[string]time.Duration
	// nextClose is when the maintainer next closes a claimed item.
	nextClose time.Duration
	filed     int
	rng       *rand.Rand
}

func (f *Fleet) newStaff(cfg Staff) *staff {
	if cfg.Every <= 0 {
		cfg.Every = 3 * time.Minute
	}
	clock := func() time.Time { return f.sched.clock() }
	s := &staff{f: f, cfg: cfg, seen: map[string]time.Duration{}, rng: workerRand(f.cfg.Seed, 2000)}
	s.oncall = govern.New(
		f.cfg.Workspace,
		f.cfg.Audit,
		govern.Options{Actor: govern.LocalActor(govern.RoleOperator, onCallName), Now: clock},
	)
	s.maintainer = govern.New(
		f.cfg.Workspace,
		f.cfg.Audit,
		govern.Options{Actor: govern.LocalActor(govern.RoleOperator, maintainerName), Now: clock},
	)
	return s
}

func (s *staff) close() {
	s.oncall.Close()
	s.maintainer.Close()
}

func (s *staff) emit(who string, kind EventKind, item int64, detail string) {
	s.f.emit(Event{Worker: who, Kind: kind, Item: item, Detail: detail})
}

// round looks once and acts: at most a few actions, as a person would.
func (s *staff) round() {
	defer s.f.sched.after(s.cfg.Every, s.round)
	snap, err := s.f.observe(s.f.ctx(), s.cfg.Model)
	if err != nil {
		s.emit(onCallName, EventError, 0, "look: "+err.Error())
		return
	}
	now := s.f.sched.now()
	live := map[string]bool{}
	if s.cfg.RecoverAfter > 0 {
		s.recover(snap, now, live)
	}
	if s.cfg.AnswerAfter > 0 {
		s.answer(snap)
	}
	if s.cfg.Desk != nil {
		s.tidyPRs(snap, now, live)
		s.closeClaimed(snap, now)
	}
	for k := range s.seen {
		if !live[k] {
			delete(s.seen, k)
		}
	}
}

func (s *staff) firstSeen(key string, now time.Duration, live map[string]bool) time.Duration {
	live[key] = true
	at, ok := s.seen[key]
	if !ok {
		s.seen[key], at = now, now
	}
	return now - at
}

// maxRecoveries is how many actions the on-call operator applies in one look.
const maxRecoveries = 6

// recover applies the sanctioned action of every orphan the on-call operator has seen for
// RecoverAfter — the same preview and confirmation the workbench asks of a person.
func (s *staff) recover(snap *model.Snapshot, now time.Duration, live map[string]bool) {
	acted := map[string]bool{}
	n := 0
	for _, o := range snap.Orphans {
		if o.Action == nil {
			continue
		}
		key := o.Action.ID + " " + o.Action.Target.LeaseID + o.Action.Target.LockFile
		if s.firstSeen(key, now, live) < s.cfg.RecoverAfter || acted[key] || n >= maxRecoveries {
			continue
		}
		acted[key] = true
		n++
		req := govern.Request{
			Action: o.Action.ID,
			Target: govern.Target{LeaseID: o.Action.Target.LeaseID, LockFile: o.Action.Target.LockFile},
		}
		var item int64
		if o.Item != nil {
			item = o.Item.Number
		}
		pv, err := s.oncall.Preview(s.f.ctx(), req)
		switch {
		case err != nil:
			s.emit(onCallName, EventError, item, o.Action.ID+": "+err.Error())
			continue
		case !pv.Allowed:
			// The workbench would show the same refusal; the on-call operator waits.
			continue
		}
		out := s.oncall.Apply(s.f.ctx(), pv, pv.ConfirmPhrase)
		s.emit(
			onCallName,
			eventRecover,
			item,
			fmt.Sprintf(
				"%s %s%s (%s): %s",
				o.Action.ID,
				o.Action.Target.LeaseID,
				o.Action.Target.LockFile,
				o.Kind,
				out.Result,
			),
		)
	}
}

var answers = []string{
	"Keep the old behaviour behind a flag for one release, then remove it.",
	"Target v2; v1 is frozen.",
	"Old files must keep loading: add a migration, do not break the format.",
	"The config defaults win; document the override.",
}

// answer answers, through the governed core, every clarification asked AnswerAfter ago.
func (s *staff) answer(snap *model.Snapshot) {
	clock := s.f.sched.clock()
	for _, c := range snap.Clarifications {
		if c.Question == "" || c.AskedAt.IsZero() ||
			clock.Sub(c.AskedAt) < time.Duration(float64(s.cfg.AnswerAfter)/s.f.cfg.Speed) {
			continue
		}
		body := answers[int(c.Item.Number)%len(answers)]
		req := govern.Request{
			Action: actionid.Answer,
			Target: govern.Target{
				Item: &govern.Item{
					Remote: c.Item.Remote,
					Org:    c.Item.Org,
					Repo:   c.Item.Repo,
					Kind:   c.Item.Kind,
					Number: c.Item.Number,
				},
			},
			Params: govern.AnswerParams{Body: body},
		}
		_, out, err := s.maintainer.Run(s.f.ctx(), req, "")
		if err != nil {
			s.emit(maintainerName, EventError, c.Item.Number, "answer: "+err.Error())
			continue
		}
		if out.Result == govern.ResultSucceeded {
			s.emit(maintainerName, eventAnswer, c.Item.Number, body)
		}
	}
}

// finished is a worker's release of finished work. On the in-process Gitea (the staff have a
// Desk) the work is merged at once — the maintainer closes the issue, so no other worker
// picks it up meanwhile — and a new issue is filed in its place: the backlog flows, as a
// project's does, instead of silting up with items whose dependencies never close (a fleet
// left alone ran out of eligible work and idled).
// The worker's pull request, when it opened one, is the work merged: it is closed too.
func (f *Fleet) finished(n, pr int64) {
	if f.staff == nil || f.staff.cfg.Desk == nil {
		return
	}
	what := "closed the issue"
	if pr != 0 {
		if err := f.staff.cfg.Desk.Close(f.ctx(), pr); err != nil {
			f.staff.emit(maintainerName, EventError, pr, "close PR: "+err.Error())
		} else {
			what = fmt.Sprintf("closed the issue and PR #%d", pr)
		}
	}
	if err := f.staff.cfg.Desk.Close(f.ctx(), n); err != nil {
		f.staff.emit(maintainerName, EventError, n, "close: "+err.Error())
		return
	}
	f.staff.emit(maintainerName, eventMaintain, n, "merged the finished work: "+what)
	s := f.staff
	s.file(fmt.Sprintf("%s the %s", verbs[s.rng.IntN(len(verbs))], subjects[s.rng.IntN(len(subjects))]), "", n)
}

// file files a new issue (replacing #was, when not zero) and adds it to the backlog.
func (s *staff) file(title, why string, was int64) {
	prios := []string{"priority:critical", "priority:high", "priority:medium", "priority:medium", "priority:low"}
	body := fmt.Sprintf("What: %s.\n", title)
	if why != "" {
		body = why + "\n\n" + body
	}
	num, err := s.cfg.Desk.File(s.f.ctx(), title, body, prios[s.rng.IntN(len(prios))])
	if err != nil {
		s.emit(maintainerName, EventError, was, "file: "+err.Error())
		return
	}
	s.f.backlog = append(s.f.backlog, num)
	s.emit(maintainerName, eventMaintain, num, fmt.Sprintf("filed a new issue (the backlog after #%d)", was))
}

// tidyPRs closes pull requests that have stood stale for CloseStalePRAfter — all but the
// one that has stood longest: a maintainer parks one pull request nobody claims (a real
// tracker always has one), so a stale-pr-no-claim stays on the board once one appeared.
func (s *staff) tidyPRs(snap *model.Snapshot, now time.Duration, live map[string]bool) {
	if s.cfg.CloseStalePRAfter <= 0 {
		return
	}
	type stale struct {
		o   *model.Orphan
		age time.Duration
	}
	var prs []stale
	for _, o := range snap.Orphans {
		if o.Kind != model.OrphanStalePRNoClaim || o.Item == nil {
			continue
		}
		prs = append(prs, stale{o, s.firstSeen("stale-pr "+o.Item.String(), now, live)})
	}
	// The longest standing first (then by number, for a repeatable run); it stays parked.
	sort.Slice(prs, func(i, j int) bool {
		if prs[i].age != prs[j].age {
			return prs[i].age > prs[j].age
		}
		return prs[i].o.Item.Number < prs[j].o.Item.Number
	})
	for i, p := range prs {
		o := p.o
		if i == 0 || p.age < s.cfg.CloseStalePRAfter {
			continue
		}
		if err := s.cfg.Desk.Close(s.f.ctx(), o.Item.Number); err != nil {
			s.emit(maintainerName, EventError, o.Item.Number, "close PR: "+err.Error())
			continue
		}
		s.emit(maintainerName, eventMaintain, o.Item.Number, "closed a stale pull request nobody claims")
	}
}

// closeClaimed now and then closes an issue a worker is on (it turned out a duplicate, or
// was fixed elsewhere) and files a new one in its place: the claim on a closed item is a
// closed-issue-live-claim until its holder lets go.
func (s *staff) closeClaimed(snap *model.Snapshot, now time.Duration) {
	if s.cfg.CloseClaimedEvery <= 0 {
		return
	}
	if s.nextClose == 0 {
		s.nextClose = s.cfg.CloseClaimedEvery/2 + time.Duration(s.rng.Int64N(int64(s.cfg.CloseClaimedEvery)))
	}
	if now < s.nextClose {
		return
	}
	var held []int64
	for _, c := range snap.Claims {
		if c.Item != nil && c.Item.Kind == "issue" && c.Freshness == string(leaserec.FreshActive) &&
			!slices.Contains(held, c.Item.Number) {
			held = append(held, c.Item.Number)
		}
	}
	if len(held) == 0 {
		return
	}
	slices.Sort(held)
	n := held[s.rng.IntN(len(held))]
	s.nextClose = now + s.cfg.CloseClaimedEvery/2 + time.Duration(s.rng.Int64N(int64(s.cfg.CloseClaimedEvery)))
	if err := s.cfg.Desk.Close(s.f.ctx(), n); err != nil {
		s.emit(maintainerName, EventError, n, "close: "+err.Error())
		return
	}
	s.emit(maintainerName, eventMaintain, n, "closed the issue while it was claimed (a duplicate of a newer one)")
	s.filed++
	s.file(
		fmt.Sprintf("Follow-up %d: %s", s.filed, strings.TrimSpace(titleOf(snap, n))),
		fmt.Sprintf("Replaces #%d.", n),
		n,
	)
}

func titleOf(snap *model.Snapshot, n int64) string {
	for _, it := range snap.Items {
		if it.Item.Number == n && it.Title != "" {
			return it.Title
		}
	}
	return fmt.Sprintf("issue #%d", n)
}
