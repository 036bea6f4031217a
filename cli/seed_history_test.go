package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"steward/history"
	"steward/leases/seedtest"
)

// seedHistoryWS is a seed-shaped DB whose only record of the fleet's work is its lease
// rows, as the supervised system writes them (its events table empty): the author's lease
// on #643, claimed 20 minutes ago, heartbeating, released 2 minutes ago; the reviewer's 20
// leases on pull requests over the last hour, each released.
func seedHistoryWS(t *testing.T, now time.Time, opt seedtest.Options) (db string, d *seedtest.DB) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "locks"), 0o700); err != nil {
		t.Fatal(err)
	}
	db = filepath.Join(dir, "control_plane.sqlite3")
	d = seedtest.NewAt(t, db, opt)
	d.AddSession(seedtest.Session{SessionID: seedSession, Role: "author", Profile: seedProfile, PID: 4242, Status: "ended",
		LastHeartbeatAt: seedtest.ISO(now.Add(-2 * time.Minute)), EndedAt: seedtest.ISO(now.Add(-2 * time.Minute))})
	d.AddSession(seedtest.Session{SessionID: "prgs-reviewer-4157-0ce9", Role: "reviewer", Profile: "prgs-reviewer", PID: 4157, Status: "active",
		LastHeartbeatAt: seedtest.ISO(now.Add(-time.Minute))})
	d.AddLease(seedtest.Lease{LeaseID: "lease-643", SessionID: seedSession, Role: "author", Status: "released", Item: seedItem(643),
		Phase: "implementing", CreatedAt: seedtest.ISO(now.Add(-20 * time.Minute)), ExpiresAt: seedtest.ISO(now.Add(-2 * time.Minute)),
		LastHeartbeatAt: seedtest.ISO(now.Add(-6 * time.Minute)), HeartbeatCount: 7, ReleasedAt: seedtest.ISO(now.Add(-2 * time.Minute)), OwnerPID: 4242})
	for i := range 20 {
		pr := seedItem(int64(700 + i))
		pr.Kind = "pr"
		start := now.Add(-time.Duration(60-2*i) * time.Minute)
		d.AddLease(seedtest.Lease{LeaseID: fmt.Sprintf("lease-review-%d", i), SessionID: "prgs-reviewer-4157-0ce9", Role: "reviewer",
			Status: "Released", Item: pr, Phase: "implementing", CreatedAt: seedtest.Naive(start), ExpiresAt: seedtest.ISO(start.Add(10 * time.Minute)),
			ReleasedAt: seedtest.Naive(start.Add(time.Minute)), OwnerPID: 4157})
	}
	return db, d
}

func historyJSON(t *testing.T, db string, now time.Time, args ...string) history.Timeline {
	t.Helper()
	var out, errb bytes.Buffer
	args = append([]string{"history", "--json", "--now", now.Format(time.RFC3339), "--db", db,
		"--locks", filepath.Join(filepath.Dir(db), "locks"), "--audit", filepath.Join(filepath.Dir(db), "audit.jsonl"),
		"--config", emptyConfig(t, filepath.Dir(db))}, args...)
	if code := Main(args, &out, &errb); code != ExitOK {
		t.Fatalf("steward %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	var tl history.Timeline
	if err := json.Unmarshal(out.Bytes(), &tl); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	return tl
}

// TestSeedHistoryFromLeaseRows: history reads the supervised system's own lease rows. An
// item whose row shows a claim 20 minutes ago, a heartbeat and a release 2 minutes ago has
// those three entries, each from the leases source with the session that held it; a
// session that held 20 leases has 20 claims and 20 releases; what the rows cannot say is a
// gap naming the missing record (only the last heartbeat is kept; a table without
// released_at). Before, both answered 0 entries with exit 0, as if nothing had happened.
func TestSeedHistoryFromLeaseRows(t *testing.T) {
	now := time.Date(2026, 7, 23, 10, 0, 0, 0, time.UTC)
	db, _ := seedHistoryWS(t, now, seedtest.Options{})
	before := seedtest.Fingerprint(t, db)
	tl := historyJSON(t, db, now, "--item", seedOrg+"/"+seedRepo+"#643")
	want := []struct {
		kind history.Kind
		at   time.Time
	}{{history.KindClaim, now.Add(-20 * time.Minute)}, {history.KindHeartbeat, now.Add(-6 * time.Minute)}, {history.KindRelease, now.Add(-2 * time.Minute)}}
	if len(tl.Entries) != len(want) {
		t.Fatalf("#643's timeline: %d entries, want %d: %+v", len(tl.Entries), len(want), tl.Entries)
	}
	for i, w := range want {
		en := tl.Entries[i]
		if en.Kind != w.kind || !en.At.Equal(w.at) || en.Source != history.SourceLeases || en.Session != seedSession || en.Lease != "lease-643" {
			t.Errorf("entry %d: %+v, want %s at %s from the leases source, session %s", i, en, w.kind, w.at, seedSession)
		}
	}
	gaps := fmt.Sprint(tl.Gaps)
	if !strings.Contains(gaps, "keeps only its last heartbeat") {
		t.Errorf("gaps %s: want the row's heartbeat limit named", gaps)
	}

	tl = historyJSON(t, db, now, "--session", "prgs-reviewer-4157-0ce9")
	n := map[history.Kind]int{}
	for _, en := range tl.Entries {
		n[en.Kind]++
		if en.Source != history.SourceLeases || en.Session != "prgs-reviewer-4157-0ce9" {
			t.Errorf("entry %+v", en)
		}
	}
	if n[history.KindClaim] != 20 || n[history.KindRelease] != 20 {
		t.Errorf("the reviewer's 20 leases: %v", n)
	}
	if seedtest.Fingerprint(t, db) != before {
		t.Fatal("history changed the DB")
	}

	// A table without released_at: the releases are not recorded, and the gap says which
	// record is missing (not "nothing happened").
	db2, _ := seedHistoryWS(t, now, seedtest.Options{Drop: []string{"leases.released_at"}})
	tl = historyJSON(t, db2, now, "--item", seedOrg+"/"+seedRepo+"#643")
	if len(tl.Entries) != 2 || !strings.Contains(fmt.Sprint(tl.Gaps), "the leases table has no released_at column") ||
		!strings.Contains(fmt.Sprint(tl.Gaps), "lease lease-643 is released but records no end time") {
		t.Errorf("without released_at: %d entries, gaps %s", len(tl.Entries), fmt.Sprint(tl.Gaps))
	}
}
