package phase

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/fsnotify/fsnotify"

	"steward/bench/internal/fleet"
	"steward/bench/internal/headless"
)

// rawFiles lists dir and reads every file whole with no decode: the physical limit of a
// full scan of the lock files. It returns the bytes read, kept (as a reader keeps them).
func rawFiles(dir string) ([][]byte, int, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, 0, err
	}
	out := make([][]byte, 0, len(ents))
	total := 0
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return nil, 0, err
		}
		out = append(out, b)
		total += len(b)
	}
	return out, total, nil
}

// tables are the rows a snapshot reads: every one of them, by a bare SELECT *.
var tables = []string{"schema_meta", "sessions", "work_items", "leases", "assignments", "events"}

func openRO(path string) (*sql.DB, error) {
	return sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro&_pragma=busy_timeout(5000)")
}

// bareRows opens the DB read-only and scans every row of the snapshot's tables as raw bytes
// with no decode: the physical limit of a full read of the DB. It returns the bytes scanned.
func bareRows(ctx context.Context, path string) (int, error) {
	db, err := openRO(path)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	total := 0
	for _, t := range tables {
		rows, err := db.QueryContext(ctx, "SELECT * FROM "+t)
		if err != nil {
			return 0, err
		}
		cols, _ := rows.Columns()
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return 0, err
			}
			for _, v := range vals {
				total += len(v)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, err
		}
	}
	return total, nil
}

func isData(m tea.Msg) bool { _, ok := m.(headless.Data); return ok }

// coldLimit reads everything raw, then starts the empty program and times its first frame
// showing what was read.
func (c *Config) coldLimit(
	ctx context.Context,
	tick time.Duration,
) (*headless.Program, [][]byte, time.Duration, time.Duration, error) {
	t0 := time.Now()
	files, fb, err := rawFiles(c.Meta.LocksDir)
	if err != nil {
		return nil, nil, 0, 0, err
	}
	rb, err := bareRows(ctx, c.Meta.DBPath)
	if err != nil {
		return nil, nil, 0, 0, err
	}
	snap := time.Since(t0)
	p := headless.Start(ctx, headless.NewBlank(tick), headless.Options{Width: c.Width, Height: c.Height, FPS: c.FPS})
	p.Probe.Expect(isData)
	p.Send(headless.Data{N: fb + rb})
	at, err := p.Screen.Wait(timeout)
	if err != nil {
		p.Stop()
		return nil, nil, 0, 0, err
	}
	return p, files, snap, at.Sub(t0), nil
}

// LimitCold is the physical limit of StewardCold.
func LimitCold(ctx context.Context, c *Config) (*Result, error) {
	return c.cold(func() (time.Duration, time.Duration, func(), error) {
		p, _, snap, frame, err := c.coldLimit(ctx, 0)
		if err != nil {
			return 0, 0, nil, err
		}
		return snap, frame, p.Stop, nil
	})
}

