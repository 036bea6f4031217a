package tui

import (
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"steward/model"
)

// bigSnapshot has n claims (and as many sessions), all with live countdowns.
func bigSnapshot(n int) *model.Snapshot {
	s := &model.Snapshot{GeneratedAt: fixedNow, Sources: okSources()}
	for i := 0; i < n; i++ {
		it := &model.Item{Kind: "issue", Number: int64(i + 1), Org: "acme", Repo: "widgets"}
		s.Claims = append(s.Claims, &model.Claim{Item: it, Role: "author", TaskClass: "author_issue_work",
			Claimant: &model.Claimant{Username: fmt.Sprintf("bot-%d", i%50), Profile: "author"}, SessionID: fmt.Sprintf("sess-%d", i),
			Phase: "implementing", LastHeartbeat: fixedNow.Add(-time.Duration(i%600) * time.Second), ExpiresAt: fixedNow.Add(time.Duration(i%900) * time.Second),
			Contract: "canonical", Freshness: "active", OwnerLiveness: model.LivenessAlive, LockFile: fmt.Sprintf("acme_widgets_%d.json", i+1), LeaseID: fmt.Sprintf("L-%d", i)})
	}
	return s
}

func benchRoot(b *testing.B, n int) *Root {
	r := newTestRoot(b, 160, 48, false)
	send(r, SnapshotMsg{bigSnapshot(n)}, keyMsg("2"))
	return r
}

// BenchmarkView10k: one frame of the Claims view with 10,000 claims (target ≤ 4 ms).
func BenchmarkView10k(b *testing.B) {
	r := benchRoot(b, 10000)
	b.ResetTimer()
	for b.Loop() {
		_ = r.View()
	}
}

// BenchmarkKeyToFrame10k: a key press (move down) and the frame after it, at 10,000 claims
// (target ≤ 16 ms).
func BenchmarkKeyToFrame10k(b *testing.B) {
	r := benchRoot(b, 10000)
	down, up := keyMsg("j"), keyMsg("k")
	b.ResetTimer()
	i := 0
	for b.Loop() {
		k := down
		if i%200 >= 100 {
			k = up
		}
		i++
		r.Update(k)
		_ = r.View()
	}
}

// BenchmarkFilterKeyToFrame10k: typing one filter character re-filters 10,000 rows.
func BenchmarkFilterKeyToFrame10k(b *testing.B) {
	r := benchRoot(b, 10000)
	send(r, keyMsg("/"))
	k, bs := keyMsg("7"), keyMsg("backspace")
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			r.Update(k)
		} else {
			r.Update(bs)
		}
		i++
		_ = r.View()
	}
}

// BenchmarkSnapshotDigested10k: what Update does with a snapshot Run's bridge has already
// digested off the UI goroutine, and the frame after it.
func BenchmarkSnapshotDigested10k(b *testing.B) {
	r := benchRoot(b, 10000)
	s := bigSnapshot(10000)
	cfg := digestConfig(r.opts)
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		m := digestedMsg{snap: s, data: digest(s, cfg)} // done by Run's bridge goroutine
		b.StartTimer()
		r.Update(m)
		_ = r.View()
	}
}

// BenchmarkSnapshot10k: digesting a new 10,000-claim snapshot and drawing it.
func BenchmarkSnapshot10k(b *testing.B) {
	r := benchRoot(b, 10000)
	s := bigSnapshot(10000)
	b.ResetTimer()
	for b.Loop() {
		r.Update(SnapshotMsg{s})
		_ = r.View()
	}
}

// A snapshot digested on Run's bridge goroutine draws exactly as one digested in Update.
func TestDigestedSnapshotDrawsTheSame(t *testing.T) {
	s := bigSnapshot(50)
	a := newTestRoot(t, 160, 48, false)
	b := newTestRoot(t, 160, 48, false)
	send(a, SnapshotMsg{s}, keyMsg("2"))
	send(b, digestedMsg{snap: s, data: digest(s, digestConfig(b.opts))}, keyMsg("2"))
	if fa, fb := a.Render(), b.Render(); fa != fb || !strings.Contains(fa, "bot-1") {
		t.Fatalf("frames differ or are empty:\n%s\n----\n%s", fa, fb)
	}
}

