package live

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestSeedEncodeJSON: on every seed-shaped case, the streamed `status --json` encoding
// (model.Snapshot.EncodeJSON) is byte for byte what MarshalJSON renders.
func TestSeedEncodeJSON(t *testing.T) {
	for _, tc := range seedCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newSeedWS(t)
			tc.setup(w)
			s := w.snapshot()
			want, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := s.EncodeJSON(func(b []byte) error { got.Write(b); return nil }); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("EncodeJSON differs from MarshalJSON:\n got %.400s\nwant %.400s", got.Bytes(), want)
			}
		})
	}
}
