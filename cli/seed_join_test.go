package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"steward/gitea/contract"
	"steward/gitea/fakegitea"
	"steward/gitea/giteatest"
	"steward/leases/seedtest"
	"steward/locks"
	"steward/locks/lockrec"
)

// The supervised system's own names (seed 002): the remote its workers call the Gitea
// repository (assign_and_lease(remote="prgs", org=…, repo=…), L43254), the project, its
// author session and profile, the marker label.
const (
	seedRemote  = "prgs"
	seedOrg     = "Scaled-Tech-Consulting"
	seedRepo    = "Gitea-Tools"
	seedSession = "prgs-author-30988-d6f43c25"
	seedProfile = "prgs-author"
	seedMarker  = "status:blocked-pending-clarification"
)

func seedItem(n int64) seedtest.Item {
	return seedtest.Item{Remote: seedRemote, Org: seedOrg, Repo: seedRepo, Kind: "issue", Number: n}
}

// joinWS is a workspace around a seed-shaped DB whose rows name the remote prgs, lock files
// beside it, and an in-process Gitea (behind the contract tests) holding the same project:
//
//	#1 open, an active lease and its lock            → leased, one row
//	#2 closed, its lease still active                → terminal_complete and closed-issue-live-claim
//	#3 open, marked for clarification, its lease     → blocked, the question on the lease's row
//	#4 open, nothing holds it                        → runnable
//	#5 open, status:blocked                          → needs_controller
//	#6 an open pull request nobody claims            → runnable
type joinWS struct {
	dir, cfg, db string
	now          time.Time
	d            *seedtest.DB
	repo         *fakegitea.Repo
	fake         *fakegitea.Server
}

