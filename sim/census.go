package sim

import (
	"slices"
	"time"

	"steward/govern"
	"steward/govern/actionid"
	"steward/model"
)

// Minute is what one minute of a run showed, in the run's own time (the wall clock at its
// speed: a minute of the demo is 20 supervised minutes at the default speed), measured the
// way a person at the workbench would see it: a snapshot every censusEvery through the same
// model `steward status` prints, and the fleet's events.
type Minute struct {
	// Minute counts from 1; samples taken at its end belong to it.
	Minute  int `json:"minute"`
	Samples int `json:"samples"`
	// Unread counts the samples in which a source (the lock directory, the DB, Gitea) could
	// not be read: what they showed is not booked.
	Unread int `json:"samples_unread"`
	// Live claims are claims with an active lease whose owner process is alive; the fewest
	// and the most in a sample of the minute. Claims counts every claim on screen.
	LiveClaimsMin int `json:"live_claims_min"`
	LiveClaimsMax int `json:"live_claims_max"`
	ClaimsMax     int `json:"claims_max"`
	// RefusedMin is the fewest refused claims in the contention window in a sample.
	RefusedMin int `json:"refused_in_window_min"`
	// Events of the minute.
	Claims     int `json:"claims"`
	Questions  int `json:"questions"`
	Answers    int `json:"answers"`
	Deaths     int `json:"deaths"`
	Restarts   int `json:"restarts"`
	Recoveries int `json:"recoveries"`
	// At the minute's last sample: the clarifications waiting, whether the governed core's
	// preview of answering the oldest of them is allowed, the orphans and their kinds.
	Pending    int      `json:"clarifications_pending"`
	Answerable bool     `json:"answerable"`
	Orphans    int      `json:"orphans"`
	Kinds      []string `json:"orphan_kinds"`
	// KindsPresentMin is the fewest orphan kinds present in a sample; KindsSeen the orphan
	// kinds seen in any sample since the start.
	KindsPresentMin int `json:"orphan_kinds_present_min"`
	KindsSeen       int `json:"orphan_kinds_seen"`
	// Collisions are the real collision kinds (two owners of one item) seen in the minute.
	Collisions []string `json:"collisions,omitempty"`
}

// censusEvery is how often a census samples, in the run's own time.
const censusEvery = 10 * time.Second

// census keeps the Minutes of a run (scheduler goroutine only, but for minutes).
type census struct {
	f       *Fleet
	cfg     model.Config
	preview *govern.Core
	minutes []Minute
	seen    map[string]bool
}

func (f *Fleet) newCensus(cfg model.Config) *census {
	clock := func() time.Time { return f.sched.clock() }
	// A preview-only core (no audit log): it writes nothing, ever.
	pv := govern.New(
		f.cfg.Workspace,
		nil,
		govern.Options{Actor: govern.LocalActor(govern.RoleOperator, "census"), Now: clock},
	)
	return &census{f: f, cfg: cfg, preview: pv, seen: map[string]bool{}}
}

// minuteOf is the minute an instant of supervised time falls in; end says an instant on a
// minute's boundary closes that minute (samples) rather than opening the next (events).
func (c *census) minuteOf(at time.Duration, end bool) *Minute {
	m := time.Duration(float64(time.Minute) * c.f.cfg.Speed)
	i := int(at / m)
	if end && at > 0 && at%m == 0 {
		i--
	}
	for len(c.minutes) <= i {
		c.minutes = append(
			c.minutes,
			Minute{Minute: len(c.minutes) + 1, LiveClaimsMin: -1, RefusedMin: -1, KindsPresentMin: -1},
		)
	}
	return &c.minutes[i]
}

func (c *census) event(e Event) {
	m := c.minuteOf(e.At, false)
	switch e.Kind {
	case eventClaim, eventLegacyClaim:
		m.Claims++
	case EventQuestion:
		m.Questions++
	case eventAnswer:
		m.Answers++
	case eventDeath:
		m.Deaths++
	case eventRestart:
		m.Restarts++
	case eventRecover:
		m.Recoveries++
	}
}

func lowest(cur, v int) int {
	if cur < 0 || v < cur {
		return v
	}
	return cur
}

// sample takes one snapshot and books it to its minute.
func (c *census) sample() {
	snap, err := c.f.observe(c.f.ctx(), c.cfg)
	m := c.minuteOf(c.f.sched.now(), true)
	m.Samples++
	if err != nil || snap.Sources.Locks.Need() == model.NeedHuman || snap.Sources.DB.Need() == model.NeedHuman ||
		snap.Sources.Gitea.Need() == model.NeedHuman {
		m.Unread++
		return
	}
	live := 0
	for _, cl := range snap.Claims {
		if cl.Freshness == "active" && cl.OwnerLiveness == model.LivenessAlive {
			live++
		}
	}
	m.LiveClaimsMin, m.LiveClaimsMax, m.ClaimsMax = lowest(
		m.LiveClaimsMin,
		live,
	), max(
		m.LiveClaimsMax,
		live,
	), max(
		m.ClaimsMax,
		len(snap.Claims),
	)
	refused := 0
	for _, ct := range snap.Contention {
		if ct.Kind == model.ContentionClaimRefused {
			refused += ct.Count
		} else if !slices.Contains(m.Collisions, string(ct.Kind)) {
			m.Collisions = append(m.Collisions, string(ct.Kind))
			slices.Sort(m.Collisions)
		}
	}
	m.RefusedMin = lowest(m.RefusedMin, refused)
	kinds := map[string]bool{}
	for _, o := range snap.Orphans {
		kinds[string(o.Kind)] = true
		c.seen[string(o.Kind)] = true
	}
	m.KindsPresentMin = lowest(m.KindsPresentMin, len(kinds))
	m.KindsSeen, m.Orphans, m.Kinds = len(c.seen), len(snap.Orphans), nil
	for k := range kinds {
		m.Kinds = append(m.Kinds, k)
	}
	slices.Sort(m.Kinds)
	m.Pending, m.Answerable = 0, false
	var oldest *model.Clarification
	for i, cl := range snap.Clarifications {
		if cl.Question == "" {
			continue
		}
		m.Pending++
		if oldest == nil || cl.AskedAt.Before(oldest.AskedAt) {
			oldest = &snap.Clarifications[i]
		}
	}
	if oldest != nil {
		it := oldest.Item
		pv, err := c.preview.Preview(c.f.ctx(), govern.Request{Action: actionid.Answer,
			Target: govern.Target{
				Item: &govern.Item{Remote: it.Remote, Org: it.Org, Repo: it.Repo, Kind: it.Kind, Number: it.Number},
			},
			Params: govern.AnswerParams{Body: "(census: would this answer be allowed?)"}})
		m.Answerable = err == nil && pv.Allowed
	}
}

// result returns the minutes; a minute without samples keeps -1 in its fewest-counts.
func (c *census) result() []Minute {
	c.preview.Close()
	return slices.Clone(c.minutes)
}
