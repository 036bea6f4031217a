// Package mcptest drives steward mcp's worker tools through any transport — in memory, a
// steward mcp subprocess over stdio, streamable HTTP — with the same scenarios, so every
// transport is held to every tool's success and refusal paths. Tests only.
package mcptest

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
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"steward/gitea"
	"steward/gitea/contract"
	"steward/gitea/gitearec"
	"steward/gitea/giteatest"
	"steward/govern"
	"steward/govern/actionid"
	"steward/leases"
	"steward/leases/leaserec"
	"steward/mcp"
)

// Env is a workspace served by steward mcp, without Gitea, and a way to connect to it.
type Env struct {
	// Dial opens a new connection acting as session.
	Dial func(t *testing.T, session string) *mcp.Client
	// LocksDir, DBPath and AuditPath are the workspace's stores.
	LocksDir, DBPath, AuditPath string
	// Org and Repo name the items the scenarios claim.
	Org, Repo string
}

// Item is issue n of the environment's repository.
func (e Env) Item(n int64) *mcp.ItemRef { return &mcp.ItemRef{Org: e.Org, Repo: e.Repo, Number: n} }

// State hashes every byte of the lock directory, the DB and its WAL and, withAudit, the
// audit log: a refusal must leave it unchanged.
func (e Env) State(t *testing.T, withAudit bool) string {
	t.Helper()
	var b strings.Builder
	add := func(root string, only string) {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(p, "-shm") ||
				only != "" && !strings.HasPrefix(filepath.Base(p), only) {
				return nil
			}
			data, _ := os.ReadFile(p)
			h := sha256.Sum256(data)
			fmt.Fprintf(&b, "%s %s\n", p, hex.EncodeToString(h[:]))
			return nil
		})
	}
	add(e.LocksDir, "")
	add(filepath.Dir(e.DBPath), filepath.Base(e.DBPath))
	if withAudit {
		add(filepath.Dir(e.AuditPath), filepath.Base(e.AuditPath))
	}
	return b.String()
}

// Attempts reads the audit log.
func (e Env) Attempts(t *testing.T) []govern.Attempt {
	t.Helper()
	recs, finds, err := govern.ReadAudit(e.AuditPath)
	if err != nil || len(finds) > 0 {
		t.Fatalf("audit: %v %v", err, finds)
	}
	return govern.Attempts(recs)
}

// OneTerminal checks every attempt has exactly one outcome record and returns them.
func (e Env) OneTerminal(t *testing.T) []govern.Attempt {
	t.Helper()
	atts := e.Attempts(t)
	for _, a := range atts {
		if a.Outcome == nil || a.Outcomes != 1 {
			t.Fatalf("attempt %s has %d outcome records", a.ID, a.Outcomes)
		}
	}
	return atts
}

// ActiveLeases counts the active leases on the item.
func (e Env) ActiveLeases(t *testing.T, n int64) int {
	t.Helper()
	r, err := leases.OpenReader(leases.Target{Loc: e.DBPath})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ls, err := r.LeasesForWorkItem(
		context.Background(),
		leaserec.WorkRef{Remote: "origin", Org: e.Org, Repo: e.Repo, Kind: leaserec.KindIssue, Number: n},
	)
	if err != nil {
		t.Fatal(err)
	}
	return len(ls)
}

