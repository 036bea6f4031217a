package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestWatchOneEnteredPerDeadWorker: 100 workers die each holding an item (a lease in the DB
// and a lock file naming a process that has exited: two orphans each, stale-lease-dead-owner
// and live-lock-dead-owner). `steward watch --json` — a real process on a real workspace —
// prints one `entered` per dead worker, 100 in all, not 200; each event still carries its
// parts with their kinds. Before incidents it printed 200, one per orphan.
func TestWatchOneEnteredPerDeadWorker(t *testing.T) {
	const workers = 100
	ws := watchWorkspace(t)
	flags := []string{"--locks", ws.LocksDir, "--db", ws.DBPath, "--repo-root", ws.RepoRoot, "--audit", filepath.Join(filepath.Dir(ws.LocksDir), "audit.jsonl")}
	pid := deadPID(t)
	for i := range workers {
		code, out := run(t, append([]string{"claim", "--org", "acme", "--repo", "widgets", "--number", fmt.Sprint(i + 1),
			"--session", fmt.Sprintf("s-dead-%03d", i), "--pid", pid, "--username", "bot", "--as-role", "operator"}, flags...)...)
		if code != ExitOK {
			t.Fatalf("claim %d: %d\n%s", i+1, code, out)
		}
	}
	w := startWatch(t, false, append([]string{"--tick", "200ms"}, flags...))
	w.await("watching", func(e watchEvent) bool { return e.Event == "watching" })
	n := 0
	w.await(fmt.Sprintf("%d entered", workers), func(e watchEvent) bool {
		if e.Event == "entered" {
			n++
		}
		return n == workers
	})
	w.stop()
	incidents := map[string]bool{}
	entered := 0
	for _, e := range w.seen {
		if e.Event != "entered" {
			continue
		}
		entered++
		if e.Entry.Kind != "incident" || !strings.HasPrefix(e.Entry.Key, "incident:dead-worker:s-dead-") {
			t.Errorf("entered %s (%s), want a dead worker's incident", e.Entry.Key, e.Entry.Kind)
			continue
		}
		incidents[e.Entry.Key] = true
		var full struct {
			Entry struct {
				Title string `json:"title"`
				Parts []struct {
					Sub string `json:"sub"`
				} `json:"parts"`
			} `json:"entry"`
		}
		if err := json.Unmarshal([]byte(e.raw), &full); err != nil {
			t.Fatal(err)
		}
		var subs []string
		for _, p := range full.Entry.Parts {
			subs = append(subs, p.Sub)
		}
		if strings.Join(subs, ",") != "stale-lease-dead-owner,live-lock-dead-owner" || !strings.Contains(full.Entry.Title, " died holding acme/widgets#") {
			t.Errorf("%s: title %q, parts %v", e.Entry.Key, full.Entry.Title, subs)
		}
	}
	if entered != workers || len(incidents) != workers {
		t.Errorf("%d entered events, %d incidents; want %d of each (one per dead worker)", entered, len(incidents), workers)
	}
}
