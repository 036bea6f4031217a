package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// encoded returns what EncodeJSON emits, joined.
func encoded(t *testing.T, s *Snapshot) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := s.EncodeJSON(func(b []byte) error { out.Write(b); return nil }); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestEncodeJSONIsMarshalJSON: the streamed encoding is byte for byte the document
// MarshalJSON renders (the stable `status --json` format), on a snapshot with every list,
// the omitempty fields and HTML-escaped text set (model/live's TestSeedEncodeJSON checks
// every seed-shaped case).
func TestEncodeJSONIsMarshalJSON(t *testing.T) {
	now := time.Date(2026, 7, 24, 6, 0, 0, 0, time.UTC)
	hb := now.Add(-time.Minute)
	full := &Snapshot{GeneratedAt: now,
		Sources:         Sources{Locks: SourceHealth{Status: StatusOK, ScannedAt: now.Add(-2 * time.Second)}, DB: SourceHealth{Status: StatusDegraded, Reason: "a <b> & c", Partial: true}},
		Claims:          []*Claim{{Item: &Item{Kind: "issue", Number: 7}, LastHeartbeat: hb, ExpiresAt: now.Add(time.Hour), Evidence: []Evidence{{Field: "f", Value: "<v>"}}}, {LockFile: "x.json"}},
		Contention:      []*Contention{{Kind: ContentionClaimRefused, Sessions: []string{"a", "b"}, Count: 2}},
		Clarifications:  []Clarification{{Item: Item{Kind: "issue", Number: 3}, Question: "why?"}},
		Orphans:         []*Orphan{{Kind: OrphanKinds[0]}},
		Sessions:        []*Session{{SessionID: "s1"}, {SessionID: "s2"}},
		SessionsOmitted: 12,
		Items:           []*ItemState{{}},
		Activity:        []Event{{}},
		Findings:        []string{"note & more"},
	}
	many := &Snapshot{GeneratedAt: now}
	for i := range 3000 { // more than one 32 KiB piece
		many.Claims = append(many.Claims, &Claim{Item: &Item{Kind: "issue", Number: int64(i)}, LastHeartbeat: hb})
	}
	snaps := map[string]*Snapshot{"full": full, "empty": {GeneratedAt: now}, "many": many}
	for name, s := range snaps {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := encoded(t, s); !bytes.Equal(got, want) {
			t.Errorf("%s: EncodeJSON differs from MarshalJSON:\n got %.400s\nwant %.400s", name, got, want)
		}
	}
	// An error from emit stops the encoding and is returned.
	stop := errors.New("stop")
	n := 0
	err := many.EncodeJSON(func([]byte) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("emit failing: %v after %d calls", err, n)
	}
}
