package model

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"time"

	"steward/leases/leaserec"
)

// LeaseStore holds the lease rows of a streamed read (Stream) as they are read, each
// encoded by its group in a few hundred bytes: a lease row as decoded, with its
// provenance decoded from JSON and its observations, is about 2.5 KB, and at 100,000
// claims the rows held whole were most of what `steward status --json` kept. A page
// decodes its groups' rows again. It keeps of a row what the derivation reads: the
// provenance only for the keys of a pending handoff (pendingHandoff), not its text.
type LeaseStore struct {
	rows  map[string][]byte   // group → its rows, encoded one after the other (until Pack)
	units map[string][]string // group → its units' keys
	byID  map[string]string   // lease id → group
	// active are the (session, lease) of the non-terminal leases, for the sessions.
	active [][2]string
	// Once packed: the groups in order, where each one's rows are (a compressed chunk
	// of consecutive groups), the chunks, and the last chunk decompressed.
	order  []string
	locs   []rowsAt
	chunks [][]byte
	last   struct {
		i int
		b []byte
	}
}

// rowsAt is where a packed group's rows are: chunk, offset and length in it decompressed.
type rowsAt struct{ chunk, off, n int32 }

// packChunk is about how many bytes of rows a packed chunk holds before compression.
const packChunk = 64 << 10

