package cli

import (
	"fmt"
	"slices"

	"steward/config"
	"steward/leases/leaserec"
)

// policyProblems are the configuration's lease_policy values that the lease policy does not
// know: an unknown class or field, or a field that cannot be overridden. config validated
// their shape; only package leases knows the names.
func policyProblems(r *config.Resolved) []config.Problem {
	if r == nil {
		return nil
	}
	var out []config.Problem
	for _, e := range r.Policy {
		origin := "workspaces." + r.Workspace + ".lease_policy." + e.Class + "." + e.Field
		switch {
		case !slices.Contains(leaserec.KnownTaskClasses(), leaserec.TaskClass(e.Class)):
			out = append(out, config.Problem{Severity: config.SevError, Code: "bad-lease-policy",
				Message: fmt.Sprintf(
					"%s: %q is not a task class of the lease policy (%v)",
					origin,
					e.Class,
					leaserec.KnownTaskClasses(),
				)})
		case !slices.Contains(leaserec.PolicyFields, e.Field) || e.Field == leaserec.FieldTerminalRetirementEligible ||
			e.Field == leaserec.FieldHeartbeatLifecycleActive:
			out = append(out, config.Problem{Severity: config.SevError, Code: "bad-lease-policy",
				Message: fmt.Sprintf(
					"%s: %q is not a field of the lease policy that can be overridden (a number of minutes, or absolute_cap_hours)",
					origin,
					e.Field,
				)})
		}
	}
	return out
}
