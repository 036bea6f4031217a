package govern

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"steward/gitea"
	"steward/govern/actionid"
	"steward/leases/leaserec"
	"steward/locks"
)

// The tests below run the core in child processes: the test binary re-executed with
// STEWARD_GOVERN_CHILD set runs TestChildProcess, which acts and exits.

const childEnv = "STEWARD_GOVERN_CHILD"

func childWorkspace() (Workspace, string) {
	host, _ := os.Hostname()
	return Workspace{
		LocksDir: os.Getenv("CHILD_LOCKS"), DBPath: os.Getenv("CHILD_DB"), RepoRoot: os.Getenv("CHILD_REPO"),
		Env: func(string) (string, bool) { return "", false }, Host: host,
	}, os.Getenv("CHILD_AUDIT")
}

// TestChildProcess is the body of the child processes; it does nothing in a normal run.
func TestChildProcess(t *testing.T) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		return
	}
	ws, auditPath := childWorkspace()
	log, err := OpenAudit(auditPath, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	now, _ := time.Parse(time.RFC3339, os.Getenv("CHILD_NOW"))
	clk := func() time.Time { return now }
	req := childRequest(os.Getenv, os.Getpid())
	if u := os.Getenv("CHILD_GITEA_URL"); u != "" {
		cl, err := gitea.New(gitea.Config{Login: gitea.Login{URL: u, Token: gitea.NewToken(os.Getenv("CHILD_GITEA_TOKEN"))},
			Owner: "acme", Repo: "widgets", RequestTimeout: 10 * time.Second})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		ws.Gitea = cl
	}
	apply := func(core *Core) {
		pv, err := core.Preview(context.Background(), req)
		if err != nil || !pv.Allowed {
			fmt.Fprintln(os.Stderr, "preview:", err, pv.Refusal)
			os.Exit(3)
		}
		out := core.Apply(context.Background(), pv, pv.ConfirmPhrase)
		fmt.Println("result", out.Result, out.Code)
	}
	switch mode {
	case "steps":
		// Apply to the end, printing every step passed (the kill points of the action) and
		// how long the preview and apply took.
		core := New(ws, log, Options{Actor: Actor{OSUser: "child", Host: ws.Host, Role: RoleOperator}, Now: clk,
			Step: func(s string) { fmt.Println("step", s) }})
		start := time.Now()
		apply(core)
		fmt.Println("took", time.Since(start).Nanoseconds())
	case "killable":
		// Ready, then apply when the parent closes stdin; the parent kills at a random moment.
		core := New(ws, log, Options{Actor: Actor{OSUser: "child", Host: ws.Host, Role: RoleOperator}, Now: clk})
		fmt.Println("ready")
		_, _ = io.Copy(io.Discard, os.Stdin)
		apply(core)
	case "killat":
		// Kill at the n-th time the named step is passed.
		step := os.Getenv("CHILD_STEP")
		n, _ := strconv.Atoi(os.Getenv("CHILD_STEP_N"))
		seen := 0
		apply(New(ws, log, Options{Actor: Actor{OSUser: "child", Host: ws.Host, Role: RoleOperator}, Now: clk,
			Step: func(s string) {
				if s == step {
					if seen++; seen >= n {
						_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
						select {} // never past the step
					}
				}
			}}))
	case "commit-fails":
		// COMMIT itself fails: at the step before it the file size limit drops to one byte,
		// so the commit's writes to the DB's WAL fail (EFBIG; Go ignores SIGXFSZ); the limit
		// is restored at the next step, before anything else is written.
		var old syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		limited := false
		apply(New(ws, log, Options{Actor: Actor{OSUser: "child", Host: ws.Host, Role: RoleOperator}, Now: clk,
			Step: func(s string) {
				switch {
				case s == "before-commit" && !limited:
					lim := old
					lim.Cur = 1
					if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
						fmt.Fprintln(os.Stderr, err)
						os.Exit(2)
					}
					limited = true
				case limited:
					if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
						fmt.Fprintln(os.Stderr, err)
						os.Exit(2)
					}
					limited = false
				}
			}}))
	case "race":
		core := New(ws, log, Options{Actor: Actor{OSUser: "child", Host: ws.Host, Role: RoleOperator}, Now: clk})
		fmt.Println("ready")
		_, _ = io.Copy(io.Discard, os.Stdin) // the parent closes stdin to start every child at once
		var wg sync.WaitGroup
		for i := 0; i < 25; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pv, err := core.Preview(context.Background(), req)
				if err != nil {
					fmt.Fprintln(os.Stderr, "preview:", err)
					return
				}
				out := core.Apply(context.Background(), pv, pv.ConfirmPhrase)
				fmt.Println("result", out.Result, out.Code)
			}()
		}
		wg.Wait()
	case "crash":
		step := os.Getenv("CHILD_STEP")
		core := New(ws, log, Options{Actor: Actor{OSUser: "child", Host: ws.Host, Role: RoleOperator}, Now: clk,
			Step: func(s string) {
				if s == step {
					_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				}
			}})
		pv, err := core.Preview(context.Background(), req)
		if err != nil || !pv.Allowed {
			fmt.Fprintln(os.Stderr, "preview:", err, pv.Refusal)
			os.Exit(3)
		}
		out := core.Apply(context.Background(), pv, pv.ConfirmPhrase)
		fmt.Println("result", out.Result, out.Code)
	}
	os.Exit(0)
}

