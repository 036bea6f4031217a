package govern

import (
	"context"
	"database/sql"
	"testing"
)

// TestActiveInAnyCaseBlocksAGovernedClaim: a lease whose status reads ACTIVE (a foreign
// writer, as the seed compares statuses lower-cased) holds its item: the governed claim's
// preview refuses claimed_by_other_session, and so does its apply, writing no second
// lease. Before the fix the preview skipped the lease (status != "active") and the apply's
// transaction looked for status = 'active': a second active lease was granted.
func TestActiveInAnyCaseBlocksAGovernedClaim(t *testing.T) {
	for _, status := range []string{"ACTIVE", "Active", " active "} {
		t.Run(status, func(t *testing.T) {
			f := newFixture(t, RoleOperator)
			db, err := sql.Open("sqlite", f.ws.DBPath+"?_pragma=busy_timeout(5000)&_pragma=ignore_check_constraints(1)")
			if err != nil {
				t.Fatal(err)
			}
			db.SetMaxOpenConns(1)
			for _, q := range []string{
				`INSERT INTO work_items(remote, org, repo, work_kind, work_number) VALUES('origin', 'acme', 'widgets', 'issue', 7)`,
				`INSERT INTO leases(lease_id, work_item_id, session_id, status, created_at, expires_at)
				 VALUES('L-held', 1, 'holder', '` + status + `', '` + ts(0) + `', '` + ts(30*60e9) + `')`,
			} {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			db.Close()
			req := Request{Action: ActionClaim, Target: Target{Item: item(7), Session: "s2"}, Params: map[string]string{"pid": "1"}}
			pv, err := f.core.Preview(context.Background(), req)
			if err != nil || pv.Allowed || pv.Refusal == nil || pv.Refusal.Code != CodeClaimedByOther {
				t.Fatalf("preview: %+v %v", pv.Refusal, err)
			}
			out := f.core.Apply(context.Background(), pv, "")
			if out.Result != ResultRefused || out.Code != CodeClaimedByOther {
				t.Fatalf("apply: %+v", out)
			}
			var n int
			if err := f.db().QueryRow(`SELECT count(*) FROM leases WHERE work_item_id = 1`).Scan(&n); err != nil || n != 1 {
				t.Fatalf("%d leases on the item after a refused claim (%v)", n, err)
			}
		})
	}
}
