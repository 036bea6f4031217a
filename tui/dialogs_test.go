package tui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"steward/govern"
)

// Once the typed phrase matches, enter applies (focus was still on
// Cancel and enter closed the dialog with nothing done and no word); every cancel says
// "cancelled".
func TestTypedConfirmEnterAppliesCancelSays(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			r := newTestRoot(t, sz.w, sz.h, false)
			send(r, SnapshotMsg{populated()})
			d := newConfirm(r.env.keys, []govern.Preview{destructivePreview()}, 0, actorOf(r.opts.Core), nil)
			r.push(d)
			send(r, typeText("abandon L-10")...)
			if in, _ := d.bindings().press(keyMsg("enter")); in != (cancelIntent{}) {
				t.Fatalf("enter with the phrase half typed: %T, want a cancel", in)
			}
			send(r, typeText("3")...)
			in, _ := d.bindings().press(keyMsg("enter"))
			ci, ok := in.(confirmIntent)
			if !ok || ci.phrases[0] != "abandon L-103" {
				t.Fatalf("enter with the phrase typed: %#v, want the apply", in)
			}
			send(r, keyMsg("esc"))
			if r.stack.open() || !contains(plain(r), "cancelled — nothing was done") {
				t.Fatalf("esc did not cancel saying so:\n%s", plain(r))
			}
			r.push(newConfirm(r.env.keys, []govern.Preview{allowedPreview()}, 0, actorOf(r.opts.Core), nil))
			send(r, keyMsg("enter")) // focus on Cancel, the default
			if r.stack.open() || len(r.toasts.list) != 2 {
				t.Fatalf("enter on Cancel: open %v, %d messages", r.stack.open(), len(r.toasts.list))
			}
		})
	}
}

// After / the mode shows — the footer holds the filter's keys, the
// input is highlighted — j and enter do not go into the filter's text, / on a filter
// selects it for replacement, and esc leaves and clears.
func TestFilterModeIsVisible(t *testing.T) {
	r := newTestRoot(t, 80, 24, false)
	send(r, SnapshotMsg{populated()}, keyMsg("2"), keyMsg("/"))
	foot := lastLine(plain(r))
	if !contains(foot, "FILTER") || !contains(foot, "keep the filter") || contains(foot, "detail") {
		t.Fatalf("footer while filtering: %q", foot)
	}
	if !strings.Contains(frame(r), "\x1b[4") { // the field is drawn underlined
		t.Error("the filter input is not highlighted")
	}
	send(r, typeText("root")...)
	send(r, keyMsg("enter"))
	if p := r.list(); p.filtering || p.filter.String() != "root" {
		t.Fatalf("after enter: filtering %v, filter %q", p.filtering, p.filter.String())
	}
	send(r, keyMsg("j"), keyMsg("/"))
	send(r, typeText("#10")...)
	if got := r.list().filter.String(); got != "#10" {
		t.Fatalf("/ on an existing filter then typing: %q, want it replaced", got)
	}
	send(r, keyMsg("esc"))
	if p := r.list(); p.filtering || p.filter.String() != "" || len(p.tbl.view) != len(p.tbl.rows) {
		t.Fatalf("esc: filtering %v, filter %q", p.filtering, p.filter.String())
	}
}

func lastLine(s string) string {
	l := strings.Split(s, "\n")
	return l[len(l)-1]
}

// Help fits or scrolls at every size — no entry is cut — every key of
// the view can be reached by scrolling, and the current view's keys come first.
func TestHelpFitsOrScrolls(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{40, 16}, {80, 24}, {100, 30}, {120, 40}, {160, 48}, {200, 50}} {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			r := newTestRoot(t, sz.w, sz.h, false)
			send(r, SnapshotMsg{populated()}, keyMsg("2"), keyMsg("?"))
			hv := r.stack.top().(*helpView)
			seen := map[int]string{}   // the help's lines by their place in it
			for i := 0; i < 400; i++ { // until pgdown moves no more
				body := strings.Split(plain(r), "\n")
				body = body[headerLines : len(body)-1]
				if i == 0 && !contains(firstLines(body, 3), "Claims: Acting") {
					t.Errorf("the current view's keys are not first:\n%s", strings.Join(body, "\n"))
				}
				for _, l := range body {
					if strings.Contains(l, "…") && !strings.Contains(l, "more") {
						t.Errorf("a help line is cut: %q", l)
					}
				}
				content := body[1:] // under the title
				if last := strings.TrimSpace(content[len(content)-1]); strings.Contains(last, "more lines") || strings.HasSuffix(last, "end") {
					content = content[:len(content)-1] // the scroll line
				}
				for j, l := range content {
					seen[hv.scroll.offset()+j] = l
				}
				before := hv.scroll.offset()
				send(r, keyMsg("pgdown"))
				if hv.scroll.offset() == before {
					break
				}
			}
			all := make([]string, len(seen))
			for j, l := range seen {
				if j < len(all) {
					all[j] = l
				}
			}
			// A description wrapped on a narrow screen reads on across its lines.
			text := strings.Join(strings.Fields(strings.Join(all, " ")), " ")
			for _, g := range hv.groups {
				for _, b := range g.Bindings {
					if b.Enabled() && !strings.Contains(text, strings.Join(strings.Fields(b.Help().Desc), " ")) {
						t.Errorf("%s (%s) cannot be reached in help", b.Help().Desc, b.Help().Key)
					}
				}
			}
		})
	}
}

