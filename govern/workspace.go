package govern

import (
	"fmt"
	"os"
	"os/user"
	"reflect"
	"strings"

	"steward/leases"
)

// Workspace is what the core acts on: the supervised system's stores for one repository.
type Workspace struct {
	// LocksDir holds the per-issue lock files.
	LocksDir string
	// DBPath is the control-plane DB: a SQLite file (the embedded default) or a
	// postgres:// URL (without a password).
	DBPath string
	// DBPasswordFile names a file holding the PostgreSQL password (leases.Target).
	DBPasswordFile string
	// RepoRoot is the canonical repository root; worktrees live under RepoRoot/branches.
	RepoRoot string
	// Gitea is the Gitea side, nil when none is configured.
	Gitea GiteaSide
	// Env looks up environment overrides of the lease policy; os.LookupEnv when nil.
	Env func(string) (string, bool)
	// Host is this node's name, for process liveness; leases.HostName when empty.
	Host string
	// DBHost is the host the control-plane DB was written on, when that is not this one
	// (config db_host). A DB row that records no host (the seed's schema has no host
	// column) is judged on the DB's host: on this one when DBHost is empty or names it,
	// and as unknown — never dead, never missing — when it names another.
	DBHost string
}

func (w Workspace) env() func(string) (string, bool) {
	if w.Env != nil {
		return w.Env
	}
	return os.LookupEnv
}

// DBTarget is the control-plane DB the workspace names.
func (w Workspace) DBTarget() leases.Target {
	return leases.Target{Loc: w.DBPath, PasswordFile: w.DBPasswordFile}
}

func (w Workspace) host() string {
	if w.Host != "" {
		return w.Host
	}
	h, _ := leases.HostName()
	return h
}

// LocalActor returns an actor for the current OS user on this host with the given role.
func LocalActor(role Role, giteaLogin string) Actor {
	a := Actor{Role: role, GiteaLogin: giteaLogin}
	if u, err := user.Current(); err == nil {
		a.OSUser = u.Username
	} else {
		a.OSUser = fmt.Sprintf("uid-%d", os.Getuid())
	}
	a.Host, _ = leases.HostName()
	return a
}

// sameFence reports whether two fence snapshots are equal. Snapshots are plain values.
func sameFence(a, b any) bool { return reflect.DeepEqual(a, b) }

// fenceDiff names the fields that differ between two snapshots of the same type.
func fenceDiff(a, b any) string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if !va.IsValid() || !vb.IsValid() || va.Type() != vb.Type() {
		return "the target changed kind"
	}
	if va.Kind() == reflect.Pointer {
		if va.IsNil() || vb.IsNil() {
			return "the target appeared or disappeared"
		}
		va, vb = va.Elem(), vb.Elem()
	}
	if va.Kind() != reflect.Struct {
		return fmt.Sprintf("%v → %v", a, b)
	}
	var diffs []string
	for i := 0; i < va.NumField(); i++ {
		fa, fb := va.Field(i), vb.Field(i)
		if !va.Type().Field(i).IsExported() {
			continue
		}
		if !reflect.DeepEqual(fa.Interface(), fb.Interface()) {
			diffs = append(diffs, fmt.Sprintf("%s: %v → %v", va.Type().Field(i).Name, fa.Interface(), fb.Interface()))
		}
	}
	if len(diffs) == 0 {
		return "the target changed"
	}
	return strings.Join(diffs, "; ")
}