func ok(t *testing.T) func(mcp.Outcome, error) mcp.Outcome {
	return func(o mcp.Outcome, err error) mcp.Outcome {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
}

// Flow walks a claim through its fence — claim, heartbeat, my_leases, release — and checks
// every step's audit record names the worker's session.
func Flow(t *testing.T, e Env, item int64) {
	ctx := context.Background()
	c := e.Dial(t, "flow-w1")
	n := len(e.Attempts(t))
	cl := ok(t)(c.Claim(ctx, mcp.ClaimArgs{Item: e.Item(item)}))
	if !cl.Success || cl.Result != "succeeded" || cl.Fence == nil ||
		cl.Fence.LockGeneration != 1 || cl.Fence.TaskSessionID == "" || cl.Fence.ExpiresAt == "" ||
		cl.Attempt == "" || cl.HeartbeatEvery == "" || cl.Item.Remote != "origin" {
		t.Fatalf("claim: %+v", cl)
	}
	hb := ok(t)(c.Heartbeat(ctx, *cl.Fence))
	if !hb.Success || hb.Fence.LockGeneration != 2 || hb.Fence.LeaseID != cl.Fence.LeaseID || hb.Item == nil ||
		hb.Item.Number != item {
		t.Fatalf("heartbeat: %+v", hb)
	}
	ml, err := c.MyLeases(ctx)
	if err != nil || !ml.Success || len(ml.Leases) != 1 || *ml.Leases[0].Fence != *hb.Fence || !ml.Leases[0].Yours {
		t.Fatalf("my_leases: %+v %v (want the heartbeat's fence %+v)", ml, err, hb.Fence)
	}
	st, err := c.ItemStatus(ctx, *e.Item(item))
	if err != nil || !st.Success || st.Claimable || st.Lock == nil || st.Lock.LockGeneration != 2 {
		t.Fatalf("item_status of the held item: %+v %v", st, err)
	}
	var ct mcp.Contract
	inspect := mcp.InspectArgs{SessionID: c.Session(), Org: e.Org, Repo: e.Repo, IssueNumber: item}
	if _, err := c.Call(ctx, mcp.ToolInspect, inspect, &ct); err != nil ||
		!ct.Success || !ct.Canonical || ct.TaskSessionID != cl.Fence.TaskSessionID {
		t.Fatalf("inspect_lock_contract: %+v %v", ct, err)
	}
	rel := ok(t)(c.Release(ctx, *hb.Fence))
	if !rel.Success || rel.Fence == nil || rel.Fence.LeaseID != cl.Fence.LeaseID {
		t.Fatalf("release: %+v", rel)
	}
	if ml, _ := c.MyLeases(ctx); len(ml.Leases) != 0 {
		t.Fatalf("my_leases after release: %+v", ml)
	}
	atts := e.OneTerminal(t)[n:]
	if len(atts) != 3 {
		t.Fatalf("%d attempts, want 3", len(atts))
	}
	for _, a := range atts {
		if a.Outcome.Actor.Session != "flow-w1" || a.Status() != govern.ResultSucceeded {
			t.Fatalf("attempt %s: actor session %q, status %s", a.ID, a.Outcome.Actor.Session, a.Status())
		}
	}
	// The same release again (a retry after a lost response) is a success that changes
	// nothing, never a refusal the worker reads as a failure.
	if again := ok(t)(c.Release(ctx, *hb.Fence)); !again.Success || !strings.HasPrefix(again.Message, "already released") {
		t.Fatalf("release again: %+v", again)
	}
}

// Refusals calls every tool on its refusal paths: each comes back as a result (isError,
// success false, code, message, next) — never a protocol error — and changes nothing but
// the core's refused record (a refusal before the core writes nothing at all; a refused
// claim records its contention event).
func Refusals(t *testing.T, e Env, item int64) {
	ctx := context.Background()
	w1, w2 := e.Dial(t, "ref-w1"), e.Dial(t, "ref-w2")
	cl := ok(t)(w1.Claim(ctx, mcp.ClaimArgs{Item: e.Item(item)}))
	if !cl.Success {
		t.Fatalf("claim: %+v", cl)
	}
	stale := *cl.Fence
	hb := ok(t)(w1.Heartbeat(ctx, *cl.Fence))
	if !hb.Success {
		t.Fatalf("heartbeat: %+v", hb)
	}
	other := item + 1
	org, repo := e.Org, e.Repo
	forged := &mcp.Fence{}
	*forged = *hb.Fence
	forged.ClaimToken = govern.NewClaimToken()
	const w1s, w2s = "ref-w1", "ref-w2"
	cases := []struct {
		name    string
		c       *mcp.Client
		tool    string
		args    any
		code    string
		audited bool // the core saw it and recorded a refused attempt
		event   bool // a refused claim records its claim.refused event (contention)
	}{
		{"claim without session", w1, mcp.ToolClaim,
			mcp.ClaimArgs{Item: e.Item(other)}, govern.CodeInvalidRequest, false, false},
		{"claim without item", w1, mcp.ToolClaim, mcp.ClaimArgs{SessionID: w1s}, govern.CodeInvalidRequest, false, false},
		{"claim item and next", w1, mcp.ToolClaim,
			mcp.ClaimArgs{SessionID: w1s, Item: e.Item(other), Next: true}, govern.CodeInvalidRequest, false, false},
		{"claim without org and no Gitea", w1, mcp.ToolClaim,
			mcp.ClaimArgs{SessionID: w1s, Item: &mcp.ItemRef{Number: other}}, govern.CodeInvalidRequest, false, false},
		{"claim next without Gitea", w1, mcp.ToolClaim, mcp.ClaimArgs{SessionID: w1s, Next: true}, "no_gitea", false, false},
		{"claim held item", w2, mcp.ToolClaim,
			mcp.ClaimArgs{SessionID: w2s, Item: e.Item(item)}, govern.CodeClaimedByOther, true, true},
		{"claim own item again", w1, mcp.ToolClaim,
			mcp.ClaimArgs{SessionID: w1s, Item: e.Item(item)}, string(leases.CodeAlreadyHeld), true, false},
		{"claim with bad ttl", w2, mcp.ToolClaim,
			mcp.ClaimArgs{SessionID: w2s, Item: e.Item(other), TTL: "soon"}, govern.CodeInvalidRequest, true, false},
		{"claim with bad role", w2, mcp.ToolClaim,
			mcp.ClaimArgs{SessionID: w2s, Item: e.Item(other), Role: "pilot"}, govern.CodeInvalidRequest, true, false},
		{"heartbeat without fence", w1, mcp.ToolHeartbeat,
			mcp.FencedArgs{SessionID: w1s}, govern.CodeInvalidRequest, false, false},
		{"heartbeat without expiry", w1, mcp.ToolHeartbeat,
			mcp.FencedArgs{SessionID: w1s, Fence: &mcp.Fence{LeaseID: cl.Fence.LeaseID}},
			govern.CodeInvalidRequest, false, false},
		{"heartbeat generation without task session", w1, mcp.ToolHeartbeat,
			mcp.FencedArgs{SessionID: w1s, Fence: &mcp.Fence{LeaseID: cl.Fence.LeaseID, ExpiresAt: hb.Fence.ExpiresAt,
				LockGeneration: 2}},
			govern.CodeInvalidRequest, false, false},
		{"heartbeat on a stale fence", w1, mcp.ToolHeartbeat,
			mcp.FencedArgs{SessionID: w1s, Fence: &stale}, govern.CodeFenceMoved, true, false},
		{"heartbeat another's lease", w2, mcp.ToolHeartbeat,
			mcp.FencedArgs{SessionID: w2s, Fence: hb.Fence}, govern.CodeNotOwner, true, false},
		{"heartbeat unknown lease", w2, mcp.ToolHeartbeat,
			mcp.FencedArgs{SessionID: w2s, Fence: &mcp.Fence{LeaseID: "lease-nope", ExpiresAt: "x"}},
			govern.CodeNotFound, true, false},
		{"release on a stale fence", w1, mcp.ToolRelease,
			mcp.FencedArgs{SessionID: w1s, Fence: &stale}, govern.CodeFenceMoved, true, false},
		{"release another's lease", w2, mcp.ToolRelease,
			mcp.FencedArgs{SessionID: w2s, Fence: hb.Fence}, govern.CodeNotOwner, true, false},
		{"ask without Gitea", w1, mcp.ToolAsk,
			mcp.AskArgs{SessionID: w1s, Fence: hb.Fence, Question: "which?"}, govern.CodeSourceUnavailable, true, false},
		{"ask on a stale fence", w1, mcp.ToolAsk,
			mcp.AskArgs{SessionID: w1s, Fence: &stale, Question: "which?"}, govern.CodeFenceMoved, true, false},
		{"ask another's lease", w2, mcp.ToolAsk,
			mcp.AskArgs{SessionID: w2s, Fence: hb.Fence, Question: "which?"}, govern.CodeNotOwner, true, false},
		{"get_answer bad id", w1, mcp.ToolGetAnswer,
			mcp.GetAnswerArgs{SessionID: w1s, ClarificationID: "what"}, govern.CodeInvalidRequest, false, false},
		{"get_answer without Gitea", w1, mcp.ToolGetAnswer,
			mcp.GetAnswerArgs{SessionID: w1s, ClarificationID: org + "/" + repo + "#3/ans-0123456789abcdef"},
			"no_gitea", false, false},
		{"my_leases without session", w1, mcp.ToolMyLeases, mcp.SessionArgs{}, govern.CodeInvalidRequest, false, false},
		{"item_status without item", w1, mcp.ToolStatus,
			mcp.ItemArgs{SessionID: w1s}, govern.CodeInvalidRequest, false, false},
		{"inspect without issue", w1, mcp.ToolInspect,
			mcp.InspectArgs{SessionID: w1s, Org: org, Repo: repo}, govern.CodeInvalidRequest, false, false},
		{"seed lock_issue held", w2, mcp.SeedLockIssue,
			mcp.LockIssueArgs{SessionID: w2s, IssueNumber: item, Org: org, Repo: repo}, govern.CodeClaimedByOther, true, true},
		{"seed heartbeat without token", w1, mcp.SeedHeartbeatLock,
			mcp.HeartbeatLockArgs{SessionID: w1s, IssueNumber: item, Org: org, Repo: repo},
			govern.CodeInvalidRequest, false, false},
		{"seed heartbeat wrong token", w1, mcp.SeedHeartbeatLock,
			mcp.HeartbeatLockArgs{SessionID: w1s, IssueNumber: item, Org: org, Repo: repo, TaskSessionID: "tsk-x",
				ClaimToken: cl.Fence.ClaimToken},
			govern.CodeFenceMoved, true, false},
		{"heartbeat with a forged claim token", w1, mcp.ToolHeartbeat,
			mcp.FencedArgs{SessionID: w1s, Fence: forged}, govern.CodeNotOwner, true, false},
		{"release with a forged claim token", w1, mcp.ToolRelease,
			mcp.FencedArgs{SessionID: w1s, Fence: forged}, govern.CodeNotOwner, true, false},
		{"seed release with a forged claim token", w1, mcp.SeedReleaseLease,
			mcp.ReleaseLeaseArgs{SessionID: w1s, LeaseID: cl.Fence.LeaseID, ClaimToken: forged.ClaimToken},
			govern.CodeNotOwner, true, false},
		{"claim with an oversized profile", w2, mcp.ToolClaim,
			mcp.ClaimArgs{SessionID: w2s, Item: e.Item(other), Profile: strings.Repeat("p", 600<<10)},
			govern.CodeTooLarge, true, false},
		{"seed heartbeat no lease", w2, mcp.SeedHeartbeatLock,
			mcp.HeartbeatLockArgs{SessionID: w2s, IssueNumber: item, Org: org, Repo: repo, TaskSessionID: "tsk-x"},
			govern.CodeNotFound, false, false},
		{"seed release another's", w2, mcp.SeedReleaseLease,
			mcp.ReleaseLeaseArgs{SessionID: w2s, LeaseID: cl.Fence.LeaseID}, govern.CodeNotOwner, true, false},
		{"seed release without id", w2, mcp.SeedReleaseLease,
			mcp.ReleaseLeaseArgs{SessionID: w2s}, govern.CodeInvalidRequest, false, false},
		{"seed allocate apply side-effect-free", w1, mcp.SeedAllocateNextWork,
			mcp.AllocateArgs{SessionID: w1s, Apply: true, SideEffectFree: true}, govern.CodeInvalidRequest, false, false},
		{"seed allocate without Gitea", w1, mcp.SeedAllocateNextWork,
			mcp.AllocateArgs{SessionID: w1s}, "no_gitea", false, false},
		{"seed inspect lease unknown", w1, mcp.SeedInspectLease,
			mcp.InspectLeaseArgs{SessionID: w1s, LeaseID: "lease-nope"}, govern.CodeNotFound, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, beforeAll, n := e.State(t, false), e.State(t, true), len(e.Attempts(t))
			res, err := tc.c.SDK().CallTool(ctx, &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil {
				t.Fatalf("protocol error instead of a result: %v", err)
			}
			var o struct {
				Success bool   `json:"success"`
				Code    string `json:"code"`
				Message string `json:"message"`
				Next    string `json:"next"`
			}
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &o); err != nil || !res.IsError || o.Success || o.Code != tc.code || o.Message == "" ||
				o.Next == "" {
				t.Fatalf("result isError=%v %s, want a structured refusal %s with message and next", res.IsError, b, tc.code)
			}
			if after := e.State(t, false); after != before && !tc.event {
				t.Fatalf("a refusal changed the workspace:\n%s\n%s", before, after)
			}
			if got := len(e.Attempts(t)) - n; tc.audited && got != 1 ||
				!tc.audited && (got != 0 || e.State(t, true) != beforeAll) {
				t.Fatalf("%d new audit attempts (audited %v)", got, tc.audited)
			}
		})
	}
	// The claim survived every refusal: its current fence still works.
	if rel := ok(t)(w1.Release(ctx, *hb.Fence)); !rel.Success {
		t.Fatalf("release after the refusals: %+v", rel)
	}
	e.OneTerminal(t)
}

