package gitearec

import (
	"strings"
	"testing"
)

func TestTrailingMark(t *testing.T) {
	t.Parallel()
	full := Mark{Kind: "answer", ID: "ans-1f", Question: "12", Round: "14", Attempt: "att-20260101T000000-abc"}
	cases := []struct {
		name string
		body string
		want Mark
		ok   bool
	}{
		{"answer with every field", WithMarker("Use v2.", full.String()), full, true},
		{"old form, id only", "yes\n\n<!-- steward:answer id=ans-9 -->\n", Mark{Kind: "answer", ID: "ans-9"}, true},
		{"ask", WithMarker("Which?", Mark{Kind: "ask", ID: "ans-2", Attempt: "att-x"}.String()), Mark{Kind: "ask", ID: "ans-2", Attempt: "att-x"}, true},
		{"quoted, not trailing", full.String() + "\n\nI think this is done.", Mark{}, false},
		{"inside a question, then the ask marker", WithMarker("see "+full.String(), Mark{Kind: "ask", ID: "q"}.String()), Mark{Kind: "ask", ID: "q"}, true},
		{"no id", "x\n<!-- steward:answer q=1 -->", Mark{}, false},
		{"unknown field", "x\n<!-- steward:answer id=1 evil=2 -->", Mark{}, false},
		{"value outside the alphabet", "x\n<!-- steward:answer id=a<b -->", Mark{}, false},
		{"empty", "", Mark{}, false},
		{"not ours", "x\n<!-- other:answer id=1 -->", Mark{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := TrailingMark(tc.body)
			if ok != tc.ok || got != tc.want {
				t.Fatalf("TrailingMark(%q) = %+v %v, want %+v %v", tc.body, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// FuzzTrailingMark: the marker parser (it reads comments anyone can write) never panics, a
// parsed marker renders back to a marker that parses to itself, and a rendered marker never
// closes the HTML comment early.
func FuzzTrailingMark(f *testing.F) {
	for _, s := range []string{"x\n\n<!-- steward:answer id=ans-1 q=2 round=3 attempt=att-4 -->", "<!-- steward:ask id=a -->",
		"<!-- steward: -->", "<!-- steward:answer id= -->", "a\n<!-- steward:answer id=1 id=2 -->\n\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		m, ok := TrailingMark(body)
		if !ok {
			return
		}
		s := m.String()
		if strings.Count(s, "-->") != 1 {
			t.Fatalf("rendered marker %q closes early", s)
		}
		again, ok := TrailingMark("x\n\n" + s)
		if !ok || again != m {
			t.Fatalf("round trip of %+v: %+v %v (%q)", m, again, ok, s)
		}
	})
}