func newJoinWS(t *testing.T, cfgExtra string) *joinWS {
	t.Helper()
	w := &joinWS{dir: t.TempDir(), now: time.Now().UTC().Truncate(time.Second)}
	for _, d := range []string{"locks", "repo/branches/issue-1", "db"} {
		if err := os.MkdirAll(filepath.Join(w.dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	fake := fakegitea.New()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	fake.SetBaseURL(srv.URL)
	const token = "fake-seed-join-token-0123456789"
	fake.AddUser("maintainer", token)
	w.repo, w.fake = fake.CreateRepo(seedOrg, seedRepo), fake
	r := w.repo
	r.CreateIssue("maintainer", "leased work", "body")                 // #1
	r.CreateIssue("maintainer", "closed while leased", "body")         // #2
	r.CreateIssue("maintainer", "needs an answer", "body", seedMarker) // #3
	r.AddComment("worker", 3, "Which base branch should this target?")
	r.CreateIssue("maintainer", "nobody holds it", "body")                   // #4
	r.CreateIssue("maintainer", "controller only", "body", "status:blocked") // #5
	r.CreatePR("maintainer", "a quiet pull request", "feature-6", "main")    // #6
	r.CloseIssue(2)

	w.db = filepath.Join(w.dir, "db", "control_plane.sqlite3")
	w.d = seedtest.NewAt(t, w.db, seedtest.Options{})
	w.d.AddSession(seedtest.Session{SessionID: seedSession, Role: "author", Profile: seedProfile, PID: int64(os.Getpid()),
		Status: "active", LastHeartbeatAt: seedtest.ISO(w.now.Add(-time.Minute))})
	for _, n := range []int64{1, 2, 3} {
		w.lease(fmt.Sprintf("lease-%d", n), seedItem(n))
	}
	one := int64(1)
	wt := filepath.Join(w.dir, "repo", "branches", "issue-1")
	rec := lockrec.Record{Remote: seedRemote, Org: seedOrg, Repo: seedRepo, IssueNumber: &one, BranchName: "issue-1", WorktreePath: wt,
		OwnerSession: seedSession, LeaseID: "lease-1",
		WorkLease: &lockrec.WorkLease{OperationType: "author_issue_work", IssueNumber: &one, Branch: "issue-1", WorktreePath: wt,
			Claimant: &lockrec.Claimant{Username: "jcwalker3", Profile: seedProfile}, CreatedAt: lockrec.NewTimestamp(w.now.Add(-5 * time.Minute)),
			ExpiresAt: lockrec.NewTimestamp(w.now.Add(9 * time.Minute)), LastHeartbeatAt: lockrec.NewTimestamp(w.now.Add(-time.Minute)),
			TaskSessionID: "tsk-1", LifecycleVersion: "heartbeat-v1"},
		LockProvenance: &lockrec.Provenance{Source: "gitea_lock_issue", WrittenByTool: "gitea_mcp_server"}}
	if _, err := locks.WriteCAS(filepath.Join(w.dir, "locks"), "prgs__Scaled-Tech-Consulting__Gitea-Tools__issue-1.json", locks.ExpectAbsent(), rec); err != nil {
		t.Fatal(err)
	}
	w.cfg = filepath.Join(w.dir, "steward.yaml")
	text := fmt.Sprintf(`default_workspace: w
workspaces:
  w:
    locks_dir: %[1]s/locks
    db_path: %[2]s
    repo_root: %[1]s/repo
    audit_log: %[1]s/audit.jsonl
    gitea:
      url: %[3]s
      token: %[4]s
      owner: %[5]s
      repo: %[6]s
%[7]s`, w.dir, w.db, srv.URL, token, seedOrg, seedRepo, cfgExtra)
	if err := os.WriteFile(w.cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return w
}

// lease writes an active author lease of the seed's session on it, as the seed writes one.
func (w *joinWS) lease(id string, it seedtest.Item) {
	w.d.AddLease(seedtest.Lease{LeaseID: id, SessionID: seedSession, Role: "author", Item: it, Phase: "implementing",
		CreatedAt: seedtest.ISO(w.now.Add(-5 * time.Minute)), ExpiresAt: seedtest.ISO(w.now.Add(9 * time.Minute)),
		LastHeartbeatAt: seedtest.ISO(w.now.Add(-time.Minute)), OwnerPID: int64(os.Getpid())})
}

// statusJSON is what `steward status --json` says of the workspace.
type statusJSON struct {
	Sources struct {
		Gitea struct {
			Status  string   `json:"status"`
			Partial bool     `json:"partial"`
			Reason  string   `json:"reason"`
			Notes   []string `json:"notes"`
		} `json:"gitea"`
	} `json:"sources"`
	Claims []struct {
		Item    jsonItem `json:"item"`
		LeaseID string   `json:"lease_id"`
	} `json:"claims"`
	Clarifications []struct {
		Item jsonItem `json:"item"`
	} `json:"clarifications"`
	Orphans []struct {
		Kind string   `json:"kind"`
		Item jsonItem `json:"item"`
	} `json:"orphans"`
	Items []struct {
		Item     jsonItem `json:"item"`
		Title    string   `json:"title"`
		Bucket   string   `json:"bucket"`
		Reasons  []string `json:"reasons"`
		Evidence []struct {
			Source string `json:"source"`
			Field  string `json:"field"`
			Value  string `json:"value"`
		} `json:"evidence"`
	} `json:"items"`
	ItemsInventory *struct {
		Complete bool   `json:"complete"`
		Reason   string `json:"reason"`
	} `json:"items_inventory"`
	Findings []string `json:"findings"`
}

type jsonItem struct {
	Kind   string `json:"kind"`
	Number int64  `json:"number"`
	Remote string `json:"remote"`
	Org    string `json:"org"`
	Repo   string `json:"repo"`
}

func (it jsonItem) String() string {
	return fmt.Sprintf("%s:%s/%s/%s#%d", it.Kind, it.Remote, it.Org, it.Repo, it.Number)
}

func (w *joinWS) status(t *testing.T, args ...string) (statusJSON, string) {
	t.Helper()
	var out, errb bytes.Buffer
	args = append([]string{"--config", w.cfg, "status", "--json", "--now", w.now.Format(time.RFC3339)}, args...)
	if code := Main(args, &out, &errb); code != ExitOK {
		t.Fatalf("steward %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	var s statusJSON
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out.String())
	}
	return s, out.String()
}

// rows counts the items[] rows of each kind and number, whatever their remote.
func (s statusJSON) rows() map[string]int {
	n := map[string]int{}
	for _, it := range s.Items {
		n[fmt.Sprintf("%s#%d", it.Item.Kind, it.Item.Number)]++
	}
	return n
}

func (s statusJSON) bucket(kind string, n int64) (string, []string) {
	for _, it := range s.Items {
		if it.Item.Kind == kind && it.Item.Number == n {
			var ev []string
			for _, e := range it.Evidence {
				ev = append(ev, e.Source+" "+e.Field+": "+e.Value)
			}
			return it.Bucket, ev
		}
	}
	return "", nil
}

// TestSeedOneItemAcrossSources: on the supervised system's own names — rows and locks under
// the remote prgs, not origin — each item is one row of items[], with Gitea's facts, the
// lease, the lock and the clarification joined on it: a leased item is leased (not also
// runnable), a closed issue whose lease is active raises closed-issue-live-claim on its one
// terminal_complete row, a clarification names the item of its lease. With gitea.remote
// unset, the remote is inferred from the DB's rows and the Gitea source says so; with it
// set, it is used as it is; with the DB's rows naming two remotes, steward joins nothing
// and says why. Before the remote was part of the configuration, Gitea's facts were filed
// under origin and every item Gitea and the DB both knew was two rows.
func TestSeedOneItemAcrossSources(t *testing.T) {
	check := func(t *testing.T, s statusJSON) {
		t.Helper()
		for k, n := range s.rows() {
			if n != 1 {
				t.Errorf("%s is %d rows of items[], want one", k, n)
			}
		}
		for _, it := range s.Items {
			if it.Item.Remote != seedRemote {
				t.Errorf("item %s: remote %q, want %q", it.Item, it.Item.Remote, seedRemote)
			}
		}
		want := map[int64]string{1: "leased", 2: "terminal_complete", 3: "blocked", 5: "needs_controller"}
		for n, b := range want {
			if got, ev := s.bucket("issue", n); got != b {
				t.Errorf("issue #%d: bucket %q, want %q (evidence %v)", n, got, b, ev)
			}
		}
		// The blocked item's row carries its lease: the clarification is on the lease's row.
		if _, ev := s.bucket("issue", 3); !strings.Contains(strings.Join(ev, "\n"), "leases.lease-3") {
			t.Errorf("issue #3's row does not carry its lease: %v", ev)
		}
		closed := 0
		for _, o := range s.Orphans {
			if o.Kind == "closed-issue-live-claim" && o.Item.Number == 2 && o.Item.Remote == seedRemote {
				closed++
			}
		}
		if closed != 1 {
			t.Errorf("closed-issue-live-claim on #2: %d, want 1 (orphans %+v)", closed, s.Orphans)
		}
		if len(s.Clarifications) != 1 || s.Clarifications[0].Item.Remote != seedRemote || s.Clarifications[0].Item.Number != 3 {
			t.Errorf("clarifications %+v: want #3 under %s", s.Clarifications, seedRemote)
		}
		for _, c := range s.Claims {
			if c.Item.Remote != seedRemote {
				t.Errorf("claim %s on %s", c.LeaseID, c.Item)
			}
		}
	}
	t.Run("inferred", func(t *testing.T) {
		w := newJoinWS(t, "")
		s, _ := w.status(t)
		check(t, s)
		if !strings.Contains(strings.Join(s.Sources.Gitea.Notes, "\n"), "remote prgs inferred from the control-plane DB") {
			t.Errorf("the Gitea source does not say the remote was inferred: %q", s.Sources.Gitea.Notes)
		}
	})
	t.Run("configured", func(t *testing.T) {
		w := newJoinWS(t, "")
		if err := os.WriteFile(w.cfg, bytes.Replace(must(os.ReadFile(w.cfg)), []byte("      repo: "+seedRepo+"\n"),
			[]byte("      repo: "+seedRepo+"\n      remote: "+seedRemote+"\n"), 1), 0o600); err != nil {
			t.Fatal(err)
		}
		s, _ := w.status(t)
		check(t, s)
		if len(s.Sources.Gitea.Notes) != 0 || s.Sources.Gitea.Status != "ok" {
			t.Errorf("a configured remote: the Gitea source reads %s with notes %q", s.Sources.Gitea.Status, s.Sources.Gitea.Notes)
		}
	})
	t.Run("disagree", func(t *testing.T) {
		w := newJoinWS(t, "")
		// Another worker's rows name the same project under origin.
		other := seedItem(4)
		other.Remote = "origin"
		w.lease("lease-4-origin", other)
		s, _ := w.status(t)
		if len(s.Findings) == 0 || !strings.Contains(strings.Join(s.Findings, "\n"), "several remotes (origin, prgs)") {
			t.Errorf("findings %q: want steward to refuse to guess between origin and prgs", s.Findings)
		}
		if s.Sources.Gitea.Status != "degraded" || !s.Sources.Gitea.Partial {
			t.Errorf("gitea source %+v: want degraded and partial", s.Sources.Gitea)
		}
		for k, n := range s.rows() {
			if n != 1 {
				t.Errorf("%s is %d rows, want one (Gitea's facts joined with nothing)", k, n)
			}
		}
		for _, it := range s.Items {
			if it.Bucket == "runnable" || it.Title != "" {
				t.Errorf("item %s is %s with title %q: Gitea's facts were joined although the remote is ambiguous", it.Item, it.Bucket, it.Title)
			}
		}
		if s.ItemsInventory == nil || s.ItemsInventory.Complete {
			t.Errorf("items_inventory %+v: want incomplete", s.ItemsInventory)
		}
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestSeedClaimNamesTheWorkspaceRemote: a worker's claim on the command line names its item
// under the workspace's gitea.remote when --remote is not given (the lock file it would
// write is prgs__…), and under --remote when it is. Before, it was always origin.
func TestSeedClaimNamesTheWorkspaceRemote(t *testing.T) {
	w := newJoinWS(t, "")
	if err := os.WriteFile(w.cfg, bytes.Replace(must(os.ReadFile(w.cfg)), []byte("      repo: "+seedRepo+"\n"),
		[]byte("      repo: "+seedRepo+"\n      remote: "+seedRemote+"\n"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	before := seedtest.Fingerprint(t, w.db, filepath.Join(w.dir, "locks"))
	claim := func(extra ...string) string {
		var out, errb bytes.Buffer
		args := append([]string{"--config", w.cfg, "--as-role", "operator", "claim", "--org", seedOrg, "--repo", seedRepo,
			"--number", "4", "--session", seedSession, "--pid", fmt.Sprint(os.Getpid()), "--dry-run", "--json"}, extra...)
		Main(args, &out, &errb)
		return out.String() + errb.String()
	}
	if got := claim(); !strings.Contains(got, "prgs__Scaled-Tech-Consulting__Gitea-Tools__issue-4.json") || strings.Contains(got, "origin__") {
		t.Errorf("claim without --remote under gitea.remote prgs:\n%s", got)
	}
	if got := claim("--remote", "origin"); !strings.Contains(got, "origin__Scaled-Tech-Consulting__Gitea-Tools__issue-4.json") {
		t.Errorf("claim --remote origin:\n%s", got)
	}
	if seedtest.Fingerprint(t, w.db, filepath.Join(w.dir, "locks")) != before {
		t.Fatal("a dry run changed the DB or the lock directory")
	}
}

// TestSeedEveryOpenItemClassified: every open issue and pull request Gitea lists is one row
// of items[] in exactly one bucket, with that bucket's evidence — the issue and the pull
// request nothing holds are runnable, resting on the absences read completely — and the
// inventory says it is complete. When the listing is cut short after its first page, the
// section says so and nothing is runnable. Before, an open issue with no lease and no
// block was missing from items[], and items[] never said whether it was whole.
func TestSeedEveryOpenItemClassified(t *testing.T) {
	w := newJoinWS(t, "")
	s, _ := w.status(t)
	buckets := map[string]bool{"runnable": true, "leased": true, "blocked": true, "needs_controller": true, "terminal_complete": true}
	for _, n := range []int64{1, 3, 4, 5} {
		if got, ev := s.bucket("issue", n); !buckets[got] || len(ev) == 0 {
			t.Errorf("open issue #%d: bucket %q, evidence %q", n, got, ev)
		}
	}
	for k, n := range s.rows() {
		if n != 1 {
			t.Errorf("%s is %d rows", k, n)
		}
	}
	for _, it := range []struct {
		kind string
		n    int64
	}{{"issue", 4}, {"pr", 6}} {
		got, ev := s.bucket(it.kind, it.n)
		joined := strings.Join(ev, "\n")
		if got != "runnable" || !strings.Contains(joined, "db leases: no non-terminal lease") || !strings.Contains(joined, "locks locks: no live lock file") ||
			!strings.Contains(joined, "gitea state: open") {
			t.Errorf("%s #%d: bucket %q, evidence %q: want runnable on its evidence", it.kind, it.n, got, ev)
		}
	}
	if s.ItemsInventory == nil || !s.ItemsInventory.Complete {
		t.Errorf("items_inventory %+v: want complete", s.ItemsInventory)
	}

	// 60 more open issues: two pages of 50. The second page fails.
	for i := range 60 {
		w.repo.CreateIssue("maintainer", fmt.Sprintf("backlog %d", i), "body")
	}
	if s, _ := w.status(t); len(s.Items) != 66 || !s.ItemsInventory.Complete {
		t.Fatalf("66 items over two pages: %d listed, inventory %+v", len(s.Items), s.ItemsInventory)
	}
	w.fake.SetFault(func(r *http.Request) int {
		if strings.HasSuffix(r.URL.Path, "/issues") && r.URL.Query().Get("type") == "issues" && r.URL.Query().Get("page") == "2" {
			return http.StatusBadGateway
		}
		return 0
	})
	s, _ = w.status(t)
	if s.ItemsInventory == nil || s.ItemsInventory.Complete || !strings.Contains(s.ItemsInventory.Reason, "after 1 pages read") {
		t.Errorf("a listing cut after its first page: items_inventory %+v", s.ItemsInventory)
	}
	if !s.Sources.Gitea.Partial {
		t.Errorf("gitea source %+v: want partial", s.Sources.Gitea)
	}
	var text, errb bytes.Buffer
	Main([]string{"--config", w.cfg, "status", "--now", w.now.Format(time.RFC3339)}, &text, &errb)
	if !strings.Contains(text.String(), "open items it did not return are not listed (partial inventory)") {
		t.Errorf("status's text does not say the items are a partial inventory:\n%s", text.String())
	}
	for _, it := range s.Items {
		if it.Bucket == "runnable" {
			t.Errorf("%s is runnable on a partial Gitea read", it.Item)
		}
	}
}

// TestSeedOpenItemsRealGitea: against a real Gitea (gitea/giteatest), with more open issues
// than one page holds (the client's 50), every open item is one row of items[] in one
// bucket; the items the seed-shaped DB holds under prgs are joined with Gitea's (the
// remote inferred from the rows): the leased one leased, the closed one terminal with its
// closed-issue-live-claim; the inventory is complete.
func TestSeedOpenItemsRealGitea(t *testing.T) {
	t.Parallel()
	srv := giteatest.Shared(t)
	b := contract.NewRealBackend(t, srv)
	var nums []int64
	for i := range 55 {
		nums = append(nums, b.Seed.Issue(t, fmt.Sprintf("backlog %d", i)))
	}
	closed, leased := nums[1], nums[2]
	b.Seed.Close(t, closed)

	dir := t.TempDir()
	for _, d := range []string{"locks", "repo/branches", "db"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC().Truncate(time.Second)
	db := filepath.Join(dir, "db", "control_plane.sqlite3")
	d := seedtest.NewAt(t, db, seedtest.Options{})
	d.AddSession(seedtest.Session{SessionID: seedSession, Role: "author", Profile: seedProfile, PID: int64(os.Getpid()),
		Status: "active", LastHeartbeatAt: seedtest.ISO(now.Add(-time.Minute))})
	for _, n := range []int64{closed, leased} {
		d.AddLease(seedtest.Lease{LeaseID: fmt.Sprint("lease-", n), SessionID: seedSession, Role: "author", Phase: "implementing",
			Item:      seedtest.Item{Remote: seedRemote, Org: b.Owner, Repo: b.Repo, Kind: "issue", Number: n},
			CreatedAt: seedtest.ISO(now.Add(-5 * time.Minute)), ExpiresAt: seedtest.ISO(now.Add(9 * time.Minute)),
			LastHeartbeatAt: seedtest.ISO(now.Add(-time.Minute)), OwnerPID: int64(os.Getpid())})
	}
	cfg := filepath.Join(dir, "steward.yaml")
	text := fmt.Sprintf("workspaces:\n  w:\n    locks_dir: %[1]s/locks\n    db_path: %[2]s\n    repo_root: %[1]s/repo\n    audit_log: %[1]s/audit.jsonl\n"+
		"    gitea:\n      url: %[3]s\n      token: %[4]s\n      owner: %[5]s\n      repo: %[6]s\n", dir, db, b.URL, b.MaintainerToken, b.Owner, b.Repo)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	w := &joinWS{dir: dir, cfg: cfg, db: db, now: now}
	s, _ := w.status(t)
	if len(s.Items) != 55 || s.ItemsInventory == nil || !s.ItemsInventory.Complete {
		t.Fatalf("%d items (want 54 open and the closed one a lease holds), inventory %+v", len(s.Items), s.ItemsInventory)
	}
	for k, n := range s.rows() {
		if n != 1 {
			t.Errorf("%s is %d rows", k, n)
		}
	}
	for _, n := range nums {
		want := "runnable"
		switch n {
		case closed:
			want = "terminal_complete"
		case leased:
			want = "leased"
		}
		if got, ev := s.bucket("issue", n); got != want {
			t.Errorf("#%d: %q, want %q (%v)", n, got, want, ev)
		}
	}
	found := false
	for _, o := range s.Orphans {
		found = found || (o.Kind == "closed-issue-live-claim" && o.Item.Number == closed && o.Item.Remote == seedRemote)
	}
	if !found {
		t.Errorf("no closed-issue-live-claim on #%d: %+v", closed, s.Orphans)
	}
}
