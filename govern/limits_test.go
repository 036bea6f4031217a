package govern

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"steward/govern/actionid"
	"steward/locks"
)

// sourcesState hashes every byte of the lock directory and the DB directory: the sources
// an action writes (the audit log is left out: a refused apply records its outcome there).
func (f *fixture) sourcesState() string {
	f.t.Helper()
	var b strings.Builder
	for _, root := range []string{f.ws.LocksDir, filepath.Dir(f.ws.DBPath)} {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(p, "-shm") {
				return nil
			}
			data, _ := os.ReadFile(p)
			h := sha256.Sum256(data)
			fmt.Fprintf(&b, "%s %s\n", p, hex.EncodeToString(h[:]))
			return nil
		})
	}
	return b.String()
}

// withParams returns r with the parameters named (name, value, name, value, …) set, decoded
// into the struct r's action takes as the command line decodes its flags.
func withParams(r Request, kv ...string) Request {
	m := mapParams(r.Params)
	if m == nil {
		m = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	p, err := DecodeParams(r.Action, m)
	if err != nil {
		panic(err)
	}
	r.Params = p
	return r
}

// limitCase is a request of an action that takes the argument a table row names, with the
// argument set to v.
func limitCase(name, v string) Request {
	claim := func() Request {
		return Request{Action: actionid.Claim, Target: Target{Item: item(7), Session: "s1"}, Params: ClaimParams{}}
	}
	own := func(action string) Request {
		return Request{Action: action, Target: Target{LeaseID: "lease-x", Session: "s1"}}
	}
	var r Request
	switch name {
	case "target.session":
		r = claim()
		r.Target.Session = v
	case "target.item.remote", "target.item.org", "target.item.repo", "target.item.kind":
		r = claim()
		it := *r.Target.Item
		switch name {
		case "target.item.remote":
			it.Remote = v
		case "target.item.org":
			it.Org = v
		case "target.item.repo":
			it.Repo = v
		default:
			it.Kind = v
		}
		r.Target.Item = &it
	case "target.lease_id":
		r = own(actionid.Heartbeat)
		r.Target.LeaseID = v
	case "target.lock_file":
		r = Request{Action: actionid.RetireLock, Target: Target{LockFile: v}}
	case "target.attempt":
		r = Request{Action: actionid.Undo, Target: Target{Attempt: v}}
	case "target.entry":
		r = Request{Action: actionid.AttentionAck, Target: Target{Entry: v}, Params: AttentionParams{Evidence: "e"}}
	case "role", "profile", "username", "pid", "ttl", "branch", "worktree", "title":
		r = withParams(claim(), name, v)
	case "question":
		r = withParams(own(actionid.Ask), name, v)
	case "body", "question_comment":
		r = withParams(Request{Action: actionid.Answer, Target: Target{Item: item(7)}}, "body", "answer", name, v)
	case "label":
		r = withParams(Request{Action: actionid.Relabel, Target: Target{Item: item(7)}}, name, v)
	case "evidence", "level":
		r = withParams(Request{Action: actionid.AttentionAck, Target: Target{Entry: "entry"}}, "evidence", "e", name, v)
	case "for":
		r = withParams(Request{Action: actionid.AttentionSnooze, Target: Target{Entry: "entry"}}, "evidence", "e", name, v)
	case "expect_expires_at", "expect_lock_generation", "expect_task_session_id", "expect_lease_generation", "caller_pid", "claim_token":
		r = withParams(own(actionid.Heartbeat), name, v)
	default:
		return Request{}
	}
	return r
}

// TestEveryArgumentOverItsLimitIsRefusedBeforeAnyWrite holds the one table of argument
// limits: for every row, a request of an action that takes the argument, with the argument
// one byte over its limit, is refused too_large by the preview — which writes nothing — and
// by the apply, which records only its refused outcome (the oversized text not in it) and
// changes no lock file and no DB byte; at its limit exactly, the argument is not refused for
// its size. A row without a case here fails, so a new argument cannot go untested.
func TestEveryArgumentOverItsLimitIsRefusedBeforeAnyWrite(t *testing.T) {
	f := newFixture(t, RoleAdmin)
	ctx := context.Background()
	for _, l := range ArgLimits() {
		t.Run(l.Name, func(t *testing.T) {
			over := limitCase(l.Name, strings.Repeat("x", l.Max+1))
			if over.Action == "" {
				t.Fatalf("no test case for the argument %s: add one to limitCase", l.Name)
			}
			beforeAll := f.state() // reads the DB through database/sql first, which may create its -wal
			before := f.sourcesState()
			pv, err := f.core.Preview(ctx, over)
			if err != nil {
				t.Fatal(err)
			}
			if pv.Allowed || pv.Refusal == nil || pv.Refusal.Code != CodeTooLarge ||
				!strings.Contains(pv.Refusal.Message, fmt.Sprintf("at most %d", l.Max)) || strings.Contains(pv.Refusal.Message, "xxxxxxxx") {
				t.Fatalf("preview %+v, want too_large naming the limit %d", pv.Refusal, l.Max)
			}
			if after := f.state(); after != beforeAll {
				t.Fatalf("the preview wrote:\n%s\n%s", beforeAll, after)
			}
			size := func() int64 { fi, _ := os.Stat(f.audit.Path()); return fi.Size() }
			n, sz := len(f.records()), size()
			out := f.core.Apply(ctx, pv, "")
			if out.Result != ResultRefused || out.Code != CodeTooLarge || out.Disposition != DispositionNotAttempted {
				t.Fatalf("apply %+v", out)
			}
			if after := f.sourcesState(); after != before {
				t.Fatalf("a refused apply changed a source:\n%s\n%s", before, after)
			}
			recs := f.records()
			if len(recs) != n+1 || recs[n].Kind != KindOutcome || recs[n].Code != CodeTooLarge {
				t.Fatalf("audit: %d records, want %d, the last %+v", len(recs), n+1, recs[len(recs)-1])
			}
			if grew := size() - sz; grew > 8<<10 {
				t.Fatalf("the refusal's audit record is %d bytes: it carries the oversized argument", grew)
			}
			at := limitCase(l.Name, strings.Repeat("x", l.Max))
			if pv, err := f.core.Preview(ctx, at); err != nil || pv.Refusal != nil && pv.Refusal.Code == CodeTooLarge {
				t.Fatalf("at its limit: %+v %v", pv.Refusal, err)
			}
		})
	}
}

// TestUnknownParameterIsRefused: a parameter no action takes is a mistake, never carried.
// The command line's decoder names it; a request read back from JSON keeps it
// (unknownParams) and the core refuses it invalid_request, naming it, writing nothing — and
// so is a request carrying another action's parameters.
func TestUnknownParameterIsRefused(t *testing.T) {
	if _, err := DecodeParams(actionid.Claim, map[string]string{"profle": "typo"}); err == nil || !strings.Contains(err.Error(), `"profle"`) {
		t.Fatalf("decode: %v", err)
	}
	var fromJSON Request
	if err := json.Unmarshal([]byte(`{"action":"worker.claim","target":{"session":"s1","item":{"org":"acme","repo":"widgets","number":7}},"params":{"profle":"typo"}}`), &fromJSON); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, RoleAdmin)
	before := f.state()
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{fromJSON, `"profle"`},
		{Request{Action: actionid.Claim, Target: Target{Item: item(7), Session: "s1"}, Params: unknownParams{"profle": "typo"}}, `"profle"`},
		{Request{Action: actionid.Claim, Target: Target{Item: item(7), Session: "s1"}, Params: AnswerParams{Body: "x"}}, "clarification.answer"},
		{Request{Action: actionid.ReclaimExpired, Target: Target{LeaseID: "L1"}, Params: RelabelParams{Label: "x"}}, "takes no parameters"},
	} {
		pv, err := f.core.Preview(context.Background(), tc.req)
		if err != nil || pv.Allowed || pv.Refusal.Code != CodeInvalidRequest || !strings.Contains(pv.Refusal.Message, tc.want) {
			t.Fatalf("%+v: %+v %v", tc.req, pv.Refusal, err)
		}
	}
	if f.state() != before {
		t.Fatal("the preview wrote")
	}
}

