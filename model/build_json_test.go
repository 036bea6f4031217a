package model

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestSourceAgeIsWholeSecondsBeforeGeneratedAt: each source's age_s in the snapshot's JSON is
// how many whole seconds before generated_at it was scanned, 0 for one never scanned.
func TestSourceAgeIsWholeSecondsBeforeGeneratedAt(t *testing.T) {
	at := time.Date(2026, 7, 24, 6, 0, 0, 0, time.UTC)
	s := &Snapshot{GeneratedAt: at, Sources: Sources{
		Locks: SourceHealth{Status: StatusOK, ScannedAt: at.Add(-2500 * time.Millisecond)},
		DB:    SourceHealth{Status: StatusOK, ScannedAt: at.Add(-90 * time.Second)},
	}}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Sources map[string]struct {
			AgeS int64 `json:"age_s"`
		} `json:"sources"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for src, want := range map[string]int64{"locks": 2, "db": 90, "gitea": 0} {
		if got := doc.Sources[src].AgeS; got != want {
			t.Errorf("%s: age_s %d, want %d", src, got, want)
		}
	}
}

// TestEncodeJSONHandsOverFullPieces: EncodeJSON hands a list to emit in pieces of 32 KiB —
// a piece goes as soon as it holds 32 KiB, so a list that fills one to exactly 32 KiB is
// handed over at exactly that size — and never one element at a time.
func TestEncodeJSONHandsOverFullPieces(t *testing.T) {
	const piece = 32 << 10
	at := time.Date(2026, 7, 24, 6, 0, 0, 0, time.UTC)
	size := func(e Event) int {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		return len(b)
	}
	// The activity list's piece starts with `,"activity":[`; each event after the first
	// adds a comma. Fillers bring it close to 32 KiB, the last event's message makes up the
	// rest exactly.
	filler := Event{Key: "cp:1", Type: "lease.heartbeat", Message: strings.Repeat("m", 200)}
	s := &Snapshot{GeneratedAt: at}
	n := len(`,"activity":[`)
	for n+1+size(filler) < piece-400 {
		if len(s.Activity) > 0 {
			n++
		}
		s.Activity = append(s.Activity, filler)
		n += size(filler)
	}
	last := Event{Key: "cp:2", Type: "lease.heartbeat"}
	last.Message = strings.Repeat("x", piece-n-1-size(last))
	s.Activity = append(s.Activity, last, filler)
	if n+1+size(last) != piece {
		t.Fatalf("setup: the piece would hold %d bytes, want %d", n+1+size(last), piece)
	}
	var sizes []int
	if err := s.EncodeJSON(func(b []byte) error { sizes = append(sizes, len(b)); return nil }); err != nil {
		t.Fatal(err)
	}
	full := 0
	for _, n := range sizes {
		if n == piece {
			full++
		}
		if n > piece {
			t.Errorf("a piece of %d bytes: more than 32 KiB held back", n)
		}
	}
	if full != 1 {
		t.Errorf("pieces %v: want one of exactly %d bytes", sizes, piece)
	}
	// head, the full piece, the activity list's rest, six other lists' pieces, the closing brace
	if len(sizes) != 10 {
		t.Errorf("%d pieces %v, want 10", len(sizes), sizes)
	}
}
