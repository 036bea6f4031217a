package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"steward/govern"
	"steward/history"
	"steward/leases/seedtest"
	"steward/model"
)

// nullLists walks one JSON document along the Go type it was encoded from and returns the
// path of every list (a Go slice or array) written as null. Keys the type does not declare
// (a custom MarshalJSON's additions) and values of interface type are not typed and are
// skipped; everything else is walked to the bottom.
func nullLists(doc []byte, typ reflect.Type) ([]string, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var out []string
	walkJSON(v, typ, "$", &out)
	return out, nil
}

var timeType = reflect.TypeOf(time.Time{})

func walkJSON(v any, typ reflect.Type, path string, out *[]string) {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch typ.Kind() {
	case reflect.Slice, reflect.Array:
		if typ.Elem().Kind() == reflect.Uint8 && typ.Kind() == reflect.Slice {
			return // []byte: a base64 string
		}
		if v == nil {
			*out = append(*out, path)
			return
		}
		arr, _ := v.([]any)
		for i, x := range arr {
			walkJSON(x, typ.Elem(), fmt.Sprintf("%s[%d]", path, i), out)
		}
	case reflect.Map:
		m, _ := v.(map[string]any)
		for k, x := range m {
			walkJSON(x, typ.Elem(), path+"."+k, out)
		}
	case reflect.Struct:
		if typ == timeType {
			return
		}
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		fields := jsonFields(typ)
		for k, x := range m {
			if ft, ok := fields[k]; ok {
				walkJSON(x, ft, path+"."+k, out)
			}
		}
	}
}

// jsonFields maps the JSON names of a struct's fields (embedded structs flattened, as
// encoding/json does; the shallower name wins) to their types.
func jsonFields(typ reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	var add func(t reflect.Type, depth int, depthOf map[string]int)
	add = func(t reflect.Type, depth int, depthOf map[string]int) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			ft := f.Type
			if f.Anonymous && name == "" {
				for ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					add(ft, depth+1, depthOf)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if d, seen := depthOf[name]; !seen || depth < d {
				out[name], depthOf[name] = f.Type, depth
			}
		}
	}
	add(typ, 0, map[string]int{})
	return out
}

