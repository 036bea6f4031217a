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
// start + at/speed; virtual, it runs at once.
type scheduler struct {
	start   time.Time
	speed   float64
	virtual bool
	cur     atomic.Int64 // virtual now, ns
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
	return s.start.Add(time.Duration(float64(at) / s.speed))
}

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
			if err := s.waitUntil(ctx, &timer, s.wallOf(next.at)); err != nil {
				return err
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
