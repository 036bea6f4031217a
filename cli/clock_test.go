package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"steward/app"
	"steward/attention"
	"steward/govern"
	"steward/govern/actionid"
	"steward/leases"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
	"steward/leases/pgtest"
	"steward/model"
	"steward/tui"
)

// TestAFastHostJudgesByTheDBClock: a monitoring host whose clock runs 5 minutes fast, on a
// healthy PostgreSQL fleet — one lease, heartbeated a minute ago by the DB's clock, 3
// minutes left. Every freshness verdict it shows is the DB's clock's, as the core's fences
// are: `steward status` shows the lease active with about 3 minutes left, no orphan, and
// `--fail-on attention` exits 0 as on a correct host; its text says this host's clock is
// 5m00s ahead and its JSON carries the offset; the live model (steward watch, the
// workbench) agrees, and attention finds nothing; the workbench's header says so and its
// Claims view counts down from the DB's clock; the core's preview of a reclaim refuses it,
// as its apply would. Judged at this host's clock instead (what every surface did before
// the fix, and what a fixed --now at that instant still does) the lease reads expired, an
// active-lease-past-expiry orphan with a reclaim appears, and the exit is 6.
func TestAFastHostJudgesByTheDBClock(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDBFrom(t, "steward", func(url string) error {
		_, err := leases.InitPG(ctx, leases.Target{Loc: url})
		return err
	})
	r, err := leases.OpenPGReader(ctx, leases.Target{Loc: url})
	if err != nil {
		t.Fatal(err)
	}
	dbNow, err := r.Clock(ctx)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	at := func(d time.Duration) string { return leaserec.FormatTime(dbNow.Add(d)) }
	leasestest.Insert(t, url, []leasestest.Session{{SessionID: "s1", Role: "author", Host: "worker-host", StartedAt: at(-time.Hour), LastHeartbeatAt: at(-time.Minute)}},
		[]leasestest.Lease{{LeaseID: "L1", SessionID: "s1", Role: "author", TaskClass: "author_issue_work", Work: leasestest.Work(leaserec.KindIssue, 5),
			CreatedAt: at(-5 * time.Minute), ExpiresAt: at(3 * time.Minute), LastHeartbeatAt: at(-time.Minute), OwnerPID: 4242, OwnerHost: "worker-host"}})
	dir := t.TempDir()
	locksDir, repo := filepath.Join(dir, "locks"), filepath.Join(dir, "repo")
	for _, d := range []string{locksDir, filepath.Join(repo, "branches")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ws := []string{"--locks", locksDir, "--db", url, "--repo-root", repo, "--audit", filepath.Join(dir, "audit.jsonl"), "--no-gitea"}
	fast := func() time.Time { return time.Now().Add(5 * time.Minute) }
	hostNow = fast
	defer func() { hostNow = nil }()

	// steward status on the fast host: the DB's clock decides, and says so.
	code, out := run(t, append([]string{"status", "--json", "--fail-on", "attention"}, ws...)...)
	var s model.Snapshot
	if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &s); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	checkJudgedByTheDB(t, "status", &s)
	if code != ExitOK {
		t.Fatalf("status --fail-on attention on a host 5 minutes fast: exit %d; want 0, as on a correct host\n%s", code, out)
	}
	if _, txt := run(t, append([]string{"status"}, ws...)...); !strings.Contains(txt, "(the control-plane DB's clock; this host's is 5m00s ahead)") || strings.Contains(txt, "active-lease-past-expiry") {
		t.Fatalf("status text:\n%s", txt)
	}
	// At this host's clock (a fixed --now at its instant), the same fleet pages: what every
	// surface showed before the fix.
	code, out = run(t, append([]string{"status", "--json", "--fail-on", "attention", "--now", fast().UTC().Format(time.RFC3339)}, ws...)...)
	if code != exitAttention || !strings.Contains(out, "active-lease-past-expiry") {
		t.Fatalf("judged at the fast host's clock: exit %d; want %d with the orphan\n%s", code, exitAttention, out)
	}

	// The live model (steward watch, the workbench) on the fast host.
	st := app.Settings{LocksDir: locksDir, DBPath: url, RepoRoot: repo, Audit: app.AuditNone, Role: govern.RoleOperator, HostNow: fast, Env: func(string) (string, bool) { return "", false }}
	st.Gitea.Off = true
	sess, err := app.Open(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if err := sess.Watch(ctx); err != nil {
		t.Fatal(err)
	}
	var live *model.Snapshot
	select {
	case live = <-sess.Snapshots():
	case <-time.After(time.Minute):
		t.Fatal("no live snapshot")
	}
	checkJudgedByTheDB(t, "the live model", live)
	if es, _ := attention.FromSnapshot(live, attention.DefaultSLAs); len(es) != 0 {
		t.Fatalf("attention on the fast host: %+v; want none", es)
	}
	pv, err := sess.Core.Preview(ctx, govern.Request{Action: actionid.ReclaimExpired, Target: govern.Target{LeaseID: "L1"}})
	if err != nil || pv.Allowed {
		t.Fatalf("the core's preview of a reclaim: allowed=%v %v; want refused (not expired at the DB's clock)", pv.Allowed, err)
	}

	// The workbench: its header says how far this host's clock is off; its countdown is the
	// DB's clock's (the claim's time left about 3 minutes, not expired).
	opts := sess.Workbench
	wb := tui.New(opts)
	wb.Update(tea.WindowSizeMsg{Width: 200, Height: 40})
	wb.Update(tui.SnapshotMsg{Snapshot: live})
	wb.Update(tea.KeyPressMsg{Code: '2', Text: "2"})
	frame := ansi.Strip(wb.Render())
	if !strings.Contains(frame, "host clock 5m00s ahead of the DB's") || !strings.Contains(frame, "acme/widgets#5") || strings.Contains(frame, "expired") {
		t.Fatalf("the workbench on the fast host:\n%s", frame)
	}
}

// checkJudgedByTheDB checks a snapshot of the fast host: judged at the DB's clock, the
// lease active with about 3 minutes left, no orphan.
func checkJudgedByTheDB(t *testing.T, what string, s *model.Snapshot) {
	t.Helper()
	if s.Clock.Source != model.ClockDB || s.Clock.Offset > -5*time.Minute+5*time.Second || s.Clock.Offset < -5*time.Minute-5*time.Second {
		t.Fatalf("%s: clock %+v; want the DB's, this host 5 minutes ahead", what, s.Clock)
	}
	if len(s.Claims) != 1 {
		t.Fatalf("%s: %d claims; want L1's", what, len(s.Claims))
	}
	c := s.Claims[0]
	if left := c.ExpiresAt.Sub(s.GeneratedAt); c.Freshness != "active" || left < 2*time.Minute || left > 3*time.Minute+5*time.Second {
		b, _ := json.Marshal(c)
		t.Fatalf("%s: %s left %s; want L1 active with about 3 minutes left", what, b, left)
	}
	if len(s.Orphans) != 0 {
		t.Fatalf("%s: orphans %+v; want none on a healthy fleet", what, s.Orphans[0])
	}
}
