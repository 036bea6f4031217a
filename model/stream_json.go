package model

import (
	"bufio"
	"bytes"
	"compress/flate"
	"container/heap"
	"encoding/binary"
	"encoding/json"
	"io"
	"slices"
	"strings"
)

// StreamJSON encodes the pages of a Stream into the bytes Snapshot.EncodeJSON renders for
// the snapshot Build derives. The document's head (the sources, the findings) is known only
// once every page was read, and claims come right after it: so each page's claims and
// items are kept encoded and compressed, a run per page, until Write merges the runs in
// key order. A claim's JSON is about a kilobyte and compresses about tenfold; the claim it
// was encoded from, its evidence and the rows it was derived from are dropped with the
// page. The short lists (orphans, contention) are kept as values: the caller previews their
// actions before they are written.
type StreamJSON struct {
	at      *Snapshot // GeneratedAt, for the claims' ages
	w       *flate.Writer
	claims  []run
	items   []run
	orphans []Keyed[Orphan]
	content []Keyed[Contention]
}

// run is one page's entries, each a key and its JSON, compressed.
type run struct{ b []byte }

// NewStreamJSON returns an encoder for a snapshot generated at s.GeneratedAt.
func NewStreamJSON(s *Snapshot) *StreamJSON { return &StreamJSON{at: s} }

// Add encodes page p's claims and items, and keeps its orphans and contention.
func (j *StreamJSON) Add(p Page) error {
	if j.w == nil {
		w, err := flate.NewWriter(io.Discard, flate.BestSpeed)
		if err != nil {
			return err
		}
		j.w = w
	}
	c, err := spool(j.w, p.Claims, func(c *Claim) any { return j.at.claimJSON(c) })
	if err != nil {
		return err
	}
	it, err := spool(j.w, p.Items, func(x *ItemState) any { return x })
	if err != nil {
		return err
	}
	j.claims, j.items = append(j.claims, c), append(j.items, it)
	j.orphans, j.content = append(j.orphans, p.Orphans...), append(j.content, p.Contention...)
	return nil
}

func spool[T any](w *flate.Writer, es []Keyed[T], elem func(*T) any) (run, error) {
	var buf bytes.Buffer
	w.Reset(&buf)
	var n [binary.MaxVarintLen64]byte
	for _, e := range es {
		b, err := json.Marshal(elem(e.Val))
		if err != nil {
			return run{}, err
		}
		for _, part := range [][]byte{[]byte(e.Key), b} {
			if _, err := w.Write(n[:binary.PutUvarint(n[:], uint64(len(part)))]); err != nil {
				return run{}, err
			}
			if _, err := w.Write(part); err != nil {
				return run{}, err
			}
		}
	}
	if err := w.Close(); err != nil {
		return run{}, err
	}
	return run{b: bytes.Clone(buf.Bytes())}, nil
}

// Orphans and Contention return the short lists kept, in the snapshot's order.
func (j *StreamJSON) Orphans() []*Orphan        { return vals(j.orphans) }
func (j *StreamJSON) Contention() []*Contention { return vals(j.content) }

func vals[T any](es []Keyed[T]) []*T {
	slices.SortStableFunc(es, func(a, b Keyed[T]) int { return strings.Compare(a.Key, b.Key) })
	out := make([]*T, len(es))
	for i := range es {
		out[i] = es[i].Val
	}
	return out
}

// Write renders the snapshot: head's fields and short lists (its Claims, Sessions and
// Items are not read), the claims and items of the pages added, and the sessions yields.
func (j *StreamJSON) Write(head *Snapshot, sessions func(yield func(*Session) bool), emit func([]byte) error) error {
	return head.encodeJSON(emit, lists{
		claims: merge(j.claims),
		items:  merge(j.items),
		sessions: func(put func([]byte) error) error {
			var err error
			sessions(func(s *Session) bool {
				var b []byte
				if b, err = json.Marshal(s); err == nil {
					err = put(b)
				}
				return err == nil
			})
			return err
		},
	})
}

// cursor reads one run's entries in order.
type cursor struct {
	r        *bufio.Reader
	key, val []byte
}

func (c *cursor) next() (bool, error) {
	for _, p := range []*[]byte{&c.key, &c.val} {
		n, err := binary.ReadUvarint(c.r)
		if err == io.EOF && p == &c.key {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		*p = slices.Grow((*p)[:0], int(n))[:n]
		if _, err := io.ReadFull(c.r, *p); err != nil {
			return false, err
		}
	}
	return true, nil
}

type cursors []*cursor

func (h cursors) Len() int           { return len(h) }
func (h cursors) Less(i, k int) bool { return bytes.Compare(h[i].key, h[k].key) < 0 }
func (h cursors) Swap(i, k int)      { h[i], h[k] = h[k], h[i] }
func (h *cursors) Push(x any)        { *h = append(*h, x.(*cursor)) }
func (h *cursors) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// merge yields the entries of every run in key order (each run is in key order; a key is
// in one run only).
func merge(rs []run) func(put func([]byte) error) error {
	return func(put func([]byte) error) error {
		h := make(cursors, 0, len(rs))
		for _, r := range rs {
			fr := flate.NewReader(bytes.NewReader(r.b))
			defer fr.Close()
			c := &cursor{r: bufio.NewReaderSize(fr, 4096)}
			ok, err := c.next()
			if err != nil {
				return err
			}
			if ok {
				h = append(h, c)
			}
		}
		heap.Init(&h)
		for len(h) > 0 {
			c := h[0]
			if err := put(c.val); err != nil {
				return err
			}
			ok, err := c.next()
			if err != nil {
				return err
			}
			if ok {
				heap.Fix(&h, 0)
			} else {
				heap.Pop(&h)
			}
		}
		return nil
	}
}
