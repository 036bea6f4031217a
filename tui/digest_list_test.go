package tui

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"steward/govern/actionid"
	"steward/model"
)

// TestOneChangeDigestsOneRow: a 10,000-claim snapshot in which one claim changed costs the
// digest that claim — one row digested, one row ordered — and not the fleet: the other rows
// are carried over in their places, and the sessions, none of which changed, are the same
// list; a table sorted by Item keeps its order and sorts the one new row into it. With the
// lists sorted whole on every snapshot (as before the lists were merged) it fails: 10,000 rows
// ordered; with the table sorting every row again it fails too.
func TestOneChangeDigestsOneRow(t *testing.T) {
	cfg := digestConfig(New(Options{}).opts)
	s := bigSnapshot(10000)
	tbl := newTable(claimColumns()) // sorted by Item, as the harness sorts it
	tbl.setSize(160, 40)
	tbl.sortBy("Item")
	d := digest(s, cfg)
	tbl.hint = d.hints[pageClaims]
	tbl.setRows(d.Rows[pageClaims])
	for i, at := range []int{10, 5000, 9999} {
		next := oneChange(s, at, fixedNow.Add(time.Duration(i+1)*time.Second))
		next.Claims[at].ExpiresAt = fixedNow.Add(-time.Duration(i+1) * time.Minute) // and its place in attention order
		got := digest(next, cfg)
		carried := tbl.carried
		tbl.hint = got.hints[pageClaims]
		tbl.setRows(got.Rows[pageClaims])
		if tbl.carried != carried+1 {
			t.Fatalf("change %d: the Item-sorted table sorted all 10,000 rows again", i)
		}
		cl, se := &cfg.cache.claimList, &cfg.cache.sessionList
		if cl.rebuilt || cl.placed != 1 || cl.built != 1 || len(cl.came) != 1 || len(cl.left) != 1 {
			t.Fatalf("change %d: claims rebuilt %v, %d rows ordered, %d digested, %d came, %d left; want 1 of each",
				i, cl.rebuilt, cl.placed, cl.built, len(cl.came), len(cl.left))
		}
		if se.rebuilt || se.placed != 0 || se.built != 0 {
			t.Fatalf("change %d: unchanged sessions rebuilt %v, %d ordered, %d digested", i, se.rebuilt, se.placed, se.built)
		}
		if r := got.Rows[pageClaims][0]; r.Item != next.Claims[at].Item.String() {
			t.Fatalf("change %d: the claim that expired is not first: %s", i, r.Item)
		}
		fresh := cfg
		fresh.cache = nil
		for _, id := range []pageID{pageClaims, pageOrphans, pageSessions} {
			sameRows(t, fmt.Sprintf("change %d %s", i, id.title()), got.Rows[id], digest(next, fresh).Rows[id], next.GeneratedAt)
		}
		s = next
	}
}