// LimitLive is the physical limit of StewardLive: the data read raw and kept, the empty
// program ticking once a second like the countdowns, the same lock rename and DB commit
// noticed by a bare watcher (no debounce) and read back raw, and the same key presses.
func LimitLive(ctx context.Context, c *Config) (*Result, error) {
	r := newResult()
	p, files, _, _, err := c.coldLimit(ctx, time.Second)
	if err != nil {
		return nil, err
	}
	defer p.Stop()
	c.idle(ctx, r)
	if err := c.lockLimit(r, p); err != nil {
		return nil, fmt.Errorf("lock limit: %w", err)
	}
	if err := c.dbLimit(ctx, r, p); err != nil {
		return nil, fmt.Errorf("db limit: %w", err)
	}
	for _, k := range []struct {
		m  string
		ks []tea.KeyPressMsg
	}{
		{KeyMove, []tea.KeyPressMsg{keyDown, keyUp}},
		{KeyFilter, []tea.KeyPressMsg{keySeven, keyBackspace}},
		{KeyView, []tea.KeyPressMsg{keySeven, keyTwo}},
	} {
		err := c.rounds(func(i int) error {
			d, err := p.Timed(k.ks[i%len(k.ks)], isKey, timeout)
			if err == nil {
				r.add(k.m, d)
			}
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("%s limit: %w", k.m, err)
		}
	}
	r.HWM = hwm()
	runtime.KeepAlive(files)
	return r, nil
}

// frame sends what a limit read to the empty program and waits for the frame that shows it.
func frame(p *headless.Program, n int) (time.Time, error) {
	p.Screen.Reset()
	p.Probe.Expect(isData)
	p.Send(headless.Data{N: n})
	return p.Screen.Wait(timeout)
}

func (c *Config) lockLimit(r *Result, p *headless.Program) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer fw.Close()
	if err := fw.Add(c.Meta.LocksDir); err != nil {
		return err
	}
	name := fleet.LockName(1)
	clock := c.clock()
	return c.rounds(func(i int) error {
		b, err := prepareLockBeat(c.Meta, 1, i, clock())
		if err != nil {
			return err
		}
		drain(fw)
		t0 := time.Now()
		if err := b.commit(); err != nil {
			return err
		}
		if err := waitEvent(fw, func(ev fsnotify.Event) bool { return filepath.Base(ev.Name) == name }); err != nil {
			return err
		}
		data, err := os.ReadFile(b.path)
		if err != nil {
			return err
		}
		r.add(LockSnapshot, time.Since(t0))
		at, err := frame(p, len(data))
		if err != nil {
			return err
		}
		r.add(LockFrame, at.Sub(t0))
		return nil
	})
}

func drain(fw *fsnotify.Watcher) {
	for {
		select {
		case <-fw.Events:
		case <-fw.Errors:
		default:
			return
		}
	}
}

func waitEvent(fw *fsnotify.Watcher, want func(fsnotify.Event) bool) error {
	timeout := time.After(timeout)
	for {
		select {
		case ev := <-fw.Events:
			if want(ev) {
				return nil
			}
		case err := <-fw.Errors:
			return err
		case <-timeout:
			return errors.New("no file event")
		}
	}
}

func (c *Config) dbLimit(ctx context.Context, r *Result, p *headless.Program) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer fw.Close()
	if err := fw.Add(filepath.Dir(c.Meta.DBPath)); err != nil {
		return err
	}
	ro, err := openRO(c.Meta.DBPath)
	if err != nil {
		return err
	}
	defer ro.Close()
	pin, err := ro.Conn(ctx) // data_version is per connection
	if err != nil {
		return err
	}
	defer pin.Close()
	dv := func() int64 {
		var v int64
		_ = pin.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v)
		return v
	}
	db, err := fleet.OpenWriter(c.Meta.DBPath)
	if err != nil {
		return err
	}
	defer db.Close()
	base := filepath.Base(c.Meta.DBPath)
	lease, sid := "", fleet.SessionID(1)
	q := `SELECT lease_id FROM leases WHERE session_id = ? AND status = 'active'`
	if err := pin.QueryRowContext(ctx, q, sid).Scan(&lease); err != nil {
		return err
	}
	clock := c.clock()
	return c.rounds(func(i int) error {
		b, err := prepareDBBeat(db, c.Meta, lease, sid, i, clock())
		if err != nil {
			return err
		}
		v0 := dv()
		drain(fw)
		t0 := time.Now()
		if err := b.tx.Commit(); err != nil {
			return err
		}
		for dv() == v0 { // a commit shows in the WAL's events; confirm it as the live model does
			if err := waitEvent(fw, func(ev fsnotify.Event) bool {
				n := filepath.Base(ev.Name)
				return n == base || n == base+"-wal"
			}); err != nil {
				return err
			}
		}
		var exp, beat string
		var count int64
		q := `SELECT expires_at, last_heartbeat_at, heartbeat_count FROM leases WHERE lease_id = ?`
		if err := pin.QueryRowContext(ctx, q, lease).Scan(&exp, &beat, &count); err != nil {
			return err
		}
		r.add(DBSnapshot, time.Since(t0))
		at, err := frame(p, len(exp)+len(beat))
		if err != nil {
			return err
		}
		r.add(DBFrame, at.Sub(t0))
		return nil
	})
}