// childRequest is the request a child applies, from its CHILD_* environment (getenv);
// pid is the claiming process.
func childRequest(getenv func(string) string, pid int) Request {
	req := Request{Action: getenv("CHILD_ACTION"), Target: Target{LeaseID: getenv("CHILD_LEASE"), LockFile: getenv("CHILD_LOCK")}}
	m := map[string]string{}
	if n, err := strconv.ParseInt(getenv("CHILD_ITEM"), 10, 64); err == nil {
		req.Target.Item, req.Target.Session = item(n), "s-child"
		m["pid"] = strconv.Itoa(pid)
	}
	if s := getenv("CHILD_SESSION"); s != "" {
		req.Target.Session = s
	}
	req.Target.Attempt = getenv("CHILD_ATTEMPT")
	if e := getenv("CHILD_ENTRY"); e != "" {
		req.Target.Entry = e
		m["evidence"], m["level"], m["for"] = getenv("CHILD_EVIDENCE"), "0", getenv("CHILD_FOR")
	}
	if b := getenv("CHILD_BODY"); b != "" {
		m["body"] = b
	}
	// Each action gets the parameters it takes (a claim its pid, an answer its body).
	for k := range m {
		if !slices.Contains(ParamNames(req.Action), k) {
			delete(m, k)
		}
	}
	p, err := DecodeParams(req.Action, m)
	if err != nil {
		panic(err)
	}
	req.Params = p
	return req
}

func (f *fixture) child(mode string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+mode,
		"CHILD_LOCKS="+f.ws.LocksDir, "CHILD_DB="+f.ws.DBPath, "CHILD_REPO="+f.ws.RepoRoot,
		"CHILD_AUDIT="+f.audit.Path(), "CHILD_NOW="+f.clock.Now().Format(time.RFC3339))
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// TestReclaimRace: 2 OS processes × 25 goroutines all apply lease.reclaim-expired to one
// lease: exactly 1 succeeds, 49 are refused, 50 terminal audit records, one effect — on
// SQLite and on PostgreSQL.
func TestReclaimRace(t *testing.T) {
	for _, b := range backends {
		t.Run(b, func(t *testing.T) { testReclaimRace(t, b) })
	}
}

func testReclaimRace(t *testing.T, backend string) {
	f := newFixtureOn(t, RoleOperator, backend)
	f.expiredLease("L1", 1)
	var cmds []*exec.Cmd
	var stdins []io.WriteCloser
	var outs []*bufio.Reader
	for i := 0; i < 2; i++ {
		cmd := f.child("race", "CHILD_ACTION="+actionid.ReclaimExpired, "CHILD_LEASE=L1")
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, stdins, outs = append(cmds, cmd), append(stdins, in), append(outs, bufio.NewReader(out))
	}
	for _, r := range outs {
		if line, err := r.ReadString('\n'); err != nil || line != "ready\n" {
			t.Fatalf("child not ready: %q %v", line, err)
		}
	}
	for _, in := range stdins {
		in.Close()
	}
	results := map[string]int{}
	for i, cmd := range cmds {
		rest, _ := io.ReadAll(outs[i])
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child %d: %v", i, err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(rest)), "\n") {
			results[l]++
		}
	}
	if results["result succeeded "] != 1 {
		t.Errorf("results %v: want exactly one success", results)
	}
	refused := 0
	for k, n := range results {
		if strings.HasPrefix(k, "result refused ") {
			refused += n
		}
	}
	if refused != 49 {
		t.Errorf("refused %d, want 49 (%v)", refused, results)
	}
	atts := Attempts(f.records())
	terminals, succeeded := 0, 0
	for _, a := range atts {
		terminals += a.Outcomes
		if a.Outcomes != 1 {
			t.Errorf("attempt %s has %d terminal records", a.ID, a.Outcomes)
		}
		if a.Status() == ResultSucceeded {
			succeeded++
		}
	}
	if len(atts) != 50 || terminals != 50 || succeeded != 1 {
		t.Errorf("audit: %d attempts, %d terminal records, %d succeeded", len(atts), terminals, succeeded)
	}
	var events int
	if err := f.db().QueryRow(`SELECT count(*) FROM events WHERE event_type = 'lease.reclaim'`).Scan(&events); err != nil || events != 1 {
		t.Errorf("lease.reclaim events: %d %v (want exactly one effect)", events, err)
	}
	if l := f.lease("L1"); l.Status != leaserec.StatusExpired {
		t.Errorf("lease is %s", l.Status)
	}
}

