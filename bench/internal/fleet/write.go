package fleet

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"steward/leases/leaserec"
	"steward/locks/lockrec"
)

// OpenWriter opens a plain read-write handle on the workspace's DB with the pragmas steward's
// writers use (WAL, synchronous NORMAL, busy timeout, immediate transactions). The harness
// uses it for fixture rows and for the commits it times; it is not steward's write path.
func OpenWriter(path string) (*sql.DB, error) {
	q := url.Values{}
	q.Set("mode", "rw")
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// insertRows adds the sessions, work items, leases, assignments and claim events of claims
// 2..n in one transaction, copying the template lease's shape.
func (m *Meta) insertRows(tpl leaserec.Lease) error {
	db, err := OpenWriter(m.DBPath)
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmts := map[string]string{
		"session": `INSERT INTO sessions(session_id, role, profile, pid, host, controller_instance_id, status, started_at,
			last_heartbeat_at) VALUES(?, 'author', 'author', ?, ?, '', 'active', ?, ?)`,
		"item": `INSERT INTO work_items(work_item_id, remote, org, repo, work_kind, work_number, title)
			VALUES(?, ?, ?, ?, 'issue', ?, ?)`,
		"lease": `INSERT INTO leases(lease_id, work_item_id, session_id, role, task_class, phase, status, created_at,
			expires_at, last_heartbeat_at, heartbeat_count, expected_head_sha, allowed_actions, forbidden_actions,
			provenance_json, owner_pid, owner_host, worktree_path)
			VALUES(?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?, '', '[]', '[]', ?, ?, ?, ?)`,
		"assignment": `INSERT INTO assignments(assignment_id, lease_id, session_id, work_item_id, role, created_at, status)
			VALUES(?, ?, ?, ?, ?, ?, 'active')`,
		"event": `INSERT INTO events(work_item_id, event_type, message, created_at, session_id, detail_json)
			VALUES(?, 'lease.claim', 'lease claimed', ?, ?, ?)`,
	}
	prep := map[string]*sql.Stmt{}
	for k, q := range stmts {
		s, err := tx.Prepare(q)
		if err != nil {
			return fmt.Errorf("fleet: prepare %s: %w", k, err)
		}
		defer s.Close()
		prep[k] = s
	}
	var prov map[string]any
	_ = json.Unmarshal([]byte(tpl.ProvenanceRaw), &prov)
	for n := int64(2); n <= int64(m.N); n++ {
		t := timesOf(n, m.Base)
		created, beat, exp := leaserec.FormatTime(t.created), leaserec.FormatTime(t.beat), leaserec.FormatTime(t.expires)
		sid, lid := SessionID(n), leaseID(n)
		p := map[string]any{}
		for k, v := range prov {
			p[k] = v
		}
		p["lock_file"], p["task_session_id"], p["steward_attempt"] = LockName(
			n,
		), taskSession(), fmt.Sprintf(
			"att-fleet-%d",
			n,
		)
		pj, _ := json.Marshal(p)
		detail, _ := json.Marshal(
			map[string]any{"lease_id": lid, "task_class": string(tpl.TaskClass), "expires_at": exp},
		)
		steps := []struct {
			k    string
			args []any
		}{
			{"session", []any{sid, m.PID, m.Host, created, beat}},
			{"item", []any{n, remote, org, repo, n, title(n)}},
			{
				"lease",
				[]any{
					lid,
					n,
					sid,
					tpl.Role,
					string(tpl.TaskClass),
					tpl.Phase,
					created,
					exp,
					beat,
					1 + n%7,
					string(pj),
					m.PID,
					m.Host,
					worktree(m.RepoRoot, n),
				},
			},
			{"assignment", []any{fmt.Sprintf("asg-fleet-%08d", n), lid, sid, n, tpl.Role, created}},
			{"event", []any{n, created, sid, string(detail)}},
		}
		for _, s := range steps {
			if _, err := prep[s.k].Exec(s.args...); err != nil {
				return fmt.Errorf("fleet: insert %s of claim %d: %w", s.k, n, err)
			}
		}
	}
	return tx.Commit()
}

// writeLocks writes the lock files (and worktree directories) of claims 2..n as copies of
// the template record: temp file, then rename, as a lock writer does.
func (m *Meta) writeLocks(tpl lockrec.Record) error {
	if fi, err := os.Stat(filepath.Join(m.LocksDir, LockName(1))); err == nil {
		m.LockBytes += fi.Size()
	}
	for n := int64(2); n <= int64(m.N); n++ {
		t := timesOf(n, m.Base)
		rec := lock(tpl, n, m.RepoRoot, t.created, t.beat, t.expires, 1+n%7)
		data, err := lockrec.Marshal(&rec)
		if err != nil {
			return err
		}
		if err := put(m.LocksDir, LockName(n), data); err != nil {
			return err
		}
		m.LockBytes += int64(len(data))
		if err := os.MkdirAll(worktree(m.RepoRoot, n), 0o700); err != nil {
			return err
		}
	}
	return nil
}

// lock returns the template lock record made claim n's, with the given timestamps and
// heartbeat count.
func lock(tpl lockrec.Record, n int64, repoRoot string, created, beat, expires time.Time, beats int64) lockrec.Record {
	r := tpl
	r.Raw = nil
	num := n
	r.IssueNumber = &num
	r.Branch = fmt.Sprintf("feat/issue-%d", n)
	r.BranchName = r.Branch
	r.WorktreePath = worktree(repoRoot, n)
	r.OwnerSession = SessionID(n)
	if n != 1 {
		r.LeaseID = leaseID(n)
	}
	if tpl.WorkLease != nil {
		wl := *tpl.WorkLease
		wl.IssueNumber = &num
		wl.Branch, wl.WorktreePath = r.Branch, r.WorktreePath
		wl.CreatedAt, wl.LastHeartbeatAt, wl.ExpiresAt = lockrec.NewTimestamp(
			created,
		), lockrec.NewTimestamp(
			beat,
		), lockrec.NewTimestamp(
			expires,
		)
		hb := beats
		wl.HeartbeatCount = &hb
		if n != 1 {
			wl.TaskSessionID = taskSession()
		}
		user := fmt.Sprintf("bot-%d", n)
		wl.Claimant = &lockrec.Claimant{Username: user, Profile: "author"}
		r.WorkLease = &wl
		if tpl.LockProvenance != nil {
			pv := *tpl.LockProvenance
			pv.Claimant = wl.Claimant
			r.LockProvenance = &pv
		}
	}
	return r
}

// put writes data to dir/name the way a lock writer does: a dot-named temp file in the same
// directory (never reported by a watcher), then an atomic rename.
func put(dir, name string, data []byte) error {
	tmp := filepath.Join(dir, ".bench-"+name+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, name))
}
