package leases

import "steward/leases/leaserec"

// itemIdentity is the SQL condition over work_items that matches the rows of one item,
// and its arguments: the remote as written, the org and repo folded (Gitea owner and
// repository names are case-insensitive: acme/widgets#60 and ACME/Widgets#60 are one
// item), the work kind folded as the seed compares it, the number. Every query that finds
// an item by its natural key uses it, and so must the lock files' identity
// (lockrec.Key.Identity).
func itemIdentity(d dialect, w leaserec.WorkRef) (string, []any) {
	return `remote = ? AND ` + d.fold("org") + ` = ? AND ` + d.fold("repo") + ` = ? AND ` +
			d.fold("work_kind") + ` = ? AND work_number = ?`,
		[]any{w.Remote, leaserec.Fold(w.Org), leaserec.Fold(w.Repo), leaserec.Fold(string(w.Kind)), w.Number}
}

// getter reads one column of a row: its text and whether it was present
// (column exists and value not NULL).
type getter func(col string) (string, bool)

// decoder accumulates problems while decoding one row.
type decoder struct {
	get      getter
	problems []string
}

func (d *decoder) str(col string) string { v, _ := d.get(col); return v }

func (d *decoder) int(col string) int64 {
	v, _ := d.get(col)
	n, ok := parseInt(v)
	if !ok {
		d.problems = append(d.problems, col+" is not an integer")
	}
	return n
}

func (d *decoder) ts(col string, required bool) leaserec.Timestamp {
	v, _ := d.get(col)
	t := leaserec.ParseTimestamp(v)
	if t.State == leaserec.TimeUnparseable || (required && t.State == leaserec.TimeMissing) {
		d.problems = append(d.problems, col+" "+string(t.State))
	}
	return t
}

func (d *decoder) list(col string) []string {
	v, _ := d.get(col)
	l, ok := leaserec.ParseStringList(v)
	if !ok {
		d.problems = append(d.problems, col+" is not a list of strings")
	}
	return l
}

func (d *decoder) object(col string) map[string]any {
	v, _ := d.get(col)
	m, ok := leaserec.ParseJSONObject(v)
	if !ok {
		d.problems = append(d.problems, col+" is not a JSON object")
	}
	return m
}

// decodeLease turns one leases row into a Lease; it never fails, it records
// problems instead (an unparseable expiry keeps the claim held).
func decodeLease(get getter) leaserec.Lease {
	d := &decoder{get: get}
	l := leaserec.Lease{
		LeaseID: d.str("lease_id"), WorkItemID: d.int("work_item_id"),
		SessionID: d.str("session_id"), Role: d.str("role"),
		TaskClass: leaserec.TaskClass(d.str("task_class")), Phase: d.str("phase"),
		Status: leaserec.Status(leaserec.Fold(d.str("status"))), StatusRaw: d.str("status"),
		CreatedAt: d.ts("created_at", false), ExpiresAt: d.ts("expires_at", true),
		LastHeartbeatAt: d.ts("last_heartbeat_at", false), HeartbeatCount: d.int("heartbeat_count"),
		ReleasedAt: d.ts("released_at", false), ExpectedHeadSHA: d.str("expected_head_sha"),
		AllowedActions: d.list("allowed_actions"), ForbiddenActions: d.list("forbidden_actions"),
		ProvenanceRaw: d.str("provenance_json"), Provenance: d.object("provenance_json"),
		OwnerPID: d.int("owner_pid"), OwnerHost: d.str("owner_host"),
		WorktreePath: d.str("worktree_path"), AdoptedBySessionID: d.str("adopted_by_session_id"),
		AdoptedFromSessionID: d.str("adopted_from_session_id"), EndReason: d.str("end_reason"),
	}
	if _, ok := get("lease_generation_id"); ok {
		l.Generation, l.HasGeneration = d.int("lease_generation_id"), true
	}
	l.Problems = d.problems
	return l
}

func decodeSession(get getter) leaserec.Session {
	d := &decoder{get: get}
	s := leaserec.Session{
		SessionID: d.str("session_id"), Role: d.str("role"), Profile: d.str("profile"),
		PID: d.int("pid"), Host: d.str("host"), ControllerInstanceID: d.str("controller_instance_id"),
		Status: d.str("status"), StartedAt: d.ts("started_at", false),
		LastHeartbeatAt: d.ts("last_heartbeat_at", false), EndedAt: d.ts("ended_at", false),
	}
	s.Problems = d.problems
	return s
}

func decodeWorkItem(get getter) leaserec.WorkItem {
	d := &decoder{get: get}
	w := leaserec.WorkItem{
		WorkItemID: d.int("work_item_id"),
		WorkRef: leaserec.WorkRef{Remote: d.str("remote"), Org: d.str("org"), Repo: d.str("repo"),
			Kind: leaserec.WorkKind(leaserec.Fold(d.str("work_kind"))), Number: d.int("work_number")},
		Title: d.str("title"), State: d.str("state"),
	}
	w.Problems = d.problems
	return w
}

func decodeAssignment(get getter) leaserec.Assignment {
	d := &decoder{get: get}
	a := leaserec.Assignment{
		AssignmentID: d.str("assignment_id"), LeaseID: d.str("lease_id"),
		SessionID: d.str("session_id"), WorkItemID: d.int("work_item_id"), Role: d.str("role"),
		CreatedAt: d.ts("created_at", false), Status: d.str("status"),
	}
	a.Problems = d.problems
	return a
}

func decodeEvent(get getter) leaserec.Event {
	d := &decoder{get: get}
	e := leaserec.Event{
		EventID: d.int("event_id"), WorkItemID: d.int("work_item_id"),
		EventType: d.str("event_type"), Message: d.str("message"),
		CreatedAt: d.ts("created_at", false), SessionID: d.str("session_id"),
		DetailRaw: d.str("detail_json"), Detail: d.object("detail_json"),
	}
	e.Problems = d.problems
	return e
}
