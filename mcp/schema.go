package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// The tools' JSON Schemas are inferred from their Go types, then made plain and honest:
//
//   - an input property a call cannot do without is listed in its object's `required`
//     (the field's `mcp:"required"` tag), so clients and models see it, not only the prose;
//   - no `type` is an array: the SDK's inference writes a pointer, slice or map as
//     ["null", X], which single-type function-calling dialects reject. Nothing here is ever
//     sent as null — a value that may be absent is omitted (omitempty) — so each is X.
//
// An argument that does not fit its schema is refused as every other bad argument is: a
// structured invalid_request result (code, message naming the argument, next), never the
// validator's bare text.

// toolSchema is a tool's inferred schema and its resolved form, for validation.
type toolSchema struct {
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved
}

// schemaFor infers the schema of T and describes its properties (describe.go); input
// schemas also get their `required` lists.
func schemaFor[T any](input bool) (toolSchema, error) {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return toolSchema{}, err
	}
	eachProperty(reflect.TypeFor[T](), s, annotate(input))
	dropNull(s)
	r, err := s.Resolve(nil)
	if err != nil {
		return toolSchema{}, err
	}
	return toolSchema{schema: s, resolved: r}, nil
}

// annotate gives each property the description the table has for it (describe.go) and, in
// an input schema, lists it in its object's `required` when its field is tagged
// `mcp:"required"`.
func annotate(input bool) propertyFunc {
	return func(owner reflect.Type, f reflect.StructField, name string, obj, prop *jsonschema.Schema) {
		if d, ok := descriptions[owner][name]; ok {
			prop.Description = d
		}
		if input && f.Tag.Get("mcp") == "required" && !slices.Contains(obj.Required, name) {
			obj.Required = append(obj.Required, name)
		}
	}
}

// propertyFunc is called on one property: the struct type that holds it (owner), its field,
// its JSON name, the object's schema and the property's own.
type propertyFunc func(owner reflect.Type, f reflect.StructField, name string, obj, prop *jsonschema.Schema)

// eachProperty calls fn on every property of every object schema in s, walking nested
// structs, pointers and slices of t alongside the schema.
func eachProperty(t reflect.Type, s *jsonschema.Schema, fn propertyFunc) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if s.Items != nil {
			eachProperty(t.Elem(), s.Items, fn)
		}
		return
	case reflect.Struct:
	default:
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		ps, ok := s.Properties[name]
		if !ok {
			continue
		}
		fn(t, f, name, s, ps)
		eachProperty(f.Type, ps, fn)
	}
}

// dropNull rewrites every `type: ["null", X]` as `type: X`, in s and every schema under it.
func dropNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) > 0 {
		var kept []string
		for _, t := range s.Types {
			if t != "null" {
				kept = append(kept, t)
			}
		}
		if len(kept) == 1 {
			s.Type, s.Types = kept[0], nil
		} else {
			s.Types = kept
		}
	}
	for _, p := range s.Properties {
		dropNull(p)
	}
	dropNull(s.Items)
	dropNull(s.AdditionalProperties)
	for _, d := range s.Defs {
		dropNull(d)
	}
	for _, d := range s.Definitions {
		dropNull(d)
	}
	for _, l := range [][]*jsonschema.Schema{s.AnyOf, s.OneOf, s.AllOf, s.PrefixItems} {
		for _, x := range l {
			dropNull(x)
		}
	}
}

// checkArgs validates a call's raw arguments against the tool's input schema. It names
// the first problem in words a worker can act on: an argument the tool does not take, a
// required one missing, or one of the wrong type (the validator's words, after the
// argument's name).
func (ts toolSchema) checkArgs(tool string, raw json.RawMessage) error {
	v := map[string]any{}
	if len(bytes.TrimSpace(raw)) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var x any
		if err := dec.Decode(&x); err != nil {
			return fmt.Errorf("the arguments are not JSON: %v", err)
		}
		m, ok := x.(map[string]any)
		if !ok {
			return fmt.Errorf("the arguments must be a JSON object of named arguments")
		}
		v = m
	}
	s := ts.schema
	var unknown []string
	for k := range v {
		if _, ok := s.Properties[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf(
			"%s takes no argument %s; its arguments are %s",
			tool,
			quoteAll(unknown),
			strings.Join(propertyNames(s), ", "),
		)
	}
	for _, r := range s.Required {
		if _, ok := v[r]; !ok {
			return fmt.Errorf("%s is required (%s)", r, describe(s.Properties[r]))
		}
	}
	for _, k := range propertyNames(s) {
		x, ok := v[k]
		if !ok {
			continue
		}
		if err := checkValue(k, s.Properties[k], x); err != nil {
			return err
		}
	}
	// What the walk above does not cover (nested formats, bounds) the validator does.
	b, _ := json.Marshal(v)
	var plain any
	_ = json.Unmarshal(b, &plain)
	if err := ts.resolved.Validate(plain); err != nil {
		return fmt.Errorf("the arguments do not fit %s's input schema: %v", tool, err)
	}
	return nil
}

