package lockrec

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// A file cut short at any point of a value — right after a key's colon, inside an object
// or an array that has not closed, after an escape, after a \u escape or a high surrogate
// waiting for its pair — is a truncated file whose finding names the offset where the
// bytes ran out, and never a crash.
func TestDecodeCutShortAtEachBoundaryIsTruncated(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		`{`,                  // an object's first member missing (jsonparse.go:334)
		`{"x":`,              // a member's value missing (jsonparse.go:114)
		`{"x":1`,             // after a member (jsonparse.go:368)
		`{"x":[`,             // an array's first element missing (jsonparse.go:393)
		`{"x":[1`,            // after an element (jsonparse.go:408)
		`{"x":"a\n`,          // after an escape (jsonparse.go:220)
		`{"x":"a\`,           // a backslash as the last byte (jsonparse.go:238)
		`{"x":"\u00e9`,       // after a \u escape
		`{"x":"\ud800`,       // a high surrogate as the last bytes (jsonparse.go:263)
		`{"x":"\ud800\`,      // a high surrogate and a backslash (jsonparse.go:263)
		`{"x":"\ud800\u`,     // a high surrogate and a \u without digits
		`{"x":"\ud83d\ude00`, // a whole surrogate pair
	} {
		_, fs := Decode([]byte(doc))
		want := Finding{Kind: FindingTruncated, Detail: "offset " + strconv.Itoa(len(doc)) + ": unexpected end of input"}
		if len(fs) != 1 || fs[0] != want {
			t.Errorf("%s: findings %+v; want %+v", doc, fs, want)
		}
	}
}

// A malformed escape is a syntax error at the escape, whatever follows it: also when it is
// the last thing in the file, so a bad escape in a file cut short is not read as a torn write.
func TestDecodeBadEscapeIsASyntaxErrorAtTheEscape(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ doc, detail string }{
		{`{"x":"\q"}`, "offset 7: invalid escape character"}, // jsonparse.go:287
		{`{"x":"\q`, "offset 7: invalid escape character"},
		{`{"x":"ab\x"}`, "offset 9: invalid escape character"},
		{`{"x":"\u00zz"}`, "offset 8: invalid \\u escape"},
		{`{"x":"\u00zz`, "offset 8: invalid \\u escape"}, // four bytes left: jsonparse.go:295
		{`{"x":"\uzz`, "offset 10: unexpected end of input"},
	} {
		_, fs := Decode([]byte(c.doc))
		kind := FindingSyntax
		if strings.Contains(c.detail, "end of input") {
			kind = FindingTruncated
		}
		if want := (Finding{Kind: kind, Detail: c.detail}); len(fs) != 1 || fs[0] != want {
			t.Errorf("%s: findings %+v; want %+v", c.doc, fs, want)
		}
	}
}

// A high surrogate not followed by its low half decodes to U+FFFD and keeps what follows
// it, a \u0000 included; a pair decodes to its one character.
func TestDecodeUnpairedSurrogateKeepsWhatFollows(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ esc, want string }{
		{`\ud83d\ude00`, "😀"},
		{`\ud800\u0000`, "\uFFFD\x00"}, // jsonparse.go:276: a following \u0000 is a character
		{`\ud800\u0041`, "\uFFFDA"},
		{`\ud800\ud800`, "\uFFFD\uFFFD"},
		{`\ud800\n`, "\uFFFD\n"},
		{`\ud800\u00zz`, ""}, // not a pair and not an escape: a syntax error
		{`\ud800`, "\uFFFD"},
	} {
		rec, fs := Decode([]byte(`{"remote":"` + c.esc + `"}`))
		if c.want == "" {
			if len(fs) != 1 || fs[0].Kind != FindingSyntax {
				t.Errorf("%s: findings %+v; want a syntax error", c.esc, fs)
			}
			continue
		}
		if fatal(fs) || rec.Remote != c.want {
			t.Errorf("%s: remote %q (%+v); want %q", c.esc, rec.Remote, fs, c.want)
		}
	}
}

