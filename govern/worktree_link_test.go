package govern

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"steward/govern/actionid"
	"steward/leases/leaserec"
	"steward/model/live"
)

// A worktree that is a symlink reads the same in the live model, a
// preview and an apply. A link that leaves the repository root is never followed (its target
// is never stat'ed) and reads unknown, said as such; a dangling link inside the root is
// missing everywhere. On the code before the fix the model followed every link (os.Stat) and
// the core answered unknown for any link (os.Lstat): the two disagreed on every case below
// but the plain directory.
func TestWorktreeLinksOneVerdict(t *testing.T) {
	for _, tc := range []struct {
		name string
		// make builds branches/feat-L1 (repo is the repository root, out a directory
		// outside it) and returns the worktree path to record, when not the default.
		make    func(t *testing.T, repo, out string) string
		want    leaserec.WorktreeState
		escapes bool
		refuse  string // the preview's and the apply's code; "" when the abandon succeeds
	}{
		{"plain directory", func(t *testing.T, repo, out string) string {
			mkdir(t, filepath.Join(repo, "branches", "feat-L1"))
			return ""
		}, leaserec.WorktreePresent, false, "not_stale"},
		{"link out of the root to a directory", func(t *testing.T, repo, out string) string {
			mkdir(t, filepath.Join(out, "wt"))
			link(t, filepath.Join(out, "wt"), filepath.Join(repo, "branches", "feat-L1"))
			return ""
		}, leaserec.WorktreeUnknown, true, codeLivenessUnproven},
		{"dangling link out of the root", func(t *testing.T, repo, out string) string {
			link(t, filepath.Join(out, "gone"), filepath.Join(repo, "branches", "feat-L1"))
			return ""
		}, leaserec.WorktreeUnknown, true, codeLivenessUnproven},
		{"dangling link inside the root", func(t *testing.T, repo, out string) string {
			link(t, "../work/gone", filepath.Join(repo, "branches", "feat-L1"))
			return ""
		}, leaserec.WorktreeMissing, false, ""},
		{"link inside the root to a directory", func(t *testing.T, repo, out string) string {
			mkdir(t, filepath.Join(repo, "work", "x"))
			link(t, "../work/x", filepath.Join(repo, "branches", "feat-L1"))
			return ""
		}, leaserec.WorktreePresent, false, "not_stale"},
		{"relative link climbing out", func(t *testing.T, repo, out string) string {
			mkdir(t, filepath.Join(out, "wt"))
			rel, err := filepath.Rel(filepath.Join(repo, "branches"), filepath.Join(out, "wt"))
			if err != nil {
				t.Fatal(err)
			}
			link(t, rel, filepath.Join(repo, "branches", "feat-L1"))
			return ""
		}, leaserec.WorktreeUnknown, true, codeLivenessUnproven},
		{"chain of links ending outside", func(t *testing.T, repo, out string) string {
			mkdir(t, filepath.Join(out, "wt"))
			link(t, filepath.Join(out, "wt"), filepath.Join(repo, "branches", "hop"))
			link(t, "hop", filepath.Join(repo, "branches", "feat-L1"))
			return ""
		}, leaserec.WorktreeUnknown, true, codeLivenessUnproven},
		{"a link in the middle of the path", func(t *testing.T, repo, out string) string {
			mkdir(t, filepath.Join(out, "mnt", "feat-L1"))
			link(t, filepath.Join(out, "mnt"), filepath.Join(repo, "branches", "sub"))
			return filepath.Join(repo, "branches", "sub", "feat-L1")
		}, leaserec.WorktreeUnknown, true, codeLivenessUnproven},
		{"dot-dot after a link inside", func(t *testing.T, repo, out string) string {
			mkdir(t, filepath.Join(repo, "work", "a", "feat-L1"))
			mkdir(t, filepath.Join(repo, "work", "a", "b"))
			link(t, "../work/a/b", filepath.Join(repo, "branches", "l"))
			return filepath.Join(repo, "branches", "l") + "/../feat-L1" // the kernel reads work/a/feat-L1
		}, leaserec.WorktreePresent, false, "not_stale"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, RoleAdmin)
			out := t.TempDir()
			path := tc.make(t, f.ws.RepoRoot, out)
			f.liveLease("L1", 1, int64(os.Getpid()), f.host())
			if path != "" {
				f.exec("UPDATE leases SET worktree_path = ? WHERE lease_id = 'L1'", path)
			}
			l := f.lease("L1")

			mo := live.NewProbe(f.ws.RepoRoot).ObserveLease(l)
			if leaserec.WorktreeState(mo.Worktree) != tc.want {
				t.Fatalf("model: %s (%s), want %s", mo.Worktree, mo.WorkWhy, tc.want)
			}
			if tc.escapes && !strings.Contains(mo.WorkWhy, "not followed") {
				t.Errorf("model does not say the link was not followed: %s", mo.WorkWhy)
			}

			req := Request{Action: actionid.AbandonStale, Target: Target{LeaseID: "L1"}}
			before := f.state()
			pv, err := f.core.Preview(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if f.state() != before {
				t.Fatal("the preview wrote")
			}
			wantEv := "worktree: " + string(tc.want) + " — " + mo.WorkWhy
			if !has(pv.Evidence, wantEv) {
				t.Fatalf("preview evidence %q\nwant the model's verdict %q", pv.Evidence, wantEv)
			}
			if code := refusalCode(pv.Refusal); code != tc.refuse {
				t.Fatalf("preview: %q (%v), want %q", code, pv.Refusal, tc.refuse)
			}
			o := f.core.Apply(context.Background(), pv, pv.ConfirmPhrase)
			switch {
			case tc.refuse == "" && o.Result != ResultSucceeded:
				t.Fatalf("apply: %+v", o)
			case tc.refuse != "" && (o.Result != ResultRefused || o.Code != tc.refuse):
				t.Fatalf("apply: %+v, want refused %s", o, tc.refuse)
			case tc.refuse == "":
				if got := f.lease("L1"); got.EndReason != string(leaserec.FreshStaleMissingWorktree) {
					t.Fatalf("abandoned as %q", got.EndReason)
				}
			}
		})
	}
}

func has(xs []string, want string) bool {
	for _, x := range xs {
		if x == want {
			return true
		}
	}
	return false
}

func refusalCode(r *Refusal) string {
	if r == nil {
		return ""
	}
	return r.Code
}

func mkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o700); err != nil {
		t.Fatal(err)
	}
}

func link(t *testing.T, target, at string) {
	t.Helper()
	mkdir(t, filepath.Dir(at))
	if err := os.Symlink(target, at); err != nil {
		t.Fatal(err)
	}
}