// TestOversizedProfileWritesNoLock is the defect as it was found: a claim with a 600 KB
// profile succeeded and wrote a 1.2 MB lock (the profile is in it twice), over the 1 MiB
// steward reads — the item then showed unreadable-lock, its first heartbeat was refused
// fence_moved, the file outlived the release, and every later claim of the item was refused
// until someone deleted it by hand. It is refused too_large now, the sources unchanged, and
// the item stays claimable.
func TestOversizedProfileWritesNoLock(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := newFixtureOn(t, RoleOperator, backend)
			ctx := context.Background()
			before := f.sourcesState()
			req := Request{Action: actionid.Claim, Target: Target{Item: item(7), Session: "s1"}, Params: ClaimParams{Profile: strings.Repeat("p", 600<<10)}}
			_, out, err := f.core.Run(ctx, req, "")
			if err != nil || out.Result != ResultRefused || out.Code != CodeTooLarge {
				t.Fatalf("%+v %v", out, err)
			}
			if after := f.sourcesState(); after != before {
				t.Fatalf("the refused claim wrote:\n%s\n%s", before, after)
			}
			if len(f.activeLeases(7)) != 0 {
				t.Fatal("a lease was created")
			}
			req.Params = ClaimParams{Profile: "worker"}
			if _, out, err := f.core.Run(ctx, req, ""); err != nil || out.Result != ResultSucceeded {
				t.Fatalf("the item is not claimable after the refusal: %+v %v", out, err)
			}
		})
	}
}

