package govern

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// RecordKind says what an audit record is.
type RecordKind string

// The kinds of audit record. An attempt has one intent, then exactly one outcome; a
// resolution may follow an unknown outcome once evidence was read back from the source.
const (
	KindIntent     RecordKind = "intent"
	KindOutcome    RecordKind = "outcome"
	KindResolution RecordKind = "resolution"
)

// Result is what came of an attempt.
type Result string

// The results an attempt can have. Previewed is never written by Apply: it names the state
// of a plan that was shown and not applied.
const (
	ResultPreviewed Result = "previewed"
	ResultRefused   Result = "refused"
	ResultSucceeded Result = "succeeded"
	ResultFailed    Result = "failed"
	ResultUnknown   Result = "unknown"
)

// Disposition says where an attempt stood relative to its effect boundary.
type Disposition string

// The dispositions. NotAttempted: nothing was sent or written. OutcomeUnknown: an effect
// may have landed and must be verified from the source before a retry. Applied: the effect
// is known to have happened.
const (
	DispositionNotAttempted   Disposition = "not_attempted"
	DispositionOutcomeUnknown Disposition = "outcome_unknown"
	DispositionApplied        Disposition = "applied"
)

// ResolvedBy says who settled an unknown outcome.
type ResolvedBy string

// A machine resolves from evidence read back from the source; a human by judgement.
const (
	ResolvedByMachine ResolvedBy = "machine"
	ResolvedByHuman   ResolvedBy = "human"
)

// Record is one line of the audit log. The log is append-only JSON lines, fsync'd after
// every record, written ahead: the intent before any effect, the outcome after.
type Record struct {
	V           int         `json:"v"`
	At          string      `json:"at"`
	Attempt     string      `json:"attempt"`
	Kind        RecordKind  `json:"kind"`
	Action      string      `json:"action"`
	Target      Target      `json:"target"`
	Actor       Actor       `json:"actor"`
	Result      Result      `json:"result,omitempty"`
	Disposition Disposition `json:"disposition,omitempty"`
	Code        string      `json:"code,omitempty"`
	Message     string      `json:"message,omitempty"`
	Effects     []string    `json:"effects,omitempty"`
	Fences      []string    `json:"fences,omitempty"`
	Evidence    []string    `json:"evidence,omitempty"`
	Inverse     *Request    `json:"inverse,omitempty"`
	ResolvedBy  ResolvedBy  `json:"resolved_by,omitempty"`
}

// ErrAuditUnavailable reports that the audit log could not take a record. An apply that
// cannot write its intent refuses before any effect, with disposition not_attempted.
var ErrAuditUnavailable = errors.New("audit log unavailable")

// sink is where audit lines go: a file in production, a failing writer in tests of a full
// disk.
type sink interface {
	io.Writer
	Sync() error
	Fd() uintptr
}

// AuditLog appends records to one JSON-lines file. It is safe for concurrent use by many
// goroutines and by many processes: every append holds an exclusive flock on the file.
type AuditLog struct {
	path    string
	mu      sync.Mutex
	f       sink
	secrets *Redactor
}

// OpenAudit opens (creating, mode 0600, its directory 0700) the audit log at path.
func OpenAudit(path string, r *Redactor) (*AuditLog, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	if r == nil {
		r = NewRedactor()
	}
	return &AuditLog{path: path, f: f, secrets: r}, nil
}

// Path returns the file the log appends to.
func (l *AuditLog) Path() string { return l.path }

// Close closes the log file.
func (l *AuditLog) Close() error {
	if c, ok := l.f.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Append writes one record as a line, redacted, and fsyncs it before returning. A record
// that could not be made durable is reported as ErrAuditUnavailable.
func (l *AuditLog) Append(rec Record) error {
	rec.V = 1
	rec = l.secrets.redactRecord(rec)
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrAuditUnavailable, err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	fd := int(l.f.Fd())
	if fd >= 0 {
		if err := syscall.Flock(fd, syscall.LOCK_EX); err != nil {
			return fmt.Errorf("%w: lock: %v", ErrAuditUnavailable, err)
		}
		defer syscall.Flock(fd, syscall.LOCK_UN)
	}
	if _, err := l.f.Write(line); err != nil {
		return fmt.Errorf("%w: write: %v", ErrAuditUnavailable, err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("%w: fsync: %v", ErrAuditUnavailable, err)
	}
	return nil
}

// AuditFinding is a line of the audit log that could not be read.
type AuditFinding struct {
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// ReadAudit reads every record of the log at path. Lines that do not decode are returned as
// findings, never dropped silently; a torn last line (a crash mid-append) is one of them.
// A missing file reads as no records.
func ReadAudit(path string) ([]Record, []AuditFinding, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return decodeAudit(f)
}

func decodeAudit(r io.Reader) ([]Record, []AuditFinding, error) {
	var recs []Record
	var finds []AuditFinding
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	n := 0
	for sc.Scan() {
		n++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var rec Record
		if err := json.Unmarshal(b, &rec); err != nil {
			finds = append(finds, AuditFinding{Line: n, Reason: "undecodable record: " + err.Error()})
			continue
		}
		if rec.Attempt == "" || rec.Kind == "" {
			finds = append(finds, AuditFinding{Line: n, Reason: "record without attempt or kind"})
			continue
		}
		recs = append(recs, rec)
	}
	return recs, finds, sc.Err()
}

// Attempt is the audit log's view of one attempt: its intent, its terminal outcome (nil
// while none was written — an attempt in flight or interrupted, which reads as unknown) and
// any resolutions that followed.
type Attempt struct {
	ID          string   `json:"attempt"`
	Intent      *Record  `json:"intent,omitempty"`
	Outcome     *Record  `json:"outcome,omitempty"`
	Resolutions []Record `json:"resolutions,omitempty"`
	// Outcomes counts terminal records; anything but 1 for a finished attempt is a defect.
	Outcomes int `json:"outcomes"`
}

// Status is the attempt's result as the log tells it now: the latest resolution wins over
// the outcome; no outcome at all is unknown.
func (a Attempt) Status() Result {
	if n := len(a.Resolutions); n > 0 {
		return a.Resolutions[n-1].Result
	}
	if a.Outcome == nil {
		return ResultUnknown
	}
	return a.Outcome.Result
}

// Unresolved reports whether the attempt is unknown and no resolution settled it.
func (a Attempt) Unresolved() bool {
	return len(a.Resolutions) == 0 && (a.Outcome == nil || a.Outcome.Result == ResultUnknown)
}

// Attempts groups records by attempt, in the order their first record appears.
func Attempts(recs []Record) []Attempt {
	idx := map[string]int{}
	var out []Attempt
	for i := range recs {
		r := recs[i]
		j, ok := idx[r.Attempt]
		if !ok {
			j = len(out)
			idx[r.Attempt] = j
			out = append(out, Attempt{ID: r.Attempt})
		}
		a := &out[j]
		switch r.Kind {
		case KindIntent:
			a.Intent = &recs[i]
		case KindOutcome:
			a.Outcomes++
			if a.Outcome == nil {
				a.Outcome = &recs[i]
			}
		case KindResolution:
			a.Resolutions = append(a.Resolutions, r)
		}
	}
	return out
}
