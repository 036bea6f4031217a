package lockrec

import "encoding/json"

// The record fields the decoder fills by key.

func (r *Record) strField(k string) *string {
	switch k {
	case "remote":
		return &r.Remote
	case "org":
		return &r.Org
	case "repo":
		return &r.Repo
	case "branch":
		return &r.Branch
	case "branch_name":
		return &r.BranchName
	case "worktree_path":
		return &r.WorktreePath
	case "owner_session":
		return &r.OwnerSession
	case "assignment_id":
		return &r.AssignmentID
	case "lease_id":
		return &r.LeaseID
	case "expected_base_sha":
		return &r.ExpectedBaseSHA
	}
	return nil
}

func (r *Record) intField(k string) **int64 {
	switch k {
	case "issue_number":
		return &r.IssueNumber
	case "lock_generation":
		return &r.LockGeneration
	case "pid":
		return &r.PID
	case "session_pid":
		return &r.SessionPID
	}
	return nil
}

func (r *Record) blockField(k string) *json.RawMessage {
	switch k {
	case "bootstrap_lock_recovery":
		return &r.BootstrapLockRecovery
	case "lease_renewal":
		return &r.LeaseRenewal
	case "steward_recovery":
		return &r.StewardRecovery
	}
	return nil
}
