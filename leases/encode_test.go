package leases

import "testing"

func TestEncodeObjectNilMapIsEmpty(t *testing.T) {
	var m map[string]any
	for _, tc := range []struct {
		in   any
		want string
	}{{nil, ""}, {m, ""}, {map[string]any{}, "{}"}, {map[string]any{"a": 1}, `{"a":1}`}} {
		if got := encodeObject(tc.in); got != tc.want {
			t.Errorf("encodeObject(%#v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
