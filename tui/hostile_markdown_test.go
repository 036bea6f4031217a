package tui

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/vt"

	"steward/govern"
	"steward/model"
)

// escFamilies are terminal attacks written as Markdown character references, so that they
// are plain ASCII until a Markdown renderer decodes them. {e} is the escape character and
// {bel} the BEL, {st} a string terminator, each filled in by every encoding below.
var escFamilies = []struct{ name, seq string }{
	{"CSI erase screen", "{e}[2J{e}[H"},
	{"CSI conceal", "{e}[8msecret{e}[0m"},
	{"OSC 0 title", "{e}]0;pwned title{bel}"},
	{"OSC 8 hyperlink", "{e}]8;;https://evil.example/{st}https://good.example/{e}]8;;{st}"},
	{"OSC 52 clipboard", "{e}]52;c;cm0gLXJmIH4={bel}"},
	{"DCS", "{e}P+q544e{st}"},
	{"APC", "{e}_Gf=100;AAAA{st}"},
	{"C1 CSI", "{c1csi}2J"},
	{"C1 OSC title", "{c1osc}0;c1 title{bel}"},
	{"bidi override", "{rlo}evil"},
}

// refEncodings write a code point as a character reference.
var refEncodings = []struct {
	name string
	ref  func(r rune) string
}{
	{"hex", func(r rune) string { return fmt.Sprintf("&#x%x;", r) }},
	{"HEX", func(r rune) string { return fmt.Sprintf("&#X%X;", r) }},
	{"hex zero-padded", func(r rune) string { return fmt.Sprintf("&#x%06x;", r) }},
	{"decimal", func(r rune) string { return fmt.Sprintf("&#%d;", r) }},
	{"decimal zero-padded", func(r rune) string { return fmt.Sprintf("&#%07d;", r) }},
}

func encodeFamily(seq string, ref func(rune) string) string {
	return strings.NewReplacer("{e}", ref(0x1b), "{bel}", ref(0x07), "{st}", ref(0x1b)+"\\",
		"{c1csi}", ref(0x9b), "{c1osc}", ref(0x9d), "{rlo}", ref(0x202e)).Replace(seq)
}

// onlyStyling fails when frame holds anything but text and SGR styling: another escape
// sequence, a control character, C1, a bidi override. It also draws the frame on a virtual
// terminal and fails when the title changed or any cell carries a hyperlink.
func onlyStyling(t *testing.T, where, f string, w, h int) {
	t.Helper()
	for i := 0; i < len(f); {
		c := f[i]
		if c == 0x1b {
			j := i + 1
			if j < len(f) && f[j] == '[' {
				j++
				for j < len(f) && (f[j] >= '0' && f[j] <= '9' || f[j] == ';' || f[j] == ':') {
					j++
				}
				if j < len(f) && f[j] == 'm' {
					i = j + 1
					continue
				}
			}
			t.Errorf("%s: an escape sequence other than SGR reached the frame: %q", where, f[i:min(i+24, len(f))])
			return
		}
		r, n := utf8.DecodeRuneInString(f[i:])
		if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0x202e || r == 0x202d || r >= 0x2066 && r <= 0x2069 {
			t.Errorf("%s: control character %U reached the frame", where, r)
			return
		}
		i += n
	}
	term := vt.NewEmulator(w, h)
	titled := ""
	term.SetCallbacks(vt.Callbacks{Title: func(s string) { titled = s }})
	_, _ = term.WriteString(strings.ReplaceAll(f, "\n", "\r\n"))
	if titled != "" {
		t.Errorf("%s: the terminal's title became %q", where, titled)
	}
	for y := range h {
		for x := range w {
			if c := term.CellAt(x, y); c != nil && c.Link.URL != "" {
				t.Errorf("%s: cell %d,%d links to %q", where, x, y, c.Link.URL)
				return
			}
		}
	}
}

