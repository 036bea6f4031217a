package config

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// policyPrefix is the prefix of the supervised system's lease-policy variables,
// GITEA_LEASE_POLICY_<CLASS>_<FIELD> (seed #909; leaserec.EnvVarName).
const policyPrefix = "GITEA_LEASE_POLICY"

// policyVar is the variable a workspace's lease_policy.<class>.<field> stands for.
func policyVar(class, field string) string {
	return strings.ToUpper(policyPrefix + "_" + class + "_" + field)
}

// policyEntry is one lease_policy value of the workspace in use.
type policyEntry struct {
	Class, Field string
	// Value as the variable would carry it.
	Value string
}

var policyName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// resolvePolicy books the workspace's lease_policy: one setting per value (its key
// lease_policy.<class>.<field>, from the file, or from the environment when the variable
// it stands for is set there, which wins as it does for the workers' own tools), and a
// problem for a name that is not a class or field name or a value that is not a positive
// number. Whether the class and field exist is the lease policy's to say (the command line
// checks it against package leases).
func (r *Resolved) resolvePolicy(ws Workspace, getenv func(string) (string, bool)) {
	classes := make([]string, 0, len(ws.LeasePolicy))
	for c := range ws.LeasePolicy {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	for _, c := range classes {
		fields := make([]string, 0, len(ws.LeasePolicy[c]))
		for f := range ws.LeasePolicy[c] {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		for _, f := range fields {
			v := ws.LeasePolicy[c][f]
			origin := "workspaces." + r.Workspace + ".lease_policy." + c + "." + f
			if !policyName.MatchString(c) || !policyName.MatchString(f) {
				r.problem(
					SevError,
					"bad-lease-policy",
					fmt.Sprintf(
						"%s: a class and a field are written in lower case with underscores, such as "+
							"author_issue_work.initial_ttl_minutes",
						clip(origin),
					),
				)
				continue
			}
			if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
				r.problem(
					SevError,
					"bad-lease-policy",
					fmt.Sprintf("%s = %v: use a positive number of minutes (hours for absolute_cap_hours)", origin, v),
				)
				continue
			}
			val := strconv.FormatFloat(v, 'g', -1, 64)
			r.Policy = append(r.Policy, policyEntry{Class: c, Field: f, Value: val})
			s := Setting{Key: "lease_policy." + c + "." + f, Value: val, Source: FromFile, Origin: origin}
			if ev, ok := getenv(policyVar(c, f)); ok {
				s.Value, s.Source, s.Origin = ev, fromEnv, policyVar(c, f)
			}
			r.Settings = append(r.Settings, s)
		}
	}
}

// PolicyLookup looks a lease-policy variable up as the workers' tools see it: the
// environment first (getenv; os.LookupEnv when nil), then the workspace's lease_policy.
// Pass it to leaserec.LoadPolicies and as govern.Workspace.Env.
func (r *Resolved) PolicyLookup(getenv func(string) (string, bool)) func(string) (string, bool) {
	if getenv == nil {
		getenv = os.LookupEnv
	}
	file := map[string]string{}
	if r != nil {
		for _, e := range r.Policy {
			file[policyVar(e.Class, e.Field)] = e.Value
		}
	}
	return func(k string) (string, bool) {
		if v, ok := getenv(k); ok {
			return v, true
		}
		v, ok := file[k]
		return v, ok
	}
}
