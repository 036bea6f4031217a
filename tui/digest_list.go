package tui

import (
	"cmp"
	"runtime"
	"slices"
	"sync"
	"unsafe"
)

// A snapshot in which one claim changed costs the workbench work proportional to the change,
// not to the fleet: each list of rows built from the snapshot's claims, orphans or
// sessions is derived from the previous digest's list. The entries are matched by pointer
// (the live model keeps the pointer of every entry it did not re-derive, model/sorted.go);
// the rows of the matched ones keep their places in attention order, the rows that left are
// dropped, and only the new ones are digested (or taken from the row cache) and merged in.
// The result is exactly what a fresh digest and a stable sort by attention give: the order
// is the total order (Rank, Urgent, place in the snapshot), and the matched entries keep
// their relative places in the snapshot.

// listState is one list's last digest: the snapshot's entries in its order, and their rows
// in attention order (shared with that digest's data, so never written), rows[j] being the
// row of entries[idx[j]].
type listState[K comparable] struct {
	entries []K
	rows    []*row
	idx     []int32
	// placed and built count, for the last digest, the rows ordered by comparison (all of
	// them when the list was sorted whole) and the rows digested anew (not cached).
	placed, built int
	// rebuilt: the last digest sorted the list whole; came and left are the entries it
	// merged in and dropped otherwise.
	rebuilt    bool
	came, left []K
	// from is, for the last merge, the place in the previous list of each row carried over
	// (-1: a new row; nil: every row at its place); prev names that list (its first row's
	// address and its length: the list itself is not kept alive for it). The table re-sorts
	// only the new rows with it.
	from  []int32
	prev  uintptr
	prevN int
	// widths counts the rows' cell widths (widths[i][w]: rows whose cell i is w cells
	// wide), so that the widest cell of each column is known without measuring every row.
	widths cellWidths
}

// cellWidths counts rows by the width of each of their cells.
type cellWidths [][]int32

func (cw *cellWidths) add(r *row, by int32) {
	for i := range r.Cells {
		w := r.width(i)
		for len(*cw) <= i {
			*cw = append(*cw, nil)
		}
		c := (*cw)[i]
		for len(c) <= w {
			c = append(c, 0)
		}
		c[w] += by
		(*cw)[i] = c
	}
}

// widest is the widest cell of each column (0 for a column no row has).
func (cw cellWidths) widest() []int {
	out := make([]int, len(cw))
	for i, c := range cw {
		for w := len(c) - 1; w >= 0; w-- {
			if c[w] > 0 {
				out[i] = w
				break
			}
		}
	}
	return out
}

// placedRow is a row merged into a list, with its place in the snapshot.
type placedRow struct {
	row *row
	at  int32
}

// byPlace is the attention order of two rows at snapshot places ai and bi: Rank, then
// Urgent (zero last), then the place (what a stable sort of the snapshot's order gives).
func byPlace(a *row, ai int32, b *row, bi int32) int {
	if c := cmp.Compare(a.Rank, b.Rank); c != 0 {
		return c
	}
	if c := cmpTime(a.Urgent, b.Urgent); c != 0 {
		return c
	}
	return cmp.Compare(ai, bi)
}

// maxChanged is how many entries of n may differ from the previous snapshot for the list to
// be merged rather than rebuilt (a rebuild sorts every row).
func maxChanged(n int) int { return max(64, n/8) }

