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
	kindResolution RecordKind = "resolution"
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
// is known to have happened. Compensated: part of the effect was made, then undone within
// the same attempt (a claim whose lock could not be written released its lease again);
// the outcome's effects say both.
const (
	DispositionNotAttempted   Disposition = "not_attempted"
	DispositionOutcomeUnknown Disposition = "outcome_unknown"
	dispositionApplied        Disposition = "applied"
	dispositionCompensated    Disposition = "compensated"
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
	// Steps, on the intent of a plan made of other actions (item.recover), are its steps in
	// order; each leaves a step record (kindStep) as it ends.
	Steps []Request `json:"steps,omitempty"`
}

// errAuditUnavailable reports that the audit log could not take a record. An apply that
// cannot write its intent refuses before any effect, with disposition not_attempted.
var errAuditUnavailable = errors.New("audit log unavailable")

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
	// readOnly logs (ReadOnlyAudit) create, append and remove nothing.
	readOnly bool
}

// OpenAudit opens (creating, mode 0600, its directory 0700) the audit log at path.
func OpenAudit(path string, r *Redactor) (*AuditLog, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	// Read-write: Append reads the last byte to find a torn tail (see Append).
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	if r == nil {
		r = NewRedactor()
	}
	return &AuditLog{path: path, f: f, secrets: r}, nil
}

// errAuditReadOnly is returned by Append on a log opened with ReadOnlyAudit.
var errAuditReadOnly = errors.New("the audit log is open read-only")

// ReadOnlyAudit returns the audit log at path for a read-only steward: it is only read
// (verify, the workbench's activity) and never created, appended to, or tidied — Append
// fails with errAuditReadOnly, and a stale in-flight marker is left where it is.
func ReadOnlyAudit(path string) *AuditLog {
	return &AuditLog{path: path, secrets: NewRedactor(), readOnly: true}
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
// that could not be made durable is reported as errAuditUnavailable.
//
// Every record starts on a fresh line: when the log ends in a torn line (a crash or a full
// disk cut an earlier append short), Append first terminates it, so the torn line stays
// one undecodable line — ReadAudit reports it as a finding — and never swallows this
// record (before, an intent glued to a torn line vanished from the log).
func (l *AuditLog) Append(rec Record) error {
	if l.readOnly {
		return fmt.Errorf("%w: %w", errAuditUnavailable, errAuditReadOnly)
	}
	rec.V = 1
	rec = l.secrets.redactRecord(rec)
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("%w: %v", errAuditUnavailable, err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	fd := int(l.f.Fd())
	if fd >= 0 {
		if err := syscall.Flock(fd, syscall.LOCK_EX); err != nil {
			return fmt.Errorf("%w: lock: %v", errAuditUnavailable, err)
		}
		defer syscall.Flock(fd, syscall.LOCK_UN)
		torn, err := tornTail(fd)
		if err != nil {
			return fmt.Errorf("%w: read the log's end: %v", errAuditUnavailable, err)
		}
		if torn {
			line = append([]byte{'\n'}, line...)
		}
	}
	if _, err := l.f.Write(line); err != nil {
		return fmt.Errorf("%w: write: %v", errAuditUnavailable, err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("%w: fsync: %v", errAuditUnavailable, err)
	}
	return nil
}

// tornTail reports whether the file behind fd is non-empty and does not end in a newline.
// It is called under the append flock, so no cooperating writer is mid-record.
func tornTail(fd int) (bool, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return false, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size == 0 {
		return false, nil
	}
	var b [1]byte
	for {
		n, err := syscall.Pread(fd, b[:], st.Size-1)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return false, err
		}
		return n == 1 && b[0] != '\n', nil
	}
}

// AuditFinding is a line of the audit log that could not be read.
type AuditFinding struct {
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// ReadAudit reads every record of the log at path. Lines that do not decode are returned as
// findings, never dropped silently; a torn line (a crash mid-append) is one of them. A
// record glued to a torn line (written before Append terminated torn tails) is recovered,
// and the torn part is a finding. A missing file reads as no records.
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
		rec, err := decodeRecord(b)
		if err == nil {
			recs = append(recs, rec)
			continue
		}
		if glued, at, ok := recoverGlued(b); ok {
			finds = append(
				finds,
				AuditFinding{
					Line: n,
					Reason: fmt.Sprintf(
						"torn record: the first %d bytes of the line are a record cut short (a crash or a full disk mid-append); the "+
							"record glued after them was recovered",
						at,
					),
				},
			)
			recs = append(recs, glued)
			continue
		}
		reason := "undecodable record: " + err.Error()
		if looksTorn(b) {
			reason = "torn record: the line is a record cut short (a crash or a full disk mid-append): " + err.Error()
		}
		finds = append(finds, AuditFinding{Line: n, Reason: reason})
	}
	return recs, finds, sc.Err()
}

// recordStart is how every record Append writes begins (V is Record's first field).
var recordStart = []byte(`{"v":`)

func decodeRecord(b []byte) (Record, error) {
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return Record{}, err
	}
	if rec.Attempt == "" || rec.Kind == "" {
		return Record{}, errors.New("record without attempt or kind")
	}
	return rec, nil
}

// looksTorn says whether an undecodable line is the beginning of a record.
func looksTorn(b []byte) bool { return bytes.HasPrefix(b, recordStart) }

// recoverGlued finds the record in a line that is one or more torn records followed by a
// whole one: the first record start after offset 0 from which the rest of the line decodes.
// at is where the recovered record begins. A record start inside a torn string, or inside a
// record (a nested object with a "v" key), leaves a rest that does not decode.
func recoverGlued(b []byte) (rec Record, at int, ok bool) {
	for off := 1; off < len(b); off = at + 1 {
		i := bytes.Index(b[off:], recordStart)
		if i < 0 {
			return Record{}, 0, false
		}
		at = off + i
		if rec, err := decodeRecord(b[at:]); err == nil {
			return rec, at, true
		}
	}
	return Record{}, 0, false
}

// Attempt is the audit log's view of one attempt: its intent, its terminal outcome (nil
// while none was written — an attempt in flight or interrupted, which reads as unknown) and
// any resolutions that followed.
type Attempt struct {
	ID          string   `json:"attempt"`
	Intent      *Record  `json:"intent,omitempty"`
	Outcome     *Record  `json:"outcome,omitempty"`
	Resolutions []Record `json:"resolutions,omitempty"`
	// Steps are the step records of a plan made of other actions, in order.
	Steps []Record `json:"steps,omitempty"`
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
		case kindResolution:
			a.Resolutions = append(a.Resolutions, r)
		case kindStep:
			a.Steps = append(a.Steps, r)
		}
	}
	return out
}
