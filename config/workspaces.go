package config

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// allWorkspaces is the name the workbench gives its view of every workspace at once: no
// workspace of the file may take it.
const allWorkspaces = "all"

// defaultName is the name of the workspace a file with no workspaces describes (the
// single-workspace settings: flags, variables, defaults).
const defaultName = "default"

// Name is the workspace's name: the file's, or defaultName when the file lists none.
func (r *Resolved) Name() string {
	if r.Workspace == "" {
		return defaultName
	}
	return r.Workspace
}

// workspaceKeys are the settings that make one workspace (its sources, its Gitea, its
// host); the rest (labels, thresholds, SLAs, notify, theme, roles) are the same for every
// workspace of the file.
var workspaceKeys = map[string]bool{KeyLocksDir: true, KeyDBPath: true, KeyDBPasswordFile: true, KeyRepoRoot: true,
	KeyDBHost: true, KeyHost: true, KeyAuditLog: true, KeyTeaLogin: true, KeyGiteaURL: true, KeyGiteaToken: true,
	KeyGiteaOwner: true, KeyGiteaRepo: true, KeyGiteaRemote: true}

// LoadAll resolves every workspace the file lists — the default one (default_workspace,
// or the one --workspace chose) first, then the others by name — or, for a file with no
// workspaces, the one workspace the single-workspace settings describe. A workspace's own
// settings (workspaceKeys) come from flags and variables only for the default workspace:
// --locks or STEWARD_LOCKS_DIR names one lock directory, never every workspace's; the
// others' come from their entry in the file. With several workspaces and no default,
// flags and variables of a workspace's settings apply to none, and a warning says so.
func LoadAll(in Inputs) ([]*Resolved, error) {
	first, err := Load(in)
	if err != nil {
		return nil, err
	}
	// A file with no workspaces is the one the single-workspace settings describe; a
	// workspace asked for (--workspace, default_workspace) that the file does not list is
	// the error of the one result, never every other workspace without it.
	if len(first.Names) == 0 || hasProblem(first, "workspace-unknown") {
		return []*Resolved{first}, nil
	}
	getenv := in.Getenv
	if getenv == nil {
		getenv = os.LookupEnv
	}
	own := in
	own.Flags = map[string]string{}
	for k, v := range in.Flags {
		if !workspaceKeys[k] {
			own.Flags[k] = v
		}
	}
	own.Getenv = func(k string) (string, bool) {
		for _, x := range keys {
			if x.env == k && workspaceKeys[x.name] {
				return "", false
			}
		}
		return getenv(k)
	}
	var ignored []string
	if first.Workspace == "" { // several, no default: no workspace takes the flags
		for k := range in.Flags {
			if workspaceKeys[k] {
				ignored = append(ignored, "--"+k)
			}
		}
		for _, x := range keys {
			if v, ok := getenv(x.env); ok && v != "" && workspaceKeys[x.name] {
				ignored = append(ignored, x.env)
			}
		}
		sort.Strings(ignored)
	}
	var out []*Resolved
	if first.Workspace != "" {
		out = append(out, first)
	}
	for _, n := range first.Names {
		if n == first.Workspace {
			continue
		}
		sub := own
		sub.Workspace = n
		r, err := Load(sub)
		if err != nil {
			return nil, err
		}
		if len(ignored) > 0 {
			r.problem(
				sevWarning,
				"workspace-flags",
				fmt.Sprintf(
					"%s set one workspace's settings, but the file lists %d workspaces and no default_workspace: they apply to "+
						"none; choose one with --workspace",
					strings.Join(ignored, ", "),
					len(first.Names),
				),
			)
		}
		out = append(out, r)
	}
	return out, nil
}

// hasProblem reports whether r has a problem with code.
func hasProblem(r *Resolved, code string) bool {
	for _, p := range r.Problems {
		if p.Code == code {
			return true
		}
	}
	return false
}

// hostName reports whether s may be a host name (empty is this host).
func hostName(s string) bool {
	return strings.IndexFunc(s, func(c rune) bool { return c <= ' ' || c == '/' || c == 0x7f }) < 0
}

// checkWorkspaces checks the file's list of workspaces as a whole: every name usable on
// a command line and in the workbench (not "all"); with several workspaces, each names its
// own lock directory and DB (a default would make two of them read the same directory);
// no two read one lock directory on one host.
func (r *Resolved) checkWorkspaces(f *File) {
	names := make([]string, 0, len(f.Workspaces))
	for n := range f.Workspaces {
		names = append(names, n)
	}
	sort.Strings(names)
	seen := map[string]string{}
	for _, n := range names {
		w := f.Workspaces[n]
		switch {
		case strings.EqualFold(n, allWorkspaces):
			r.problem(
				SevError,
				"workspace-name",
				fmt.Sprintf(
					"workspace %q: the name %q is the workbench's view of every workspace; rename it",
					clip(n),
					allWorkspaces,
				),
			)
		case n == "" || len(n) > 64 || strings.IndexFunc(n, badNameRune) >= 0:
			r.problem(
				SevError,
				"workspace-name",
				fmt.Sprintf(
					"workspace %q: a name is 1 to 64 characters with no spaces, control characters, commas or slashes",
					clip(n),
				),
			)
		}
		if len(names) < 2 {
			continue
		}
		var missing []string
		if strings.TrimSpace(w.LocksDir) == "" {
			missing = append(missing, "locks_dir")
		}
		if strings.TrimSpace(w.DBPath) == "" && strings.TrimSpace(w.DBURL) == "" {
			missing = append(missing, "db_path or db_url")
		}
		if len(missing) > 0 {
			r.problem(
				SevError,
				"workspace-incomplete",
				fmt.Sprintf(
					"workspaces.%s sets no %s: with several workspaces each names its own (a default would be shared)",
					n,
					strings.Join(missing, " and "),
				),
			)
			continue
		}
		key := strings.ToLower(w.Host) + "\x00" + filepath.Clean(w.LocksDir)
		if other, ok := seen[key]; ok {
			r.problem(
				SevError,
				"workspace-shared-locks",
				fmt.Sprintf(
					"workspaces %s and %s read one lock directory (%s) on one host: every claim would show twice",
					other,
					n,
					w.LocksDir,
				),
			)
		}
		seen[key] = n
	}
}

// remoteName reports whether s can be a git remote's name as the workers' tools write it in
// their records: empty (not set), or no spaces, control characters, quotes or backslashes,
// not starting with '-' or '.' (git refuses such names, and one would read as an option).
func remoteName(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == '-' || s[0] == '.' {
		return false
	}
	return strings.IndexFunc(
		s,
		func(c rune) bool { return c <= ' ' || c == 0x7f || c == '"' || c == '\'' || c == '\\' },
	) < 0
}

// badNameRune reports a rune a workspace's name may not hold: a space or control
// character, a slash, DEL, or a comma.
func badNameRune(c rune) bool { return c <= ' ' || c == '/' || c == 0x7f || c == ',' }