// Race has n connections claim the same item at once: exactly one lease, n-1 structured
// refusals, one terminal audit record per attempt.
func Race(t *testing.T, e Env, n int, item int64) {
	clients := make([]*mcp.Client, n)
	for i := range clients {
		clients[i] = e.Dial(t, fmt.Sprintf("race-w%02d", i))
	}
	before := len(e.Attempts(t))
	outs := make([]mcp.Outcome, n)
	errs := make([]error, n)
	var start, wg sync.WaitGroup
	start.Add(1)
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start.Wait()
			outs[i], errs[i] = c.Claim(context.Background(), mcp.ClaimArgs{Item: e.Item(item)})
		}()
	}
	start.Done()
	wg.Wait()
	won, refused := 0, map[string]int{}
	for i, o := range outs {
		switch {
		case errs[i] != nil:
			t.Fatalf("client %d: %v", i, errs[i])
		case o.Success:
			won++
		case o.Result == "refused" && o.Code != "" && o.Next != "":
			refused[o.Code]++
		default:
			t.Fatalf("client %d: %+v", i, o)
		}
	}
	if won != 1 || refused[govern.CodeClaimedByOther]+refused[string(leases.CodeBusy)] != n-1 {
		t.Fatalf("%d won, refusals %v", won, refused)
	}
	atts := e.OneTerminal(t)
	if got := len(atts) - before; got != n {
		t.Fatalf("%d attempts recorded, want %d", got, n)
	}
	if l := e.ActiveLeases(t, item); l != 1 {
		t.Fatalf("%d active leases on the item, want 1", l)
	}
	t.Logf("%d connections: 1 lease, refusals %v", n, refused)
}

