package leases_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
)

// writerHelperEnv names the DB a re-executed test binary writes as a separate writer
// process (writerHelper): a real steward Store, as a worker's is.
const writerHelperEnv = "STEWARD_TEST_WRITER_DB"

// writerHelper opens the DB read-write and runs the commands on its stdin, one a line:
// "claim N" claims issue N for session "writer" and answers "ok" (or "error …");
// "quit" closes the Store and exits 0 (as does the end of stdin). It keeps its
// connection open between commands, as a live worker process does.
func writerHelper(path string) int {
	s, err := leases.OpenReadWrite(path, leases.StoreOptions{})
	if err != nil {
		fmt.Println("error", err)
		return 2
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		switch {
		case len(f) == 2 && f[0] == "claim":
			n, _ := strconv.ParseInt(f[1], 10, 64)
			out, err := s.Claim(context.Background(), claimReq("writer", n), time.Now())
			if err != nil || !out.OK() {
				fmt.Println("error", out.Code, err)
				continue
			}
			fmt.Println("ok")
		case len(f) == 1 && f[0] == "quit":
			if err := s.Close(); err != nil {
				fmt.Println("error", err)
				return 1
			}
			return 0
		}
	}
	if err := s.Close(); err != nil {
		return 1
	}
	return 0
}

// writerProc is a writer process on a DB (see writerHelper).
type writerProc struct {
	t   *testing.T
	cmd *osexec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startWriter(t *testing.T, path string) *writerProc {
	t.Helper()
	cmd := osexec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), writerHelperEnv+"="+path)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &writerProc{t: t, cmd: cmd, in: in, out: bufio.NewScanner(out)}
	t.Cleanup(func() { w.cmd.Process.Kill(); w.cmd.Wait() })
	return w
}

// claim has the writer claim issue n and fails the test unless it says ok.
func (w *writerProc) claim(n int) {
	w.t.Helper()
	fmt.Fprintf(w.in, "claim %d\n", n)
	if !w.out.Scan() || w.out.Text() != "ok" {
		w.t.Fatalf("the writer process's claim of #%d: %q %v", n, w.out.Text(), w.out.Err())
	}
}

// quit has the writer close and exit, and fails the test unless it exits 0.
func (w *writerProc) quit() {
	w.t.Helper()
	fmt.Fprintln(w.in, "quit")
	if err := w.cmd.Wait(); err != nil {
		w.t.Fatalf("the writer process failed: %v", err)
	}
}

// kill ends the writer with SIGKILL: its -wal and -shm stay as it left them.
func (w *writerProc) kill() {
	w.cmd.Process.Kill()
	w.cmd.Wait()
}

// dirState is every entry of dir: its name, type and mode, owner, size, modification
// time and the hash of its bytes. Two equal states mean nothing was created, removed or
// changed — not one byte, not its modification time, not its owner or mode. (Not its
// ctime: SQLite running as root re-asserts the DB owner's ownership of a -wal or -shm it
// opens, a chown to the same owner that moves the ctime alone.)
func dirState(t testing.TB, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		h := "-"
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			h = fmt.Sprintf("%x", sha256.Sum256(b))[:16]
		}
		m[e.Name()] = fmt.Sprintf("%v uid=%d gid=%d size=%d mtime=%d sha=%s", fi.Mode(), st.Uid, st.Gid, fi.Size(),
			fi.ModTime().UnixNano(), h)
	}
	return m
}

// stateDiff says what differs between two directory states ("" when nothing).
func stateDiff(before, after map[string]string) string {
	var d []string
	for k, v := range after {
		switch b, ok := before[k]; {
		case !ok:
			d = append(d, "created "+k)
		case b != v:
			d = append(d, "changed "+k+": "+b+" -> "+v)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			d = append(d, "removed "+k)
		}
	}
	slices.Sort(d)
	return strings.Join(d, "\n")
}

