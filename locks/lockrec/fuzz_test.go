package lockrec

import (
	"bytes"
	"reflect"
	"testing"
	"time"
)

// FuzzDecode: Decode and Assess never panic; a decodable record re-encodes
// to bytes that decode without fatal findings, assess the same, and
// re-encode identically (Marshal is a fixed point after one round). Unknown
// fields are kept raw, so duplicates inside them survive a rewrite.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"canonical.json", "legacy-top-level-claimant.json", "unknown-fields.json",
		"malformed-duplicate-keys.json", "malformed-wrong-types.json", "recovered-blocks.json"} {
		f.Add(fixtureBytes(f, name))
	}
	f.Add([]byte(`{"a":"\ud800\u0041","b":[1,-0.5e+3,true,null,{}]}`))
	now := time.Date(2026, 7, 24, 6, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, findings := Decode(data)
		a := Assess(&rec, now)
		if !bytes.Equal(rec.Raw, data) {
			t.Fatal("Raw is not the input")
		}
		fatal, dups := false, false
		for _, fd := range findings {
			fatal = fatal || fd.Fatal()
			dups = dups || fd.Kind == findingDuplicateKey
		}
		if fatal {
			if a.Contract != ContractAbsent || !rec.Empty() {
				t.Fatalf("undecodable input assessed %s", a.Contract)
			}
			return
		}
		out, err := Marshal(&rec)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		rec2, f2 := Decode(out)
		for _, fd := range f2 {
			if fd.Fatal() || (fd.Kind == findingDuplicateKey && !dups) {
				t.Fatalf("re-encoded record has %+v:\n%s", fd, out)
			}
		}
		a2 := Assess(&rec2, now)
		if !reflect.DeepEqual(a, a2) {
			t.Fatalf("assessment changed by a round trip:\n%+v\n%+v\n%s", a, a2, out)
		}
		out2, err := Marshal(&rec2)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("marshal not a fixed point:\n%s\n---\n%s", out, out2)
		}
	})
}
