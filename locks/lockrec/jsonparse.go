package lockrec

import (
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// This file holds a small strict JSON parser (RFC 8259). encoding/json into a
// map loses duplicate keys and field order and costs more than reading the
// file; lock files are small, so a lean tree with raw spans is enough.

type jkind uint8

const (
	jNull jkind = iota
	jBool
	jNumber
	jString
	jArray
	jObject
)

func (k jkind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// jval is one parsed value. str holds a decoded string or a number's literal;
// start/end delimit the value's raw bytes in the parsed input.
type jval struct {
	kind       jkind
	b          bool
	str        string
	arr        []jval
	obj        []jmember
	start, end int
}

type jmember struct {
	key string
	val jval
}

const maxDepth = 64

// syntaxError is a parse failure at a byte offset. eof is true when the input
// ended early (truncated JSON).
type syntaxError struct {
	off int
	msg string
	eof bool
}

func (e *syntaxError) Error() string { return "offset " + strconv.Itoa(e.off) + ": " + e.msg }

type parser struct {
	data  []byte
	pos   int
	path  []string
	dups  []Finding
	depth int
	// stack holds the members of the objects being parsed, innermost last: an object
	// gets a slice of exactly its own size when it closes (a fixed capacity of 16 per
	// object was a quarter of what a cold start of 10,000 locks allocated).
	stack []jmember
}

// stackPool holds parsers' member stacks: a parse allocates only its objects' own slices.
var stackPool = sync.Pool{New: func() any { s := make([]jmember, 0, 64); return &s }}

// parseJSON parses one JSON document. Duplicate object keys are returned as
// findings (with their path); the tree keeps every member in file order.
func parseJSON(data []byte) (jval, []Finding, *syntaxError) {
	sp := stackPool.Get().(*[]jmember)
	p := parser{data: data, stack: (*sp)[:0]}
	defer func() {
		clear(p.stack[:cap(p.stack)]) // the pool keeps no tree alive
		*sp = p.stack[:0]
		stackPool.Put(sp)
	}()
	p.skipWS()
	v, err := p.value()
	if err != nil {
		return jval{}, p.dups, err
	}
	p.skipWS()
	if p.pos != len(p.data) {
		return jval{}, p.dups, p.fail("trailing data after the JSON value")
	}
	return v, p.dups, nil
}

func (p *parser) fail(msg string) *syntaxError {
	if p.pos >= len(p.data) {
		return &syntaxError{off: p.pos, msg: "unexpected end of input", eof: true}
	}
	return &syntaxError{off: p.pos, msg: msg}
}

func (p *parser) skipWS() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() (jval, *syntaxError) {
	if p.pos >= len(p.data) {
		return jval{}, p.fail("")
	}
	start := p.pos
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.str()
		return jval{kind: jString, str: s, start: start, end: p.pos}, err
	case c == 't':
		return p.lit("true", jval{kind: jBool, b: true, start: start})
	case c == 'f':
		return p.lit("false", jval{kind: jBool, start: start})
	case c == 'n':
		return p.lit("null", jval{kind: jNull, start: start})
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		return jval{}, p.fail("invalid character " + strconv.QuoteRune(rune(c)) + " looking for a value")
	}
}

func (p *parser) lit(word string, v jval) (jval, *syntaxError) {
	for i := 0; i < len(word); i++ {
		if p.pos >= len(p.data) {
			return jval{}, p.fail("")
		}
		if p.data[p.pos] != word[i] {
			return jval{}, p.fail("invalid literal, expected " + word)
		}
		p.pos++
	}
	v.end = p.pos
	return v, nil
}

func (p *parser) number() (jval, *syntaxError) {
	start := p.pos
	d := p.data
	if d[p.pos] == '-' {
		p.pos++
	}
	digits := func() int {
		n := 0
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.pos < len(d) && d[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return jval{}, p.fail("invalid number")
	}
	if p.pos < len(d) && d[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return jval{}, p.fail("invalid number: digit expected after '.'")
		}
	}
	if p.pos < len(d) && (d[p.pos] == 'e' || d[p.pos] == 'E') {
		p.pos++
		if p.pos < len(d) && (d[p.pos] == '+' || d[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return jval{}, p.fail("invalid number: digit expected in exponent")
		}
	}
	return jval{kind: jNumber, str: string(d[start:p.pos]), start: start, end: p.pos}, nil
}

// str parses a string starting at the opening quote.
func (p *parser) str() (string, *syntaxError) {
	p.pos++ // opening quote
	d := p.data
	start := p.pos
	for p.pos < len(d) {
		c := d[p.pos]
		if c == '"' {
			s := intern(d[start:p.pos])
			p.pos++
			if !utf8.ValidString(s) {
				return "", &syntaxError{off: start, msg: "invalid UTF-8 in string"}
			}
			return s, nil
		}
		if c == '\\' {
			return p.strSlow(start)
		}
		if c < 0x20 {
			return "", p.fail("control character in string")
		}
		p.pos++
	}
	return "", p.fail("")
}

func (p *parser) strSlow(start int) (string, *syntaxError) {
	d := p.data
	var b strings.Builder
	b.Write(d[start:p.pos])
	for p.pos < len(d) {
		c := d[p.pos]
		switch {
		case c == '"':
			p.pos++
			s := b.String()
			if !utf8.ValidString(s) {
				return "", &syntaxError{off: start, msg: "invalid UTF-8 in string"}
			}
			return s, nil
		case c < 0x20:
			return "", p.fail("control character in string")
		case c != '\\':
			b.WriteByte(c)
			p.pos++
			continue
		}
		p.pos++
		if p.pos >= len(d) {
			return "", p.fail("")
		}
		e := d[p.pos]
		p.pos++
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.fail("invalid \\u escape")
			}
			if utf16.IsSurrogate(r) {
				// A surrogate is U+FFFD unless the escape after it completes the pair; when
				// it does not, that escape is read on its own — it may start a pair itself
				// (as encoding/json reads it).
				dec := utf8.RuneError
				if p.pos+1 < len(d) && d[p.pos] == '\\' && d[p.pos+1] == 'u' {
					save := p.pos
					p.pos += 2
					if x, ok := p.hex4(); ok {
						dec = utf16.DecodeRune(r, x)
					}
					if dec == utf8.RuneError {
						p.pos = save
					}
				}
				r = dec
			}
			b.WriteRune(r)
		default:
			p.pos--
			return "", p.fail("invalid escape character")
		}
	}
	return "", p.fail("")
}

