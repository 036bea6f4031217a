package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"steward/model"
)

func TestElideMiddle(t *testing.T) {
	for _, c := range []struct {
		s         string
		w, prefix int
		want      string
	}{
		{"sim-worker-5-s2", 10, 11, "sim-w…5-s2"},
		{"sim-worker-5-s2", 15, 11, "sim-worker-5-s2"},
		{"sim-worker-12-s2", 10, 11, "sim-…12-s2"},
		{"demo/fleet#12", 8, 11, "demo/…12"},
		{"abcdefghij", 7, 0, "abc…hij"},
		{"abcdefghij", 3, 0, "ab…"},
	} {
		got := elideMiddle(c.s, c.w, c.prefix)
		if got != c.want || len([]rune(got)) > c.w {
			t.Errorf("elideMiddle(%q, %d, %d) = %q, want %q", c.s, c.w, c.prefix, got, c.want)
		}
	}
}

// fleetSnapshot is the demo's shape: claimants and sessions that share a long prefix and
// differ at the end, as sim's workers name themselves.
func fleetSnapshot(n int) *model.Snapshot {
	s := &model.Snapshot{GeneratedAt: fixedNow, Sources: okSources()}
	for i := 1; i <= n; i++ {
		it := &model.Item{Kind: "issue", Number: int64(i), Org: "demo", Repo: "fleet", Remote: "origin"}
		s.Claims = append(s.Claims, &model.Claim{Item: it, Role: "author", TaskClass: "author_issue_work",
			Claimant: &model.Claimant{Username: fmt.Sprintf("sim-worker-%d", i), Profile: "sim"}, SessionID: fmt.Sprintf("sim-worker-%d-s2", i),
			Phase: "allocated", LastHeartbeat: fixedNow.Add(-time.Duration(i) * time.Second), ExpiresAt: fixedNow.Add(time.Duration(i) * time.Minute),
			Contract: "canonical", Freshness: "stale_missed_heartbeat", OwnerLiveness: model.LivenessAlive, LeaseStatus: "active",
			LockFile: fmt.Sprintf("demo_fleet_%d.json", i), LeaseID: fmt.Sprintf("lease-%d", i)})
	}
	return s
}

// Truncation removed what tells rows apart — every Claimant and Session
// read "sim-worker-…", Items "demo/fleet#…", while wide screens gave Item 47 cells and cut
// "canonic…". Now at every width each row's identity cells differ from every other row's,
// columns are shown whole or dropped whole (the footer names the dropped ones), and no state
// word is cut.
func TestColumnsTellRowsApart(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{80, 24}, {120, 40}, {160, 48}, {200, 50}} {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			r := newTestRoot(t, sz.w, sz.h, false)
			send(r, SnapshotMsg{fleetSnapshot(12)}, keyMsg("2"))
			tbl := r.list().tbl
			lines := strings.Split(plain(r), "\n")
			header := lines[headerLines+1]
			if strings.Contains(header, "…") {
				t.Errorf("a column title is cut: %q", header)
			}
			shown := map[string]bool{}
			for _, c := range tbl.cols {
				shown[c.Title] = true
			}
			for _, col := range []string{"Item", "Claimant"} {
				if !shown[col] {
					t.Fatalf("identity column %s dropped; shown %v", col, tbl.cols)
				}
			}
			seen := map[string]map[string]bool{}
			for i, c := range tbl.cols {
				seen[c.Title] = map[string]bool{}
				for _, ri := range tbl.view {
					cell, _ := tbl.cell(tbl.rows[ri], c, r.env.now)
					drawn := tbl.fit(cell, i)
					if (c.Title == "Item" || c.Title == "Claimant" || c.Title == "Session") && seen[c.Title][drawn] {
						t.Errorf("%s %q is drawn for two rows", c.Title, drawn)
					}
					seen[c.Title][drawn] = true
					if (c.Title == "Fresh" || c.Title == "Contract" || c.Title == "Phase") && drawn != cell {
						t.Errorf("%s %q cut to %q", c.Title, cell, drawn)
					}
				}
				if c.Title == "Item" && tbl.widths[i] > len("demo/fleet#12")+2 {
					t.Errorf("Item takes %d cells for 13-cell names", tbl.widths[i])
				}
			}
			foot := lines[len(lines)-1]
			if hid := tbl.hidden(); len(hid) > 0 && !strings.Contains(foot, "hidden") {
				t.Errorf("columns %v dropped, the footer does not say so: %q", hid, foot)
			}
			if sz.w >= 200 && len(tbl.hidden()) > 0 {
				t.Errorf("at %d columns, %v dropped", sz.w, tbl.hidden())
			}
		})
	}
}

// At a width where only identity columns fit, they shrink with the middle elided: every
// claimant's distinguishing tail stays.
func TestIdentityElidedInTheMiddle(t *testing.T) {
	r := newTestRoot(t, 30, 20, false)
	send(r, SnapshotMsg{fleetSnapshot(12)}, keyMsg("2"))
	f := plain(r)
	for i := 1; i <= 12; i++ {
		full := fmt.Sprintf("sim-worker-%d/sim", i)
		if !strings.Contains(f, full) && !strings.Contains(f, fmt.Sprintf("…%d/sim", i)) {
			t.Errorf("claimant %d is not told apart at 30 columns:\n%s", i, f)
		}
	}
}
