package lockrec

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// A block field that holds a value of the wrong type is kept raw (a rewrite writes it back
// as it was); a null is the field's "none" and is not.
func TestDecodeKeepsAWrongTypedBlockRawAndANullNot(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		path string
		doc  string // the record, %s standing for the value
	}{
		{"claimant", `{"issue_number":1,"claimant":%s}`},
		{"work_lease", `{"issue_number":1,"work_lease":%s}`},
		{"lock_provenance", `{"issue_number":1,"lock_provenance":%s}`},
		{"lease_renewal", `{"issue_number":1,"lease_renewal":%s}`},
		{"work_lease.claimant", `{"issue_number":1,"work_lease":{"claimant":%s}}`},
		{"lock_provenance.claimant", `{"issue_number":1,"lock_provenance":{"claimant":%s}}`},
	} {
		extra := func(r *Record) []RawField {
			switch {
			case strings.HasPrefix(c.path, "work_lease."):
				if r.WorkLease == nil {
					t.Fatalf("%s: no work_lease", c.path)
				}
				return r.WorkLease.Extra
			case strings.HasPrefix(c.path, "lock_provenance."):
				if r.LockProvenance == nil {
					t.Fatalf("%s: no lock_provenance", c.path)
				}
				return r.LockProvenance.Extra
			}
			return r.Extra
		}
		key := c.path[strings.LastIndex(c.path, ".")+1:]
		wrong, _ := Decode([]byte(strings.Replace(c.doc, "%s", `"text"`, 1)))
		if !slices.ContainsFunc(extra(&wrong), func(f RawField) bool { return f.Key == key && string(f.Value) == `"text"` }) {
			t.Errorf("%s: a string is not kept raw: %+v", c.path, extra(&wrong))
		}
		out, err := Marshal(&wrong)
		if err != nil || !bytes.Contains(out, []byte(`"`+key+`": "text"`)) {
			t.Errorf("%s: the rewrite lost the raw value (%v):\n%s", c.path, err, out)
		}
		null, _ := Decode([]byte(strings.Replace(c.doc, "%s", `null`, 1)))
		if slices.ContainsFunc(extra(&null), func(f RawField) bool { return f.Key == key }) {
			t.Errorf("%s: null is kept raw as if it were of the wrong type: %+v", c.path, extra(&null))
		}
	}
}

// Duplicate keys: each key is listed once, and the last value wins, in the record and in
// what is kept raw.
func TestDecodeDuplicateKeysLastWins(t *testing.T) {
	t.Parallel()
	rec, fs := Decode([]byte(`{"issue_number":1,"x":1,"y":2,"issue_number":3,"y":"two","x":[1]}`))
	if !hasFinding(fs, findingDuplicateKey, "issue_number") && !slices.ContainsFunc(fs, func(f Finding) bool { return f.Kind == findingDuplicateKey }) {
		t.Fatalf("no duplicate-key finding: %+v", fs)
	}
	if !slices.Equal(rec.Keys, []string{"issue_number", "x", "y"}) || !slices.Equal(rec.UnknownKeys, []string{"x", "y"}) {
		t.Errorf("keys %v, unknown %v; want each once", rec.Keys, rec.UnknownKeys)
	}
	if rec.IssueNumber == nil || *rec.IssueNumber != 3 {
		t.Errorf("issue_number %v; want the last, 3", rec.IssueNumber)
	}
	want := []RawField{{Key: "x", Value: []byte(`[1]`)}, {Key: "y", Value: []byte(`"two"`)}}
	if len(rec.Extra) != 2 || rec.Extra[0].Key != want[0].Key || string(rec.Extra[0].Value) != string(want[0].Value) ||
		rec.Extra[1].Key != want[1].Key || string(rec.Extra[1].Value) != string(want[1].Value) {
		t.Errorf("extra %+v; want x=[1], y=\"two\"", rec.Extra)
	}
}

// A NUL byte is refused wherever it is, the first byte included.
func TestDecodeRefusesANULAtOffsetZero(t *testing.T) {
	t.Parallel()
	_, fs := Decode([]byte("\x00{\"issue_number\":1}"))
	if len(fs) != 1 || fs[0].Kind != FindingNUL || !strings.HasSuffix(fs[0].Detail, "offset 0") {
		t.Fatalf("findings %+v; want one nul-byte at offset 0", fs)
	}
}

// A process id may be anything up to 2^31-1, and nothing past it.
func TestDecodePIDRangeEndsAtTwoToThe31MinusOne(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pid string
		bad bool
	}{{"1", false}, {"2147483647", false}, {"2147483648", true}, {"0", true}} {
		_, fs := Decode([]byte(`{"issue_number":1,"pid":` + c.pid + `,"session_pid":` + c.pid + `}`))
		for _, p := range []string{"pid", "session_pid"} {
			if got := hasFinding(fs, FindingOutOfRange, p); got != c.bad {
				t.Errorf("%s %s: out of range %v, want %v (%+v)", p, c.pid, got, c.bad, fs)
			}
		}
	}
}

// work_lease.pr_number of the wrong type is written back raw, once, never also as null.
func TestMarshalKeepsAWrongTypedPRNumberOnce(t *testing.T) {
	t.Parallel()
	rec, _ := Decode([]byte(`{"issue_number":1,"work_lease":{"issue_number":1,"pr_number":"12"}}`))
	out, err := Marshal(&rec)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(out, []byte(`"pr_number"`)) != 1 || !bytes.Contains(out, []byte(`"pr_number": "12"`)) {
		t.Errorf("want pr_number once, as \"12\":\n%s", out)
	}
}

func TestAppendJSONString(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain":          `"plain"`,
		`q"b\`:           `"q\"b\\"`,
		"n\nr\rt\t\x01":  `"n\nr\rt\t\u0001"`,
		"a\x80b\xffc":    `"a\ufffdb\ufffdc"`,
		"é\u2028\u2029ü": `"é\u2028\u2029ü"`,
		"\x7f<>&":        "\"\x7f<>&\"",
	} {
		if got := string(appendJSONString(nil, in)); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}

// A literal cut short by the end of the file is a truncated file, for every literal.
func TestDecodeLiteralCutShortIsTruncated(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{`{"pid":tru`, `{"pid":fals`, `{"pid":nul`, `{"pid":n`} {
		_, fs := Decode([]byte(doc))
		if len(fs) != 1 || fs[0].Kind != FindingTruncated {
			t.Errorf("%s: findings %+v; want one truncated", doc, fs)
		}
	}
}

// Numbers in every JSON form parse, also when the number is the last byte of the file;
// malformed ones are syntax errors, never a crash.
func TestDecodeNumbers(t *testing.T) {
	t.Parallel()
	for _, n := range []string{"0", "7", "-0", "-12", "1.5", "0.25", "1e5", "1E5", "1e+5", "1e-5", "-2.5E-3"} {
		if _, fs := Decode([]byte(`{"issue_number":1,"x":` + n + `}`)); fatal(fs) {
			t.Errorf("%s inside an object: %+v", n, fs)
		}
		if _, fs := Decode([]byte(n)); len(fs) != 1 || fs[0].Kind != FindingNotObject {
			t.Errorf("%s alone: %+v; want not-object", n, fs)
		}
	}
	for _, n := range []string{"-", "1.", "1e", "1e+", "-x", ".5", "1.e5"} {
		if _, fs := Decode([]byte(n)); len(fs) != 1 || (fs[0].Kind != FindingSyntax && fs[0].Kind != FindingTruncated) {
			t.Errorf("%q alone: %+v; want a syntax error", n, fs)
		}
	}
}