// digestList returns the rows of entries in attention order, derived from st (the previous
// digest of this list) when few entries changed, else rebuilt; *cache keeps the rows of the
// current entries by pointer (rows that left are dropped from it). fresh lists the positions
// of the returned rows that were not carried over from the previous list (every position
// when it was rebuilt, none when nothing changed). The rows may be the previous digest's
// (nothing changed): the caller copies them before writing.
func digestList[K comparable](
	st *listState[K],
	cache *map[K]*row,
	entries []K,
	build func(K) row,
) (rows []*row, idx []int32, fresh []int) {
	st.placed, st.built, st.rebuilt, st.came, st.left, st.from = 0, 0, false, nil, nil, nil
	st.prev, st.prevN = firstAt(st.rows), len(st.rows)
	get := func(k K) *row {
		r := (*cache)[k]
		if r == nil {
			x := build(k)
			r = &x
			st.built++
		}
		return r
	}
	if st.rows != nil && slices.Equal(st.entries, entries) {
		st.entries = entries
		return st.rows, st.idx, nil
	}
	newOf, added, removed, ok := align(st.entries, entries, maxChanged(len(entries)))
	if !ok || st.rows == nil {
		return st.rebuild(cache, entries, build)
	}
	// The new entries, in attention order; then the rows that left leave the cache (unless
	// they came back at another place).
	add := make([]placedRow, len(added))
	for i, at := range added {
		r := get(entries[at])
		add[i] = placedRow{row: r, at: at}
		st.widths.add(r, 1)
		(*cache)[entries[at]] = r
		st.came = append(st.came, entries[at])
	}
	slices.SortFunc(add, func(a, b placedRow) int { return byPlace(a.row, a.at, b.row, b.at) })
	st.placed = len(add)
	if len(removed) > 0 {
		back := make(map[K]bool, len(added))
		for _, at := range added {
			back[entries[at]] = true
		}
		for _, at := range removed {
			k := st.entries[at]
			st.left = append(st.left, k)
			if !back[k] {
				delete(*cache, k)
			}
		}
	}
	// Merge: the kept rows are copied a run at a time; the new ones go in between.
	rows = make([]*row, 0, len(entries))
	idx = make([]int32, 0, len(entries))
	from := make([]int32, 0, len(entries))
	run := -1
	flush := func(end int) {
		if run >= 0 {
			rows = append(rows, st.rows[run:end]...)
			run = -1
		}
	}
	a := 0
	for j := range st.rows {
		at := newOf[st.idx[j]]
		if at < 0 {
			flush(j)
			st.widths.add(st.rows[j], -1)
			continue
		}
		for a < len(add) && byPlace(add[a].row, add[a].at, st.rows[j], at) < 0 {
			flush(j)
			fresh = append(fresh, len(idx))
			rows, idx, from = append(rows, add[a].row), append(idx, add[a].at), append(from, -1)
			a++
		}
		if run < 0 {
			run = j
		}
		idx, from = append(idx, at), append(from, int32(j))
	}
	flush(len(st.rows))
	for ; a < len(add); a++ {
		fresh = append(fresh, len(idx))
		rows, idx, from = append(rows, add[a].row), append(idx, add[a].at), append(from, -1)
	}
	st.from = from
	st.entries, st.rows, st.idx = entries, rows, idx
	return rows, idx, fresh
}

// rebuild digests every entry (unchanged ones from the cache) and sorts the rows whole.
func (st *listState[K]) rebuild(cache *map[K]*row, entries []K, build func(K) row) ([]*row, []int32, []int) {
	next := make(map[K]*row, len(entries))
	ptr := make([]*row, len(entries))
	idx := make([]int32, len(entries))
	var miss []int
	for i, k := range entries {
		if ptr[i] = (*cache)[k]; ptr[i] == nil {
			miss = append(miss, i)
		}
	}
	buildEach(len(miss), func(j int) {
		x := build(entries[miss[j]])
		ptr[miss[j]] = &x
	})
	st.built += len(miss)
	for i, k := range entries {
		next[k] = ptr[i]
		idx[i] = int32(i)
	}
	*cache = next
	slices.SortFunc(idx, func(a, b int32) int { return byPlace(ptr[a], a, ptr[b], b) })
	rows := make([]*row, len(entries))
	fresh := make([]int, len(entries))
	st.widths = nil
	for j, at := range idx {
		rows[j] = ptr[at]
		fresh[j] = j
		st.widths.add(ptr[at], 1)
	}
	st.entries, st.rows, st.idx, st.placed, st.rebuilt = entries, rows, idx, len(entries), true
	return rows, idx, fresh
}

