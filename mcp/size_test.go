package mcp

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"steward/alloc"
	"steward/govern"
	"steward/leases/leaserec"
)

// TestResultsStaySmallOnALargeFleet: on a control-plane DB holding 10,000 active claims of
// one session, every result stays within maxResult: my_leases pages (limit, next_cursor)
// and the pages together list every lease once; item_status and a refused claim stay small;
// claim next's skip records are capped with their count. (It failed before: my_leases
// returned all 10,000 leases in one result of megabytes, and took no limit.)
func TestResultsStaySmallOnALargeFleet(t *testing.T) {
	const fleet = 10000
	f := newFx(t, fxOpt{})
	insertFleet(t, f.ws.DBPath, "big", fleet)
	ctx := context.Background()
	c := f.client("big")
	start := time.Now()
	small := func(what, raw string) {
		t.Helper()
		if len(raw) > maxResult {
			t.Fatalf("%s: %d bytes, over %d", what, len(raw), maxResult)
		}
	}

	first := rawResult(t, c, ToolMyLeases, SessionArgs{SessionID: "big"})
	small("my_leases", first)
	var page MyLeases
	if err := json.Unmarshal([]byte(first), &page); err != nil || !page.Success || len(page.Leases) != defaultPage || page.Total != fleet || page.NextCursor == "" {
		t.Fatalf("the first page: %d leases, total %d, cursor %q, %v (%s)", len(page.Leases), page.Total, page.NextCursor, err, page.Message)
	}
	// Each my_leases call reads the whole leases table (about a second here at 10,000), so
	// the walk follows the first pages cursor by cursor and then jumps to the last one.
	read := func(cursor string) MyLeases {
		t.Helper()
		raw := rawResult(t, c, ToolMyLeases, SessionArgs{SessionID: "big", Limit: maxPage, Cursor: cursor})
		small("a page of my_leases", raw)
		var p MyLeases
		if err := json.Unmarshal([]byte(raw), &p); err != nil || !p.Success || p.Total != fleet {
			t.Fatalf("page after %q: %v %s", cursor, err, raw[:min(len(raw), 300)])
		}
		return p
	}
	cursor, want := "", 1
	for range 3 {
		p := read(cursor)
		if len(p.Leases) != maxPage || p.NextCursor == "" {
			t.Fatalf("page of %d leases, cursor %q", len(p.Leases), p.NextCursor)
		}
		for _, l := range p.Leases {
			if l.LeaseID != fmt.Sprintf("lease-%05d", want) {
				t.Fatalf("lease %s, want lease-%05d: a lease skipped or repeated between pages", l.LeaseID, want)
			}
			want++
		}
		cursor = p.NextCursor
	}
	last := read(encodeCursor(fmt.Sprintf("lease-%05d", fleet-maxPage)))
	if len(last.Leases) != maxPage || last.NextCursor != "" || last.Leases[maxPage-1].LeaseID != fmt.Sprintf("lease-%05d", fleet) {
		t.Fatalf("the last page: %d leases, cursor %q", len(last.Leases), last.NextCursor)
	}
	t.Logf("fleet written and 5 pages read in %v", time.Since(start))
	var bad MyLeases
	if _, err := c.Call(ctx, ToolMyLeases, SessionArgs{SessionID: "big", Limit: maxPage + 1}, &bad); err != nil || bad.Success || bad.Code != govern.CodeInvalidRequest {
		t.Fatalf("limit over the page size: %+v %v", bad, err)
	}
	if _, err := c.Call(ctx, ToolMyLeases, SessionArgs{SessionID: "big", Cursor: "not a cursor"}, &bad); err != nil || bad.Success || bad.Code != govern.CodeInvalidRequest {
		t.Fatalf("a bad cursor: %+v %v", bad, err)
	}

	other := f.client("w2")
	small("item_status", rawResult(t, other, ToolStatus, ItemArgs{SessionID: "w2", Item: f.item(1)}))
	small("a refused claim", rawResult(t, other, ToolClaim, ClaimArgs{SessionID: "w2", Item: f.item(1)}))

	// claim next's skip records on a backlog of 10,000 claimed items.
	skips := make([]alloc.Skip, fleet)
	for i := range skips {
		skips[i] = alloc.Skip{Number: int64(i + 1), Code: alloc.SkipClaimed, Reason: "active lease of session big"}
	}
	kept, total := capSkipped(skips)
	o := refused("nothing_eligible", "no open issue is runnable now")
	o.Skipped, o.SkippedTotal = kept, total
	b, _ := json.Marshal(o)
	if len(kept) != maxSkipped || total != fleet || len(b) > maxResult {
		t.Fatalf("skips: %d kept of %d, %d bytes", len(kept), total, len(b))
	}
}

// insertFleet writes n active leases of session on items 1..n of acme/widgets into a
// migrated SQLite DB, as raw rows in one transaction (leasestest.Insert commits each row:
// minutes for 10,000 on this machine).
func insertFleet(t *testing.T, path, session string, n int) {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	now, exp := leaserec.FormatTime(time.Now()), leaserec.FormatTime(time.Now().Add(time.Hour))
	if _, err := tx.Exec(`INSERT INTO sessions(session_id, role, profile, pid, host, status, started_at, last_heartbeat_at)
		VALUES(?, 'author', '', 0, '', 'active', ?, ?)`, session, now, now); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		var item int64
		if err := tx.QueryRow(`INSERT INTO work_items(remote, org, repo, work_kind, work_number) VALUES('origin', 'acme', 'widgets', 'issue', ?)
			RETURNING work_item_id`, i).Scan(&item); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(`INSERT INTO leases(lease_id, work_item_id, session_id, role, task_class, phase, status, created_at, expires_at)
			VALUES(?, ?, ?, 'author', 'author_issue_work', 'allocated', 'active', ?, ?)`, fmt.Sprintf("lease-%05d", i), item, session, now, exp); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