// Values may nest 64 deep and no deeper; the limit counts depth, not how many objects or
// arrays a file holds side by side.
func TestDecodeNestingLimitIsDepthNotCount(t *testing.T) {
	t.Parallel()
	nest := func(depth int) string { // an object holding arrays: depth levels in all
		return `{"x":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + "}"
	}
	siblings := func(v string) string { return `{"x":[` + strings.TrimSuffix(strings.Repeat(v+",", 100), ",") + `]}` }
	for _, c := range []struct {
		name, doc string
		refused   bool
	}{
		{"64 deep", nest(64), false}, // jsonparse.go:319
		{"65 deep", nest(65), true},
		{"100 objects side by side", siblings(`{}`), false},           // jsonparse.go:329
		{"100 arrays side by side", siblings(`[]`), false},            // jsonparse.go:389
		{"100 full objects side by side", siblings(`{"a":1}`), false}, // jsonparse.go:329
		{"100 full arrays side by side", siblings(`[1]`), false},      // jsonparse.go:389
	} {
		_, fs := Decode([]byte(c.doc))
		deep := len(fs) == 1 && fs[0].Kind == FindingSyntax && strings.HasSuffix(fs[0].Detail, "nesting deeper than 64")
		if deep != c.refused || (!c.refused && fatal(fs)) {
			t.Errorf("%s: findings %+v; refused for depth %v, want %v", c.name, fs, deep, c.refused)
		}
	}
	// After many siblings the full depth is still there.
	doc := `{"x":[` + strings.Repeat(`{},[],`, 50) + strings.Repeat("[", 62) + strings.Repeat("]", 62) + `]}`
	if _, fs := Decode([]byte(doc)); fatal(fs) {
		t.Errorf("64 deep after 100 siblings: %+v", fs)
	}
}

// A parsed object holds a slice of exactly its own members, nested objects too (the
// parser's member stack is shared while they are read; jsonparse.go:377).
func TestParsedObjectsHoldExactlyTheirMembers(t *testing.T) {
	t.Parallel()
	root, _, err := parseJSON([]byte(`{"a":1,"b":2,"c":{"d":{"e":3},"f":4},"g":[{"h":5}]}`))
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, v jval, keys ...string) {
		t.Helper()
		got := make([]string, 0, len(v.obj))
		for _, m := range v.obj {
			got = append(got, m.key)
		}
		if strings.Join(got, ",") != strings.Join(keys, ",") || cap(v.obj) != len(keys) {
			t.Errorf("%s: members %v (capacity %d); want exactly %v", name, got, cap(v.obj), keys)
		}
	}
	check("root", root, "a", "b", "c", "g")
	check("c", root.obj[2].val, "d", "f")
	check("c.d", root.obj[2].val.obj[0].val, "e")
	check("g[0]", root.obj[3].val.arr[0], "h")
}

// A string's escapes decode as encoding/json decodes them, surrogates unpaired, paired and
// in every order: a surrogate the next escape does not complete is U+FFFD, and that next
// escape is read on its own (it was consumed with it, so a lone surrogate before a valid
// pair lost the pair: "\ude00\ud83d\ude00" read as three U+FFFD).
func TestDecodeEscapesAsEncodingJSON(t *testing.T) {
	t.Parallel()
	parts := []string{`\ud83d`, `\ude00`, `\udbff`, `\udfff`, `\u0041`, `\u00e9`, `A`, `\n`}
	var seqs []string
	var grow func(prefix string, n int)
	grow = func(prefix string, n int) {
		if n == 0 {
			seqs = append(seqs, prefix)
			return
		}
		for _, p := range parts {
			grow(prefix+p, n-1)
		}
	}
	for n := 1; n <= 3; n++ {
		grow("", n)
	}
	for _, esc := range seqs {
		var want string
		if err := json.Unmarshal([]byte(`"`+esc+`"`), &want); err != nil {
			t.Fatalf("%s: encoding/json: %v", esc, err)
		}
		rec, fs := Decode([]byte(`{"remote":"` + esc + `"}`))
		if fatal(fs) || rec.Remote != want {
			t.Errorf("%s: remote %q (%+v); encoding/json reads %q", esc, rec.Remote, fs, want)
		}
	}
}