// align matches prev and next entry by entry (the same pointer at the same relative place),
// allowing insertions, removals and replacements between matches. newOf[i] is the place in
// next of prev[i] (-1: it left); added are the places in next of entries not matched,
// removed those in prev. It gives up (ok false) when more than limit entries differ.
func align[K comparable](prev, next []K, limit int) (newOf []int32, added, removed []int32, ok bool) {
	newOf = make([]int32, len(prev))
	i, j := 0, 0
	for i < len(prev) && j < len(next) {
		switch {
		case prev[i] == next[j]:
			newOf[i] = int32(j)
			i, j = i+1, j+1
			continue
		case j+1 < len(next) && next[j+1] == prev[i]: // next[j] is new
			added = append(added, int32(j))
			j++
		case i+1 < len(prev) && prev[i+1] == next[j]: // prev[i] left
			newOf[i] = -1
			removed = append(removed, int32(i))
			i++
		default: // prev[i] replaced by next[j]
			newOf[i] = -1
			removed, added = append(removed, int32(i)), append(added, int32(j))
			i, j = i+1, j+1
		}
		if len(added)+len(removed) > limit {
			return nil, nil, nil, false
		}
	}
	for ; i < len(prev); i++ {
		newOf[i] = -1
		removed = append(removed, int32(i))
	}
	for ; j < len(next); j++ {
		added = append(added, int32(j))
	}
	return newOf, added, removed, len(added)+len(removed) <= limit
}

// own returns rows to write to: a copy when they are the previous digest's list, which its
// data still shows.
func (st *listState[K]) own(rows []*row) []*row {
	if len(st.came) > 0 || len(st.left) > 0 || st.rebuilt {
		return rows // merged or rebuilt for this digest
	}
	rows = slices.Clone(rows) // every row carried over at its place (st.from nil)
	st.rows = rows
	return rows
}

// hint is what the table may reuse of the list the last digest gave (rows): the widest cell
// of each column, and the rows carried over from the list before it.
func (st *listState[K]) hint(rows []*row) rowsHint {
	if len(rows) == 0 {
		return rowsHint{}
	}
	h := rowsHint{first: &rows[0], n: len(rows), widest: st.widths.widest()}
	if st.prevN > 0 && !st.rebuilt {
		h.prev, h.prevN, h.from = st.prev, st.prevN, st.from
	}
	return h
}

// firstAt is the address of a list's first row (0 for an empty list): a list's identity
// while it is alive, without keeping it alive.
func firstAt(rows []*row) uintptr {
	if len(rows) == 0 {
		return 0
	}
	return rowAddr(&rows[0])
}

func rowAddr(r **row) uintptr { return uintptr(unsafe.Pointer(r)) }

// parallelRows is the fewest rows a rebuild builds on every core: the first digest of a
// large fleet (10,000 claims: about 100 ms of the first frame on one core). Fewer are built
// here, where starting goroutines would cost more than it saves. A variable for the test
// that compares the two.
var parallelRows = 2048

// buildEach runs f(0..n-1), split over the cores when n is at least parallelRows. f must
// be safe to run concurrently for distinct j: a row's build reads only its own entry and
// the digest's fixed configuration.
func buildEach(n int, f func(j int)) {
	w := runtime.GOMAXPROCS(0)
	if n < parallelRows || w < 2 {
		for j := range n {
			f(j)
		}
		return
	}
	var wg sync.WaitGroup
	per := (n + w - 1) / w
	for lo := 0; lo < n; lo += per {
		hi := min(lo+per, n)
		wg.Go(func() {
			for j := lo; j < hi; j++ {
				f(j)
			}
		})
	}
	wg.Wait()
}
