package leases

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"steward/watchdir"
)

// PGListener holds one connection that LISTENs on notifyChannel and turns the notices of
// committed transitions into hints for a watcher, as WatchDB turns the SQLite file's
// writes into hints: a hint says "re-read", confirmed and scoped by the reader
// (DataVersion, then the events past the cursor). It never queries anything but LISTEN.
//
// A lost connection is said by Mode and by a hint with Resync set (so the watcher reads
// the DB at once and shows it unavailable if it is); the listener reconnects with a
// bounded backoff and, once listening again, hints with Resync set: what was committed
// while it was not listening is read then.
type PGListener struct {
	out    chan watchdir.Change
	mode   atomic.Pointer[string]
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// PGListenOptions tunes ListenPG.
type PGListenOptions struct {
	// MaxBackoff bounds the wait between reconnection attempts (5 s when zero); the first
	// wait is a twentieth of it.
	MaxBackoff time.Duration
}

// ListenPG starts listening for the transitions committed on the PostgreSQL DB t names.
// It returns at once: connecting happens in the background (Mode says so if the first
// attempt fails). Only a URL that cannot be used at all is an error.
func ListenPG(t Target, o PGListenOptions) (*PGListener, error) {
	cfg, err := pgConfig(t, true, time.Second)
	if err != nil {
		return nil, err
	}
	// The listener's own name, so an operator (or a test) can tell it from the reads.
	cfg.RuntimeParams["application_name"] += " listener"
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 5 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &PGListener{out: make(chan watchdir.Change, 1), cancel: cancel}
	p.wg.Add(1)
	go p.run(ctx, cfg, t.String(), o.MaxBackoff)
	return p, nil
}

// Changes returns the channel of hints; it is closed by Close, and only then. Hints are
// coalesced: one waiting hint stands for any number of notices.
func (p *PGListener) Changes() <-chan watchdir.Change { return p.out }

// Mode is "" while the listener's connection is LISTENing; otherwise a sentence for the
// user saying why notices are not received (and that it reconnects).
func (p *PGListener) Mode() string {
	if m := p.mode.Load(); m != nil {
		return *m
	}
	return ""
}

func (p *PGListener) setMode(s string) { p.mode.Store(&s) }

// Close ends the listening, closes its connection and waits for its goroutine; the
// channel is closed. It is idempotent.
func (p *PGListener) Close() error {
	p.once.Do(func() {
		p.cancel()
		p.wg.Wait()
	})
	return nil
}

// hint offers one hint; a hint already waiting stands for this one too (the reader reads
// everything committed up to its own read). A Resync hint replaces a waiting plain one.
func (p *PGListener) hint(resync bool) {
	c := watchdir.Change{Resync: resync}
	select {
	case p.out <- c:
		return
	default:
	}
	if !resync {
		return
	}
	select {
	case <-p.out: // a plain hint was waiting: the Resync one covers it
	default:
	}
	select {
	case p.out <- c:
	default:
	}
}

func (p *PGListener) run(ctx context.Context, cfg *pgx.ConnConfig, where string, maxBackoff time.Duration) {
	defer p.wg.Done()
	defer close(p.out)
	backoff := time.Duration(0)
	for {
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err == nil {
			_, err = conn.Exec(ctx, "LISTEN "+pgx.Identifier{notifyChannel}.Sanitize())
		}
		if err == nil {
			// Listening from now on. After a loss (Mode said so) the DB is read in full
			// once: what was committed while nothing listened, and the note goes. On a
			// first connection the reader has just read everything: a plain hint reads
			// only the events committed since.
			lost := p.Mode() != ""
			p.setMode("")
			p.hint(lost)
			backoff = 0
			for {
				n, werr := conn.WaitForNotification(ctx)
				if werr != nil {
					err = werr
					break
				}
				p.hint(decodeChange(n.Payload).Resync)
			}
		}
		if conn != nil {
			cctx, cancel := context.WithTimeout(context.Background(), time.Second)
			conn.Close(cctx)
			cancel()
		}
		if ctx.Err() != nil {
			return
		}
		p.setMode("not listening for PostgreSQL's notices (" + mapErr("listen", where, err).Error() + "): reconnecting")
		p.hint(true)
		switch {
		case backoff == 0:
			backoff = maxBackoff / 20
		case backoff < maxBackoff:
			backoff = min(2*backoff, maxBackoff)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
	}
}
