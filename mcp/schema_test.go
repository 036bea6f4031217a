package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"steward/govern"
)

// requiredArgs is what each tool cannot do without, as its input schema must say.
var requiredArgs = map[string][]string{
	ToolClaim:            {"session_id"},
	ToolHeartbeat:        {"session_id", "fence"},
	ToolRelease:          {"session_id", "fence"},
	ToolAsk:              {"session_id", "fence", "question"},
	ToolGetAnswer:        {"session_id", "clarification_id"},
	ToolMyLeases:         {"session_id"},
	ToolStatus:           {"session_id", "item"},
	ToolInspect:          {"session_id", "issue_number"},
	SeedLockIssue:        {"session_id", "issue_number"},
	SeedAllocateNextWork: {"session_id"},
	SeedHeartbeatLock:    {"session_id", "issue_number", "task_session_id"},
	SeedReleaseLease:     {"session_id", "lease_id"},
	SeedInspectContract:  {"session_id", "issue_number"},
	SeedInspectLease:     {"session_id", "lease_id"},
}

// TestSchemasSayWhatIsRequired: every input schema lists its mandatory arguments in
// `required` (the fence's lease_id and expires_at, an item's number, too), and no schema,
// input or output, has a `type` that is an array — the SDK's inference wrote ["null", X]
// for every pointer and slice (65 places), which single-type function-calling dialects
// reject. (Both failed before: 0 of 14 input schemas listed `required`.)
func TestSchemasSayWhatIsRequired(t *testing.T) {
	f := newFx(t, fxOpt{})
	c := f.client("w1")
	res, err := c.SDK().ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != len(requiredArgs) {
		t.Fatalf("%d tools, want %d", len(res.Tools), len(requiredArgs))
	}
	for _, tool := range res.Tools {
		in := schemaJSON(t, tool.InputSchema)
		want := requiredArgs[tool.Name]
		got := strings.Fields(strings.Trim(strings.ReplaceAll(string(in["required"]), ",", " "), "[]"))
		for i := range got {
			got[i] = strings.Trim(got[i], `"`)
		}
		slices.Sort(got)
		w := slices.Clone(want)
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Errorf("%s: required %v, want %v", tool.Name, got, w)
		}
		for _, s := range []any{tool.InputSchema, tool.OutputSchema} {
			b, _ := json.Marshal(s)
			var v any
			_ = json.Unmarshal(b, &v)
			walkSchema(v, "", func(path string, m map[string]any) {
				if _, ok := m["type"].([]any); ok {
					t.Errorf("%s %s: type is an array: %v", tool.Name, path, m["type"])
				}
			})
		}
		if slices.Contains(want, "fence") {
			fence := schemaJSON(t, mustProp(t, tool.InputSchema, "fence"))
			if !strings.Contains(string(fence["required"]), `"lease_id"`) || !strings.Contains(string(fence["required"]), `"expires_at"`) {
				t.Errorf("%s: fence requires %s, want lease_id and expires_at", tool.Name, fence["required"])
			}
		}
	}
}

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// TestToolsListIsPinned: what tools/list answers — every tool's name, description,
// annotations and input and output schemas — is the golden file testdata/tools_list.json,
// byte for byte. A schema a client or model reads changes only when this file changes with
// it (go test ./mcp/ -run TestToolsListIsPinned -update), so a refactoring of how the
// schemas are built (descriptions, required lists, null types) shows any drift here.
func TestToolsListIsPinned(t *testing.T) {
	f := newFx(t, fxOpt{})
	res, err := f.client("w1").SDK().ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(res.Tools, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "tools_list.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("tools/list differs from %s (rerun with -update if the change is meant):\n%s", golden, firstDiff(want, got))
	}
}

// firstDiff shows the first line where two texts part.
func firstDiff(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n want %s\n got  %s", i+1, wl, gl)
		}
	}
	return "(same lines)"
}