// SeedFlow walks a claim through the seed's tool names and argument names:
// gitea_lock_issue, gitea_heartbeat_issue_lock (fenced on task_session_id),
// gitea_inspect_workflow_lease, gitea_inspect_issue_lock_contract and
// gitea_release_workflow_lease.
func SeedFlow(t *testing.T, e Env, item int64) {
	ctx := context.Background()
	c := e.Dial(t, "seed-w1")
	s := c.Session()
	var lock mcp.Outcome
	lockArgs := mcp.LockIssueArgs{SessionID: s, IssueNumber: item, Org: e.Org, Repo: e.Repo,
		BranchName: fmt.Sprintf("feat/issue-%d", item)}
	if _, err := c.Call(ctx, mcp.SeedLockIssue, lockArgs, &lock); err != nil ||
		!lock.Success || lock.Fence.TaskSessionID == "" {
		t.Fatalf("gitea_lock_issue: %+v %v", lock, err)
	}
	var hb mcp.Outcome
	hbArgs := mcp.HeartbeatLockArgs{SessionID: s, IssueNumber: item, Org: e.Org, Repo: e.Repo,
		TaskSessionID: lock.Fence.TaskSessionID, ClaimToken: lock.Fence.ClaimToken}
	if _, err := c.Call(ctx, mcp.SeedHeartbeatLock, hbArgs, &hb); err != nil ||
		!hb.Success || hb.Fence.LockGeneration != 2 {
		t.Fatalf("gitea_heartbeat_issue_lock: %+v %v", hb, err)
	}
	var ml mcp.MyLeases
	leaseArgs := mcp.InspectLeaseArgs{SessionID: s, LeaseID: lock.Fence.LeaseID}
	if _, err := c.Call(ctx, mcp.SeedInspectLease, leaseArgs, &ml); err != nil ||
		!ml.Success || len(ml.Leases) != 1 || ml.Leases[0].Fence == nil || *ml.Leases[0].Fence != *hb.Fence {
		t.Fatalf("gitea_inspect_workflow_lease: %+v %v (want the heartbeat's fence %+v)", ml, err, hb.Fence)
	}
	var ct mcp.Contract
	inspect := mcp.InspectArgs{SessionID: s, IssueNumber: item, Org: e.Org, Repo: e.Repo,
		BranchName: fmt.Sprintf("feat/issue-%d", item)}
	if _, err := c.Call(ctx, mcp.SeedInspectContract, inspect, &ct); err != nil ||
		!ct.Success || !ct.Canonical || len(ct.BindingMismatches) != 0 {
		t.Fatalf("gitea_inspect_issue_lock_contract: %+v %v", ct, err)
	}
	var rel mcp.Outcome
	relArgs := mcp.ReleaseLeaseArgs{SessionID: s, LeaseID: lock.Fence.LeaseID, TaskSessionID: hb.Fence.TaskSessionID,
		LockGeneration: hb.Fence.LockGeneration, ClaimToken: hb.Fence.ClaimToken}
	if _, err := c.Call(ctx, mcp.SeedReleaseLease, relArgs, &rel); err != nil || !rel.Success {
		t.Fatalf("gitea_release_workflow_lease: %+v %v", rel, err)
	}
	e.OneTerminal(t)
}

