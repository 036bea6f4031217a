package govern

import (
	"path/filepath"
	"strconv"
	"strings"
)

// The branch and worktree a claim records are the worker's words, written into the lock and
// the lease and read back by every tool that looks at the claim. steward never follows
// them (the worktree probe walks only paths inside <repo-root>/branches, link by link), but
// it does not write what it would refuse to follow either: a claim whose branch is not a
// branch name or whose worktree is outside <repo-root>/branches is refused before anything
// is written.

// checkBranch says why name is not a branch name git would create ("" when it is): the
// rules of git check-ref-format for refs/heads/<name>, and no leading '-' (git branch).
func checkBranch(name string) string {
	switch {
	case name == "@":
		return `it is "@", which git reserves`
	case strings.HasPrefix(name, "-"):
		return "it starts with '-'"
	case strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/"):
		return "it starts or ends with '/'"
	case strings.HasSuffix(name, "."):
		return "it ends with '.'"
	case strings.Contains(name, ".."):
		return `it holds ".."`
	case strings.Contains(name, "//"):
		return `it holds "//"`
	case strings.Contains(name, "@{"):
		return `it holds "@{"`
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return "it holds " + quoteRune(r) + ", which git refuses in a branch name"
		}
	}
	for _, c := range strings.Split(name, "/") {
		if strings.HasPrefix(c, ".") || strings.HasSuffix(c, ".lock") {
			return "a part of it starts with '.' or ends with \".lock\""
		}
	}
	return ""
}

func quoteRune(r rune) string {
	if r < 0x20 || r == 0x7f {
		return "a control character"
	}
	if r == ' ' {
		return "a space"
	}
	return "'" + string(r) + "'"
}

// checkClaimPaths refuses a claim's branch that is not a branch name (invalid_request) and
// a worktree that is not a clean absolute path strictly inside <repo-root>/branches
// (path_outside). It reads only the request and the repository root's name.
func (c *Core) checkClaimPaths(p ClaimParams) *Refusal {
	if b := p.Branch; b != "" {
		if why := checkBranch(b); why != "" {
			return refuse(
				CodeInvalidRequest,
				"branch "+quoteArg(
					b,
				)+" is not a branch name: "+why+". Nothing was claimed: give a branch name such as feat/issue-7, or none for "+
					"the default",
			)
		}
	}
	wt := p.Worktree
	if wt == "" {
		return nil
	}
	roots := c.worktreeRoots()
	if len(roots) == 0 {
		return refuse(
			CodePathOutside,
			"worktree "+quoteArg(
				wt,
			)+" cannot be checked: no repository root is configured, and a claim records only a worktree inside "+
				"<repo-root>/branches. Nothing was claimed: give none, or configure repo_root",
		)
	}
	if !filepath.IsAbs(wt) || filepath.Clean(wt) != wt {
		return refuse(
			CodePathOutside,
			"worktree "+quoteArg(
				wt,
			)+" is not a clean absolute path (no \"..\", \".\", \"//\" or trailing '/'). Nothing was claimed: give a path "+
				"inside "+roots[0]+", or none for the default",
		)
	}
	for _, r := range roots {
		if strings.HasPrefix(wt, r+string(filepath.Separator)) {
			return nil
		}
	}
	return refuse(
		CodePathOutside,
		"worktree "+quoteArg(
			wt,
		)+" is outside "+roots[0]+", where steward looks for worktrees. Nothing was claimed: give a path inside it, or "+
			"none for the default",
	)
}

// worktreeRoots are <repo-root>/branches as written (made absolute) and with its links
// resolved (branchesRoot): a worktree inside either is inside.
func (c *Core) worktreeRoots() []string {
	if c.ws.RepoRoot == "" {
		return nil
	}
	var out []string
	if abs, err := filepath.Abs(c.ws.RepoRoot); err == nil {
		out = append(out, filepath.Join(abs, "branches"))
	}
	if r := c.branchesRoot(); r != "" && (len(out) == 0 || r != out[0]) {
		out = append(out, r)
	}
	return out
}

// quoteArg quotes a worker's value for a refusal (escaped, cut to 80 characters).
func quoteArg(v string) string {
	if r := []rune(v); len(r) > 80 {
		v = string(r[:80]) + "…"
	}
	return strconv.QuoteToASCII(v)
}
