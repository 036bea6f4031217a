package locks

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"steward/locks/lockrec"
)

func decodeFixture(t testing.TB, name string) lockrec.Record {
	t.Helper()
	rec, fs := lockrec.Decode(fixtureBytes(t, name))
	for _, f := range fs {
		if f.Fatal() {
			t.Fatalf("fixture %s: %+v", name, f)
		}
	}
	return rec
}

func TestWriteCAS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := decodeFixture(t, "unknown-fields.json")
	name, _ := Name(lockrec.Key{Remote: "prgs", Org: "o", Repo: "r", Issue: 658})

	if _, err := WriteCAS(dir, name, ExpectFence(0, ""), rec); !errors.Is(err, ErrNotFound) {
		t.Fatalf("fence on a missing file: %v", err)
	}
	gen, err := WriteCAS(dir, name, ExpectAbsent(), rec)
	if err != nil || gen != 1 {
		t.Fatalf("create: gen %d err %v", gen, err)
	}
	if _, err := WriteCAS(dir, name, ExpectAbsent(), rec); !errors.Is(err, ErrExists) {
		t.Fatalf("second create: %v", err)
	}
	e := ReadFile(dir, name)
	if e.Unreadable != nil || e.Record.Generation() != 1 || len(e.Record.UnknownKeys) != 1 {
		t.Fatalf("written file: %+v %+v", e.Unreadable, e.Record.UnknownKeys)
	}
	tsid := e.Record.TaskSessionID()
	var pe *PathError
	if _, err := WriteCAS(dir, name, ExpectFence(1, "someone-else"), rec); !errors.Is(err, ErrFenceMoved) || !errors.As(err, &pe) || pe.Op != "write" || pe.Path != filepath.Join(dir, name) {
		t.Fatalf("wrong task session: %v", err)
	}
	if _, err := WriteCAS(dir, name, ExpectFence(0, tsid), rec); !errors.Is(err, ErrFenceMoved) {
		t.Fatalf("wrong generation: %v", err)
	}
	next := e.Record
	six := int64(6)
	next.WorkLease.HeartbeatCount = &six
	gen, err = WriteCAS(dir, name, FenceOf(&e.Record), next)
	if err != nil || gen != 2 {
		t.Fatalf("update: gen %d err %v", gen, err)
	}
	e2 := ReadFile(dir, name)
	if *e2.Record.WorkLease.HeartbeatCount != 6 || e2.Record.Generation() != 2 || e2.Inode == e.Inode {
		t.Errorf("update not visible or not by rename: %+v", e2.Record.WorkLease.HeartbeatCount)
	}
	if !strings.Contains(string(e2.Record.Raw), `"x_worker_note": "kept"`) {
		t.Errorf("unknown nested field lost:\n%s", e2.Record.Raw)
	}
	for _, bad := range []string{"../x.json", ".hidden.json", "a/b.json", "x"} {
		if _, err := WriteCAS(dir, bad, ExpectAbsent(), rec); !errors.Is(err, ErrInvalidName) {
			t.Errorf("name %q: %v", bad, err)
		}
	}
	// A symlink or an unreadable file at the name is refused, never followed or overwritten.
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteCAS(dir, "link.json", ExpectFence(0, ""), rec); !errors.Is(err, ErrNotRegular) {
		t.Errorf("symlink: %v", err)
	}
	writeFile(t, filepath.Join(dir, "torn.json"), []byte(`{"remote":`))
	if _, err := WriteCAS(dir, "torn.json", ExpectFence(0, ""), rec); !errors.Is(err, ErrUnreadable) {
		t.Errorf("torn: %v", err)
	}
	s, err := LoadDir(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range s.Ignored {
		if strings.HasPrefix(n, ".tmp-") {
			t.Errorf("temp file left behind: %s", n)
		}
	}
}

func TestWriteCASConcurrentOneWinner(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := decodeFixture(t, "canonical.json")
	gen, err := WriteCAS(dir, "x.json", ExpectAbsent(), rec)
	if err != nil {
		t.Fatal(err)
	}
	fence := ExpectFence(gen, rec.TaskSessionID())
	const n = 32
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := rec
			wl := *rec.WorkLease
			wl.TaskSessionID = "winner-" + string(rune('a'+i))
			r.WorkLease = &wl
			_, errs[i] = WriteCAS(dir, "x.json", fence, r)
		}()
	}
	close(start)
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, ErrFenceMoved):
			t.Errorf("unexpected error: %v", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d winners, want exactly 1", wins)
	}
	if e := ReadFile(dir, "x.json"); e.Record.Generation() != gen+1 || !strings.HasPrefix(e.Record.TaskSessionID(), "winner-") {
		t.Errorf("final record gen %d tsid %q", e.Record.Generation(), e.Record.TaskSessionID())
	}
}

