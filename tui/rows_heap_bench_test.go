package tui

import (
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkRowsHeap: the heap the workbench holds for its rows once a snapshot of 1,000 and
// 10,000 claims is drawn — the root's digest, its row cache and its
// table, the snapshot itself not counted — per claim (rows-B/claim, after a collection).
// Bytes do not depend on the machine's load; the figure staying flat from 1,000 to 10,000
// says the rows grow linearly with the fleet.
func BenchmarkRowsHeap(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var held uint64
			for range b.N {
				s := bigSnapshot(n)
				runtime.GC()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				r := newTestRoot(b, 160, 48, false)
				send(r, SnapshotMsg{s}, keyMsg("2"))
				_ = r.View()
				runtime.GC()
				runtime.ReadMemStats(&m1)
				held += m1.HeapAlloc - m0.HeapAlloc
				runtime.KeepAlive(r)
				runtime.KeepAlive(s)
			}
			b.ReportMetric(float64(held)/float64(b.N)/float64(n), "rows-B/claim")
		})
	}
}
