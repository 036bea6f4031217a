package live

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"steward/leases/leaserec"
	"steward/leases/leasestest"
	"steward/locks/lockrec"
)

// TestSpellingsAreFindings: records that name their item in a spelling other than the one
// the rule gives (reponame) — a lock and a DB work item under the clone-path spelling
// widgets.git, a lock under the path ./widgets, one in full-width letters — are each a
// finding of a one-shot read (steward status), and each is still shown as the item it
// records: not merged into acme/widgets#7, not dropped. Records in the canonical spelling,
// also in another case, are no finding.
//
// Before, nothing said so: the .git spelling was a second item beside acme/widgets, and
// the others items nobody could claim or reach by name.
func TestSpellingsAreFindings(t *testing.T) {
	dir := t.TempDir()
	w := leasestest.Work(leaserec.KindIssue, 7)
	w.Repo = "widgets.git"
	ws := Workspace{LocksDir: filepath.Join(dir, "locks"), RepoRoot: filepath.Join(dir, "repo"),
		DBPath: leasestest.NewDB(t, []leasestest.Session{{SessionID: "s1", Role: "author"}},
			[]leasestest.Lease{{LeaseID: "L1", SessionID: "s1", Work: w, ExpiresAt: leaserec.FormatTime(leasestest.Now.Add(time.Hour)), TaskClass: leaserec.ClassAuthorIssueWork}})}
	if err := os.MkdirAll(ws.LocksDir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, repo := range map[string]string{"a.json": "Widgets.git", "b.json": "./widgets", "c.json": "ｗｉｄｇｅｔｓ", "d.json": "Widgets"} {
		n := int64(name[0]-'a') + 10
		rec := lockrec.Record{Remote: "origin", Org: "acme", Repo: repo, IssueNumber: &n, OwnerSession: "s-" + name}
		data, err := lockrec.Marshal(&rec)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws.LocksDir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	in := Load(context.Background(), ws, Probe{Host: "here"}, leasestest.Now)
	all := strings.Join(in.Findings, "\n")
	for _, want := range []string{
		"lock a.json names acme/Widgets.git#10, the clone-path spelling of acme/Widgets#10 (the same repository): shown as recorded, not merged",
		`lock b.json names "acme"/"./widgets"#11, not a spelling Gitea accepts (repository "./widgets": it is a path`,
		`lock c.json names "acme"/"\uff57\uff49\uff44\uff47\uff45\uff54\uff53"#12, not a spelling Gitea accepts (repository`,
		"control-plane DB work item 1 names acme/widgets.git#7, the clone-path spelling of acme/widgets#7",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no finding %q in\n%s", want, all)
		}
	}
	if strings.Contains(all, "d.json") || len(in.Findings) != 4 {
		t.Errorf("findings %q; want the four spellings alone (Widgets is canonical)", in.Findings)
	}
	var repos []string
	for _, lo := range in.Locks {
		repos = append(repos, lo.Entry.Key.Repo)
	}
	if len(in.Locks) != 4 || len(in.WorkItems) != 1 || in.WorkItems[0].Repo != "widgets.git" {
		t.Errorf("records as read: locks %q, work items %+v; want each as recorded", repos, in.WorkItems)
	}
}
