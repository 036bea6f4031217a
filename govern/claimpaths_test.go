package govern

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"steward/locks"
)

// TestClaimRefusesHostileBranchAndWorktree: a claim writes no branch that is not a branch
// name and no worktree outside <repo-root>/branches into a lock or a lease — the values
// every later reader of the claim is handed. Each hostile value is refused in the preview
// and on apply with the reason, the lock directory and every DB row left as they were; a
// branch and worktree inside the rules are written as given, and a branch alone gives the
// default worktree under branches/.
//
// Before this check each hostile claim succeeded: branch ".." even made the default
// worktree <repo-root>/branches/.. — the repository root itself.
func TestClaimRefusesHostileBranchAndWorktree(t *testing.T) {
	f := newFixture(t, RoleOperator)
	ctx := context.Background()
	root, err := filepath.Abs(f.ws.RepoRoot)
	if err != nil {
		t.Fatal(err)
	}
	branches := filepath.Join(root, "branches")
	for _, tc := range []struct {
		branch, worktree string
		code, why        string
	}{
		{branch: "..", code: CodeInvalidRequest, why: "is not a branch name"},
		{branch: "../../etc", code: CodeInvalidRequest, why: `holds ".."`},
		{branch: "feat/../../x", code: CodeInvalidRequest, why: `holds ".."`},
		{branch: "/etc/passwd", code: CodeInvalidRequest, why: "starts or ends with '/'"},
		{branch: "-f", code: CodeInvalidRequest, why: "starts with '-'"},
		{branch: "feat/.hidden", code: CodeInvalidRequest, why: "starts with '.'"},
		{branch: "feat/x.lock", code: CodeInvalidRequest, why: `".lock"`},
		{branch: "feat//x", code: CodeInvalidRequest, why: `"//"`},
		{branch: "feat x", code: CodeInvalidRequest, why: "a space"},
		{branch: "feat\x1b[31m", code: CodeInvalidRequest, why: "a control character"},
		{branch: "a@{1}", code: CodeInvalidRequest, why: `"@{"`},
		{branch: "@", code: CodeInvalidRequest, why: "reserves"},
		{branch: "x~1", code: CodeInvalidRequest, why: "'~'"},
		{worktree: "/etc", code: CodePathOutside, why: "is outside"},
		{worktree: root, code: CodePathOutside, why: "is outside"},
		{worktree: branches, code: CodePathOutside, why: "is outside"},
		{worktree: branches + "-x/y", code: CodePathOutside, why: "is outside"},
		{worktree: "../../etc", code: CodePathOutside, why: "not a clean absolute path"},
		{worktree: "branches/x", code: CodePathOutside, why: "not a clean absolute path"},
		{worktree: branches + "/../../etc", code: CodePathOutside, why: "not a clean absolute path"},
		{worktree: branches + "/x/", code: CodePathOutside, why: "not a clean absolute path"},
		{worktree: branches + "//x", code: CodePathOutside, why: "not a clean absolute path"},
	} {
		req := claimReq("acme", "widgets", "s1", 7)
		cp := paramsFor[ClaimParams](req)
		cp.Branch, cp.Worktree = tc.branch, tc.worktree
		req.Params = cp
		before := f.state()
		pv, err := f.core.Preview(ctx, req)
		if err != nil || pv.Allowed || pv.Refusal.Code != tc.code || !strings.Contains(pv.Refusal.Message, tc.why) {
			t.Errorf("branch %q worktree %q: preview %+v %v; want %s saying %q", tc.branch, tc.worktree, pv.Refusal, err, tc.code, tc.why)
		}
		if after := f.state(); after != before {
			t.Errorf("branch %q worktree %q: the preview wrote", tc.branch, tc.worktree)
		}
		before = f.sourcesAndRows()
		if _, out, err := f.core.Run(ctx, req, ""); err != nil || out.Result != ResultRefused || out.Code != tc.code {
			t.Errorf("branch %q worktree %q: %+v %v; want refused %s", tc.branch, tc.worktree, out, err, tc.code)
		}
		if after := f.sourcesAndRows(); after != before {
			t.Errorf("branch %q worktree %q: the refused claim wrote", tc.branch, tc.worktree)
		}
	}

	// Inside the rules: written as given; a branch alone gives branches/<its last part>.
	for i, tc := range []struct{ branch, worktree, want string }{
		{"feat/issue-7", branches + "/issue-7", branches + "/issue-7"},
		{"fix/deep.name_2", "", branches + "/deep.name_2"},
		{"", "", branches + "/issue-22"},
	} {
		n := int64(20 + i)
		req := claimReq("acme", "widgets", "s"+strconv.Itoa(i+2), n)
		cp := paramsFor[ClaimParams](req)
		cp.Branch, cp.Worktree = tc.branch, tc.worktree
		req.Params = cp
		_, out, err := f.core.Run(ctx, req, "")
		if err != nil || out.Result != ResultSucceeded {
			t.Fatalf("branch %q worktree %q: %+v %v", tc.branch, tc.worktree, out, err)
		}
		e := locks.ReadFile(f.ws.LocksDir, out.Detail["lock_file"])
		if e.Unreadable != nil || e.Record.WorktreePath != tc.want {
			t.Errorf("branch %q worktree %q: the lock records worktree %q; want %q", tc.branch, tc.worktree, e.Record.WorktreePath, tc.want)
		}
	}
}
