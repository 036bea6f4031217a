package lockrec

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FindingKind classifies a problem the decoder found.
type FindingKind string

// The decoder's finding kinds.
const (
	// FindingSyntax: the bytes are not valid JSON (Detail has the offset).
	FindingSyntax FindingKind = "syntax"
	// FindingTruncated: the JSON ends early (a torn or partial write).
	FindingTruncated FindingKind = "truncated"
	// FindingInvalidUTF8: the bytes are not valid UTF-8.
	FindingInvalidUTF8 FindingKind = "invalid-utf8"
	// FindingNUL: the bytes contain a NUL byte.
	FindingNUL FindingKind = "nul-byte"
	// FindingEmpty: there are no bytes (or only whitespace).
	FindingEmpty FindingKind = "empty"
	// FindingNotObject: the top level (or a block) is not a JSON object.
	FindingNotObject FindingKind = "not-object"
	// findingDuplicateKey: an object repeats a key; the last value wins.
	findingDuplicateKey FindingKind = "duplicate-key"
	// findingWrongType: a known field has the wrong JSON type; it is kept raw.
	findingWrongType FindingKind = "wrong-type"
	// FindingMissing: a field the canonical contract requires is absent or blank.
	FindingMissing FindingKind = "missing"
	// findingBadTimestamp: a timestamp is not RFC 3339.
	findingBadTimestamp FindingKind = "bad-timestamp"
	// findingNonUTCTimestamp: a timestamp parses but does not end in "Z".
	findingNonUTCTimestamp FindingKind = "non-utc-timestamp"
	// FindingOutOfRange: an integer field holds a value no writer means: an issue or PR
	// number below 1, a negative generation or heartbeat count, a pid outside 1..2^31-1.
	// The value is kept as written; the finding says why it cannot be taken at face value.
	FindingOutOfRange FindingKind = "out-of-range"
)

// Finding is one problem found while decoding, at a JSON field path such as
// "work_lease.expires_at" ("" for the whole document).
type Finding struct {
	Kind   FindingKind `json:"kind"`
	Path   string      `json:"path"`
	Detail string      `json:"detail"`
}

// Fatal reports whether the finding means no record could be decoded at all.
func (f Finding) Fatal() bool {
	switch f.Kind {
	case FindingSyntax, FindingTruncated, FindingInvalidUTF8, FindingNUL, FindingEmpty:
		return true
	case FindingNotObject:
		return f.Path == ""
	}
	return false
}

// requiredFields are the top-level keys every canonical lock carries
// (seed REQUIRED_LOCK_FIELDS, in the seed's order).
var requiredFields = []string{"remote", "org", "repo", "issue_number", "branch_name",
	"worktree_path", "work_lease", "lock_provenance"}

// requiredWorkLeaseFields are the keys every canonical work_lease carries
// (seed REQUIRED_WORK_LEASE_FIELDS, in the seed's order).
var requiredWorkLeaseFields = []string{"operation_type", "issue_number", "branch", "worktree_path",
	"claimant", "created_at", "expires_at", "last_heartbeat_at", "task_session_id", "lifecycle_version"}

// Decode decodes one lock file's bytes tolerantly. It never panics: every
// problem becomes a Finding, and whatever could be read is in the Record.
// The record keeps its own copy of data in Raw.
func Decode(data []byte) (Record, []Finding) {
	own := bytes.Clone(data)
	if own == nil {
		own = []byte{}
	}
	return DecodeOwned(own)
}

// DecodeOwned is Decode for bytes the caller hands over: the returned Record keeps data
// itself in Raw (no copy), so the caller must not change data afterwards.
func DecodeOwned(data []byte) (Record, []Finding) {
	rec := Record{Raw: data}
	if f, bad := screen(data); bad {
		return rec, []Finding{f}
	}
	root, findings, serr := parseJSON(data)
	if serr != nil {
		kind := FindingSyntax
		if serr.eof {
			kind = FindingTruncated
		}
		return rec, append(findings, Finding{Kind: kind, Detail: serr.Error()})
	}
	if root.kind != jObject {
		return rec, append(findings, Finding{Kind: FindingNotObject,
			Detail: "top level is a JSON " + root.kind.String() + ", not an object"})
	}
	d := decoder{data: data, findings: findings, dups: len(findings) > 0}
	d.record(&rec, root)
	return rec, d.findings
}

// screen rejects bytes that cannot be a lock record before parsing.
func screen(data []byte) (Finding, bool) {
	if len(bytes.TrimSpace(data)) == 0 {
		return Finding{Kind: FindingEmpty, Detail: "no content"}, true
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return Finding{Kind: FindingNUL, Detail: "NUL byte at offset " + strconv.Itoa(i)}, true
	}
	if !utf8.Valid(data) {
		return Finding{Kind: FindingInvalidUTF8, Detail: "not valid UTF-8"}, true
	}
	return Finding{}, false
}