// oneChange returns a copy of s with claim i replaced by a new pointer (its heartbeat moved),
// as the live model publishes after one lock rename: every other pointer is kept.
func oneChange(s *model.Snapshot, i int, at time.Time) *model.Snapshot {
	n := *s
	n.GeneratedAt = at
	n.Claims = append([]*model.Claim(nil), s.Claims...)
	c := *n.Claims[i]
	c.LastHeartbeat = at
	n.Claims[i] = &c
	return &n
}

// BenchmarkSnapshotOneChange10k: a new 10,000-claim snapshot in which one claim changed,
// digested (in Update, as the harness sends it) and drawn; the rows of unchanged claims come
// from the row cache. Only Update and View are used, so the benchmark runs on older commits too.
func BenchmarkSnapshotOneChange10k(b *testing.B) { benchOneChange(b, 10000) }

// BenchmarkSnapshotOneChange50k: as BenchmarkSnapshotOneChange10k at 50,000 claims.
func BenchmarkSnapshotOneChange50k(b *testing.B) { benchOneChange(b, 50000) }

// BenchmarkSnapshotOneChange100: as BenchmarkSnapshotOneChange10k at 100 claims (the size
// the growth target — one change at 10,000 claims costing little more than at 100 —
// compares with).
func BenchmarkSnapshotOneChange100(b *testing.B) { benchOneChange(b, 100) }

// BenchmarkSnapshotOneChangeSorted50k: as BenchmarkSnapshotOneChange50k with the Claims view
// sorted by its Item column (as the harness sorts it).
func BenchmarkSnapshotOneChangeSorted50k(b *testing.B) { benchOneChange(b, 50000, keyMsg("s")) }

func benchOneChange(b *testing.B, n int, keys ...tea.KeyPressMsg) {
	r, snaps := oneChangeSetup(b, n)
	for _, k := range keys {
		r.Update(k)
	}
	runtime.GC()
	b.ResetTimer()
	cpu := cpuTime()
	i := 0
	for b.Loop() {
		r.Update(SnapshotMsg{snaps[i%2]})
		i++
		_ = r.View()
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}

// oneChangeSetup is a root showing an n-claim snapshot, and two snapshots that each change
// one claim of it.
func oneChangeSetup(b *testing.B, n int) (*Root, [2]*model.Snapshot) {
	r := benchRoot(b, n)
	s := bigSnapshot(n)
	r.Update(SnapshotMsg{s})
	return r, [2]*model.Snapshot{oneChange(s, 10, fixedNow.Add(time.Second)), oneChange(s, 20, fixedNow.Add(2*time.Second))}
}

// cpuTime is the CPU time the process used so far (every thread: the garbage collector's
// too), which a loaded machine inflates far less than the wall time.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// BenchmarkDigest10k: the digest alone of a 10,000-claim snapshot in which one claim changed,
// with the row cache (as Run's bridge does) and without (every row digested, as before the
// cache).
func BenchmarkDigest10k(b *testing.B) {
	s := bigSnapshot(10000)
	snaps := [2]*model.Snapshot{oneChange(s, 10, fixedNow.Add(time.Second)), oneChange(s, 20, fixedNow.Add(2*time.Second))}
	for _, c := range []struct {
		name  string
		cache bool
	}{{"cached", true}, {"uncached", false}} {
		b.Run(c.name, func(b *testing.B) {
			cfg := digestConfig(New(Options{}).opts)
			if !c.cache {
				cfg.cache = nil
			}
			digest(s, cfg)
			i := 0
			for b.Loop() {
				digest(snaps[i%2], cfg)
				i++
			}
		})
	}
}