func TestArchiveAndRestore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := decodeFixture(t, "unknown-fields.json")
	key, _ := rec.Key()
	name, _ := Name(key)
	if _, err := WriteCAS(dir, name, ExpectAbsent(), rec); err != nil {
		t.Fatal(err)
	}
	live := ReadFile(dir, name)
	w := &Writer{Now: func() time.Time { return time.Date(2026, 7, 24, 6, 30, 0, 0, time.UTC) }}
	block := lockrec.RecoveryBlock{Action: "retire_lock", ActionID: "act-1", AuditAttemptID: "att-9",
		Actor: lockrec.Actor{Login: "maint", OSUser: "ops", Host: "h1"}, Reason: "owner pid dead",
		Evidence: json.RawMessage(`{"pid":4242,"alive":false}`)}
	if _, err := w.Archive(dir, name, ExpectFence(1, "wrong"), block); !errors.Is(err, ErrFenceMoved) {
		t.Fatalf("archive with a moved fence: %v", err)
	}
	if _, err := w.Archive(dir, name, ExpectAbsent(), block); err == nil {
		t.Fatal("archive with ExpectAbsent accepted")
	}
	archived, err := w.Archive(dir, name, FenceOf(&live.Record), block)
	if err != nil {
		t.Fatal(err)
	}
	want := "retired/" + strings.TrimSuffix(name, ".json") + ".20260724T063000Z.1.json"
	if archived != want {
		t.Errorf("archived as %q, want %q", archived, want)
	}
	if e := ReadFile(dir, name); !e.Missing {
		t.Fatal("live file still present after archive")
	}
	a := ReadFile(dir, archived)
	if a.Unreadable != nil || a.Class != lockrec.ClassRetired || a.Key != key {
		t.Fatalf("archived entry: %+v", a.Unreadable)
	}
	got, ok := a.Record.Recovery()
	if !ok || got.ActionID != "act-1" || got.AuditAttemptID != "att-9" || got.Actor.Host != "h1" ||
		got.ArchivedAt != "2026-07-24T06:30:00Z" || got.LiveName != name || got.PriorGeneration != 1 ||
		got.PriorTaskSessionID != live.Record.TaskSessionID() || !strings.Contains(strings.Join(strings.Fields(string(got.Evidence)), ""), `"alive":false`) {
		t.Errorf("recovery block: %+v", got)
	}
	// The archived copy keeps the whole record, unknown fields included.
	if lockrec.Assess(&a.Record, fixtureNow).Contract != lockrec.ContractCanonical || len(a.Record.UnknownKeys) != 1 {
		t.Errorf("archived record changed: %+v", a.Record.UnknownKeys)
	}
	s, _ := LoadDir(dir, LoadOptions{Retired: true})
	if len(s.Live) != 0 || len(s.Retired) != 1 {
		t.Errorf("snapshot live %d retired %d", len(s.Live), len(s.Retired))
	}

	// Restore succeeds while nothing claimed the key, generation continues.
	restored, gen, err := restore(dir, archived)
	if err != nil || restored != name || gen != 2 {
		t.Fatalf("restore: %q %d %v", restored, gen, err)
	}
	r := ReadFile(dir, name)
	if _, ok := r.Record.Recovery(); ok || r.Record.TaskSessionID() != live.Record.TaskSessionID() {
		t.Errorf("restored record: %s", r.Record.Raw)
	}
	// Restoring again refuses: the key is live (claimed since).
	if _, _, err := restore(dir, archived); !errors.Is(err, ErrExists) {
		t.Errorf("second restore: %v", err)
	}
	if _, _, err := restore(dir, "retired/nope.json"); !errors.Is(err, ErrNotFound) {
		t.Errorf("restore of a missing archive: %v", err)
	}
}

func TestRestoreRefusesWhenReclaimedUnderOtherName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := decodeFixture(t, "canonical.json")
	key, _ := rec.Key()
	name, _ := Name(key)
	if _, err := WriteCAS(dir, name, ExpectAbsent(), rec); err != nil {
		t.Fatal(err)
	}
	cur := ReadFile(dir, name)
	archived, err := archive(dir, name, FenceOf(&cur.Record), lockrec.RecoveryBlock{Action: "retire_lock"})
	if err != nil {
		t.Fatal(err)
	}
	// A worker re-claims the issue with its own file name.
	writeFile(t, filepath.Join(dir, "worker-own-name.json"), fixtureBytes(t, "canonical.json"))
	var pe *PathError
	if _, _, err := restore(dir, archived); !errors.Is(err, ErrExists) || !errors.As(err, &pe) || !strings.HasSuffix(pe.Path, "worker-own-name.json") {
		t.Fatalf("restore over a re-claim: %v", err)
	}
	if e := ReadFile(dir, name); !e.Missing {
		t.Error("restore wrote despite refusing")
	}
}