// TestCrashAtEveryStep kills the applying process at each step between intent and outcome:
// the stores hold the old or the new state, never a partial one, and the audit log shows
// the attempt unknown until the verifier settles it from evidence.
func TestCrashAtEveryStep(t *testing.T) {
	type crashCase struct {
		action string
		steps  []string
		setup  func(f *fixture) []string // returns extra child env
		// state reports "old" or "new" (or fails the test on a partial state).
		state func(t *testing.T, f *fixture) string
	}
	reclaim := crashCase{action: actionid.ReclaimExpired,
		steps: []string{"intent-written", "before-commit", "effect-done"},
		setup: func(f *fixture) []string { f.expiredLease("L1", 1); return []string{"CHILD_LEASE=L1"} },
		state: func(t *testing.T, f *fixture) string {
			l := f.lease("L1")
			switch {
			case l.Status == leaserec.StatusActive:
				return "old"
			case l.Status == leaserec.StatusExpired && l.EndReason == "reclaimed":
				return "new"
			}
			t.Fatalf("partial lease state %s/%s", l.Status, l.EndReason)
			return ""
		}}
	var oldLock []byte
	retire := crashCase{action: actionid.RetireLock,
		steps: []string{"intent-written", "lock-" + locks.StepLocked, "lock-" + locks.StepTempWritten, "lock-" + locks.StepTempSynced,
			"lock-" + locks.StepRenamed, "lock-" + locks.StepDirSynced, "lock-" + locks.StepLiveRemoved, "effect-done"},
		setup: func(f *fixture) []string {
			name := f.lockFile(4, -time.Minute, deadPID(f.t))
			oldLock = mustRead(f.t, filepath.Join(f.ws.LocksDir, name))
			return []string{"CHILD_LOCK=" + name}
		},
		state: func(t *testing.T, f *fixture) string {
			name, _ := locks.Name(lockKey(work(4)))
			live := locks.ReadFile(f.ws.LocksDir, name)
			snap, err := locks.LoadDir(f.ws.LocksDir, locks.LoadOptions{Retired: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range snap.Retired {
				if e.Unreadable != nil {
					t.Fatalf("partial archive %s: %+v", e.Name, e.Unreadable)
				}
			}
			if len(snap.Live) > 1 {
				t.Fatalf("%d live locks", len(snap.Live))
			}
			if !live.Missing {
				if got := mustRead(t, live.Path); string(got) != string(oldLock) {
					t.Fatalf("live lock changed:\n%s", got)
				}
				if len(snap.Retired) == 1 {
					return "both" // archived, live not yet removed: the record is whole in both
				}
				return "old"
			}
			if len(snap.Retired) != 1 {
				t.Fatalf("live lock gone but %d archives", len(snap.Retired))
			}
			return "new"
		}}
	type run struct {
		cc      crashCase
		backend string
	}
	var runs []run
	for _, b := range backends {
		runs = append(runs, run{reclaim, b}) // the DB transition, on every backend
	}
	runs = append(runs, run{retire, "sqlite"}) // lock files only
	for _, r := range runs {
		cc := r.cc
		for _, step := range cc.steps {
			t.Run(r.backend+"/"+cc.action+"/"+step, func(t *testing.T) {
				f := newFixtureOn(t, RoleOperator, r.backend)
				env := append(cc.setup(f), "CHILD_ACTION="+cc.action, "CHILD_STEP="+step)
				err := f.child("crash", env...).Run()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
					t.Fatalf("child was not killed at %s: %v", step, err)
				}
				awaitUnfinished(t, f)
				state := cc.state(t, f)
				atts := Attempts(f.records())
				if len(atts) != 1 || atts[0].Outcome != nil || atts[0].Status() != ResultUnknown {
					t.Fatalf("after the crash the attempt should be unknown with no outcome: %+v", atts)
				}
				vs, err := f.core.Verify(context.Background())
				if err != nil || len(vs) != 1 {
					t.Fatalf("verify: %v %+v", err, vs)
				}
				a := Attempts(f.records())[0]
				if a.Outcomes != 1 || a.Outcome.Result != ResultUnknown || a.Outcome.Disposition != DispositionOutcomeUnknown {
					t.Fatalf("verifier did not record the missing terminal as unknown: %+v", a.Outcome)
				}
				want := map[string]Result{"old": ResultFailed, "new": ResultSucceeded, "both": ResultUnknown}[state]
				if state == "both" {
					// The evidence does not settle it: it stays unknown for a human.
					if vs[0].Result != ResultUnknown || a.Status() != ResultUnknown || len(a.Resolutions) != 0 {
						t.Fatalf("state both: verify %+v, attempt %s", vs[0], a.Status())
					}
					return
				}
				if vs[0].Result != want || a.Status() != want || len(a.Resolutions) != 1 || a.Resolutions[0].ResolvedBy != ResolvedByMachine {
					t.Fatalf("state %s: verifier says %s (%v), attempt %s", state, vs[0].Result, vs[0].Evidence, a.Status())
				}
				// A second verify finds nothing left to settle.
				if again, _ := f.core.Verify(context.Background()); len(again) != 0 {
					t.Fatalf("second verify: %+v", again)
				}
			})
		}
	}
}
