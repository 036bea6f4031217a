package sim

import (
	"container/heap"
	"context"
	"sync/atomic"
	"time"
)

// scheduler is a discrete-event loop: every worker step is an event at a virtual time
// (supervised-system time since the start); events run one at a time in (time, sequence)
// order on the goroutine that calls run. Paced, an event runs when the wall clock reaches
// start + slip + at/speed; virtual, it runs at once.
//
// Paced, the fleet never runs behind the wall clock: when an event runs late (the events
// before it took longer than the time between them — a starved machine, a slow MCP round
// trip), the lateness is added to slip, so the events after it keep their spacing and the
// clock the governed core stamps with stays the wall clock. Without it, a fleet that fell
// behind wrote timestamps in the past and heartbeats its leases' expiry had already
// passed on the serving process's clock: on a loaded machine every lease of an MCP fleet
// expired unrenewed and the workbench showed live workers' claims as expired.
type scheduler struct {
	start   time.Time
	speed   float64
	virtual bool
	cur     atomic.Int64 // virtual now, ns
	slip    atomic.Int64 // paced: how far behind start+at/speed the fleet has fallen, ns
	seq     uint64
	q       eventQueue
}

type scheduled struct {
	at  time.Duration
	seq uint64
	fn  func()
}

type eventQueue []scheduled

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(scheduled)) }
func (q *eventQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

func newScheduler(start time.Time, speed float64, virtual bool) *scheduler {
	return &scheduler{start: start, speed: speed, virtual: virtual}
}

// now is the virtual time of the event being run.
func (s *scheduler) now() time.Duration { return time.Duration(s.cur.Load()) }

// clock is the wall time the running event is due at: the governed core's clock.
func (s *scheduler) clock() time.Time { return s.wallOf(s.now()) }

func (s *scheduler) wallOf(at time.Duration) time.Time {
	return s.start.Add(time.Duration(s.slip.Load()) + time.Duration(float64(at)/s.speed))
}

// slipped is how far behind the wall clock the fleet has fallen so far (paced runs).
func (s *scheduler) slipped() time.Duration { return time.Duration(s.slip.Load()) }

// at schedules fn at virtual time t (never before now).
func (s *scheduler) at(t time.Duration, fn func()) {
	if n := s.now(); t < n {
		t = n
	}
	s.seq++
	heap.Push(&s.q, scheduled{at: t, seq: s.seq, fn: fn})
}

// after schedules fn d after now.
func (s *scheduler) after(d time.Duration, fn func()) { s.at(s.now()+d, fn) }

// run executes events until the queue is empty, the next event is past limit, or ctx ends.
func (s *scheduler) run(ctx context.Context, limit time.Duration) error {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for s.q.Len() > 0 {
		next := s.q[0]
		if next.at > limit {
			s.cur.Store(int64(limit))
			if !s.virtual {
				if err := s.waitUntil(ctx, &timer, s.wallOf(limit)); err != nil {
					return err
				}
			}
			return nil
		}
		if !s.virtual {
			due := s.wallOf(next.at)
			if err := s.waitUntil(ctx, &timer, due); err != nil {
				return err
			}
			if late := time.Since(due); late > 0 {
				s.slip.Add(int64(late))
			}
		} else if err := ctx.Err(); err != nil {
			return err
		}
		heap.Pop(&s.q)
		s.cur.Store(int64(next.at))
		next.fn()
	}
	return nil
}

func (s *scheduler) waitUntil(ctx context.Context, timer **time.Timer, wall time.Time) error {
	d := time.Until(wall)
	if d <= 0 {
		return ctx.Err()
	}
	if *timer == nil {
		*timer = time.NewTimer(d)
	} else {
		(*timer).Reset(d)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-(*timer).C:
		return nil
	}
}