// checkValue checks one value against its property schema: its type, and for an object
// its own unknown, required and typed properties, naming the value by its path.
func checkValue(path string, s *jsonschema.Schema, v any) error {
	if s == nil {
		return nil
	}
	if s.Type != "" && !hasType(s.Type, v) {
		return fmt.Errorf("%s must be %s, not %s", path, article(s.Type), jsonKind(v))
	}
	switch x := v.(type) {
	case map[string]any:
		if s.Type != "object" {
			return nil
		}
		var unknown []string
		for k := range x {
			if _, ok := s.Properties[k]; !ok && s.AdditionalProperties != nil && isFalse(s.AdditionalProperties) {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			slices.Sort(unknown)
			return fmt.Errorf("%s has no field %s; its fields are %s",
				path, quoteAll(unknown), strings.Join(propertyNames(s), ", "))
		}
		for _, r := range s.Required {
			if _, ok := x[r]; !ok {
				return fmt.Errorf("%s.%s is required (%s)", path, r, describe(s.Properties[r]))
			}
		}
		for _, k := range propertyNames(s) {
			if y, ok := x[k]; ok {
				if err := checkValue(path+"."+k, s.Properties[k], y); err != nil {
					return err
				}
			}
		}
	case []any:
		for i, y := range x {
			if err := checkValue(fmt.Sprintf("%s[%d]", path, i), s.Items, y); err != nil {
				return err
			}
		}
	}
	return nil
}

// isFalse reports whether s is the schema `false` (nothing allowed).
func isFalse(s *jsonschema.Schema) bool {
	b, err := json.Marshal(s)
	return err == nil && string(b) == "false"
}

func hasType(t string, v any) bool {
	switch x := v.(type) {
	case nil:
		return t == "null"
	case bool:
		return t == "boolean"
	case string:
		return t == "string"
	case json.Number:
		if t == "number" {
			return true
		}
		if t == "integer" {
			f, err := x.Float64()
			return err == nil && f == float64(int64(f))
		}
		return false
	case map[string]any:
		return t == "object"
	case []any:
		return t == "array"
	}
	return false
}

func jsonKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number:
		if strings.ContainsAny(x.String(), ".eE") {
			return "a number (" + x.String() + ")"
		}
		return "a number"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}

func article(t string) string {
	switch t {
	case "integer":
		return "an integer"
	case "object":
		return "an object"
	case "array":
		return "an array"
	}
	return "a " + t
}

// describe is a property's type and description, to say what a missing one is.
func describe(s *jsonschema.Schema) string {
	if s == nil {
		return "see the tool's input schema"
	}
	d := article(s.Type)
	if s.Description != "" {
		d += ": " + s.Description
	}
	return d
}

// propertyNames lists an object schema's properties in their declared order.
func propertyNames(s *jsonschema.Schema) []string {
	if len(s.PropertyOrder) > 0 {
		return slices.Clone(s.PropertyOrder)
	}
	out := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// quoteAll quotes names a caller sent, at most five of them and 64 bytes of each: a
// refusal never echoes an unbounded argument back.
func quoteAll(names []string) string {
	var q []string
	for i, n := range names {
		if i == 5 {
			q = append(q, fmt.Sprintf("and %d more", len(names)-5))
			break
		}
		if len(n) > 64 {
			n = strings.ToValidUTF8(n[:64], "") + "…"
		}
		q = append(q, fmt.Sprintf("%q", n))
	}
	return strings.Join(q, ", ")
}