// Pack compresses the rows held, in chunks of consecutive groups of order (sorted, every
// group with rows among them): a page of groups in that order decompresses a chunk or two,
// and a row is a few dozen bytes until then. No row may be added after.
func (st *LeaseStore) Pack(order []string) error {
	var raw bytes.Buffer
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, flate.BestSpeed)
	if err != nil {
		return err
	}
	flush := func() error {
		if raw.Len() == 0 {
			return nil
		}
		buf.Reset()
		w.Reset(&buf)
		if _, err := w.Write(raw.Bytes()); err != nil {
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
		st.chunks = append(st.chunks, bytes.Clone(buf.Bytes()))
		raw.Reset()
		return nil
	}
	st.order, st.locs = order, make([]rowsAt, len(order))
	for i, g := range order {
		b := st.rows[g]
		st.locs[i] = rowsAt{chunk: int32(len(st.chunks)), off: int32(raw.Len()), n: int32(len(b))}
		raw.Write(b)
		delete(st.rows, g)
		if raw.Len() >= packChunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	st.last.i = -1
	if len(st.rows) > 0 {
		return errors.New("lease rows of a group not in the order packed")
	}
	st.rows = nil
	return nil
}

// NewLeaseStore returns an empty store.
func NewLeaseStore() *LeaseStore {
	st := &LeaseStore{}
	st.Restart()
	return st
}

// Restart forgets every row held (a read that starts over).
func (st *LeaseStore) Restart() {
	st.rows, st.units, st.byID, st.active = map[string][]byte{}, map[string][]string{}, map[string]string{}, nil
}

// Add holds lo.
func (st *LeaseStore) Add(lo *LeaseObs) {
	k, it := leaseUnitKey(lo)
	g := groupOf(k, it)
	if us := st.units[g]; len(us) == 0 || us[len(us)-1] != k {
		found := false
		for _, u := range us {
			found = found || u == k
		}
		if !found {
			st.units[g] = append(us, k)
		}
	}
	st.rows[g] = encodeLease(st.rows[g], lo)
	st.byID[lo.Lease.LeaseID] = g
	if leaseActive(&lo.Lease) {
		st.active = append(st.active, [2]string{lo.Lease.SessionID, lo.Lease.LeaseID})
	}
}

// encoded returns the rows of group g, encoded.
func (st *LeaseStore) encoded(g string) []byte {
	if st.rows != nil {
		return st.rows[g]
	}
	i, ok := slices.BinarySearch(st.order, g)
	if !ok || st.locs[i].n == 0 {
		return nil
	}
	at := st.locs[i]
	if st.last.i != int(at.chunk) {
		b, err := io.ReadAll(flate.NewReader(bytes.NewReader(st.chunks[at.chunk])))
		if err != nil {
			// Bytes this process compressed a moment ago: nothing else can read them back.
			panic("model: lease rows packed could not be read back: " + err.Error())
		}
		st.last.i, st.last.b = int(at.chunk), b
	}
	return st.last.b[at.off : at.off+at.n]
}

// group decodes the rows of group g.
func (st *LeaseStore) group(g string) []LeaseObs {
	var out []LeaseObs
	for b := st.encoded(g); len(b) > 0; {
		var lo LeaseObs
		b = decodeLease(b, &lo)
		out = append(out, lo)
	}
	return out
}

// byLeaseID decodes the row of lease id (false when none is held).
func (st *LeaseStore) byLeaseID(id string) (*LeaseObs, bool) {
	g, ok := st.byID[id]
	if !ok {
		return nil, false
	}
	for _, lo := range st.group(g) {
		if lo.Lease.LeaseID == id {
			return &lo, true
		}
	}
	return nil, false
}

type enc struct{ b []byte }

func (e *enc) str(s string) { e.b = binary.AppendUvarint(e.b, uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) int(v int64)  { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}
func (e *enc) time(t time.Time) {
	b, err := t.MarshalBinary()
	if err != nil {
		b = nil // a zone offset that is not whole minutes: kept as the zero time (never from the DB's decoder)
	}
	e.str(string(b))
}
func (e *enc) ts(t leaserec.Timestamp) { e.str(t.Raw); e.time(t.Time); e.str(string(t.State)) }
func (e *enc) strs(v []string) {
	e.bool(v != nil)
	e.int(int64(len(v)))
	for _, s := range v {
		e.str(s)
	}
}

type dec struct{ b []byte }

func (d *dec) str() string {
	n, k := binary.Uvarint(d.b)
	s := string(d.b[k : k+int(n)])
	d.b = d.b[k+int(n):]
	return s
}
func (d *dec) int() int64 { v, k := binary.Varint(d.b); d.b = d.b[k:]; return v }
func (d *dec) bool() bool { v := d.b[0] == 1; d.b = d.b[1:]; return v }
func (d *dec) time() time.Time {
	var t time.Time
	if b := d.str(); b != "" {
		_ = t.UnmarshalBinary([]byte(b))
	}
	return t
}
func (d *dec) ts() leaserec.Timestamp {
	return leaserec.Timestamp{Raw: d.str(), Time: d.time(), State: leaserec.TimeState(d.str())}
}
func (d *dec) strs() []string {
	isSet, n := d.bool(), int(d.int())
	if !isSet {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}

// handoffKeys are the provenance keys pendingHandoff reads.
var handoffKeys = [...]string{"cross_role_handoff", "handoff_status", "required_role"}

func encodeLease(b []byte, lo *LeaseObs) []byte {
	e := enc{b}
	l := &lo.Lease
	e.str(l.LeaseID)
	e.int(l.WorkItemID)
	e.str(l.SessionID)
	e.str(l.Role)
	e.str(string(l.TaskClass))
	e.str(l.Phase)
	e.str(string(l.Status))
	e.str(l.StatusRaw)
	e.ts(l.CreatedAt)
	e.ts(l.ExpiresAt)
	e.ts(l.LastHeartbeatAt)
	e.int(l.HeartbeatCount)
	e.ts(l.ReleasedAt)
	e.str(l.ExpectedHeadSHA)
	e.strs(l.AllowedActions)
	e.strs(l.ForbiddenActions)
	// The provenance: whether there is one, and the handoff's keys — a truthy
	// cross_role_handoff as true, the two strings as strings.
	e.bool(l.Provenance != nil)
	if l.Provenance != nil {
		v, ok := l.Provenance["cross_role_handoff"]
		e.bool(ok && v != nil && v != false && v != "")
		for _, k := range handoffKeys[1:] {
			s, ok := l.Provenance[k].(string)
			e.bool(ok)
			e.str(s)
		}
	}
	e.int(l.OwnerPID)
	e.str(l.OwnerHost)
	e.str(l.WorktreePath)
	e.str(l.AdoptedBySessionID)
	e.str(l.AdoptedFromSessionID)
	e.str(l.EndReason)
	e.int(l.Generation)
	e.bool(l.HasGeneration)
	e.str(l.Work.Remote)
	e.str(l.Work.Org)
	e.str(l.Work.Repo)
	e.str(string(l.Work.Kind))
	e.int(l.Work.Number)
	e.strs(l.Problems)
	e.str(lo.Host)
	e.str(string(lo.Owner))
	e.str(lo.OwnerWhy)
	e.bool(lo.OtherHost)
	e.str(string(lo.Worktree))
	e.str(lo.WorkWhy)
	return e.b
}

func decodeLease(b []byte, lo *LeaseObs) []byte {
	d := dec{b}
	l := &lo.Lease
	l.LeaseID = d.str()
	l.WorkItemID = d.int()
	l.SessionID = d.str()
	l.Role = d.str()
	l.TaskClass = leaserec.TaskClass(d.str())
	l.Phase = d.str()
	l.Status = leaserec.Status(d.str())
	l.StatusRaw = d.str()
	l.CreatedAt = d.ts()
	l.ExpiresAt = d.ts()
	l.LastHeartbeatAt = d.ts()
	l.HeartbeatCount = d.int()
	l.ReleasedAt = d.ts()
	l.ExpectedHeadSHA = d.str()
	l.AllowedActions = d.strs()
	l.ForbiddenActions = d.strs()
	if d.bool() {
		l.Provenance = map[string]any{}
		if d.bool() {
			l.Provenance["cross_role_handoff"] = true
		}
		for _, k := range handoffKeys[1:] {
			ok, s := d.bool(), d.str()
			if ok {
				l.Provenance[k] = s
			}
		}
	}
	l.OwnerPID = d.int()
	l.OwnerHost = d.str()
	l.WorktreePath = d.str()
	l.AdoptedBySessionID = d.str()
	l.AdoptedFromSessionID = d.str()
	l.EndReason = d.str()
	l.Generation = d.int()
	l.HasGeneration = d.bool()
	l.Work.Remote = d.str()
	l.Work.Org = d.str()
	l.Work.Repo = d.str()
	l.Work.Kind = leaserec.WorkKind(d.str())
	l.Work.Number = d.int()
	l.Problems = d.strs()
	lo.Host = d.str()
	lo.Owner = Liveness(d.str())
	lo.OwnerWhy = d.str()
	lo.OtherHost = d.bool()
	lo.Worktree = Worktree(d.str())
	lo.WorkWhy = d.str()
	return d.b
}