// TestMergedDigestMatchesFreshDigest: over a random walk of snapshots — claims, orphans and
// sessions changed, added, removed and moved, a few at a time and many at once — every
// digest with the cache gives exactly the rows (in order, with the orphans' actions on the
// claims) of a fresh digest of the same snapshot, and the cache holds exactly the
// snapshot's entries.
func TestMergedDigestMatchesFreshDigest(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 5))
	cfg := digestConfig(New(Options{}).opts)
	cfg.knows = nil // every action known: the orphans' actions reach the claims
	fresh := cfg
	fresh.cache = nil
	s := populated()
	for i := 0; i < 40; i++ {
		s.Claims = append(s.Claims, randomClaim(rng, 200+i))
	}
	serial := 1000
	rebuilt, merged, carried := 0, 0, 0
	// Tables of the claims sorted by a column (ties common: four expiry times), each fed
	// the digest's rows with its hint, against a table sorting every row.
	type sorted struct {
		title string
		desc  bool
		tbl   table
	}
	var tables []*sorted
	for _, title := range []string{"Item", "Left", "Heartbeat"} {
		for _, desc := range []bool{false, true} {
			x := &sorted{title: title, desc: desc, tbl: newTable(claimColumns())}
			x.tbl.setSize(200, 40)
			tables = append(tables, x)
		}
	}
	for step := 0; step < 300; step++ {
		n := *s
		n.GeneratedAt = s.GeneratedAt.Add(time.Second)
		n.Claims = append([]*model.Claim(nil), s.Claims...)
		n.Orphans = append([]*model.Orphan(nil), s.Orphans...)
		n.Sessions = append([]*model.Session(nil), s.Sessions...)
		changes := 1 + rng.IntN(3)
		if rng.IntN(10) == 0 { // every claim and orphan re-derived: more than a merge takes
			for j, c := range n.Claims {
				x := *c
				n.Claims[j] = &x
			}
			for j, o := range n.Orphans {
				x := *o
				n.Orphans[j] = &x
			}
		}
		for c := 0; c < changes; c++ {
			serial++
			switch k := rng.IntN(9); {
			case k < 3 && len(n.Claims) > 0: // changed in place
				j := rng.IntN(len(n.Claims))
				x := *n.Claims[j]
				x.ExpiresAt = fixedNow.Add(time.Duration(rng.IntN(1200)-300) * time.Second)
				x.Freshness = []string{"active", "expired", "stale_no_heartbeat"}[rng.IntN(3)]
				n.Claims[j] = &x
			case k == 3: // a new claim
				j := rng.IntN(len(n.Claims) + 1)
				n.Claims = append(n.Claims[:j], append([]*model.Claim{randomClaim(rng, serial)}, n.Claims[j:]...)...)
			case k == 4 && len(n.Claims) > 1: // released
				j := rng.IntN(len(n.Claims))
				n.Claims = append(n.Claims[:j], n.Claims[j+1:]...)
			case k == 5 && len(n.Claims) > 1: // moved (the same pointer at another place)
				j, m := rng.IntN(len(n.Claims)), rng.IntN(len(n.Claims))
				n.Claims[j], n.Claims[m] = n.Claims[m], n.Claims[j]
			case k == 6: // an orphan of a claim's lease appears
				if len(n.Claims) > 0 {
					c := n.Claims[rng.IntN(len(n.Claims))]
					n.Orphans = append(n.Orphans, &model.Orphan{Kind: model.OrphanActiveLeasePastExpiry, Item: c.Item, LeaseID: c.LeaseID, LockFile: c.LockFile,
						Action: &model.ActionRef{ID: actionid.ReclaimExpired, Target: model.ActionTarget{LeaseID: c.LeaseID}, Allowed: ptr(true)}})
				}
			case k == 7 && len(n.Orphans) > 0: // an orphan goes
				j := rng.IntN(len(n.Orphans))
				n.Orphans = append(n.Orphans[:j], n.Orphans[j+1:]...)
			case k == 8 && len(n.Sessions) > 0:
				j := rng.IntN(len(n.Sessions))
				x := *n.Sessions[j]
				x.LastHeartbeat = n.GeneratedAt
				n.Sessions[j] = &x
			}
		}
		s = &n
		got, want := digest(s, cfg), digest(s, fresh)
		rebuilt += map[bool]int{true: 1}[cfg.cache.claimList.rebuilt]
		merged += map[bool]int{true: 1}[len(cfg.cache.claimList.came)+len(cfg.cache.claimList.left) > 0]
		for _, id := range []pageID{pageClaims, pageOrphans, pageSessions} {
			sameRows(t, fmt.Sprintf("step %d %s", step, id.title()), got.Rows[id], want.Rows[id], s.GeneratedAt)
		}
		for _, x := range tables {
			if step == 0 { // sorted once; from then on each snapshot carries the order
				if !x.tbl.sortBy(x.title) {
					t.Fatalf("no column %s", x.title)
				}
				if x.desc {
					x.tbl.reverse()
				}
			}
			before := x.tbl.carried
			x.tbl.hint = got.hints[pageClaims]
			x.tbl.setRows(got.Rows[pageClaims])
			carried += x.tbl.carried - before
			whole := newTable(claimColumns())
			whole.setSize(200, 40)
			whole.setRows(got.Rows[pageClaims])
			whole.sortBy(x.title)
			if x.desc {
				whole.reverse()
			}
			if len(whole.view) != len(x.tbl.view) {
				t.Fatalf("step %d sorted by %s (desc %v): %d rows, want %d", step, x.title, x.desc, len(x.tbl.view), len(whole.view))
			}
			for j := range whole.view {
				if a, b := x.tbl.rows[x.tbl.view[j]].Key, whole.rows[whole.view[j]].Key; a != b {
					t.Fatalf("step %d sorted by %s (desc %v), row %d: %q, want %q", step, x.title, x.desc, j, a, b)
				}
			}
		}
		for _, id := range []pageID{pageClaims, pageOrphans, pageSessions} {
			var tbl table
			tbl.rows = got.Rows[id]
			tbl.hint = got.hints[id]
			for i := 0; i < 12; i++ {
				w, ok := tbl.widestCell(i)
				measured := 0
				for j := range tbl.rows {
					measured = max(measured, tbl.rows[j].width(i))
				}
				if len(tbl.rows) > 0 && (!ok || w != measured) {
					t.Fatalf("step %d %s cell %d: the digest's widest %d (%v), measured %d", step, id.title(), i, w, ok, measured)
				}
			}
		}
		for j, r := range got.Rows[pageClaims] {
			w := want.Rows[pageClaims][j]
			if (r.Recover == nil) != (w.Recover == nil) {
				t.Fatalf("step %d claim row %d: recover %v, want %v", step, j, r.Recover, w.Recover)
			}
		}
		if a, b := len(cfg.cache.claims)+len(cfg.cache.orphans)+len(cfg.cache.sessions), len(s.Claims)+len(s.Orphans)+len(s.Sessions); a != b {
			t.Fatalf("step %d: the cache holds %d rows, the snapshot %d entries", step, a, b)
		}
	}
	if rebuilt < 10 || merged < 100 || carried < 600 {
		t.Fatalf("the walk rebuilt the claims %d times and merged them %d times, and the tables carried their order %d times: every path must be taken",
			rebuilt, merged, carried)
	}
}

func randomClaim(rng *rand.Rand, n int) *model.Claim {
	return &model.Claim{Item: item(int64(n)), Role: "author", SessionID: fmt.Sprintf("sess-%d", n), Phase: "implementing",
		LastHeartbeat: fixedNow.Add(-time.Duration(rng.IntN(600)) * time.Second), ExpiresAt: fixedNow.Add(time.Duration(rng.IntN(4)*300) * time.Second),
		Contract: "canonical", Freshness: "active", OwnerLiveness: model.LivenessAlive, LockFile: fmt.Sprintf("acme_widgets_%d.json", n), LeaseID: fmt.Sprintf("L-%d", n), LeaseStatus: "active"}
}
