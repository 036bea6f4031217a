package lockrec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Marshal renders a record as the indented JSON a lock file holds: known
// fields in the seed's order (absent ones left out, work_lease.pr_number
// written as null like the seed's builder), then the kept Extra fields in
// their original order. Known fields that are unset but present in Extra
// (they had the wrong type) are written back raw, so a rewrite loses nothing.
func Marshal(r *Record) ([]byte, error) {
	var w objWriter
	w.present, w.extras = r.Keys, r.Extra
	w.open()
	w.str("remote", r.Remote, false)
	w.str("org", r.Org, false)
	w.str("repo", r.Repo, false)
	w.int("issue_number", r.IssueNumber)
	w.str("branch", r.Branch, false)
	w.str("branch_name", r.BranchName, false)
	w.str("worktree_path", r.WorktreePath, false)
	if r.WorkLease != nil {
		w.key("work_lease")
		writeWorkLease(&w, r.WorkLease)
	} else {
		w.null("work_lease", r.Extra)
	}
	if r.LockProvenance == nil {
		w.null("lock_provenance", r.Extra)
	} else {
		w.key("lock_provenance")
		p := r.LockProvenance
		var sub objWriter
		sub.open()
		sub.str("source", p.Source, !hasExtra(p.Extra, "source"))
		sub.str("written_by_tool", p.WrittenByTool, !hasExtra(p.Extra, "written_by_tool"))
		if p.Claimant != nil {
			sub.key("claimant")
			writeClaimant(&sub, p.Claimant)
		}
		sub.extra(p.Extra)
		w.buf.Write(sub.close())
	}
	w.str("owner_session", r.OwnerSession, false)
	w.str("assignment_id", r.AssignmentID, false)
	w.str("lease_id", r.LeaseID, false)
	w.str("expected_base_sha", r.ExpectedBaseSHA, false)
	w.int("lock_generation", r.LockGeneration)
	if r.Claimant != nil {
		w.key("claimant")
		writeClaimant(&w, r.Claimant)
	} else {
		w.null("claimant", r.Extra)
	}
	w.int("pid", r.PID)
	w.int("session_pid", r.SessionPID)
	w.raw("bootstrap_lock_recovery", r.BootstrapLockRecovery)
	w.raw("lease_renewal", r.LeaseRenewal)
	w.raw("steward_recovery", r.StewardRecovery)
	w.extra(r.Extra)
	var out bytes.Buffer
	if err := json.Indent(&out, w.close(), "", "  "); err != nil {
		return nil, fmt.Errorf("locks: marshal: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func writeWorkLease(w *objWriter, l *WorkLease) {
	var sub objWriter
	sub.present, sub.extras = l.Keys, l.Extra
	sub.open()
	sub.str("operation_type", l.OperationType, false)
	sub.int("issue_number", l.IssueNumber)
	if l.PRNumber != nil || !hasExtra(l.Extra, "pr_number") {
		sub.key("pr_number")
		if l.PRNumber == nil {
			sub.buf.WriteString("null")
		} else {
			sub.buf.WriteString(strconv.FormatInt(*l.PRNumber, 10))
		}
	}
	sub.str("branch", l.Branch, false)
	sub.str("worktree_path", l.WorktreePath, false)
	if l.Claimant != nil {
		sub.key("claimant")
		writeClaimant(&sub, l.Claimant)
	} else {
		sub.null("claimant", l.Extra)
	}
	sub.str("created_at", l.CreatedAt.Text, false)
	sub.str("expires_at", l.ExpiresAt.Text, false)
	sub.str("last_heartbeat_at", l.LastHeartbeatAt.Text, false)
	sub.str("task_session_id", l.TaskSessionID, false)
	sub.str("lifecycle_version", l.LifecycleVersion, false)
	sub.int("heartbeat_count", l.HeartbeatCount)
	sub.extra(l.Extra)
	w.buf.Write(sub.close())
}

func writeClaimant(w *objWriter, c *Claimant) {
	var sub objWriter
	sub.open()
	sub.str("username", c.Username, !hasExtra(c.Extra, "username"))
	sub.str("profile", c.Profile, !hasExtra(c.Extra, "profile"))
	sub.extra(c.Extra)
	w.buf.Write(sub.close())
}

func hasExtra(extra []RawField, key string) bool {
	for _, f := range extra {
		if f.Key == key {
			return true
		}
	}
	return false
}

// objWriter writes one compact JSON object, tracking the keys written so
// that Extra never repeats a key.
type objWriter struct {
	buf     bytes.Buffer
	n       int
	written []string
	present []string   // keys the decoded object had: blank ones are kept
	extras  []RawField // the object's kept raw fields
}

// keep reports whether an empty known field k is still written (as "" or
// null): the decoded object had it and it is not kept raw in extras.
func (w *objWriter) keep(k string) bool {
	return slicesContains(w.present, k) && !hasExtra(w.extras, k)
}

// null writes k: null when the decoded object had k (as null) and it is not
// kept raw in extra.
func (w *objWriter) null(k string, extra []RawField) {
	if w.keep(k) && !hasExtra(extra, k) {
		w.key(k)
		w.buf.WriteString("null")
	}
}

func (w *objWriter) open() { w.buf.WriteByte('{') }

func (w *objWriter) close() []byte {
	w.buf.WriteByte('}')
	return w.buf.Bytes()
}

func (w *objWriter) key(k string) {
	if w.n > 0 {
		w.buf.WriteByte(',')
	}
	w.n++
	w.written = append(w.written, k)
	w.buf.Write(appendJSONString(nil, k))
	w.buf.WriteByte(':')
}

func (w *objWriter) str(k, v string, always bool) {
	if v == "" && !always && !w.keep(k) {
		return
	}
	w.key(k)
	w.buf.Write(appendJSONString(nil, v))
}

func (w *objWriter) int(k string, v *int64) {
	if v == nil {
		if w.keep(k) {
			w.key(k)
			w.buf.WriteString("null")
		}
		return
	}
	w.key(k)
	w.buf.WriteString(strconv.FormatInt(*v, 10))
}

func (w *objWriter) raw(k string, v json.RawMessage) {
	if len(v) == 0 {
		if w.keep(k) {
			w.key(k)
			w.buf.WriteString("null")
		}
		return
	}
	w.key(k)
	w.buf.Write(v)
}

func (w *objWriter) extra(extra []RawField) {
	for _, f := range extra {
		if slicesContains(w.written, f.Key) || len(f.Value) == 0 {
			continue
		}
		w.raw(f.Key, f.Value)
	}
}

// appendJSONString appends s as a JSON string, escaping quotes, backslashes
// and control characters (HTML characters are left as they are).
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else if r == '\u2028' || r == '\u2029' {
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}