// readAll opens a Reader on path and runs every read it offers, then closes it; it
// returns the items of the active leases the snapshot holds, sorted.
func readAll(path string) ([]int64, error) {
	ctx := context.Background()
	r, err := leases.OpenReadOnly(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	s, err := r.Snapshot(ctx, leases.ReadOptions{})
	if err != nil {
		return nil, err
	}
	var items []int64
	for _, l := range s.Leases {
		if l.Status == leaserec.StatusActive {
			items = append(items, l.Work.Number)
		}
	}
	slices.Sort(items)
	ref := leasestest.Work(leaserec.KindIssue, 1)
	reads := []func() error{
		func() error { _, err := r.DataVersion(ctx); return err },
		func() error { _, err := r.EventsAtVersion(ctx, 0, 10); return err },
		func() error { _, _, err := r.EventsSince(ctx, 0, 10); return err },
		func() error { _, _, _, err := r.EventsBacklog(ctx, 0, 10); return err },
		func() error {
			_, err := r.ReadScope(ctx, leases.Scope{WorkItemIDs: []int64{1}, SessionIDs: []string{"writer"}})
			return err
		},
		func() error { _, _, err := r.LeaseByID(ctx, "none"); return err },
		func() error { _, err := r.LeasesForWorkItem(ctx, ref); return err },
		func() error { _, err := r.LeaseHistory(ctx, ref); return err },
		func() error { _, err := r.HasColumn(ctx, "leases", "lease_id"); return err },
		func() error { _, err := r.Supports(ctx, leases.OpClaim); return err },
	}
	for i, f := range reads {
		if err := f(); err != nil {
			return nil, fmt.Errorf("read %d: %w", i, err)
		}
	}
	return items, nil
}

// journalMode sets a DB's journal mode with a connection of this process, then closes it.
func journalMode(t *testing.T, path, mode string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var got string
	if err := db.QueryRow("PRAGMA journal_mode=" + mode).Scan(&got); err != nil || !strings.EqualFold(got, mode) {
		t.Fatalf("journal_mode=%s: %q %v", mode, got, err)
	}
}

// TestReadsCreateAndChangeNothing: every read of a SQLite DB leaves its directory exactly
// as it was — no file created (no -wal, no -shm), none changed (not a byte of the -shm,
// not a timestamp) — whatever the journal mode and whoever else has it open, and still
// reads what was committed (the WAL's content included). Before the fix a read of a WAL
// DB closed cleanly created its -wal and -shm, a read beside a live writer wrote its read
// mark into the -shm, a read of a killed writer's leftovers rebuilt the -shm, and a -wal
// without its -shm got a new -shm.
func TestReadsCreateAndChangeNothing(t *testing.T) {
	// As the steward binary declares: this package's other tests write through
	// connections of their own, but none beside these.
	leases.OnlyOwnWriters()
	defer leases.TestingAllowForeignWriters()
	type setup func(t *testing.T, path string) (want []int64, cleanup func(t *testing.T))
	cases := []struct {
		name    string
		setup   setup
		wantErr error
		// companions present before the read, as the case requires
		wal, shm bool
	}{
		{name: "WAL closed cleanly", setup: func(t *testing.T, path string) ([]int64, func(*testing.T)) {
			w := startWriter(t, path)
			w.claim(1)
			w.quit()
			return []int64{1}, nil
		}},
		{name: "WAL with a live writer", wal: true, shm: true, setup: func(t *testing.T, path string) ([]int64, func(*testing.T)) {
			w := startWriter(t, path)
			w.claim(1)
			w.claim(2)
			// After the read the writer still claims and closes cleanly.
			return []int64{1, 2}, func(t *testing.T) { w.claim(3); w.quit() }
		}},
		{name: "WAL left by a killed writer", wal: true, shm: true, setup: func(t *testing.T, path string) ([]int64, func(*testing.T)) {
			w := startWriter(t, path)
			w.claim(1)
			w.kill()
			return []int64{1}, nil
		}},
		{name: "WAL without its -shm", wal: true, wantErr: leases.ErrWALIndexMissing, setup: func(t *testing.T, path string) ([]int64, func(*testing.T)) {
			w := startWriter(t, path)
			w.claim(1)
			w.kill()
			if err := os.Remove(path + "-shm"); err != nil {
				t.Fatal(err)
			}
			return nil, nil
		}},
		{name: "WAL with a -wal SQLite ignores and no -shm", wal: true, setup: func(t *testing.T, path string) ([]int64, func(*testing.T)) {
			w := startWriter(t, path)
			w.claim(1)
			w.quit()
			// Not a WAL header: SQLite would replay nothing, so the main file is the DB.
			if err := os.WriteFile(path+"-wal", []byte(strings.Repeat("garbage!", 1024)), 0o644); err != nil {
				t.Fatal(err)
			}
			return []int64{1}, nil
		}},
		{name: "rollback journal", setup: func(t *testing.T, path string) ([]int64, func(*testing.T)) {
			journalMode(t, path, "delete")
			w := startWriter(t, path)
			w.claim(1)
			w.quit()
			return []int64{1}, nil
		}},
		{name: "rollback journal with a live writer", setup: func(t *testing.T, path string) ([]int64, func(*testing.T)) {
			journalMode(t, path, "delete")
			w := startWriter(t, path)
			w.claim(1)
			return []int64{1}, func(t *testing.T) { w.claim(2); w.quit() }
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "control_plane.sqlite3")
			if err := leases.Migrate(path); err != nil {
				t.Fatal(err)
			}
			want, after := tc.setup(t, path)
			for suffix, on := range map[string]bool{"-wal": tc.wal, "-shm": tc.shm} {
				if _, err := os.Lstat(path + suffix); (err == nil) != on {
					t.Fatalf("set-up: %s present %v, want %v", suffix, err == nil, on)
				}
			}
			before := dirState(t, dir)
			for range 2 { // a second read finds what the first left
				got, err := readAll(path)
				if d := stateDiff(before, dirState(t, dir)); d != "" {
					t.Fatalf("a read changed the DB's directory (%v):\n%s", err, d)
				}
				if tc.wantErr != nil {
					if !errors.Is(err, tc.wantErr) {
						t.Fatalf("read: %v, want %v", err, tc.wantErr)
					}
					continue
				}
				if err != nil || !slices.Equal(got, want) {
					t.Fatalf("read: active leases on %v (%v), want %v", got, err, want)
				}
			}
			if after != nil {
				after(t)
			}
		})
	}
}