type decoder struct {
	data     []byte
	findings []Finding
	dups     bool // the parser found duplicate keys: de-duplicate on the way
}

func (d *decoder) add(kind FindingKind, path, detail string) {
	d.findings = append(d.findings, Finding{Kind: kind, Path: path, Detail: detail})
}

func (d *decoder) raw(v jval) json.RawMessage { return json.RawMessage(d.data[v.start:v.end:v.end]) }

func (d *decoder) wrongType(path string, want string, v jval) {
	d.add(findingWrongType, path, "want "+want+", got "+v.kind.String())
}

// str reads a string field; null is absent; other types are findings.
func (d *decoder) str(path string, v jval) (string, bool) {
	switch v.kind {
	case jString:
		return v.str, true
	case jNull:
		return "", true
	}
	d.wrongType(path, "string", v)
	return "", false
}

// integer reads an integer field; null is absent (nil).
func (d *decoder) integer(path string, v jval) (*int64, bool) {
	switch v.kind {
	case jNull:
		return nil, true
	case jNumber:
		n, err := strconv.ParseInt(v.str, 10, 64)
		if err == nil {
			return &n, true
		}
		d.add(findingWrongType, path, "want integer, got number "+v.str)
		return nil, false
	}
	d.wrongType(path, "integer", v)
	return nil, false
}

func (d *decoder) object(path string, v jval) bool {
	if v.kind == jObject {
		return true
	}
	if v.kind != jNull {
		d.add(FindingNotObject, path, "want object, got "+v.kind.String())
	}
	return false
}

func (d *decoder) timestamp(path string, v jval) (Timestamp, bool) {
	s, ok := d.str(path, v)
	if !ok || strings.TrimSpace(s) == "" {
		return Timestamp{Text: s}, ok
	}
	ts := ParseTimestamp(strings.TrimSpace(s))
	ts.Text = s
	switch {
	case !ts.Valid:
		d.add(findingBadTimestamp, path, "not an RFC 3339 timestamp: "+strconv.Quote(s))
	case !strings.HasSuffix(strings.TrimSpace(s), "Z"):
		d.add(findingNonUTCTimestamp, path, "timestamp is not UTC with Z: "+strconv.Quote(s))
	}
	return ts, true
}

// setExtra keeps a raw field, replacing an earlier one with the same key
// (only possible when the document has duplicate keys).
func (d *decoder) setExtra(extra []RawField, key string, raw json.RawMessage) []RawField {
	for i := 0; d.dups && i < len(extra); i++ {
		if extra[i].Key == key {
			extra[i].Value = raw
			return extra
		}
	}
	return append(extra, RawField{Key: key, Value: raw})
}

func (d *decoder) record(r *Record, root jval) {
	r.Keys = make([]string, 0, len(root.obj))
	for _, m := range root.obj {
		k, v := m.key, m.val
		if !d.dups || !slicesContains(r.Keys, k) {
			r.Keys = append(r.Keys, k)
		}
		ok := true
		if p := r.strField(k); p != nil {
			*p, ok = d.str(k, v)
		} else if p := r.intField(k); p != nil {
			*p, ok = d.integer(k, v)
		} else if p := r.blockField(k); p != nil {
			*p = nil
			if ok = d.object(k, v); ok {
				*p = d.raw(v)
			}
			ok = ok || v.kind == jNull
		} else {
			switch k {
			case "work_lease":
				r.WorkLease = nil
				if ok = d.object(k, v); ok {
					r.WorkLease = d.workLease(k, v)
				}
				ok = ok || v.kind == jNull
			case "lock_provenance":
				r.LockProvenance = nil
				if ok = d.object(k, v); ok {
					r.LockProvenance = d.provenance(k, v)
				}
				ok = ok || v.kind == jNull
			case "claimant":
				r.Claimant = nil
				if ok = d.object(k, v); ok {
					r.Claimant = d.claimant(k, v)
				}
				ok = ok || v.kind == jNull
			default:
				if !d.dups || !slicesContains(r.UnknownKeys, k) {
					r.UnknownKeys = append(r.UnknownKeys, k)
				}
				ok = false
			}
		}
		if !ok {
			r.Extra = d.setExtra(r.Extra, k, d.raw(v))
		}
	}
	r.Keys = sharedKeys(r.Keys)
	r.Remote, r.Org, r.Repo = sharedValue(r.Remote), sharedValue(r.Org), sharedValue(r.Repo)
	d.ranges(r)
	for _, f := range requiredFields {
		if blank(root, f) {
			d.add(FindingMissing, f, "required field is absent or blank")
		}
	}
	if r.WorkLease != nil {
		lv := last(root, "work_lease")
		for _, f := range requiredWorkLeaseFields {
			if blank(lv, f) {
				d.add(FindingMissing, "work_lease."+f, "required field is absent or blank")
			}
		}
	}
}

