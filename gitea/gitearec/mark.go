package gitearec

import "strings"

// Mark is the hidden idempotency marker steward ends every comment it posts with:
//
//	<!-- steward:<kind> id=<id>[ q=<question>][ round=<round>][ attempt=<attempt>] -->
//
// Kind is "answer" or "ask"; ID is stable for one answer to one question (so a retry finds
// the comment an earlier attempt posted); Question and Round bind an answer to the question
// comment and to the marker label's addition it answers; Attempt names the audit attempt
// that posted it. Characters outside [A-Za-z0-9._:-] in a value become "_", so a marker
// never closes the HTML comment early.
type Mark struct {
	Kind, ID, Question, Round, Attempt string
}

// String renders the marker.
func (m Mark) String() string {
	var b strings.Builder
	b.WriteString("<!-- steward:" + cleanMarkValue(m.Kind) + " id=" + cleanMarkValue(m.ID))
	for _, f := range [][2]string{{"q", m.Question}, {"round", m.Round}, {"attempt", m.Attempt}} {
		if f[1] != "" {
			b.WriteString(" " + f[0] + "=" + cleanMarkValue(f[1]))
		}
	}
	b.WriteString(" -->")
	return b.String()
}

func cleanMarkValue(v string) string {
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == ':', r == '-':
			return r
		}
		return '_'
	}, v)
	return strings.ReplaceAll(clean, "--", "-_")
}

// TrailingMark parses the marker a comment body ends with: its last non-blank line must be
// exactly a marker steward writes (WithMarker puts it there). A marker anywhere else in a
// body — quoted, or inside a question a worker wrote — is not one.
func TrailingMark(body string) (Mark, bool) {
	body = strings.TrimRight(body, " \t\r\n")
	last := body[strings.LastIndexByte(body, '\n')+1:]
	inner, ok := strings.CutPrefix(strings.TrimSpace(last), "<!-- steward:")
	if !ok {
		return Mark{}, false
	}
	inner, ok = strings.CutSuffix(inner, " -->")
	if !ok {
		return Mark{}, false
	}
	fields := strings.Split(inner, " ")
	m := Mark{Kind: fields[0]}
	if m.Kind == "" || cleanMarkValue(m.Kind) != m.Kind {
		return Mark{}, false
	}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok || v == "" || cleanMarkValue(v) != v {
			return Mark{}, false
		}
		switch k {
		case "id":
			m.ID = v
		case "q":
			m.Question = v
		case "round":
			m.Round = v
		case "attempt":
			m.Attempt = v
		default:
			return Mark{}, false
		}
	}
	if m.ID == "" {
		return Mark{}, false
	}
	return m, true
}

// AnswerMarker returns the hidden idempotency marker "<!-- steward:answer id=<id> -->"
// (Mark with only an id). Characters outside [A-Za-z0-9._:-] in id become "_" so the
// marker can never close the HTML comment early.
func AnswerMarker(id string) string { return Mark{Kind: "answer", ID: id}.String() }

// WithMarker appends marker to body on its own paragraph.
func WithMarker(body, marker string) string { return strings.TrimRight(body, "\n") + "\n\n" + marker }