func (p *parser) hex4() (rune, bool) {
	if p.pos+4 > len(p.data) {
		p.pos = len(p.data)
		return 0, false
	}
	var r rune
	for i := 0; i < 4; i++ {
		c := p.data[p.pos+i]
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.pos += 4
	return r, true
}

func (p *parser) enter() *syntaxError {
	p.depth++
	if p.depth > maxDepth {
		return &syntaxError{off: p.pos, msg: "nesting deeper than " + strconv.Itoa(maxDepth)}
	}
	return nil
}

func (p *parser) object() (jval, *syntaxError) {
	if err := p.enter(); err != nil {
		return jval{}, err
	}
	defer func() { p.depth-- }()
	v := jval{kind: jObject, start: p.pos, obj: []jmember{}}
	var seen map[string]struct{}
	p.pos++
	p.skipWS()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		v.end = p.pos
		return v, nil
	}
	base := len(p.stack)
	defer func() { p.stack = p.stack[:base] }()
	for {
		p.skipWS()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return jval{}, p.fail("object key expected")
		}
		key, err := p.str()
		if err != nil {
			return jval{}, err
		}
		if p.seen(p.stack[base:], &seen, key) {
			p.dups = append(p.dups, Finding{Kind: findingDuplicateKey, Path: joinPath(p.path, key),
				Detail: "duplicate key; the last value wins"})
		}
		p.skipWS()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return jval{}, p.fail("':' expected after object key")
		}
		p.pos++
		p.skipWS()
		p.path = append(p.path, key)
		val, err := p.value()
		p.path = p.path[:len(p.path)-1]
		if err != nil {
			return jval{}, err
		}
		p.stack = append(p.stack, jmember{key: key, val: val})
		p.skipWS()
		if p.pos >= len(p.data) {
			return jval{}, p.fail("")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			v.end = p.pos
			v.obj = append(make([]jmember, 0, len(p.stack)-base), p.stack[base:]...)
			return v, nil
		default:
			return jval{}, p.fail("',' or '}' expected in object")
		}
	}
}

func (p *parser) array() (jval, *syntaxError) {
	if err := p.enter(); err != nil {
		return jval{}, err
	}
	defer func() { p.depth-- }()
	v := jval{kind: jArray, start: p.pos}
	p.pos++
	p.skipWS()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		v.end = p.pos
		return v, nil
	}
	for i := 0; ; i++ {
		p.skipWS()
		p.path = append(p.path, "["+strconv.Itoa(i)+"]")
		val, err := p.value()
		p.path = p.path[:len(p.path)-1]
		if err != nil {
			return jval{}, err
		}
		v.arr = append(v.arr, val)
		p.skipWS()
		if p.pos >= len(p.data) {
			return jval{}, p.fail("")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			v.end = p.pos
			return v, nil
		default:
			return jval{}, p.fail("',' or ']' expected in array")
		}
	}
}
