package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"steward/model"
)

// TestStatusTextLeavesNoEmptyField: a claim of a legacy lock has no session, phase,
// freshness or lease; its line says so or leaves the field out, never "session , ,".
// On the code before the line read "session , , heartbeat never, …, freshness , …, lease ".
func TestStatusTextLeavesNoEmptyField(t *testing.T) {
	at := time.Date(2026, 7, 24, 6, 0, 0, 0, time.UTC)
	n := int64(18)
	s := &model.Snapshot{GeneratedAt: at, Claims: []*model.Claim{{
		Item:     &model.Item{Org: "demo", Repo: "fleet", Kind: "issue", Number: n},
		Claimant: &model.Claimant{Username: "legacy-worker-1", Profile: "author"},
		Contract: "legacy", LockFile: "legacy-demo-fleet-18.json",
	}}}
	var b bytes.Buffer
	printText(&b, s)
	var line string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "demo/fleet#18") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no line for the claim:\n%s", b.String())
	}
	for _, bad := range []string{", ,", "session ,", "freshness ,", "lease \n", "lease ,"} {
		if strings.Contains(line+"\n", bad) {
			t.Errorf("an empty field (%q) in %q", bad, line)
		}
	}
	for _, want := range []string{"heartbeat never", "contract legacy", "lock legacy-demo-fleet-18.json", "no lease"} {
		if !strings.Contains(line, want) {
			t.Errorf("%q missing from %q", want, line)
		}
	}
}