// TestNullListsWalker: the walker finds a null list at any depth, inside embedded structs,
// slices and maps, and passes [] and omitted lists.
func TestNullListsWalker(t *testing.T) {
	type inner struct {
		Xs []string `json:"xs"`
	}
	type embed struct {
		Es []int `json:"es"`
	}
	type outer struct {
		embed
		In   []inner          `json:"in"`
		M    map[string]inner `json:"m"`
		Opt  []string         `json:"opt,omitempty"`
		When time.Time        `json:"when"`
	}
	got, err := nullLists([]byte(`{"es":null,"in":[{"xs":[]},{"xs":null}],"m":{"a":{"xs":null}},"when":"2026-07-23T10:00:00Z"}`), reflect.TypeOf(outer{}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"$.es": true, "$.in[1].xs": true, "$.m.a.xs": true}
	if len(got) != len(want) {
		t.Fatalf("null lists %q, want %v", got, want)
	}
	for _, p := range got {
		if !want[p] {
			t.Fatalf("null lists %q, want %v", got, want)
		}
	}
}

// allJSON is `steward status --all --json`.
type allJSON struct {
	Workspaces []struct {
		Name     string         `json:"name"`
		Host     string         `json:"host"`
		Snapshot model.Snapshot `json:"snapshot"`
	} `json:"workspaces"`
}

// watchStarted is the first line of `steward watch --json`.
type watchStarted struct {
	Event   string                  `json:"event"`
	Sources map[string]model.Status `json:"sources"`
}

// TestJSONListsAreNeverNull runs every command that prints JSON — on an empty workspace,
// where most lists are empty, and on a populated one (the seed's names, a Gitea) — and
// walks each document along the Go type it was encoded from: no list is null; an empty one
// is []. docs/formats.md promises it for status; it holds for every JSON output. Before,
// items[].evidence, a timeline's gaps and others came out null.
func TestJSONListsAreNeverNull(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	// An empty workspace: no lock, a DB steward created with no row, no audit log, no Gitea.
	empty := t.TempDir()
	if err := os.MkdirAll(filepath.Join(empty, "locks"), 0o700); err != nil {
		t.Fatal(err)
	}
	emptyDB := filepath.Join(empty, "control_plane.sqlite3")
	if code, out := run(t, "init", "--db", emptyDB, "--as-role", "admin", "--config", emptyConfig(t, empty)); code != ExitOK {
		t.Fatalf("init: %s", out)
	}
	emptyWS := []string{"--locks", filepath.Join(empty, "locks"), "--db", emptyDB, "--repo-root", empty,
		"--audit", filepath.Join(empty, "audit.jsonl"), "--config", emptyConfig(t, empty)}
	// A populated one: the seed's names, its rows and locks, an in-process Gitea, and an
	// audit log with attempts in it.
	w := newJoinWS(t, "")
	full := []string{"--config", w.cfg}
	if code, out := run(t, "--config", w.cfg, "--as-role", "operator", "claim", "--org", seedOrg, "--repo", seedRepo,
		"--number", "4", "--session", seedSession, "--pid", fmt.Sprint(os.Getpid()), "--remote", seedRemote, "--json"); code != ExitOK {
		t.Fatalf("claim: %s", out)
	}
	hist, _ := seedHistoryWS(t, now, seedtest.Options{})
	histWS := []string{"--db", hist, "--locks", filepath.Join(filepath.Dir(hist), "locks"), "--audit", filepath.Join(filepath.Dir(hist), "audit.jsonl"),
		"--config", emptyConfig(t, filepath.Dir(hist)), "--state-dir", t.TempDir()}
	both := filepath.Join(t.TempDir(), "all.yaml")
	if err := os.WriteFile(both, fmt.Appendf(nil, "default_workspace: a\nworkspaces:\n  a:\n    locks_dir: %s/locks\n    db_path: %s\n    repo_root: %s\n  b:\n    locks_dir: %s/locks\n    db_path: %s\n    repo_root: %s/repo\n",
		empty, emptyDB, empty, w.dir, w.db, w.dir), 0o600); err != nil {
		t.Fatal(err)
	}
	at := now.Format(time.RFC3339)
	cases := []struct {
		name  string
		args  []string
		typ   any
		lines bool // one document per line
	}{
		{"status empty", append([]string{"status", "--json", "--no-gitea"}, emptyWS...), model.Snapshot{}, false},
		{"status seed with Gitea", append([]string{"status", "--json"}, full...), model.Snapshot{}, false},
		{"status --all", []string{"--config", both, "status", "--all", "--json", "--no-gitea"}, allJSON{}, false},
		{"status --at empty", append([]string{"status", "--json", "--at", at}, emptyWS...), history.Fleet{}, false},
		{"status --at seed", append([]string{"status", "--json", "--at", at}, histWS[:8]...), history.Fleet{}, false},
		{"history --item empty", append([]string{"history", "--json", "--item", "acme/widgets#1", "--now", at}, emptyWS...), history.Timeline{}, false},
		{"history --item seed", append([]string{"history", "--json", "--item", seedOrg + "/" + seedRepo + "#643", "--now", at}, histWS...), history.Timeline{}, false},
		{"history --session seed", append([]string{"history", "--json", "--session", "prgs-reviewer-4157-0ce9", "--now", at}, histWS...), history.Timeline{}, false},
		{"history --since-left empty", append([]string{"history", "--json", "--since-left", "--keep-mark", "--now", at, "--state-dir", t.TempDir()}, emptyWS...), history.SinceReport{}, false},
		{"history --since-left seed", append([]string{"history", "--json", "--since-left", "--keep-mark", "--now", at}, histWS...), history.SinceReport{}, false},
		{"history --heat empty", append([]string{"history", "--json", "--heat", "--now", at}, emptyWS...), history.Heat{}, false},
		{"history --heat seed", append([]string{"history", "--json", "--heat", "--now", at}, histWS...), history.Heat{}, false},
		{"audit empty", append([]string{"audit", "--json"}, emptyWS...), auditView{}, false},
		{"audit seed", append([]string{"audit", "--json"}, full...), auditView{}, false},
		{"audit verify empty", append([]string{"audit", "verify", "--json", "--as-role", "operator"}, emptyWS...), []govern.Verification{}, false},
		{"config check", []string{"config", "check", "--json", "--offline", "--config", w.cfg}, configCheckView{}, false},
		{"actions", []string{"actions", "--json", "--config", emptyConfig(t, empty)}, []govern.Spec{}, false},
		{"a preview", append([]string{"--as-role", "operator", "lease", "reclaim-expired", "--lease", "lease-1", "--dry-run", "--json"}, full...), govern.Preview{}, false},
		{"an outcome", append([]string{"--as-role", "operator", "lease", "expire-sweep", "--json"}, emptyWS...), govern.Outcome{}, false},
		{"demo", []string{"demo", "--headless", "--for", "2s", "--json", "--seed", "3", "--config", emptyConfig(t, empty)}, demoReport{}, false},
		{"watch empty", append([]string{"watch", "--json", "--no-gitea", "--for", "1500ms"}, emptyWS...), watchStarted{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			Main(c.args, &out, &errb)
			docs := [][]byte{out.Bytes()}
			if c.lines {
				docs = bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
			}
			if len(bytes.TrimSpace(out.Bytes())) == 0 {
				t.Fatalf("steward %s printed nothing: %s", strings.Join(c.args, " "), errb.String())
			}
			for i, d := range docs {
				typ := reflect.TypeOf(c.typ)
				if c.lines && i > 0 {
					typ = reflect.TypeOf(watchLine{})
				}
				nulls, err := nullLists(d, typ)
				if err != nil {
					t.Fatalf("steward %s: not JSON (%v): %s", strings.Join(c.args, " "), err, d)
				}
				for _, p := range nulls {
					t.Errorf("steward %s: %s is null, want []", strings.Join(c.args, " "), p)
				}
			}
		})
	}
}
