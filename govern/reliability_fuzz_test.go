package govern

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeAudit feeds arbitrary bytes to the audit-log decoder ReadAudit uses: it never
// panics, every non-blank line becomes a record or a finding, or both when a record glued
// to a torn line is recovered (nothing is dropped silently), and every record it returns
// re-encodes and decodes to itself.
func FuzzDecodeAudit(f *testing.F) {
	intent := `{"v":1,"at":"2026-07-24T06:00:00Z","attempt":"att-1","kind":"intent","action":"lease.reclaim-expired","target":{"lease_id":"L1"},"actor":{"os_user":"u","host":"h","role":"operator"}}`
	outcome := `{"v":1,"at":"2026-07-24T06:00:01Z","attempt":"att-1","kind":"outcome","action":"lease.reclaim-expired","target":{"lease_id":"L1"},"actor":{"os_user":"u","host":"h","role":"operator"},"result":"succeeded","disposition":"applied"}`
	for _, s := range []string{intent + "\n" + outcome + "\n", intent + "\n" + outcome[:40], "\n\n  \n", `{"attempt":""}` + "\n",
		`{"v":1,"attempt":"a","kind":"intent","actor":{"role":"wizard"}}`, "\x00\xff\xfe\n", `[1,2,3]`, `{"v":"one"}`, outcome[:50] + intent + "\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, finds, err := decodeAudit(bytes.NewReader(data))
		if err != nil {
			return // a line beyond the scanner's 4 MiB limit: reported to the caller as an error
		}
		lines := 0
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines++
			}
		}
		if n := len(recs) + len(finds); n < lines || n > 2*lines || len(finds) > lines {
			t.Fatalf("%d non-blank lines, %d records + %d findings", lines, len(recs), len(finds))
		}
		for _, r := range recs {
			if r.Attempt == "" || r.Kind == "" {
				t.Fatalf("record without attempt or kind returned: %+v", r)
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatalf("re-encode: %v", err)
			}
			again, fs, err := decodeAudit(bytes.NewReader(b))
			if err != nil || len(fs) != 0 || len(again) != 1 {
				t.Fatalf("round trip of %s: %v %v", b, err, fs)
			}
			if utf8.ValidString(r.Attempt) && again[0].Attempt != r.Attempt {
				t.Fatalf("attempt %q became %q", r.Attempt, again[0].Attempt)
			}
		}
		_ = Attempts(recs)
	})
}
