package config

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// issue is one thing wrong in the file: where, which key (dotted, as in the file:
// "thresholds.contention_window", "workspaces.main.locks_dir"; "" when the line holds no
// key) and why, in the file's words.
type issue struct {
	line   int
	key    string
	reason string
}

var lineOf = regexp.MustCompile(`^line ([0-9]+): `)

// parseAll decodes the file as far as it can. A value of the wrong kind, a bad duration or
// an unknown key is one issue each, with its line and key, and every other value of the
// file is still read: one bad value leaves the other settings as written (before, one
// bad duration made every setting read "default" and only the first error was reported). Text
// that is not YAML at all is one issue and an empty File.
func parseAll(data []byte) (File, []issue) {
	var f File
	if len(data) > maxFileSize {
		return File{}, []issue{{reason: errTooLarge.Error()}}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(&f)
	var te *yaml.TypeError
	switch {
	case err == nil, errors.Is(err, io.EOF):
	case errors.As(err, &te):
		keys := keyLines(data)
		var out []issue
		for _, e := range te.Errors {
			is := issue{reason: yamlReason(e, data)}
			if m := lineOf.FindStringSubmatch(e); m != nil {
				is.line, _ = strconv.Atoi(m[1])
				is.key = keys[is.line]
			}
			out = append(out, is)
		}
		return f, out
	default:
		return File{}, []issue{{reason: yamlReason(err.Error(), data)}}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return File{}, []issue{{reason: "config: more than one YAML document; keep one"}}
	}
	return f, nil
}

// keyLines maps each line of the file that holds a key or a value to the dotted key it
// belongs to.
func keyLines(data []byte) map[int]string {
	var doc yaml.Node
	out := map[int]string{}
	if yaml.Unmarshal(data, &doc) != nil {
		return out
	}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := k.Value
				if path != "" {
					p = path + "." + k.Value
				}
				if _, ok := out[k.Line]; !ok {
					out[k.Line] = p
				}
				walk(v, p)
			}
		default:
			if _, ok := out[n.Line]; !ok && path != "" {
				out[n.Line] = path
			}
			for _, c := range n.Content {
				walk(c, path)
			}
		}
	}
	walk(&doc, "")
	return out
}

func joinIssues(is []issue) error {
	if len(is) == 0 {
		return nil
	}
	msgs := make([]string, len(is))
	for i, x := range is {
		msgs[i] = x.reason
	}
	return errors.New(strings.Join(msgs, "; "))
}
