package leases_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"steward/leases"
	"steward/leases/leaserec"
)

// benchDB builds a DB with n sessions and n active leases through one bulk
// transaction (the fixture builder goes row by row).
func benchDB(b *testing.B, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "cp.sqlite3")
	if err := leases.Migrate(path); err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tx, _ := db.Begin()
	ts := leaserec.FormatTime(now)
	exp := leaserec.FormatTime(now.Add(10 * time.Minute))
	for i := 1; i <= n; i++ {
		sid := fmt.Sprintf("prgs-author-%d-%08x", i, i)
		must(b, tx, `INSERT INTO sessions(session_id, role, profile, pid, host, status, started_at, last_heartbeat_at)
			VALUES(?, 'author', 'prgs-author', ?, 'h', 'active', ?, ?)`, sid, i, ts, ts)
		must(b, tx, `INSERT INTO work_items(work_item_id, remote, org, repo, work_kind, work_number) VALUES(?, 'prgs', 'acme', 'widgets', 'issue', ?)`, i, i)
		must(b, tx, `INSERT INTO leases(lease_id, work_item_id, session_id, role, task_class, status, created_at,
			expires_at, last_heartbeat_at, allowed_actions, provenance_json, owner_pid, owner_host, worktree_path)
			VALUES(?, ?, ?, 'author', 'author_issue_work', 'active', ?, ?, ?, '["commit","push"]', '{"source":"bench"}', ?, 'h', ?)`,
			fmt.Sprintf("lease-%08x", i), i, sid, ts, exp, ts, i, fmt.Sprintf("/w/branches/%d", i))
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return path
}

func must(b *testing.B, tx *sql.Tx, q string, args ...any) {
	if _, err := tx.Exec(q, args...); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSnapshot10k reads 10,000 leases + sessions through Snapshot;
// the bare sub-benchmark scans the same rows (leases, sessions and the
// work items Snapshot joins) with plain SELECTs into strings, for the ratio.
func BenchmarkSnapshot10k(b *testing.B) {
	path := benchDB(b, 10000)
	r, err := leases.OpenReadOnly(path)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	b.Run("snapshot", func(b *testing.B) {
		for b.Loop() {
			s, err := r.Snapshot(ctx, leases.ReadOptions{RecentTerminal: -1})
			if err != nil || len(s.Leases) != 10000 || len(s.Sessions) != 10000 {
				b.Fatal(err)
			}
		}
	})
	raw, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	b.Run("bare_select", func(b *testing.B) {
		for b.Loop() {
			n := 0
			for _, q := range []string{
				`SELECT lease_id, work_item_id, session_id, role, task_class, phase, status, created_at, expires_at,
				 last_heartbeat_at, heartbeat_count, released_at, expected_head_sha, allowed_actions, forbidden_actions,
				 provenance_json, owner_pid, owner_host, worktree_path, adopted_by_session_id, adopted_from_session_id, end_reason FROM leases`,
				`SELECT session_id, role, profile, pid, host, controller_instance_id, status, started_at, last_heartbeat_at, ended_at FROM sessions`,
				`SELECT work_item_id, remote, org, repo, work_kind, work_number, title, state FROM work_items`,
			} {
				rows, err := raw.Query(q)
				if err != nil {
					b.Fatal(err)
				}
				cols, _ := rows.Columns()
				vals := make([]sql.NullString, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				for rows.Next() {
					if err := rows.Scan(ptrs...); err != nil {
						b.Fatal(err)
					}
					n++
				}
				rows.Close()
			}
			if n != 30000 {
				b.Fatal(n)
			}
		}
	})
}

// BenchmarkClaim measures one Claim transaction on a fresh item each time.
func BenchmarkClaim(b *testing.B) {
	_, s := newStore(b, leases.StoreOptions{})
	ctx := context.Background()
	i := int64(0)
	for b.Loop() {
		i++
		out, err := s.Claim(ctx, claimReq("bench", i), now)
		if err != nil || !out.OK() {
			b.Fatal(out, err)
		}
	}
}
