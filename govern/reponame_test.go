package govern

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
	"steward/locks/lockrec"
)

// sourcesAndRows is f.state() without the audit log: every lock file's and DB file's hash
// and every DB row, on both backends — what a refused claim must leave as it was (its
// refusal is audited, which is the one write it makes).
func (f *fixture) sourcesAndRows() string {
	f.t.Helper()
	audit := filepath.Dir(f.audit.Path())
	var keep []string
	for _, l := range strings.Split(f.state(), "\n") {
		if !strings.HasPrefix(l, audit) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func claimReq(org, repo, session string, n int64) Request {
	return Request{Action: actionid.Claim, Target: Target{Item: &Item{Remote: "origin", Org: org, Repo: repo, Kind: "issue", Number: n}, Session: session},
		Params: ClaimParams{PID: strconv.Itoa(os.Getpid()), Role: "author"}}
}

// TestClaimSpellingsAreOneItem: acme/widgets#7 and acme/Widgets.git#7 are one item (Gitea
// matches names case-insensitively and a clone path's ".git" names the repository without
// it), so a second session's claim of the second spelling is refused
// claimed_by_other_session and the item keeps one lease and one lock, on both backends.
//
// Before the rule (reponame) the core folded only the case: Widgets.git was another
// repository, and the second claim got a second lease and a second lock for the issue.
func TestClaimSpellingsAreOneItem(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := newFixtureOn(t, RoleOperator, backend)
			ctx := context.Background()
			if _, out, err := f.core.Run(ctx, claimReq("acme", "widgets", "s1", 7), ""); err != nil || out.Result != ResultSucceeded {
				t.Fatalf("first claim: %+v %v", out, err)
			}
			for _, sp := range [][2]string{{"acme", "Widgets.git"}, {"ACME", "widgets"}, {"Acme", "WIDGETS.git"}} {
				_, out, err := f.core.Run(ctx, claimReq(sp[0], sp[1], "s2", 7), "")
				if err != nil || out.Result != ResultRefused || out.Code != CodeClaimedByOther {
					t.Errorf("claim of %s/%s#7 by another session: %+v %v; want refused %s", sp[0], sp[1], out, err, CodeClaimedByOther)
				}
			}
			if a := f.activeLeases(7); len(a) != 1 || a[0].SessionID != "s1" {
				t.Errorf("active leases of #7: %+v; want s1's alone", a)
			}
			if ls := f.lockNames(); len(ls) != 1 {
				t.Errorf("lock files: %q; want one", ls)
			}
		})
	}
}

