package locks

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"steward/locks/lockrec"
)

// make10k writes 10,000 canonical lock files (distinct issues) into a fresh
// directory and returns it.
func make10k(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	rec := decodeFixture(b, "canonical.json")
	for i := range 10000 {
		r := rec
		n := int64(i + 1)
		r.IssueNumber = &n
		data, err := lockrec.Marshal(&r)
		if err != nil {
			b.Fatal(err)
		}
		name, _ := Name(lockrec.Key{Remote: r.Remote, Org: r.Org, Repo: r.Repo, Issue: n})
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

func BenchmarkDecodeAssess(b *testing.B) {
	data := fixtureBytes(b, "canonical.json")
	now := time.Date(2026, 7, 24, 6, 0, 0, 0, time.UTC)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		rec, _ := lockrec.Decode(data)
		if lockrec.Assess(&rec, now).Contract != lockrec.ContractCanonical {
			b.Fatal("not canonical")
		}
	}
}

// BenchmarkLoadDir10k is the full scan: list, read, decode every file.
func BenchmarkLoadDir10k(b *testing.B) {
	dir := make10k(b)
	b.ReportAllocs()
	for b.Loop() {
		s, err := LoadDir(dir, LoadOptions{})
		if err != nil || len(s.Live) != 10000 {
			b.Fatal(err, len(s.Live))
		}
	}
}

// BenchmarkReadRaw10k is the baseline: list the same directory and read
// every file with os.ReadFile, no decode.
func BenchmarkReadRaw10k(b *testing.B) {
	dir := make10k(b)
	b.ReportAllocs()
	for b.Loop() {
		ents, err := os.ReadDir(dir)
		if err != nil {
			b.Fatal(err)
		}
		total := 0
		for _, e := range ents {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				b.Fatal(err)
			}
			total += len(data)
		}
		if total == 0 {
			b.Fatal(fmt.Sprint("no bytes read"))
		}
	}
}

// BenchmarkReadRawSyscall10k is a stricter baseline: the same raw syscalls
// LoadDir makes (open, fstat, read into a reused buffer, close), no decode.
func BenchmarkReadRawSyscall10k(b *testing.B) {
	dir := make10k(b)
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	b.ReportAllocs()
	for b.Loop() {
		ents, err := os.ReadDir(dir)
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range ents {
			if _, _, err := readRegular(filepath.Join(dir, e.Name()), bp); err != nil {
				b.Fatal(err)
			}
		}
	}
}
