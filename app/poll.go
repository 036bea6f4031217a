package app

import (
	"context"
	"time"

	"steward/model"
)

// polled is the workbench's source when the live model cannot start (a lock directory that
// does not exist cannot be watched): a one-shot read of every source (Snapshot) every
// interval and on Refresh, so the views say what cannot be read and fill in once the
// workspace is there.
type polled struct {
	out     chan *model.Snapshot
	refresh chan struct{}
}

func (p *polled) Snapshots() <-chan *model.Snapshot { return p.out }

func (p *polled) Refresh() {
	select {
	case p.refresh <- struct{}{}:
	default:
	}
}

// Poll makes the workbench's source a read of every source every interval (and on r),
// instead of the live model's watch: for a workspace whose lock directory cannot be watched
// (Watch failed). It returns the first snapshot, read now.
func (sess *Session) Poll(ctx context.Context, every time.Duration) *model.Snapshot {
	p := &polled{out: make(chan *model.Snapshot, 1), refresh: make(chan struct{}, 1)}
	first := sess.Snapshot(ctx)
	p.out <- first
	sess.Workbench.Source = p
	go func() {
		defer close(p.out)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-p.refresh:
			}
			s := sess.Snapshot(ctx)
			select {
			case p.out <- s:
			case <-ctx.Done():
				return
			}
		}
	}()
	return first
}
