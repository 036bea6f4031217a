package sim

import (
	"sort"
	"strconv"

	"steward/leases/leaserec"
)

// DefaultSpeed is the demo's time compression: a 10-minute lease lives 30 seconds.
const DefaultSpeed = 20.0

// PolicyEnv returns the lease-policy overrides (GITEA_LEASE_POLICY_<CLASS>_<FIELD>) that
// compress every duration of the seed's policy by speed. speed <= 1 returns none. Pass
// them to the core through Workspace.Env (see Lookup); print them for a shell (envLines).
func PolicyEnv(speed float64) map[string]string {
	out := map[string]string{}
	for c, fields := range policyValues(speed) {
		for f, v := range fields {
			out[leaserec.EnvVarName(leaserec.TaskClass(c), f)] = strconv.FormatFloat(v, 'g', -1, 64)
		}
	}
	return out
}

// Lookup returns an env lookup that answers from vars first, then from next (which may be
// nil). Use it as govern.Workspace.Env.
func Lookup(vars map[string]string, next func(string) (string, bool)) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if v, ok := vars[k]; ok {
			return v, true
		}
		if next != nil {
			return next(k)
		}
		return "", false
	}
}

// envLines renders vars as sorted KEY=VALUE lines, for a shell prefix.
func envLines(vars map[string]string) []string {
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
