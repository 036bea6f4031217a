package leases

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"steward/leases/leaserec"
)

// WorktreeRoots is where steward may look for a worktree: the repository root and its
// branches/ directory, each with its symlinks resolved once, when the roots are made (the
// seed's canonical branches directory is realpath(<repo-root>/branches), 002 §is_path_under_branches).
// Branches may lie outside Repo when branches/ is itself a link the operator made; a link
// a worker made inside it may not leave either.
type WorktreeRoots struct {
	Repo     string
	Branches string
	// lexBranches is Repo/branches as written (before resolving branches/ itself).
	lexBranches string
}

// ResolveWorktreeRoots resolves the roots of a workspace whose repository root is repoRoot
// ("" yields roots that look at nothing).
func ResolveWorktreeRoots(repoRoot string) WorktreeRoots {
	if repoRoot == "" {
		return WorktreeRoots{}
	}
	abs, err := filepath.Abs(repoRoot)
	if err != nil {
		return WorktreeRoots{}
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	r := WorktreeRoots{Repo: abs, lexBranches: filepath.Join(abs, "branches")}
	r.Branches = r.lexBranches
	if b, err := filepath.EvalSymlinks(r.lexBranches); err == nil {
		r.Branches = b
	}
	return r
}

// BranchesOnly returns roots for a branches directory given as is (tests, fixtures):
// its parent is the repository root and nothing is resolved.
func BranchesOnly(branches string) WorktreeRoots {
	if branches == "" {
		return WorktreeRoots{}
	}
	b := filepath.Clean(branches)
	return WorktreeRoots{Repo: filepath.Dir(b), Branches: b, lexBranches: b}
}

// WorktreeReport is what a look for one worktree found.
type WorktreeReport struct {
	State leaserec.WorktreeState
	// Why says what was looked at, or why nothing was.
	Why string
	// Escapes is set when the path, or a link on it, leads out of the repository root:
	// steward did not follow it, and the state is unknown.
	Escapes bool
	// Looked is set when the file system was consulted; a report without it cannot change
	// until the record does (no path, another host, a path outside branches/).
	Looked bool
}

// maxLinks bounds the links followed on one path, as the kernel's ELOOP does.
const maxLinks = 40

// Probe reports whether the worktree at path, recorded by an owner on host, exists. It is
// the one rule the live model, a preview and an apply share:
//
//   - only a path on this host (the process's own host name; another host is unknown, never
//     missing) and strictly inside <repo-root>/branches is looked at;
//   - the path is walked one component at a time with lstat, never stat: a link is read with
//     readlink and followed only while its target stays inside the repository root (or the
//     resolved branches directory); a link that leaves it is reported as such and never
//     stat'ed through, so a dead network mount behind it cannot hang the caller;
//   - a link whose target is inside the root but does not exist is missing, like any
//     other absent path; a component that is not a directory, or any other error, is unknown.
func (r WorktreeRoots) Probe(path, host string) WorktreeReport {
	switch me, err := hostname(); {
	case path == "":
		return WorktreeReport{State: leaserec.WorktreeUnknown, Why: "no worktree path recorded"}
	case host == "":
		return WorktreeReport{State: leaserec.WorktreeUnknown, Why: "no owner host recorded"}
	case err != nil || host != me:
		return WorktreeReport{State: leaserec.WorktreeUnknown, Why: "worktree is on host " + host + ", not this one"}
	case r.Branches == "":
		return WorktreeReport{State: leaserec.WorktreeUnknown,
			Why: "no repository root configured: worktrees are not looked at"}
	}
	rest, ok := r.under(path)
	if !ok {
		return WorktreeReport{State: leaserec.WorktreeUnknown, Escapes: true,
			Why: "outside " + r.lexBranches + ": not followed"}
	}
	return r.walk(path, rest)
}

// under returns path's components below the branches directory (as written or resolved),
// or false when path is not strictly inside it. The recorded path is matched as written,
// component by component: "..", "." and doubled separators are walked, not cleaned away,
// so that a ".." after a link means what the kernel would make of it.
func (r WorktreeRoots) under(path string) ([]string, bool) {
	if !filepath.IsAbs(path) ||
		!strings.HasPrefix(filepath.Clean(path)+"/", r.lexBranches+"/") &&
			!strings.HasPrefix(filepath.Clean(path)+"/", r.Branches+"/") {
		return nil, false
	}
	comps := split(path)
	for _, root := range []string{r.lexBranches, r.Branches} {
		rc := split(root)
		if len(comps) > len(rc) && equal(comps[:len(rc)], rc) {
			return comps[len(rc):], true
		}
	}
	return nil, false
}

func (r WorktreeRoots) inside(p string) bool {
	for _, root := range []string{r.Repo, r.Branches} {
		if p == root || strings.HasPrefix(p, root+"/") {
			return true
		}
	}
	return false
}

// walk resolves comps from the branches directory, following links that stay inside.
func (r WorktreeRoots) walk(path string, comps []string) WorktreeReport {
	cur, isDir, links := r.Branches, true, 0
	looked := func(st leaserec.WorktreeState, why string) WorktreeReport {
		return WorktreeReport{State: st, Why: why, Looked: true}
	}
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		if c == ".." {
			up := filepath.Dir(cur)
			if !r.inside(up) {
				return WorktreeReport{
					State:   leaserec.WorktreeUnknown,
					Escapes: true,
					Looked:  true,
					Why:     path + " leads out of the repository root " + r.Repo + " through \"..\": not followed",
				}
			}
			cur, isDir = up, true
			continue
		}
		if !isDir {
			return looked(leaserec.WorktreeUnknown, cur+" is not a directory")
		}
		next := cur + "/" + c
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if cur == r.Branches || cur == r.Repo {
				if d, err := os.Lstat(cur); err != nil || !d.IsDir() {
					return looked(leaserec.WorktreeUnknown, "the directory "+cur+" itself is not there: is the repository root right?")
				}
			}
			if next == path {
				return looked(leaserec.WorktreeMissing, next+" does not exist")
			}
			return looked(leaserec.WorktreeMissing, path+" does not exist ("+next+" is missing)")
		case err != nil:
			return looked(leaserec.WorktreeUnknown, "lstat "+next+": "+errText(err))
		case fi.Mode()&fs.ModeSymlink != 0:
			if links++; links > maxLinks {
				return looked(leaserec.WorktreeUnknown, path+": more than 40 links")
			}
			target, err := os.Readlink(next)
			if err != nil {
				return looked(leaserec.WorktreeUnknown, "readlink "+next+": "+errText(err))
			}
			tc := split(target)
			if filepath.IsAbs(target) {
				root, rest, ok := r.rooted(tc)
				if !ok {
					return WorktreeReport{
						State:   leaserec.WorktreeUnknown,
						Escapes: true,
						Looked:  true,
						Why:     next + " is a link to " + target + ", outside the repository root " + r.Repo + ": not followed",
					}
				}
				cur, tc = root, rest
			}
			comps = append(tc, comps...)
			isDir = true
		default:
			cur, isDir = next, fi.IsDir()
		}
	}
	if !isDir {
		return looked(leaserec.WorktreeUnknown, cur+" is not a directory")
	}
	if cur == path {
		return looked(leaserec.WorktreePresent, path+" is a directory")
	}
	return looked(leaserec.WorktreePresent, path+" is a directory (at "+cur+")")
}

// rooted matches an absolute link target, as written, against the roots: it returns the
// root it starts with and the components after it.
func (r WorktreeRoots) rooted(tc []string) (string, []string, bool) {
	for _, root := range []string{r.Branches, r.Repo} {
		rc := split(root)
		if len(tc) >= len(rc) && equal(tc[:len(rc)], rc) {
			return root, append([]string(nil), tc[len(rc):]...), true
		}
	}
	return "", nil, false
}

// split returns a path's components, dropping empty and "." ones.
func split(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

func equal(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// errText is an OS error without the path it repeats.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
