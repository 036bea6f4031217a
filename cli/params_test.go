package cli

import (
	"slices"
	"testing"

	"steward/govern"
)

// TestEveryFlagIsAParameter: each action command's parameter flags name a parameter its
// action takes, so buildRequest decodes every one into the action's struct (a flag naming
// another action's parameter would be refused on every run).
func TestEveryFlagIsAParameter(t *testing.T) {
	for _, ac := range append(actionCommands(), clarificationCommands()...) {
		names := govern.ParamNames(ac.action)
		for _, f := range ac.flags {
			if f.target == "" && !slices.Contains(names, f.paramName()) {
				t.Errorf("%v: --%s sets %q, which %s does not take (it takes %v)", ac.path, f.name, f.paramName(), ac.action, names)
			}
		}
	}
}
