package live_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unicode/utf8"

	"steward/locks"
	"steward/locks/lockrec"
	"steward/model"
	"steward/model/live"
)

// hostileDir is the reliability suite's catalogue of hostile lock files (the seed corpus).
const hostileDir = "../../testdata/hostile/locks"

// FuzzSnapshotJSON feeds arbitrary bytes as a lock file through the whole read path — the
// locks directory reader, the live model's observation and derivation — and checks the
// `steward status --json` output: valid JSON, decodable into a Snapshot, and stable when
// decoded and encoded again (the format scripts rely on round-trips).
func FuzzSnapshotJSON(f *testing.F) {
	ents, err := os.ReadDir(hostileDir)
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(hostileDir, e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	dir := f.TempDir()
	now := time.Date(2026, 7, 24, 6, 0, 0, 0, time.UTC)
	probe := live.Probe{Host: "fuzz-host"}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, "f.json"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		e := locks.ReadFile(dir, "f.json")
		in := &model.Input{Locks: []model.LockObs{probe.ObserveLock(e, now)},
			LocksHealth: model.SourceHealth{Status: model.StatusOK, ScannedAt: now},
			DBHealth:    model.SourceHealth{Status: model.StatusUnavailable, Reason: "fuzz", ScannedAt: now},
			GiteaHealth: model.SourceHealth{Status: model.StatusNotConfigured, ScannedAt: now}}
		s := model.Build(in, model.Config{}, now)
		first, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		if !json.Valid(first) || !utf8.Valid(first) {
			t.Fatalf("invalid JSON: %s", first)
		}
		var back model.Snapshot
		if err := json.Unmarshal(first, &back); err != nil {
			t.Fatalf("decode: %v\n%s", err, first)
		}
		second, err := json.Marshal(&back)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if !bytes.Equal(first, second) {
			t.Fatalf("round trip changed the JSON:\n%s\n%s", first, second)
		}
		if len(s.Claims)+len(s.Orphans) == 0 && e.Class == lockrec.ClassLive {
			t.Fatalf("a live lock file produced neither a claim nor an orphan:\n%s", first)
		}
	})
}
