package govern

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/leases/leaserec"
	"steward/leases/pgtest/pgproxy"
	"steward/locks"
)

// The fault matrix for PostgreSQL (the crash matrix's spirit carried to the network):
// every governed action that writes the control-plane DB runs with its connection to the
// server through a loopback proxy (leases/pgtest/pgproxy) that cuts it at one statement of
// each of the action's write transactions — before the writes, after them (their answer
// lost, or the COMMIT never sent), and after the COMMIT was sent (the server commits, the
// answer is lost). Then `audit verify` runs and the matrix asserts:
//
//   - the apply never reports failed when anything of it took effect (the state, read
//     directly from the sources, is not the old one): a lost answer is unknown;
//   - after verify none stays unknown where the evidence can tell: the state is the old one
//     (verify says failed), the new one (succeeded), or a named partial state (unknown),
//     as in the crash matrix — anything else fails;
//   - every attempt has exactly one terminal record; never two active leases on one item;
//     never a torn lock, nor a live lock lost without its archive.
//
// The cut points are not listed by hand: each action first runs to the end through the
// proxy, which logs every statement; each transaction that wrote gives the points. The
// short form (every `go test`, so `.ci/run`) cuts at four per transaction: before its
// first write, the first write sent and its answer lost, the COMMIT never sent, the COMMIT
// sent and its answer lost. The long form — STEWARD_FAULT_MATRIX=long — cuts before and
// after every statement of every write transaction, BEGIN to COMMIT. Its last numbers are
// in docs/reliability.md.

// faultRow is one action of the matrix: the crash matrix's row (its setup, states and
// partial states), or one of its own.
type faultRow struct {
	crashAction
}

func faultRows() []faultRow {
	onDB := map[string]bool{actionid.Claim: true, actionid.Claim + " (its lock write fails)": true, actionid.Heartbeat: true,
		actionid.Release: true, actionid.ReclaimExpired: true, actionid.AbandonStale: true, actionid.Recover + " (reclaim, then retire)": true}
	var rows []faultRow
	for _, a := range crashActions() {
		if onDB[a.name] {
			rows = append(rows, faultRow{a})
		}
	}
	rows = append(rows,
		faultRow{crashAction{name: actionid.ExpireSweep,
			setup: func(f *fixture) []string {
				f.expiredLease("L1", 1)
				f.expiredLease("L2", 2)
				return []string{"CHILD_ACTION=" + actionid.ExpireSweep}
			},
			state: sweepState}},
		faultRow{crashAction{name: actionid.Ask, gitea: true,
			setup: func(f *fixture) []string {
				n := f.repo.CreateIssue("maint", "Which API?", "body")
				out := f.claim("s-child", n)
				return []string{"CHILD_ACTION=" + actionid.Ask, "CHILD_LEASE=" + out.Detail["lease_id"], "CHILD_SESSION=s-child",
					"CHILD_QUESTION=Which API?"}
			},
			state: askMatrixState,
			partial: map[string]func(t *testing.T, f *fixture){
				// Asking again finds its own question (never posts twice) and releases.
				"asked-lease-held": func(t *testing.T, f *fixture) {
					f.runOK(t, Request{Action: actionid.Ask, Target: Target{LeaseID: f.activeLeases(1)[0].LeaseID, Session: "s-child"},
						Params: AskParams{Question: "Which API?"}})
				},
				"asked-lease-released-lock-live": nil}}},
	)
	return rows
}

// sweepState: both expired leases active (old) or both expired by the sweep (new).
func sweepState(t *testing.T, f *fixture) string {
	a, b := f.lease("L1"), f.lease("L2")
	switch {
	case a.Status == leaserec.StatusActive && b.Status == leaserec.StatusActive:
		return "old"
	case a.Status == leaserec.StatusExpired && b.Status == leaserec.StatusExpired && a.EndReason == "expire_sweep" && b.EndReason == "expire_sweep":
		return "new"
	}
	t.Fatalf("sweep state: L1 %s/%s, L2 %s/%s (one transaction: both or neither)", a.Status, a.EndReason, b.Status, b.EndReason)
	return ""
}