// Maintainer answers a clarification the way a maintainer does: through the governed core.
type Maintainer func(t *testing.T, item int64, body string)

// GiteaEnv is an Env whose steward mcp has a Gitea repository: Seed makes issues (with
// labels) in it, Answer answers as a maintainer.
type GiteaEnv struct {
	Env
	Seed   func(t *testing.T, title string, labels ...string) int64
	Answer Maintainer
}

// Clarify asks on a claim and polls: ask returns a clarification id at once and releases
// the claim; get_answer says pending until the maintainer answers, then returns the answer.
// Claim next picks the head of the allocation order and skips the marked item.
func Clarify(t *testing.T, e GiteaEnv) {
	ctx := context.Background()
	high := e.Seed(t, "High", "priority:high")
	low := e.Seed(t, "Low", "priority:low")
	c := e.Dial(t, "clar-w1")
	cl := ok(t)(c.Claim(ctx, mcp.ClaimArgs{Next: true}))
	if !cl.Success || cl.Item.Number != high {
		t.Fatalf("claim next: %+v (want #%d)", cl, high)
	}
	ask := ok(t)(c.Ask(ctx, *cl.Fence, "SQLite or **Postgres**?"))
	if !ask.Success || ask.ClarificationID == "" {
		t.Fatalf("ask: %+v", ask)
	}
	a, err := c.GetAnswer(ctx, ask.ClarificationID)
	if err != nil || !a.Success || a.Status != "pending" || !a.Marked || a.Question != "SQLite or **Postgres**?" {
		t.Fatalf("get_answer before the answer: %+v %v", a, err)
	}
	next := ok(t)(c.Claim(ctx, mcp.ClaimArgs{Next: true}))
	if !next.Success || next.Item.Number != low {
		t.Fatalf("claim next with #%d marked: %+v (want #%d)", high, next, low)
	}
	e.Answer(t, high, "Use SQLite: the control plane is single-writer.")
	a, err = c.GetAnswer(ctx, ask.ClarificationID)
	if err != nil || !a.Success || a.Status != "answered" || a.Marked ||
		a.Answer != "Use SQLite: the control plane is single-writer." {
		t.Fatalf("get_answer after the answer: %+v %v", a, err)
	}
	e.OneTerminal(t)
}