// The crash test re-executes the test binary; the child runs one write
// primitive and SIGKILLs itself at the named step.
const crashEnv = "STEWARD_LOCKS_CRASH"

func TestCrashChild(t *testing.T) {
	spec := os.Getenv(crashEnv)
	if spec == "" {
		return // only meaningful as the child of TestCrashAtEveryStep
	}
	op, rest, _ := strings.Cut(spec, ":")
	stepName, dir, _ := strings.Cut(rest, ":")
	w := &Writer{Step: func(s string) {
		if s == stepName {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // never continue past the step
		}
	}}
	cur := ReadFile(dir, "x.json")
	var err error
	switch op {
	case "write":
		next := cur.Record
		wl := *next.WorkLease
		wl.TaskSessionID = "new-session"
		next.WorkLease = &wl
		_, err = w.WriteCAS(dir, "x.json", FenceOf(&cur.Record), next)
	case "archive":
		_, err = w.Archive(dir, "x.json", FenceOf(&cur.Record), lockrec.RecoveryBlock{Action: "retire_lock"})
	}
	if err != nil {
		t.Fatal(err)
	}
	os.Exit(3) // finished without being killed: the step was never reached
}

func TestCrashAtEveryStep(t *testing.T) {
	t.Parallel()
	steps := map[string][]string{
		"write":   {StepLocked, StepTempWritten, StepTempSynced, StepRenamed, StepDirSynced},
		"archive": {StepLocked, StepTempWritten, StepTempSynced, StepRenamed, StepDirSynced, StepLiveRemoved},
	}
	for op, list := range steps {
		for _, step := range list {
			t.Run(op+"/"+step, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				rec := decodeFixture(t, "canonical.json")
				if _, err := WriteCAS(dir, "x.json", ExpectAbsent(), rec); err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
				cmd.Env = append(os.Environ(), crashEnv+"="+op+":"+step+":"+dir)
				out, err := cmd.CombinedOutput()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
					t.Fatalf("child did not die by SIGKILL at %s: %v\n%s", step, err, out)
				}
				s, err := LoadDir(dir, LoadOptions{Retired: true})
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range append(s.Live, s.Retired...) {
					if e.Unreadable != nil {
						t.Fatalf("partial file visible as a lock: %s %+v", e.Name, e.Unreadable)
					}
				}
				switch op {
				case "write":
					if len(s.Live) != 1 {
						t.Fatalf("%d live locks, want 1", len(s.Live))
					}
					g, ts := s.Live[0].Record.Generation(), s.Live[0].Record.TaskSessionID()
					old := g == 1 && ts == rec.TaskSessionID()
					upd := g == 2 && ts == "new-session"
					if !old && !upd {
						t.Errorf("neither old nor new record: gen %d tsid %q", g, ts)
					}
					if upd != (step == StepRenamed || step == StepDirSynced) {
						t.Errorf("after %s: updated=%v", step, upd)
					}
				case "archive":
					if len(s.Live)+len(s.Retired) == 0 {
						t.Fatal("lock lost: neither live nor archived")
					}
					if len(s.Live) == 0 && step != StepLiveRemoved {
						t.Errorf("live removed before the archive was durable (step %s)", step)
					}
					for _, r := range s.Retired {
						if _, ok := r.Record.Recovery(); !ok {
							t.Error("archived copy without its recovery block")
						}
					}
				}
				// A new writer is not blocked by the dead child's flock.
				cur := ReadFile(dir, "x.json")
				if !cur.Missing {
					if _, err := WriteCAS(dir, "x.json", FenceOf(&cur.Record), cur.Record); err != nil {
						t.Errorf("write after crash: %v", err)
					}
				}
			})
		}
	}
}

// A lock claimed and released twice in one second starts at generation 1 each time: each
// archive gets its own name (the load run's second steward hit "lock already exists").
func TestArchiveTwiceInOneSecond(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := decodeFixture(t, "unknown-fields.json")
	key, _ := rec.Key()
	name, _ := Name(key)
	w := &Writer{Now: func() time.Time { return time.Date(2026, 7, 24, 6, 30, 0, 0, time.UTC) }}
	seen := map[string]bool{}
	for i := range 3 {
		if _, err := WriteCAS(dir, name, ExpectAbsent(), rec); err != nil {
			t.Fatal(err)
		}
		live := ReadFile(dir, name)
		archived, err := w.Archive(dir, name, FenceOf(&live.Record), lockrec.RecoveryBlock{Action: "release"})
		if err != nil {
			t.Fatalf("archive %d: %v", i+1, err)
		}
		if seen[archived] {
			t.Fatalf("archive %d reused the name %s", i+1, archived)
		}
		seen[archived] = true
		if e := ReadFile(dir, archived); e.Missing || e.Unreadable != nil || e.Class != lockrec.ClassRetired {
			t.Fatalf("archive %d: %+v", i+1, e)
		}
	}
}
