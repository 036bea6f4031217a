package model

import "testing"

func TestNeeds(t *testing.T) {
	act := &ActionRef{ID: "lease.reclaim-expired"}
	for _, tc := range []struct {
		name            string
		s               Snapshot
		human, operator int
	}{
		{name: "empty", s: Snapshot{}},
		{name: "not configured and partial sources need nobody", s: Snapshot{Sources: Sources{
			Gitea: SourceHealth{Status: StatusNotConfigured}, DB: SourceHealth{Status: StatusDegraded, Partial: true}}}},
		{name: "an unavailable source needs a person", s: Snapshot{Sources: Sources{DB: SourceHealth{Status: StatusUnavailable}}}, human: 1},
		{name: "refused claims are routine, collisions are not", s: Snapshot{Contention: []*Contention{
			{Kind: ContentionClaimRefused}, {Kind: ContentionDuplicateLiveLock}, {Kind: ContentionConcurrentActiveLease}, {Kind: ContentionLockLeaseMismatch}}}, human: 3},
		{name: "a question waiting needs a person", s: Snapshot{Clarifications: []Clarification{{}, {}}}, human: 2},
		{name: "an orphan with an action needs an operator, an inspect-only one nobody", s: Snapshot{Orphans: []*Orphan{
			{Kind: OrphanActiveLeasePastExpiry, Action: act}, {Kind: OrphanLegacyLock}}}, operator: 1},
		{name: "each orphan with an action counts once", s: Snapshot{Orphans: []*Orphan{
			{Kind: OrphanActiveLeasePastExpiry, Action: act}, {Kind: OrphanLegacyLock}, {Kind: OrphanLiveLockDeadOwner, Action: act}}},
			operator: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if h, o := tc.s.Needs(); h != tc.human || o != tc.operator {
				t.Fatalf("Needs() = %d human, %d operator; want %d, %d", h, o, tc.human, tc.operator)
			}
		})
	}
}
