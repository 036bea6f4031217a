package govern

import (
	"context"
	"os"
	"strings"
	"testing"

	"steward/govern/actionid"
)

// TestLeasePreviewNamesItsWorkItem: a lease action's preview names the lease's work item
// among its evidence and says which of the item's lock files remain. A lease whose work item
// the DB no longer has (its row gone) names none — no "#0" item, and no lock lookup for it:
// here the lock directory is unreadable, and the preview of that lease does not report it.
func TestLeasePreviewNamesItsWorkItem(t *testing.T) {
	for _, c := range []struct {
		name     string
		orphan   bool
		evidence string // "" when no evidence line may name a work item
		remains  string // "" when no effect may speak of lock files
	}{
		{"a lease on an item", false, "work item acme/widgets#5", "the lock directory could not be read"},
		{"a lease whose item is gone", true, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, RoleOperator)
			f.expiredLease("L1", 5)
			if c.orphan {
				f.exec(`DELETE FROM work_items`)
			}
			if err := os.RemoveAll(f.ws.LocksDir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f.ws.LocksDir, []byte("not a directory"), 0o600); err != nil {
				t.Fatal(err)
			}
			pv, err := f.core.Preview(context.Background(), Request{Action: actionid.ReclaimExpired,
				Target: Target{LeaseID: "L1"}})
			if err != nil {
				t.Fatal(err)
			}
			var items []string
			for _, e := range pv.Evidence {
				if strings.HasPrefix(e, "work item ") {
					items = append(items, e)
				}
			}
			if c.evidence == "" && len(items) != 0 || c.evidence != "" && (len(items) != 1 || items[0] != c.evidence) {
				t.Errorf("evidence naming a work item %q, want %q", items, c.evidence)
			}
			effects := strings.Join(pv.Effects, "\n")
			if c.remains == "" && strings.Contains(effects, "lock") || !strings.Contains(effects, c.remains) {
				t.Errorf("effects %q, want %q", pv.Effects, c.remains)
			}
		})
	}
}