// askMatrixState reads a clarification.ask on item #1: the question posted and labelled, then the
// lease released and its lock archived; never two questions.
func askMatrixState(t *testing.T, f *fixture) string {
	th, err := f.ws.Gitea.Thread(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	for _, c := range th.Comments {
		if strings.Contains(c.Body, "Which API?") {
			asked++
		}
	}
	labelled := th.Issue.HasLabel("status:blocked-pending-clarification")
	active := len(f.activeLeases(1)) > 0
	name, _ := locks.Name(lockKey(work(1)))
	live := !locks.ReadFile(f.ws.LocksDir, name).Missing
	switch {
	case asked > 1:
		t.Fatalf("the question was posted %d times", asked)
	case asked == 0 && !labelled && active && live:
		return "old"
	case asked == 1 && labelled && !active && !live:
		return "new"
	case asked == 1 && labelled && active && live:
		return "asked-lease-held"
	case asked == 1 && labelled && !active && live:
		return "asked-lease-released-lock-live"
	}
	t.Fatalf("ask state: %d questions, label %v, lease active %v, lock live %v", asked, labelled, active, live)
	return ""
}

// faultPoint is one cut: the n-th statement labelled label, cut when.
type faultPoint struct {
	name  string // what the point is, for the test's name
	label string
	n     int
	when  pgproxy.When
	// first: the cut is in the action's first effect (its first write transaction, with no
	// Gitea request before it), so a cut before its writes leaves nothing of the action.
	first bool
}

// faultFixture is a fresh PostgreSQL workspace for one row, set up through the fixture's
// own core (straight to the server), and a core acting as "faulted" whose DB connection
// goes through a new proxy.
func faultFixture(t *testing.T, a faultRow) (*fixture, *pgproxy.Proxy, *Core, Request) {
	f := newFixtureOn(t, RoleOperator, "postgres")
	if a.gitea {
		f.withGitea()
	}
	env := map[string]string{}
	for _, kv := range a.setup(f) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	req := childRequest(func(k string) string { return env[k] }, os.Getpid())
	if q := env["CHILD_QUESTION"]; q != "" {
		req.Params = AskParams{Question: q}
	}
	px := pgproxy.Start(t, f.ws.DBPath)
	ws := f.ws
	ws.DBPath = px.URL()
	c := New(ws, f.audit, Options{Actor: Actor{OSUser: "faulted", Host: ws.Host, Role: RoleOperator, GiteaLogin: "maint"}, Now: f.clock.Now})
	t.Cleanup(func() { c.Close() })
	return f, px, c, req
}

// applyThrough previews and applies req with c; the preview must allow it.
func applyThrough(t *testing.T, c *Core, req Request) Outcome {
	t.Helper()
	pv, err := c.Preview(context.Background(), req)
	if err != nil || !pv.Allowed {
		t.Fatalf("%s: preview %+v %v", req.Action, pv.Refusal, err)
	}
	return c.Apply(context.Background(), pv, pv.ConfirmPhrase)
}

// faultPoints runs the action to the end through the proxy and returns the cut points of
// every transaction that wrote. all: every statement of it, both ways; else four.
func faultPoints(t *testing.T, a faultRow, all bool) []faultPoint {
	_, px, c, req := faultFixture(t, a)
	if out := applyThrough(t, c, req); out.Result == ResultUnknown || out.Result == ResultRefused {
		t.Fatalf("%s to the end: %+v", a.name, out)
	}
	log := px.Log()
	seen := map[string]int{}
	nth := make([]int, len(log))
	for i, s := range log {
		seen[s.Label()]++
		nth[i] = seen[s.Label()]
	}
	var ps []faultPoint
	tx := 0
	for i := 0; i < len(log); i++ {
		if !strings.HasPrefix(strings.ToLower(log[i].SQL), "begin") {
			continue
		}
		// The statements of this transaction: the same connection, to its COMMIT or ROLLBACK.
		var in []int
		wrote := false
		for j := i; j < len(log); j++ {
			if log[j].Conn != log[i].Conn {
				continue
			}
			in = append(in, j)
			wrote = wrote || log[j].Write
			if j > i && !log[j].InTx {
				break
			}
			if low := strings.ToLower(log[j].SQL); log[j].IsCommit() || strings.HasPrefix(low, "rollback") {
				break
			}
		}
		if !wrote {
			continue
		}
		tx++
		at := func(j int, what string, when pgproxy.When) faultPoint {
			return faultPoint{name: fmt.Sprintf("tx%d %s", tx, what), label: log[j].Label(), n: nth[j], when: when,
				first: tx == 1 && !a.gitea}
		}
		stmt := func(k int) int { return in[k] }
		if all {
			for k, j := range in {
				ps = append(ps, at(j, fmt.Sprintf("stmt%d before", k+1), pgproxy.Before), at(j, fmt.Sprintf("stmt%d reply-lost", k+1), pgproxy.ReplyLost))
			}
			continue
		}
		first, commit := -1, in[len(in)-1]
		for k, j := range in {
			if log[j].Write {
				if k == 0 {
					t.Fatalf("%s: transaction %d writes in its first statement", a.name, tx)
				}
				first = k
				break
			}
		}
		if !log[commit].IsCommit() {
			t.Fatalf("%s: transaction %d wrote and did not commit: %+v", a.name, tx, log[commit])
		}
		// Before the writes: the answer to the statement before the first write is lost, so
		// the client knows it sent no write. Then the first write goes on the wire and never
		// reaches the server (as far as the client knows, it was sent), or reaches it and its
		// answer is lost; the COMMIT is never sent; the COMMIT reaches the server and its
		// answer is lost.
		ps = append(ps, at(stmt(first-1), "before-writes", pgproxy.ReplyLost), at(stmt(first), "first-write-dropped", pgproxy.Before),
			at(stmt(first), "write-reply-lost", pgproxy.ReplyLost), at(commit, "commit-not-sent", pgproxy.Before),
			at(commit, "commit-reply-lost", pgproxy.ReplyLost))
	}
	if len(ps) == 0 {
		t.Fatalf("%s wrote nothing through the proxy", a.name)
	}
	return ps
}

// faultTally counts what the matrix saw, per action.
type faultTally struct {
	cuts                               int
	states                             map[string]int
	applied                            map[Result]int
	failed, succeeded, unknown, finish int
}

// TestFaultMatrixPostgres: see the comment at the top of the file.
func TestFaultMatrixPostgres(t *testing.T) {
	long := os.Getenv("STEWARD_FAULT_MATRIX") == "long"
	start := time.Now()
	tallies := map[string]*faultTally{}
	rows := faultRows()
	for _, a := range rows {
		tally := &faultTally{states: map[string]int{}, applied: map[Result]int{}}
		tallies[a.name] = tally
		t.Run(a.name, func(t *testing.T) {
			for _, p := range faultPoints(t, a, long) {
				t.Run(p.name, func(t *testing.T) {
					state, out := cutAndCheck(t, a, p, tally)
					t.Logf("cut %s at %q #%d: apply %s/%s, state %s", p.when, p.label, p.n, out.Result, out.Disposition, state)
				})
			}
		})
	}
	var names []string
	for n := range tallies {
		names = append(names, n)
	}
	sort.Strings(names)
	total := 0
	for _, n := range names {
		x := tallies[n]
		total += x.cuts
		t.Logf("%-38s cuts %3d  apply %v  states %v  verify: failed %d, succeeded %d, unknown %d; partial states finished %d",
			n, x.cuts, x.applied, x.states, x.failed, x.succeeded, x.unknown, x.finish)
	}
	t.Logf("PostgreSQL fault matrix (%s): %d cuts in %s", map[bool]string{true: "long", false: "short"}[long], total, time.Since(start).Round(time.Second))
}

// cutAndCheck applies the row's action on a fresh workspace with the connection cut at p,
// waits until the server has ended the cut session, verifies, and asserts the invariants.
func cutAndCheck(t *testing.T, a faultRow, p faultPoint, tally *faultTally) (string, Outcome) {
	f, px, c, req := faultFixture(t, a)
	before := liveLocks(t, f)
	fault := px.Arm(pgproxy.Cut{Match: func(s pgproxy.Statement) bool { return s.Label() == p.label }, N: p.n, When: p.when})
	out := applyThrough(t, c, req)
	select {
	case <-fault.Fired():
	default:
		t.Fatalf("the cut at %q #%d never happened: the action ran another way (%+v)", p.label, p.n, out)
	}
	<-fault.Done() // the server has run what it was sent and ended the session
	tally.cuts++
	tally.applied[out.Result]++
	state := a.state(t, f)
	tally.states[state]++
	if out.Result == ResultFailed && state != "old" {
		t.Fatalf("the apply says failed (%s) but the state is %s: something of it took effect", out.Message, state)
	}
	if cut := fault.Statement(); p.first && cut.InTx && !cut.TxWrote && !cut.Write && p.when == pgproxy.ReplyLost &&
		(out.Result != ResultFailed || out.Disposition != DispositionNotAttempted || state != "old") {
		t.Fatalf("the connection broke before any write was sent, yet the apply says %s/%s with the state %s: %s",
			out.Result, out.Disposition, state, out.Message)
	}
	if p.when == pgproxy.ReplyLost && fault.Statement().IsCommit() && out.Result != ResultUnknown {
		t.Fatalf("the COMMIT's answer was lost, yet the apply says %s/%s: %s", out.Result, out.Disposition, out.Message)
	}
	workspaceInvariants(t, f, before)
	vs, err := c.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var mine *Attempt
	for _, x := range Attempts(f.records()) {
		if x.Outcomes != 1 {
			t.Fatalf("attempt %s has %d terminal records", x.ID, x.Outcomes)
		}
		if x.ID == out.Attempt {
			x := x
			mine = &x
		}
	}
	if mine == nil {
		t.Fatalf("attempt %s is not in the audit log", out.Attempt)
	}
	status := mine.Status()
	switch status {
	case ResultFailed:
		tally.failed++
	case ResultSucceeded:
		tally.succeeded++
	case ResultUnknown:
		tally.unknown++
	}
	if out.Result != ResultUnknown {
		// The apply knew its outcome: it stands.
		if status != out.Result {
			t.Fatalf("the apply said %s, the log says %s", out.Result, status)
		}
		return state, out
	}
	finish, isPartial := a.partial[state]
	want := map[string]Result{"old": ResultFailed, "new": ResultSucceeded}[state]
	if isPartial {
		want = ResultUnknown
	}
	if want == "" {
		t.Fatalf("state %s is neither old, new nor a known partial state", state)
	}
	if status != want {
		t.Fatalf("state %s: the attempt is %s after verify (%+v); want %s", state, status, vs, want)
	}
	if isPartial && finish != nil {
		finish(t, f)
		tally.finish++
		if s := a.state(t, f); s != "new" {
			t.Fatalf("after finishing the partial state %s: %s", state, s)
		}
		workspaceInvariants(t, f, before)
	}
	return state, out
}
