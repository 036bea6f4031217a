package govern

import (
	"testing"

	"steward/leases/leaserec"
)

// The lease policy is read through Workspace.Env when a caller gives one, and from the
// process environment when it does not (workspace.go:38).
func TestLeasePolicyReadsWorkspaceEnvElseProcessEnv(t *testing.T) {
	name := leaserec.EnvVarName(leaserec.ClassConflictFix, leaserec.FieldInitialTTLMinutes)
	t.Setenv(name, "45")
	given := func(k string) (string, bool) {
		if k == name {
			return "30", true
		}
		return "", false
	}
	cases := []struct {
		desc string
		env  func(string) (string, bool)
		want float64
	}{
		{"the workspace's own lookup wins over the process environment", given, 30},
		{"no lookup given: the process environment", nil, 45},
	}
	for _, tc := range cases {
		t.Run(tc.desc, func(t *testing.T) {
			c := &Core{ws: Workspace{Env: tc.env}}
			got := c.policies().For(leaserec.ClassConflictFix).InitialTTLMinutes
			if got != tc.want {
				t.Errorf("conflict-fix initial TTL = %v minutes, want %v", got, tc.want)
			}
		})
	}
}

// The node's name is Workspace.Host when set, and leases.HostName (STEWARD_HOSTNAME here)
// when it is empty (workspace.go:50).
func TestWorkspaceHostDefaultsToThisNode(t *testing.T) {
	t.Setenv("STEWARD_HOSTNAME", "node-from-env")
	cases := []struct {
		host, want string
	}{
		{"node-configured", "node-configured"},
		{"", "node-from-env"},
	}
	for _, tc := range cases {
		if got := (Workspace{Host: tc.host}).host(); got != tc.want {
			t.Errorf("Workspace{Host: %q}.host() = %q, want %q", tc.host, got, tc.want)
		}
	}
}

type fenceSnap struct {
	Item   int
	Holder string
	note   string // unexported: not part of the fence's wording
}

// fenceDiff words a moved fence for the refusal: the exported fields that changed, each
// "Name: old → new", or a sentence when nothing nameable changed.
func TestFenceDiffNamesWhatChanged(t *testing.T) {
	cases := []struct {
		desc string
		a, b any
		want string
	}{
		{"one field", fenceSnap{Item: 7, Holder: "a"}, fenceSnap{Item: 7, Holder: "b"}, "Holder: a → b"},
		{"two fields, in field order", fenceSnap{Item: 7, Holder: "a"}, fenceSnap{Item: 8, Holder: "b"},
			"Item: 7 → 8; Holder: a → b"},
		{"last field only", struct{ A, B int }{1, 2}, struct{ A, B int }{1, 3}, "B: 2 → 3"},
		{"only an unexported field", fenceSnap{note: "x"}, fenceSnap{note: "y"}, "the target changed"},
		{"equal snapshots", fenceSnap{Item: 1}, fenceSnap{Item: 1}, "the target changed"},
		{"pointers to structs", &fenceSnap{Item: 1}, &fenceSnap{Item: 2}, "Item: 1 → 2"},
		{"a pointer gone", &fenceSnap{Item: 1}, (*fenceSnap)(nil), "the target appeared or disappeared"},
		{"different types", fenceSnap{Item: 1}, struct{ Item int }{1}, "the target changed kind"},
		{"one side nil", fenceSnap{}, nil, "the target changed kind"},
		{"plain values", 3, 4, "3 → 4"},
	}
	for _, tc := range cases {
		t.Run(tc.desc, func(t *testing.T) {
			if got := fenceDiff(tc.a, tc.b); got != tc.want {
				t.Errorf("fenceDiff = %q, want %q", got, tc.want)
			}
		})
	}
}