func (f *fixture) lockNames() []string {
	f.t.Helper()
	es, err := os.ReadDir(f.ws.LocksDir)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestClaimCanonicalisesTheGitSuffix: a claim of acme/widgets.git#8 records the item as
// acme/widgets#8 in the DB and in its lock, so every later reader sees one spelling.
func TestClaimCanonicalisesTheGitSuffix(t *testing.T) {
	f := newFixture(t, RoleOperator)
	if _, out, err := f.core.Run(context.Background(), claimReq("acme", "widgets.git", "s1", 8), ""); err != nil || out.Result != ResultSucceeded {
		t.Fatalf("%+v %v", out, err)
	}
	a := f.activeLeases(8)
	if len(a) != 1 || a[0].Work.Repo != "widgets" {
		t.Fatalf("the lease is on %+v; want acme/widgets#8", a)
	}
	names := f.lockNames()
	if len(names) != 1 || strings.Contains(names[0], "git") {
		t.Fatalf("lock files %q; want one, named for acme/widgets", names)
	}
	data, err := os.ReadFile(filepath.Join(f.ws.LocksDir, names[0]))
	if err != nil || !strings.Contains(string(data), `"repo": "widgets"`) && !strings.Contains(string(data), `"repo":"widgets"`) {
		t.Fatalf("the lock records %s (%v); want repo widgets", data, err)
	}
}

// TestRefusedSpellingWritesNothing: a claim under a spelling Gitea would not accept (a
// path, full-width letters, a reserved ending, an owner with a trailing dot) is refused
// invalid_request with the reason, in the preview and on apply, and neither writes a file
// or a row of the sources; the item stays claimable under its real name.
//
// Before the rule each of these claims succeeded and wrote a lease and a lock under a name
// no other worker would use: a second lease for acme/widgets#7 in all but name.
func TestRefusedSpellingWritesNothing(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := newFixtureOn(t, RoleOperator, backend)
			ctx := context.Background()
			for _, tc := range []struct{ org, repo, why string }{
				{"acme", "./widgets", "is a path"},
				{"acme", "widgets/", "is a path"},
				{"acme", "ｗｉｄｇｅｔｓ", `full-width`},
				{"acme", "widgets.wiki", "ends in .wiki"},
				{"acme", "wid gets", "space"},
				{"acme.", "widgets", "must not end"},
				{"acme", "widgets.git.git", "ends in .git"},
			} {
				before := f.state()
				pv, err := f.core.Preview(ctx, claimReq(tc.org, tc.repo, "s1", 7))
				if err != nil || pv.Allowed || pv.Refusal.Code != CodeInvalidRequest || !strings.Contains(pv.Refusal.Message, tc.why) {
					t.Errorf("preview of %s/%s: %+v %v; want invalid_request saying %q", tc.org, tc.repo, pv.Refusal, err, tc.why)
				}
				if after := f.state(); after != before {
					t.Errorf("the preview of %s/%s wrote:\n%s\n---\n%s", tc.org, tc.repo, before, after)
				}
				before = f.sourcesAndRows()
				_, out, err := f.core.Run(ctx, claimReq(tc.org, tc.repo, "s1", 7), "")
				if err != nil || out.Result != ResultRefused || out.Code != CodeInvalidRequest {
					t.Errorf("claim of %s/%s: %+v %v; want refused invalid_request", tc.org, tc.repo, out, err)
				}
				if after := f.sourcesAndRows(); after != before {
					t.Errorf("the refused claim of %s/%s wrote:\n%s\n---\n%s", tc.org, tc.repo, before, after)
				}
			}
			if _, out, err := f.core.Run(ctx, claimReq("acme", "widgets", "s1", 7), ""); err != nil || out.Result != ResultSucceeded {
				t.Fatalf("acme/widgets#7 is not claimable after the refusals: %+v %v", out, err)
			}
		})
	}
}

// TestClaimSeesTheGitSpellingRecorded: a lease and a lock an older tool recorded under the
// clone-path spelling acme/widgets.git#9 are the item acme/widgets#9: a claim of it is
// refused and names the recorded spelling — not merged into it silently, not split from
// it into a second lease.
func TestClaimSeesTheGitSpellingRecorded(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := newFixtureOn(t, RoleOperator, backend)
			ctx := context.Background()
			w := work(9)
			w.Repo = "widgets.git"
			f.insert(leasestest.Lease{LeaseID: "LG", SessionID: "s-old", Role: "author", TaskClass: "author_issue_work",
				Work: w, CreatedAt: ts(-time.Minute), ExpiresAt: ts(time.Hour), LastHeartbeatAt: ts(-time.Minute),
				OwnerPID: int64(os.Getpid()), OwnerHost: f.host()})
			_, out, err := f.core.Run(ctx, claimReq("acme", "widgets", "s2", 9), "")
			if err != nil || out.Result != ResultRefused || out.Code != CodeClaimedByOther || !strings.Contains(out.Message, "acme/widgets.git#9") {
				t.Fatalf("claim with a lease recorded under widgets.git: %+v %v", out, err)
			}
			n := int64(10)
			f.writeLock("legacy-10.json", lockrec.Record{Remote: "origin", Org: "acme", Repo: "Widgets.git", IssueNumber: &n, OwnerSession: "s-old"})
			_, out, err = f.core.Run(ctx, claimReq("acme", "widgets", "s2", 10), "")
			if err != nil || out.Result != ResultRefused || out.Code != CodeClaimedByOther || !strings.Contains(out.Message, "legacy-10.json") {
				t.Fatalf("claim with a lock recorded under Widgets.git: %+v %v", out, err)
			}
			var active []leaserec.Lease
			for _, n := range []int64{9, 10} {
				active = append(active, f.activeLeases(n)...)
			}
			if len(active) != 0 {
				t.Fatalf("a lease was created beside the recorded spelling: %+v", active)
			}
		})
	}
}
