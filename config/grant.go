package config

import (
	"fmt"
	"sort"
	"strings"
)

// fromSystem is the source of a value a system-wide file imposed (see SystemPath).
const fromSystem Source = "system"

// Grant is the role and the read-only switch a run holds once every ceiling is applied.
//
// The configured grant is a ceiling: a flag or a variable may lower the role or turn
// read-only on, never the reverse. The system files (SystemPath, STEWARD_SYSTEM_CONFIG)
// bound everything; the user's config file bounds flags and variables.
type Grant struct {
	// Login is the Gitea login the roles maps were consulted for ("" when none was given).
	Login string `json:"login,omitempty"`
	// Role is the role in effect, with where it came from.
	Role       string `json:"role"`
	RoleSource Source `json:"role_source"`
	RoleOrigin string `json:"role_origin,omitempty"`
	// Ceiling is the highest role the configuration grants Login; "" when no file maps
	// roles (then the role is the one asked for, viewer by default).
	Ceiling       string `json:"ceiling,omitempty"`
	CeilingOrigin string `json:"ceiling_origin,omitempty"`
	// ReadOnly is the switch in effect and, when on, the source that turned it on (the one
	// of highest authority: a system file, the config file, the environment, a flag).
	ReadOnly       bool   `json:"read_only"`
	ReadOnlySource Source `json:"read_only_source,omitempty"`
	ReadOnlyOrigin string `json:"read_only_origin,omitempty"`
}

// ReadOnlyReason says why read-only is on and what could lift it ("" when it is off), for
// the governed core's read_only refusal.
func (g Grant) ReadOnlyReason() string {
	switch g.ReadOnlySource {
	case fromSystem:
		return "set by " + g.ReadOnlyOrigin + "; no user file, variable or flag can lift it — only the owner of that file"
	case FromFile:
		return "set by " + g.ReadOnlyOrigin + "; no variable or flag can lift it — edit that file to act"
	case fromEnv:
		return "set by " + g.ReadOnlyOrigin + "; unset it to act"
	case fromFlag:
		return "set by " + g.ReadOnlyOrigin + "; run without it to act"
	}
	return ""
}

var roleRank = map[string]int{"viewer": 0, "operator": 1, "controller": 2, "admin": 3}

// rank orders roles; an unknown role ranks as viewer (fail closed).
func rank(role string) int { return roleRank[strings.ToLower(role)] }

// ceilingAt is one file's grant for a login.
type ceilingAt struct {
	role   string
	src    Source
	origin string
}

// grantIn looks login up in one file's roles map: its own entry (logins compare without
// case, as Gitea's do), else "*", else viewer — a map that names roles denies by default.
func grantIn(m map[string]string, login string, src Source, where string) ceilingAt {
	if login != "" {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if strings.EqualFold(k, login) {
				return ceilingAt{strings.ToLower(m[k]), src, "roles." + k + " in " + where}
			}
		}
	}
	if v, ok := m["*"]; ok {
		return ceilingAt{strings.ToLower(v), src, "roles.* in " + where}
	}
	who := "login " + login
	if login == "" {
		who = "no login (give --login or STEWARD_GITEA_LOGIN)"
	}
	return ceilingAt{"viewer", src, where + " maps roles and grants " + who + " none: viewer"}
}

// readOnlyInput is one place read_only can be set.
type readOnlyInput struct {
	raw, origin string
	src         Source
}