// An issue body with an entity-encoded escape reached the terminal as a
// real one, because the question was made safe before glamour decoded the references and
// glamour's own output was drawn as is. Every family, in every encoding, through every view
// that renders Markdown: the Clarifications detail, the answer editor's question, and the
// editor's preview of an answer (pasted text is external too). On the code before the fix
// every case failed.
func TestHostileMarkdownEveryView(t *testing.T) {
	const w, h = 100, 40
	for _, fam := range escFamilies {
		for _, enc := range refEncodings {
			t.Run(fam.name+"/"+enc.name, func(t *testing.T) {
				md := "Before " + encodeFamily(fam.seq, enc.ref) + " after, and in code: `" + encodeFamily(fam.seq, enc.ref) + "`"
				s := populated()
				s.Clarifications[0].Question = md
				r := newTestRoot(t, w, h, false)
				send(r, SnapshotMsg{s})
				send(r, keyMsg("4"), keyMsg("enter"))
				f := r.Render()
				if !strings.Contains(plain(r), "Before") {
					t.Fatalf("the question is not in the detail pane:\n%s", plain(r))
				}
				onlyStyling(t, "clarification detail", f, w, h)
				if !strings.Contains(plain(r), "&#") {
					t.Errorf("the reference is not shown as written (nothing may vanish silently):\n%s", plain(r))
				}

				r.push(newAnswerEditor(r.env.keys, &govern.Item{Org: "acme", Repo: "widgets", Number: 107}, md, "", ""))
				onlyStyling(t, "answer editor question", r.Render(), w, h)
				send(r, typeText(md)...)
				send(r, keyMsg("ctrl+p"))
				if !strings.Contains(plain(r), "Preview of your answer") {
					t.Fatalf("no preview:\n%s", plain(r))
				}
				onlyStyling(t, "answer preview", r.Render(), w, h)
			})
		}
	}
}

// A Markdown link is drawn as its text and its target, both visible, and never as a
// terminal hyperlink: glamour builds OSC 8 links from the (external) target, so a link could
// show one URL and open another.
func TestMarkdownLinksAreNotHyperlinks(t *testing.T) {
	const w, h = 100, 30
	s := populated()
	s.Clarifications[0].Question = "Please read [https://good.example/docs](https://evil.example/x) and <https://auto.example/>"
	r := newTestRoot(t, w, h, false)
	send(r, SnapshotMsg{s})
	send(r, keyMsg("4"), keyMsg("enter"))
	onlyStyling(t, "link", r.Render(), w, h)
	for _, want := range []string{"https://good.example/docs", "https://evil.example/x", "https://auto.example/"} {
		if !strings.Contains(plain(r), want) {
			t.Errorf("%s is not shown:\n%s", want, plain(r))
		}
	}
}

// The Markdown views, for the hostile catalogue: every family raw (not entity-encoded) too.
func TestHostileMarkdownRaw(t *testing.T) {
	const w, h = 100, 40
	raw := func(r rune) string { return string(r) }
	for _, fam := range escFamilies {
		s := populated()
		s.Clarifications = []model.Clarification{{Item: *item(107), Title: "t", Question: encodeFamily(fam.seq, raw), AskedAt: fixedNow}}
		r := newTestRoot(t, w, h, false)
		send(r, SnapshotMsg{s})
		send(r, keyMsg("4"), keyMsg("enter"))
		onlyStyling(t, fam.name+" raw", r.Render(), w, h)
		r.push(newAnswerEditor(r.env.keys, &govern.Item{Org: "acme", Repo: "widgets", Number: 107}, encodeFamily(fam.seq, raw), "", ""))
		send(r, typeText(encodeFamily(fam.seq, raw))...)
		onlyStyling(t, fam.name+" raw editor", r.Render(), w, h)
		send(r, keyMsg("ctrl+p"))
		onlyStyling(t, fam.name+" raw preview", r.Render(), w, h)
	}
}