func schemaJSON(t *testing.T, s any) map[string]json.RawMessage {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func mustProp(t *testing.T, s any, name string) any {
	t.Helper()
	var m struct {
		Properties map[string]any `json:"properties"`
	}
	b, _ := json.Marshal(s)
	_ = json.Unmarshal(b, &m)
	p, ok := m.Properties[name]
	if !ok {
		t.Fatalf("no property %s", name)
	}
	return p
}

// walkSchema calls fn on every object of a schema.
func walkSchema(v any, path string, fn func(string, map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		fn(path, x)
		for k, y := range x {
			walkSchema(y, path+"/"+k, fn)
		}
	case []any:
		for _, y := range x {
			walkSchema(y, path, fn)
		}
	}
}

// TestBadArgumentsAreStructuredRefusals: an argument of the wrong type, one the tool does
// not take, a missing required one — at the top or inside the fence or the item — is
// refused as every other bad argument is: a structured result with isError, success false,
// code invalid_request, a message naming the argument and what to do next; nothing is
// written, not even an audit record. (It failed before: the SDK's validator answered with
// its bare text and no structured content.)
func TestBadArgumentsAreStructuredRefusals(t *testing.T) {
	f := newFx(t, fxOpt{})
	ctx := context.Background()
	c := f.client("w1")
	cl := must[Outcome](t)(c.Claim(ctx, ClaimArgs{Item: f.item(4)}))
	if !cl.Success {
		t.Fatalf("claim: %+v", cl)
	}
	fence := map[string]any{"lease_id": cl.Fence.LeaseID, "expires_at": cl.Fence.ExpiresAt, "claim_token": cl.Fence.ClaimToken}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for a, b := range fence {
			m[a] = b
		}
		m[k] = v
		return m
	}
	before := f.state(true)
	for _, tc := range []struct {
		name, tool string
		args       any
		mention    string
	}{
		{"session_id a number", ToolMyLeases, map[string]any{"session_id": 5}, "session_id must be a string"},
		{"an undeclared argument", ToolMyLeases, map[string]any{"session_id": "w1", "sesion": "w1"}, `no argument "sesion"`},
		{"session_id missing", ToolClaim, map[string]any{"next": true}, "session_id is required"},
		{"fence missing", ToolHeartbeat, map[string]any{"session_id": "w1"}, "fence is required"},
		{"fence a string", ToolRelease, map[string]any{"session_id": "w1", "fence": "abc"}, "fence must be an object"},
		{"fence.lease_id a number", ToolHeartbeat, map[string]any{"session_id": "w1", "fence": with("lease_id", 7)}, "fence.lease_id must be a string"},
		{"fence.expires_at missing", ToolRelease, map[string]any{"session_id": "w1", "fence": map[string]any{"lease_id": cl.Fence.LeaseID}}, "fence.expires_at is required"},
		{"an undeclared fence field", ToolHeartbeat, map[string]any{"session_id": "w1", "fence": with("generation", 2)}, `fence has no field "generation"`},
		{"item.number a string", ToolClaim, map[string]any{"session_id": "w1", "item": map[string]any{"number": "4"}}, "item.number must be an integer"},
		{"item.number a fraction", ToolStatus, map[string]any{"session_id": "w1", "item": map[string]any{"number": 4.5}}, "item.number must be an integer"},
		{"next a string", ToolClaim, map[string]any{"session_id": "w1", "next": "yes"}, "next must be a boolean"},
		{"exclude not numbers", ToolClaim, map[string]any{"session_id": "w1", "next": true, "exclude_issue_numbers": []any{"x"}}, "exclude_issue_numbers[0] must be an integer"},
		{"pid null", ToolClaim, map[string]any{"session_id": "w1", "next": true, "pid": nil}, "pid must be an integer, not null"},
		{"seed heartbeat without task_session_id", SeedHeartbeatLock, map[string]any{"session_id": "w1", "issue_number": 4}, "task_session_id is required"},
	} {
		res, err := c.SDK().CallTool(ctx, &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if err != nil {
			t.Fatalf("%s: a protocol error: %v", tc.name, err)
		}
		var o struct {
			Success bool   `json:"success"`
			Code    string `json:"code"`
			Message string `json:"message"`
			Next    string `json:"next"`
		}
		b, _ := json.Marshal(res.StructuredContent)
		if res.StructuredContent == nil || json.Unmarshal(b, &o) != nil {
			t.Fatalf("%s: no structured result: %+v", tc.name, res.Content)
		}
		if !res.IsError || o.Success || o.Code != govern.CodeInvalidRequest || o.Next == "" || !strings.Contains(o.Message, tc.mention) {
			t.Errorf("%s: isError %v, %+v (want invalid_request mentioning %q)", tc.name, res.IsError, o, tc.mention)
		}
	}
	if f.state(true) != before {
		t.Fatal("a refused argument wrote something")
	}
}

// TestEveryPropertyIsDescribed: the descriptions table (describe.go) is the one place the
// tools' properties are described. Every property of every tool's input schema has a
// description, wherever it stands (inside the fence or the item too); every entry of the
// table names a property its type has, so none is silently dropped; and no production file
// describes a property in a `jsonschema` struct tag beside it.
func TestEveryPropertyIsDescribed(t *testing.T) {
	f := newFx(t, fxOpt{})
	res, err := f.client("w1").SDK().ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		var v any
		_ = json.Unmarshal(b, &v)
		walkSchema(v, "", func(path string, m map[string]any) {
			props, _ := m["properties"].(map[string]any)
			for name, p := range props {
				if d, _ := p.(map[string]any)["description"].(string); strings.TrimSpace(d) == "" {
					t.Errorf("%s: input property %s%s has no description", tool.Name, path, "/"+name)
				}
			}
		})
	}
	for owner, props := range descriptions {
		have := map[string]bool{}
		for i := range owner.NumField() {
			name, _, _ := strings.Cut(owner.Field(i).Tag.Get("json"), ",")
			have[name] = true
		}
		for name, d := range props {
			if !have[name] {
				t.Errorf("descriptions: %s has no property %s (described %q)", owner.Name(), name, d)
			}
		}
	}
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "jsonschema:\"") {
			t.Errorf("%s describes a property in a jsonschema struct tag; describe it in describe.go", f)
		}
	}
}
