package foreign

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestOnlyItsOwnFiles: the legacy writer touches only names it made, in the directory it is
// given — never a canonical lock's name, a path out of the directory, or a hidden file.
func TestOnlyItsOwnFiles(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(filepath.Dir(dir), "legacy-x-y-1.json")
	for _, name := range []string{
		"origin__demo__fleet__issue-1.json", // steward's (the core's) name
		"../legacy-x-y-1.json",
		"sub/legacy-x-y-1.json",
		"legacy-x-y-1.json.tmp",
		"",
	} {
		if err := Write(dir, name, Lock{Issue: 1}); err == nil {
			t.Errorf("Write(%q) was allowed", name)
		}
		if err := Remove(dir, name); err == nil {
			t.Errorf("Remove(%q) was allowed", name)
		}
		if _, err := Exists(dir, name); err == nil {
			t.Errorf("Exists(%q) was allowed", name)
		}
	}
	if _, err := os.Stat(outside); err == nil {
		t.Fatalf("a file was written outside the directory: %s", outside)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("refused names left files: %v", ents)
	}
}

// TestLegacyShape: the record is the seed's legacy placement (claimant at the top level, no
// work_lease, lease_id null), and a torn write is not JSON.
func TestLegacyShape(t *testing.T) {
	dir := t.TempDir()
	name := Name("Demo", "Fleet", 7)
	if name != "legacy-demo-fleet-7.json" {
		t.Fatalf("Name = %q", name)
	}
	l := Lock{Remote: "origin", Org: "demo", Repo: "fleet", Issue: 7, Branch: "fix/7", Worktree: "/w", Username: "legacy-worker-1", Profile: "author", PID: 42}
	if err := Write(dir, name, l); err != nil {
		t.Fatal(err)
	}
	if ok, err := Exists(dir, name); !ok || err != nil {
		t.Fatalf("Exists after Write: %v %v", ok, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, name))
	var rec map[string]any
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	claimant, _ := rec["claimant"].(map[string]any)
	if claimant["username"] != "legacy-worker-1" || rec["lease_id"] != nil || rec["work_lease"] != nil || rec["issue_number"] != float64(7) {
		t.Fatalf("not the legacy shape: %s", b)
	}
	if err := WriteTorn(dir, name, l); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(filepath.Join(dir, name))
	if json.Valid(b) {
		t.Fatalf("a torn write is valid JSON: %s", b)
	}
	if err := Remove(dir, name); err != nil {
		t.Fatal(err)
	}
	if err := Remove(dir, name); err != nil {
		t.Fatalf("removing a file already gone: %v", err)
	}
}
