package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// treeHash hashes every file under dir (names and bytes).
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %x\n", p, sha256.Sum256(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(h[:])
}

// TestRepoSpellingsFromTheCommandLine: the command line writes one spelling per
// repository — acme/Widgets.git#7 is acme/widgets#7, so another session's claim of it is
// refused claimed_by_other_session (exit 3) — and refuses a spelling Gitea would not accept
// (a path, full-width letters, an owner ending in a dot) before it asks the core: exit 1,
// the reason named, no file written, not even an audit record.
//
// Before the rule the second claim got a second lease and lock for the issue, and each
// refused spelling was claimed as an item of its own.
func TestRepoSpellingsFromTheCommandLine(t *testing.T) {
	ws := cliWorkspace(t)
	dir := filepath.Dir(ws[len(ws)-1])
	claim := func(session string, args ...string) (int, string) {
		return run(t, append(append([]string{"claim", "--number", "7", "--session", session, "--as-role", "operator"}, args...), ws...)...)
	}
	if code, out := claim("s1", "--org", "acme", "--repo", "widgets"); code != ExitOK {
		t.Fatalf("claim: %d\n%s", code, out)
	}
	if code, out := claim("s2", "--org", "acme", "--repo", "Widgets.git"); code != ExitRefused || !strings.Contains(out, "claimed_by_other_session") {
		t.Fatalf("claim of acme/Widgets.git#7 by another session: %d\n%s", code, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--org", "acme", "--repo", "./widgets"}, `--org/--repo: repository name "./widgets" is not one Gitea accepts: it is a path`},
		{[]string{"--org", "acme", "--repo", "widgets/"}, "it is a path"},
		{[]string{"--org", "acme", "--repo", "ｗｉｄｇｅｔｓ"}, `full-width characters`},
		{[]string{"--org", "acme.", "--repo", "widgets"}, `owner name "acme." is not one Gitea accepts`},
	} {
		before := treeHash(t, dir)
		code, out := claim("s3", tc.args...)
		if code != ExitError || !strings.Contains(out, tc.want) || !strings.Contains(out, "nothing was done") {
			t.Errorf("claim %q: %d\n%s\nwant exit %d saying %q", tc.args, code, out, ExitError, tc.want)
		}
		if after := treeHash(t, dir); after != before {
			t.Errorf("claim %q wrote a file", tc.args)
		}
	}
	before := treeHash(t, dir)
	if code, out := run(t, append([]string{"recover", "--item", "acme/ｗｉｄｇｅｔｓ#7", "--as-role", "operator"}, ws...)...); code != ExitError || !strings.Contains(out, "--item: repository name") {
		t.Errorf("recover --item acme/ｗｉｄｇｅｔｓ#7: %d\n%s", code, out)
	}
	if after := treeHash(t, dir); after != before {
		t.Error("the refused recover wrote a file")
	}
}