func (d *decoder) workLease(path string, v jval) *WorkLease {
	w := &WorkLease{Keys: make([]string, 0, len(v.obj))}
	for _, m := range v.obj {
		p := path + "." + m.key
		if !d.dups || !slicesContains(w.Keys, m.key) {
			w.Keys = append(w.Keys, m.key)
		}
		ok := true
		switch m.key {
		case "operation_type":
			w.OperationType, ok = d.str(p, m.val)
		case "branch":
			w.Branch, ok = d.str(p, m.val)
		case "worktree_path":
			w.WorktreePath, ok = d.str(p, m.val)
		case "task_session_id":
			w.TaskSessionID, ok = d.str(p, m.val)
		case "lifecycle_version":
			w.LifecycleVersion, ok = d.str(p, m.val)
		case "issue_number":
			w.IssueNumber, ok = d.integer(p, m.val)
		case "pr_number":
			w.PRNumber, ok = d.integer(p, m.val)
		case "heartbeat_count":
			w.HeartbeatCount, ok = d.integer(p, m.val)
		case "created_at":
			w.CreatedAt, ok = d.timestamp(p, m.val)
		case "expires_at":
			w.ExpiresAt, ok = d.timestamp(p, m.val)
		case "last_heartbeat_at":
			w.LastHeartbeatAt, ok = d.timestamp(p, m.val)
		case "claimant":
			w.Claimant, ok = d.optClaimant(p, m.val)
		default:
			ok = false
		}
		if !ok {
			w.Extra = d.setExtra(w.Extra, m.key, d.raw(m.val))
		}
	}
	w.Keys = sharedKeys(w.Keys)
	w.OperationType, w.LifecycleVersion = sharedValue(w.OperationType), sharedValue(w.LifecycleVersion)
	return w
}

func (d *decoder) provenance(path string, v jval) *Provenance {
	p := &Provenance{}
	for _, m := range v.obj {
		fp := path + "." + m.key
		ok := true
		switch m.key {
		case "source":
			p.Source, ok = d.str(fp, m.val)
		case "written_by_tool":
			p.WrittenByTool, ok = d.str(fp, m.val)
		case "claimant":
			p.Claimant, ok = d.optClaimant(fp, m.val)
		default:
			ok = false
		}
		if !ok {
			p.Extra = d.setExtra(p.Extra, m.key, d.raw(m.val))
		}
	}
	p.Source, p.WrittenByTool = sharedValue(p.Source), sharedValue(p.WrittenByTool)
	return p
}

// optClaimant decodes a claimant block, or null as none; ok is false (with a finding)
// for anything else, which the caller keeps raw.
func (d *decoder) optClaimant(path string, v jval) (c *Claimant, ok bool) {
	if d.object(path, v) {
		return d.claimant(path, v), true
	}
	return nil, v.kind == jNull
}

func (d *decoder) claimant(path string, v jval) *Claimant {
	c := &Claimant{}
	for _, m := range v.obj {
		ok := true
		switch m.key {
		case "username":
			c.Username, ok = d.str(path+".username", m.val)
		case "profile":
			c.Profile, ok = d.str(path+".profile", m.val)
		default:
			ok = false
		}
		if !ok {
			c.Extra = d.setExtra(c.Extra, m.key, d.raw(m.val))
		}
	}
	c.Username, c.Profile = sharedValue(c.Username), sharedValue(c.Profile)
	return c
}

// last returns the last member named key of an object (last wins), or null.
func last(obj jval, key string) jval {
	for i := len(obj.obj) - 1; i >= 0; i-- {
		if obj.obj[i].key == key {
			return obj.obj[i].val
		}
	}
	return jval{kind: jNull}
}

// blank applies the seed's "missing" rule: absent, null, or a blank string.
func blank(obj jval, key string) bool {
	v := last(obj, key)
	return v.kind == jNull || (v.kind == jString && strings.TrimSpace(v.str) == "")
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// ranges reports integer fields whose values no writer means (FindingOutOfRange).
func (d *decoder) ranges(r *Record) {
	check := func(path string, v *int64, lo, hi int64, what string) {
		if v != nil && (*v < lo || *v > hi) {
			d.add(FindingOutOfRange, path, strconv.FormatInt(*v, 10)+" is not "+what)
		}
	}
	const maxPID = 1<<31 - 1
	const maxInt = 1<<63 - 1
	check("issue_number", r.IssueNumber, 1, maxInt, "a positive issue number")
	check("lock_generation", r.LockGeneration, 0, maxInt, "a generation (0 or more)")
	check("pid", r.PID, 1, maxPID, "a process id (1 to 2^31-1)")
	check("session_pid", r.SessionPID, 1, maxPID, "a process id (1 to 2^31-1)")
	if w := r.WorkLease; w != nil {
		check("work_lease.issue_number", w.IssueNumber, 1, maxInt, "a positive issue number")
		check("work_lease.pr_number", w.PRNumber, 1, maxInt, "a positive pull-request number")
		check("work_lease.heartbeat_count", w.HeartbeatCount, 0, maxInt, "a count (0 or more)")
	}
}