// applyCeilings computes the Grant and writes it into the role and read_only settings.
// flagRO and envRO are the raw flag and variable values ("" when not set).
func (r *Resolved) applyCeilings(f *File, login string, flagRO, flagName, envRO string) {
	g := Grant{Login: login}

	// The role: the lowest of the configured grants is the ceiling.
	var caps []ceilingAt
	for _, s := range r.System {
		if len(s.File.Roles) > 0 {
			caps = append(caps, grantIn(s.File.Roles, login, fromSystem, "the system config "+s.Path))
		}
	}
	if len(f.Roles) > 0 {
		caps = append(caps, grantIn(f.Roles, login, FromFile, "the config file "+r.Path))
	}
	var ceil *ceilingAt
	for i := range caps {
		if ceil == nil || rank(caps[i].role) < rank(ceil.role) {
			ceil = &caps[i]
		}
	}
	asked := r.Get(KeyRole)
	requested := asked.Source == fromFlag || asked.Source == fromEnv
	switch {
	case ceil == nil && requested:
		g.Role, g.RoleSource, g.RoleOrigin = strings.ToLower(asked.Value), asked.Source, asked.Origin
	case ceil == nil:
		g.Role, g.RoleSource = "viewer", FromDefault
	case requested && rank(asked.Value) > rank(ceil.role):
		g.Role, g.RoleSource, g.RoleOrigin = ceil.role, ceil.src, ceil.origin
		r.problem(
			sevWarning,
			"role-capped",
			fmt.Sprintf(
				"%s asks for role %s, above what %s grants (%s): steward acts as %s — a flag or variable may only lower the role",
				asked.Origin,
				clip(asked.Value),
				ceil.origin,
				ceil.role,
				ceil.role,
			),
		)
	case requested:
		g.Role, g.RoleSource, g.RoleOrigin = strings.ToLower(asked.Value), asked.Source, asked.Origin
	default:
		g.Role, g.RoleSource, g.RoleOrigin = ceil.role, ceil.src, ceil.origin
	}
	if ceil != nil {
		g.Ceiling, g.CeilingOrigin = ceil.role, ceil.origin
	}
	if _, ok := roleRank[g.Role]; !ok {
		g.Role = "viewer" // a bad value is an error problem already; never act on it
	}

	// read_only: on when any source turns it on; a file's true is final.
	var ins []readOnlyInput
	for _, s := range r.System {
		if s.File.ReadOnly != nil {
			ins = append(
				ins,
				readOnlyInput{
					fmt.Sprint(*s.File.ReadOnly),
					"read_only: true in the system config " + s.Path,
					fromSystem,
				},
			)
		}
	}
	if f.ReadOnly != nil {
		ins = append(
			ins,
			readOnlyInput{fmt.Sprint(*f.ReadOnly), "read_only: true in the config file " + r.Path, FromFile},
		)
	}
	if envRO != "" {
		ins = append(ins, readOnlyInput{envRO, "STEWARD_READ_ONLY=" + envRO, fromEnv})
	}
	if flagRO != "" {
		ins = append(ins, readOnlyInput{flagRO, "--" + flagName, fromFlag})
	}
	var on *readOnlyInput
	for i, in := range ins {
		v, ok := parseBool(in.raw)
		if !ok {
			r.problem(SevError, "bad-bool", badBool(in))
			continue
		}
		if v && on == nil {
			on = &ins[i]
		}
	}
	if on != nil {
		g.ReadOnly, g.ReadOnlySource, g.ReadOnlyOrigin = true, on.src, on.origin
		for _, in := range ins {
			if v, ok := parseBool(in.raw); ok && !v && outranks(on.src, in.src) {
				r.problem(
					sevWarning,
					"read-only-locked",
					fmt.Sprintf(
						"%s cannot lift %s: a %s may only turn read-only on",
						falseOrigin(in),
						on.origin,
						sourceWord(in.src),
					),
				)
			}
		}
	}
	r.Grant = g
	for i := range r.Settings {
		s := &r.Settings[i]
		switch s.Key {
		case KeyRole:
			s.Value, s.Source, s.Origin = g.Role, g.RoleSource, g.RoleOrigin
		case KeyReadOnly:
			// Off, the setting keeps what its source gave: "false", or a value that is no
			// bool, shown beside its bad-bool error.
			if g.ReadOnly {
				s.Value, s.Source, s.Origin = "true", g.ReadOnlySource, g.ReadOnlyOrigin
			}
		}
	}
}

// outranks reports whether a is a file (system or user) of higher authority than b.
func outranks(a, b Source) bool {
	order := map[Source]int{fromSystem: 0, FromFile: 1, fromEnv: 2, fromFlag: 3}
	return (a == fromSystem || a == FromFile) && order[a] < order[b]
}

func sourceWord(s Source) string {
	switch s {
	case FromFile:
		return "user config file"
	case fromEnv:
		return "variable"
	}
	return "flag"
}

func falseOrigin(in readOnlyInput) string {
	switch in.src {
	case FromFile:
		return "read_only: false in the config file"
	case fromFlag:
		return in.origin + "=false"
	}
	return in.origin
}

// parseBool accepts true and false, in any case.
func parseBool(s string) (v, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

func badBool(in readOnlyInput) string {
	switch in.src {
	case fromEnv:
		return fmt.Sprintf("STEWARD_READ_ONLY is %q: use true or false", clip(in.raw))
	case fromFlag:
		return fmt.Sprintf("%s is %q: use true or false", in.origin, clip(in.raw))
	}
	return fmt.Sprintf("read_only %q: use true or false", clip(in.raw))
}