// RealRepo makes a repository on the test binary's real Gitea (giteatest.Shared) with the
// labels the allocation reads, and a maintainer's client for it.
func RealRepo(t *testing.T) (contract.Backend, *gitea.Client) {
	t.Helper()
	b := contract.NewRealBackend(t, giteatest.Shared(t))
	labels := []string{gitearec.DefaultMarkerLabels[0], gitearec.DefaultBlockedLabel, "priority:high", "priority:low"}
	for _, l := range labels {
		b.Seed.Label(t, l)
	}
	cl, err := gitea.New(
		gitea.Config{
			Login:          gitea.Login{URL: b.URL, Token: gitea.NewToken(b.MaintainerToken)},
			Owner:          b.Owner,
			Repo:           b.Repo,
			RequestTimeout: 20 * time.Second,
		},
	)
	if err != nil {
		t.Fatal(err)
	}
	return b, cl
}

// WithGitea completes e (whose server uses the repository of b) into a GiteaEnv: issues
// are seeded in b, and a maintainer answers through a governed core of its own on ws.
func WithGitea(e Env, b contract.Backend, cl *gitea.Client, ws govern.Workspace) GiteaEnv {
	e.Org, e.Repo = b.Owner, b.Repo
	ws.Gitea = cl
	return GiteaEnv{Env: e,
		Seed: func(t *testing.T, title string, labels ...string) int64 { return b.Seed.Issue(t, title, labels...) },
		Answer: func(t *testing.T, item int64, body string) {
			t.Helper()
			log, err := govern.OpenAudit(e.AuditPath, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer log.Close()
			core := govern.New(ws, log, govern.Options{Actor: govern.LocalActor(govern.RoleOperator, b.Maintainer)})
			defer core.Close()
			_, out, err := core.Run(context.Background(), govern.Request{Action: actionid.Answer,
				Target: govern.Target{
					Item: &govern.Item{Org: b.Owner, Repo: b.Repo, Number: item},
				}, Params: govern.AnswerParams{Body: body}}, "")
			if err != nil || out.Result != govern.ResultSucceeded {
				t.Fatalf("the maintainer's answer: %+v %v", out, err)
			}
		}}
}
