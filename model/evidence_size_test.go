package model

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"steward/leases/leaserec"
)

// TestItemEvidenceSizedToItsLines: an item's state keeps its evidence in an array of its own
// length (every item of the fleet keeps one: room to spare cost as much again as the lines),
// and an item whose state rests on no line still encodes its evidence as a list, never null.
func TestItemEvidenceSizedToItsLines(t *testing.T) {
	in := baseInput()
	in.Locks = []LockObs{lock("a.json", 1, "s1", "L1", 10*time.Minute, LivenessAlive)}
	in.Leases = []LeaseObs{lease("L1", 1, "s1", leaserec.StatusActive, 10*time.Minute, LivenessAlive)}
	in.Sessions = []SessionObs{sess("s1", "active")}
	s := Build(in, Config{}, now)
	if len(s.Items) == 0 {
		t.Fatal("no items")
	}
	for _, it := range s.Items {
		if len(it.Evidence) == 0 || cap(it.Evidence) != len(it.Evidence) {
			t.Errorf("item %s (%s): %d evidence lines in an array of %d", it.Item.String(), it.Bucket,
				len(it.Evidence), cap(it.Evidence))
		}
	}
	in = baseInput()
	in.LocksHealth.Status = StatusUnavailable
	in.Leases = []LeaseObs{lease("L2", 2, "s2", leaserec.StatusReleased, 10*time.Minute, LivenessAlive)}
	s = Build(in, Config{}, now)
	if len(s.Items) == 0 || len(s.Items[0].Evidence) != 0 {
		t.Fatalf("want an item with no evidence line, got %d items", len(s.Items))
	}
	for _, it := range s.Items {
		b, err := json.Marshal(it)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"evidence":[`) {
			t.Errorf("item %s encodes as %s: want an evidence list", it.Item.String(), b)
		}
	}
}
