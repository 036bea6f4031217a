package model

import "testing"

// TestItemsInventorySaysWhyItIsPartial: the items list is Gitea's whole inventory only when
// Gitea was read in full; otherwise its reason names why, in Gitea's health's own words
// when it has them.
func TestItemsInventorySaysWhyItIsPartial(t *testing.T) {
	const tail = ": items lists only what the lock files and the DB name (partial inventory)"
	for _, tc := range []struct {
		name  string
		gitea SourceHealth
		want  ItemsInventory
	}{
		{"read in full", okH(), ItemsInventory{Complete: true}},
		{"not configured, no reason given", SourceHealth{Status: StatusNotConfigured},
			ItemsInventory{Reason: "Gitea not configured" + tail}},
		{"not configured, a reason given", SourceHealth{Status: StatusNotConfigured, Reason: "no gitea.url set"},
			ItemsInventory{Reason: "no gitea.url set" + tail}},
		{"no status", SourceHealth{}, ItemsInventory{Reason: "Gitea not configured" + tail}},
		{"unavailable", SourceHealth{Status: StatusUnavailable, Reason: "connection refused"},
			ItemsInventory{Reason: "Gitea unavailable (connection refused)" + tail}},
		{"read in part", SourceHealth{Status: StatusDegraded, Partial: true, Reason: "page 3 failed"},
			ItemsInventory{Reason: "Gitea read in part (page 3 failed): open items it did not return are not listed " +
				"(partial inventory)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := baseInput()
			in.GiteaHealth = tc.gitea
			if got := Build(in, Config{}, now).ItemsInventory; got != tc.want {
				t.Errorf("items inventory %+v, want %+v", got, tc.want)
			}
		})
	}
}