// TestReaderNeverHoldsOffAWriter: a reader open on a WAL DB closed cleanly (reading it
// immutable under its shared lock) lets a writer process claim, commit and exit cleanly
// meanwhile; the reader's next read sees the commit (it reads through the -wal the
// writer left), and a writer of the reader's own process writes as well.
func TestReaderNeverHoldsOffAWriter(t *testing.T) {
	leases.OnlyOwnWriters()
	defer leases.TestingAllowForeignWriters()
	dir := t.TempDir()
	path := filepath.Join(dir, "control_plane.sqlite3")
	if err := leases.Migrate(path); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := leases.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	v0, err := r.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if k := r.Kind(); k != "WAL, closed cleanly" {
		t.Fatalf("reader kind %q", k)
	}
	w := startWriter(t, path)
	w.claim(1)
	w.quit()
	v1, err := r.DataVersion(ctx)
	if err != nil || v1 == v0 {
		t.Fatalf("the writer's commit did not move the version: %d -> %d %v", v0, v1, err)
	}
	if ls, err := r.LeasesForWorkItem(ctx, leasestest.Work(leaserec.KindIssue, 1)); err != nil || len(ls) != 1 {
		t.Fatalf("the reader does not see the writer's claim: %v %v", ls, err)
	}
	// A writer of this process opens after the reader mapped the -shm read-only: the
	// reader drops its mapping first (SQLite shares one per file and process).
	if k := r.Kind(); k != "WAL, shared with its writers" {
		t.Fatalf("reader kind %q after the writer process", k)
	}
	s, err := leases.OpenReadWrite(path, leases.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if out, err := s.Claim(ctx, claimReq("in-process", 2), time.Now()); err != nil || !out.OK() {
		t.Fatalf("a writer of the reader's process: %+v %v", out, err)
	}
	if ls, err := r.LeasesForWorkItem(ctx, leasestest.Work(leaserec.KindIssue, 2)); err != nil || len(ls) != 1 {
		t.Fatalf("the reader does not see its own process's claim: %v %v", ls, err)
	}
}

// BenchmarkSmallRead is the cost of one small read (the active leases of one item)
// through an open Reader, per state of the file: the check that the handle still fits
// the file (an lstat or a header read per read) is what a read pays for creating nothing.
func BenchmarkSmallRead(b *testing.B) {
	for _, state := range []string{"WAL closed cleanly", "WAL with a live writer", "rollback journal"} {
		b.Run(state, func(b *testing.B) {
			t := &testing.T{}
			path := filepath.Join(b.TempDir(), "control_plane.sqlite3")
			if err := leases.Migrate(path); err != nil {
				b.Fatal(err)
			}
			switch state {
			case "WAL with a live writer":
				w := startWriterB(b, path)
				defer w.Process.Kill()
			case "rollback journal":
				journalMode(t, path, "delete")
			}
			r, err := leases.OpenReadOnly(path)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			ctx, ref := context.Background(), leasestest.Work(leaserec.KindIssue, 1)
			b.ResetTimer()
			for b.Loop() {
				if _, err := r.LeasesForWorkItem(ctx, ref); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// startWriterB starts a writer process that has claimed item #1 and holds the DB open.
func startWriterB(b *testing.B, path string) *osexec.Cmd {
	cmd := osexec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), writerHelperEnv+"="+path)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	fmt.Fprintln(in, "claim 1")
	sc := bufio.NewScanner(out)
	if !sc.Scan() || sc.Text() != "ok" {
		b.Fatalf("writer: %q", sc.Text())
	}
	return cmd
}
