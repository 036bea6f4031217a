package attention

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"steward/model"
	"steward/termsafe"
)

// Multiplexer is the terminal multiplexer steward runs inside, whose passthrough a desktop
// notification must be wrapped in to reach the outer terminal.
type Multiplexer int

// The multiplexers.
const (
	muxNone Multiplexer = iota
	muxTmux
	muxScreen
)

// DetectMux tells the multiplexer from the environment: TMUX set is tmux; STY set, or a
// TERM of screen*, is GNU screen.
func DetectMux(getenv func(string) string) Multiplexer {
	switch {
	case getenv("TMUX") != "":
		return muxTmux
	case getenv("STY") != "", strings.HasPrefix(getenv("TERM"), "screen"):
		return muxScreen
	}
	return muxNone
}

// maxNotice caps the text of a desktop notification (runes).
const maxNotice = 200

// safe is s as one line fit for a notification or a command's environment: every control
// sequence and character removed (termsafe.Line), no semicolon (OSC 777 separates its fields
// with them), at most 200 characters, cut with an ellipsis.
func safe(s string) string {
	return clip(strings.ReplaceAll(termsafe.Line(s), ";", ","))
}

func clip(s string) string {
	if utf8.RuneCountInString(s) > maxNotice {
		r := []rune(s)
		s = string(r[:maxNotice-1]) + "…"
	}
	return s
}

// Sequence returns the bytes that notify a person at the terminal: a bell when bell is set;
// a desktop notification as OSC 9 and OSC 777 when desktop is set, each wrapped in mux's
// passthrough. title and body are made safe first (Safe), whatever their origin.
func Sequence(title, body string, bell, desktop bool, mux Multiplexer) string {
	var b strings.Builder
	if bell {
		b.WriteByte('\a')
	}
	if desktop {
		t, m := safe(title), safe(body)
		b.WriteString(wrap("\x1b]9;"+t+": "+m+"\x1b\\", mux))
		b.WriteString(wrap("\x1b]777;notify;"+t+";"+m+"\x1b\\", mux))
	}
	return b.String()
}

// wrap puts seq into the multiplexer's passthrough: tmux's DCS with every ESC doubled
// (tmux needs allow-passthrough on), screen's plain DCS.
func wrap(seq string, mux Multiplexer) string {
	switch mux {
	case muxTmux:
		return "\x1bPtmux;" + strings.ReplaceAll(seq, "\x1b", "\x1b\x1b") + "\x1b\\"
	case muxScreen:
		return "\x1bP" + seq + "\x1b\\"
	}
	return seq
}

// Notice is the title and body of the desktop notification for the events of one frame
// that notify: one notification per frame, naming the first and counting the rest.
func Notice(evs []Event) (title, body string, ok bool) {
	var n []Event
	for _, e := range evs {
		if e.Notify {
			n = append(n, e)
		}
	}
	if len(n) == 0 {
		return "", "", false
	}
	e := n[0]
	title = "steward: " + string(e.Type)
	body = describe(e)
	if len(n) > 1 {
		body += fmt.Sprintf(" (and %d more)", len(n)-1)
	}
	return title, body, true
}

func describe(e Event) string {
	s := e.Entry.Title
	if e.Entry.Item != "" && !strings.Contains(s, e.Entry.Item) {
		s = e.Entry.Item + " " + s
	}
	s = string(e.Entry.Kind) + ": " + s
	if e.Level > 0 {
		s += " — waiting " + model.Span(e.Age) + ", SLA " + model.Span(e.Entry.SLA)
	}
	return s
}

// Env is the environment a notify command is given for e (added to its own), every value
// one line with control sequences and characters removed, at most 200 characters. It holds no token: an entry has none.
func Env(e Event) []string {
	kv := [][2]string{
		{"STEWARD_EVENT", string(e.Type)},
		{"STEWARD_KEY", e.Entry.Key},
		{"STEWARD_KIND", string(e.Entry.Kind)},
		{"STEWARD_SUBKIND", e.Entry.Sub},
		{"STEWARD_NEED", string(e.Entry.Need)},
		{"STEWARD_ITEM", e.Entry.Item},
		{"STEWARD_TITLE", e.Entry.Title},
		{"STEWARD_URL", e.Entry.URL},
		{"STEWARD_LEVEL", strconv.Itoa(e.Level)},
		{"STEWARD_AGE", model.Span(e.Age)},
		{"STEWARD_AGE_S", strconv.FormatInt(int64(e.Age.Seconds()), 10)},
		{"STEWARD_SLA", model.Span(e.Entry.SLA)},
		{"STEWARD_SLA_S", strconv.FormatInt(int64(e.Entry.SLA.Seconds()), 10)},
		{"STEWARD_SUMMARY", describe(e)},
	}
	out := make([]string, 0, len(kv))
	for _, x := range kv {
		out = append(out, x[0]+"="+clip(termsafe.Line(x[1])))
	}
	return out
}
