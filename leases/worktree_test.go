package leases

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"steward/leases/leaserec"
)

// The confined worktree probe, case by case on real files (the
// cross-check that the model and the core agree is govern.TestWorktreeLinksOneVerdict).
func TestWorktreeRootsProbe(t *testing.T) {
	me, err := hostname()
	if err != nil {
		t.Skip("no host name")
	}
	repo := filepath.Join(t.TempDir(), "repo")
	out := t.TempDir()
	br := filepath.Join(repo, "branches")
	for _, d := range []string{filepath.Join(br, "dir"), filepath.Join(repo, "work", "x"), filepath.Join(out, "wt")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(br, "file"), nil, 0o600))
	must(os.Symlink(filepath.Join(out, "wt"), filepath.Join(br, "out")))
	must(os.Symlink("../work/x", filepath.Join(br, "in")))
	must(os.Symlink("../work/gone", filepath.Join(br, "dangling")))
	must(os.Symlink("loop2", filepath.Join(br, "loop1")))
	must(os.Symlink("loop1", filepath.Join(br, "loop2")))
	must(os.Symlink(filepath.Join(br, "dir"), filepath.Join(br, "abs-in")))
	must(os.Symlink("/etc", filepath.Join(br, "etc")))
	r := ResolveWorktreeRoots(repo)
	must(os.Symlink(r.Repo, filepath.Join(br, "top")))  // an absolute link to the repository root itself
	must(os.Symlink("../..", filepath.Join(br, "up2"))) // a relative link above the repository root
	// Chains of exactly 40 links (as many as the kernel follows) and of 41.
	for _, n := range []int{40, 41} {
		for i := 1; i <= n; i++ {
			next := fmt.Sprintf("chain%d-%d", n, i+1)
			if i == n {
				next = "dir"
			}
			must(os.Symlink(next, filepath.Join(br, fmt.Sprintf("chain%d-%d", n, i))))
		}
	}

	for _, tc := range []struct {
		name, path, host string
		want             leaserec.WorktreeState
		escapes, looked  bool
		why              string
	}{
		{"directory", br + "/dir", me, leaserec.WorktreePresent, false, true, "is a directory"},
		{"absent", br + "/none", me, leaserec.WorktreeMissing, false, true, "does not exist"},
		{"absent below a directory", br + "/dir/a/b", me, leaserec.WorktreeMissing, false, true, "is missing"},
		{"a file", br + "/file", me, leaserec.WorktreeUnknown, false, true, "not a directory"},
		{"below a file", br + "/file/x", me, leaserec.WorktreeUnknown, false, true, "not a directory"},
		{"link inside", br + "/in", me, leaserec.WorktreePresent, false, true, "at " + filepath.Join(r.Repo, "work", "x")},
		{"absolute link inside", br + "/abs-in", me, leaserec.WorktreePresent, false, true, "is a directory"},
		{"dangling link inside", br + "/dangling", me, leaserec.WorktreeMissing, false, true, "does not exist"},
		{"link out", br + "/out", me, leaserec.WorktreeUnknown, true, true, "outside the repository root"},
		{"link to /etc", br + "/etc/passwd", me, leaserec.WorktreeUnknown, true, true, "is a link to /etc"},
		{"link loop", br + "/loop1", me, leaserec.WorktreeUnknown, false, true, "more than 40 links"},
		{"40 links", br + "/chain40-1", me, leaserec.WorktreePresent, false, true, "is a directory"},
		{"41 links", br + "/chain41-1", me, leaserec.WorktreeUnknown, false, true, "more than 40 links"},
		{"dot-dot inside", br + "/dir/../dir", me, leaserec.WorktreePresent, false, true, "is a directory"},
		{"relative link above the root", br + "/up2/x", me, leaserec.WorktreeUnknown, true, true, `through ".."`},
		{"absolute link to the repository root", br + "/top/branches/dir", me, leaserec.WorktreePresent, false, true,
			"is a directory"},
		{"dot-dot out of the root", br + "/dir/../../../x", me, leaserec.WorktreeUnknown, true, false, "not followed"},
		{"outside branches", repo + "/work/x", me, leaserec.WorktreeUnknown, true, false, "not followed"},
		{"relative path", "branches/dir", me, leaserec.WorktreeUnknown, true, false, "not followed"},
		{"the branches directory itself", br, me, leaserec.WorktreeUnknown, true, false, "not followed"},
		{"another host", br + "/dir", me + "-other", leaserec.WorktreeUnknown, false, false, "on host"},
		{"no host", br + "/dir", "", leaserec.WorktreeUnknown, false, false, "no owner host"},
		{"no path", "", me, leaserec.WorktreeUnknown, false, false, "no worktree path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := r.Probe(tc.path, tc.host)
			if got.State != tc.want || got.Escapes != tc.escapes || got.Looked != tc.looked || !strings.Contains(got.Why, tc.why) {
				t.Fatalf("%+v\nwant %s escapes=%v looked=%v, why containing %q", got, tc.want, tc.escapes, tc.looked, tc.why)
			}
		})
	}

	// A repository root given through a link is resolved once: the roots are the real
	// directories, so an absolute link a worker wrote with the real path stays inside.
	link := filepath.Join(t.TempDir(), "repo-link")
	must(os.Symlink(repo, link))
	if got := ResolveWorktreeRoots(link); got.Repo != r.Repo || got.Branches != r.Branches {
		t.Fatalf("roots through a link: %+v, want %+v", got, r)
	}
	// A repository root whose branches/ is absent: nothing is missing, the root is wrong.
	if got := ResolveWorktreeRoots(out).Probe(filepath.Join(out, "branches", "x"), me); got.State != leaserec.WorktreeUnknown || !strings.Contains(got.Why, "repository root right") {
		t.Fatalf("absent branches/: %+v", got)
	}
	// No repository root looks at nothing.
	if got := (WorktreeRoots{}).Probe(br+"/dir", me); got.State != leaserec.WorktreeUnknown || got.Looked {
		t.Fatalf("zero roots: %+v", got)
	}
	// branches/ itself a link the operator made (another disk): worktrees in it are looked
	// at, as the seed's realpath(<root>/branches) does; a link in it that leaves both is not.
	repo2 := filepath.Join(t.TempDir(), "repo2")
	disk := t.TempDir()
	must(os.MkdirAll(filepath.Join(disk, "branches", "w"), 0o700))
	must(os.MkdirAll(repo2, 0o700))
	must(os.Symlink(filepath.Join(disk, "branches"), filepath.Join(repo2, "branches")))
	must(os.Symlink(filepath.Join(out, "wt"), filepath.Join(disk, "branches", "esc")))
	r2 := ResolveWorktreeRoots(repo2)
	if got := r2.Probe(filepath.Join(repo2, "branches", "w"), me); got.State != leaserec.WorktreePresent {
		t.Fatalf("worktree in a linked branches/: %+v", got)
	}
	if got := r2.Probe(filepath.Join(r2.Branches, "w"), me); got.State != leaserec.WorktreePresent {
		t.Fatalf("worktree recorded at the resolved branches/: %+v", got)
	}
	if got := r2.Probe(filepath.Join(repo2, "branches", "esc"), me); got.State != leaserec.WorktreeUnknown || !got.Escapes {
		t.Fatalf("a link out of a linked branches/: %+v", got)
	}
}