// TestClaimAtEveryLimitWritesAReadableLock: the limits keep every lock a claim can write
// readable. The arithmetic covers the worst case (every byte a control character, which
// the encoder writes as six, in every place the canonical lock repeats an argument); a real
// claim with its text arguments at their limits writes a lock steward reads back whole.
func TestClaimAtEveryLimitWritesAReadableLock(t *testing.T) {
	max := func(name string) int {
		l, ok := LimitOf(name)
		if !ok {
			t.Fatalf("no limit for %s", name)
		}
		return l.Max
	}
	// Where the canonical lock repeats each argument (canonicalLock): branch three times,
	// worktree, username and profile twice (the session stands in for an empty username).
	worst := 6 * (3*max("branch") + 2*max("worktree") + 2*max("username") + 2*max("profile") + 3*max("target.session") +
		max("target.item.remote") + max("target.item.org") + max("target.item.repo"))
	if worst+16<<10 > locks.MaxFileSize {
		t.Fatalf("the claim's arguments at their limits could write %d bytes of text into a lock, too close to the %d steward reads", worst, locks.MaxFileSize)
	}
	t.Logf("worst case: %d bytes of escaped argument text in a lock (limit %d)", worst, locks.MaxFileSize)

	f := newFixture(t, RoleOperator)
	ctrl := func(n int) string { return strings.Repeat("\x01", n) }
	wt := filepath.Join(f.ws.RepoRoot, "branches") + "/"
	params := ClaimParams{Role: "author", Profile: ctrl(max("profile")), Username: ctrl(max("username")),
		Branch: strings.Repeat("b", max("branch")), Worktree: wt + strings.Repeat("w", max("worktree")-len(wt)),
		Title: strings.Repeat("t", max("title")), TTL: "10m"}
	session := strings.Repeat("s", max("target.session"))
	_, out, err := f.core.Run(context.Background(), Request{Action: actionid.Claim, Target: Target{Item: item(7), Session: session}, Params: params}, "")
	if err != nil || out.Result != ResultSucceeded {
		t.Fatalf("%+v %v", out, err)
	}
	e := locks.ReadFile(f.ws.LocksDir, out.Detail["lock_file"])
	if e.Missing || e.Unreadable != nil || e.Record.WorkLease == nil || e.Record.WorkLease.Claimant.Profile != params.Profile || e.Record.WorktreePath != params.Worktree {
		t.Fatalf("the lock written at the limits does not read back: missing %v, unreadable %+v", e.Missing, e.Unreadable)
	}
	t.Logf("the lock at the limits: %d bytes", len(e.Record.Raw))
}

// limitsTable renders the table of argument limits as docs/reliability.md shows it.
func limitsTable() string {
	var b strings.Builder
	b.WriteString("| argument | at most (bytes) | what |\n|---|---|---|\n")
	for _, l := range ArgLimits() {
		fmt.Fprintf(&b, "| `%s` | %d | %s |\n", l.Name, l.Max, l.What)
	}
	return b.String()
}

// TestArgLimitsDocumented keeps docs/reliability.md's table of argument limits equal to the
// one the core checks.
func TestArgLimitsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/reliability.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := limitsTable(); !strings.Contains(string(doc), want) {
		t.Fatalf("docs/reliability.md does not hold the table of argument limits; put this in it:\n%s", want)
	}
}