// The keymap is the only source of keys. No file of the workbench but
// keys.go names a key in a string it matches against; bindings are matched with
// key.Matches.
func TestNoLiteralKeys(t *testing.T) {
	pkgs := goFiles(t)
	for name, src := range pkgs {
		if name == "keys.go" {
			continue
		}
		if m := literalKey.FindString(src); m != "" {
			t.Errorf("%s matches a key by its name (%q); declare a binding in keys.go", name, m)
		}
	}
	// Every binding of the keymap has keys and help text (help, the footer and the palette
	// are drawn from it).
	km := defaultKeyMap()
	for _, g := range km.Groups() {
		for _, b := range g.Bindings {
			if len(b.Keys()) == 0 || b.Help().Key == "" || b.Help().Desc == "" {
				t.Errorf("group %s: binding %+v has no keys or no help", g.Title, b.Help())
			}
		}
	}
}

// literalKey finds a key matched anywhere but the keymap: a key press compared by its name
// (k.String() == "esc", case "enter"), by its code (m.Code == tea.KeyEnter, case
// tea.KeyEscape), or a binding made on the spot (key.NewBinding, key.WithKeys).
var literalKey = regexp.MustCompile(`\b(k|m|msg|kp|km|key)\.(String|Keystroke)\(\)|` +
	`case "(esc|enter|up|down|left|right|tab|shift\+tab|backspace|delete|space|home|end|pgup|pgdown|ctrl\+[a-z]|alt\+[a-z]|[a-zA-Z?:/])"|` +
	`\.Code\s*[!=]=|case tea\.Key(Escape|Enter|Tab|Up|Down|Left|Right|Backspace|Delete|Space|Home|End|PgUp|PgDown|F[0-9]+)\b|\bkey\.(NewBinding|WithKeys)\(`)

// The check above finds each way a key could be matched by a literal.
func TestLiteralKeyFinds(t *testing.T) {
	for _, src := range []string{
		`if k.String() == "esc" {`, `switch msg.Keystroke() {`, `case "enter":`, `case "q":`, `case "ctrl+s":`,
		`if m.Code == tea.KeyEnter {`, `case tea.KeyEscape:`, `case tea.KeyPgDown, tea.KeyDown:`, `b := key.NewBinding(key.WithKeys("x"))`,
	} {
		if literalKey.FindString(src) == "" {
			t.Errorf("%q is not found", src)
		}
	}
	for _, src := range []string{`if key.Matches(k, km.Table.Up) {`, `case "dead":`, `return b.String()`, `case tea.KeyPressMsg:`} {
		if m := literalKey.FindString(src); m != "" {
			t.Errorf("%q is found (%q)", src, m)
		}
	}
}

// The root model's own methods stay under 400 lines.
func TestRootStaysSmall(t *testing.T) {
	n := rootMethodLines(t)
	if n >= 400 {
		t.Fatalf("the root model's methods take %d lines; move work into pages and dialogs", n)
	}
	t.Logf("the root model's methods: %d lines", n)
}

// The note a disabled key leaves is generated from its binding: its help text and why.
func TestDisabledKeySaysWhy(t *testing.T) {
	r := newTestRoot(t, 120, 30, false)
	send(r, SnapshotMsg{populated()}, keyMsg("2"), keyMsg("v"))
	if !contains(plain(r), "verify: applies to an audit attempt whose outcome is unknown") {
		t.Fatalf("v on a claim:\n%s", plain(r))
	}
	send(r, keyMsg("u"))
	if !contains(plain(r), "clear marks: no row is marked") {
		t.Fatalf("u with no mark:\n%s", plain(r))
	}
	// The palette lists the same bindings, with their keys, and runs them.
	send(r, keyMsg(":"))
	send(r, typeText("copy id")...)
	if f := plain(r); !contains(f, "copy id") || !contains(f, "y") {
		t.Fatalf("palette:\n%s", f)
	}
	send(r, keyMsg("enter"))
	if r.stack.open() || !contains(ansi.Strip(r.toasts.history[len(r.toasts.history)-1].text), `copied lease id "L-103"`) {
		t.Fatalf("the palette's copy id did not run: %v", r.toasts.history)
	}
}

// firstLines joins the first n non-blank lines.
func firstLines(ls []string, n int) string {
	var out []string
	for _, l := range ls {
		if strings.TrimSpace(l) != "" && len(out) < n {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
