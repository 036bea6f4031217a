package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"go.yaml.in/yaml/v3"
)

// SystemPath is the system-wide configuration file, read on every run whatever the
// environment says. It is a build-time default: a packager may set it with
// -ldflags "-X steward/config.SystemPath=/path". Nothing a user sets at run time replaces it.
var SystemPath = "/etc/steward/config.yaml"

// envSystemConfig names one more system-level file, read besides SystemPath, never
// instead of it. A system file can only tighten (turn read-only on, lower a role), so a
// file a user names here can take nothing away from what SystemPath imposes: the variable
// is safe to leave to users, and lets tests add a system file without writing to /etc.
const envSystemConfig = "STEWARD_SYSTEM_CONFIG"

// SystemFile is what a system-wide file may hold: ceilings, nothing else. An unknown key
// (a workspace, a token) is an error, so an administrator never believes a setting there
// applies when it does not.
type SystemFile struct {
	// ReadOnly, when true, makes every steward run read-only; nothing can lift it.
	ReadOnly *bool `yaml:"read_only,omitempty"`
	// Roles maps a Gitea login (or "*", every other login) to the highest role it may hold.
	// A login the map does not name holds at most viewer.
	Roles map[string]string `yaml:"roles,omitempty"`
}

// SystemSource is one system-wide file as read.
type SystemSource struct {
	Path  string `json:"path"`
	Found bool   `json:"found"`
	// Protected is true when only its owner, root, can write the file (and its folder).
	// An unprotected file still applies — it can only tighten — but it protects nothing.
	Protected bool       `json:"protected"`
	File      SystemFile `json:"-"`
}

// systemPaths lists the system files to read: SystemPath always, then the one
// STEWARD_SYSTEM_CONFIG names, if any.
func systemPaths(in Inputs, getenv func(string) (string, bool)) []string {
	if in.SystemPaths != nil {
		return in.SystemPaths
	}
	ps := []string{SystemPath}
	if p, ok := getenv(envSystemConfig); ok && p != "" && p != SystemPath {
		ps = append(ps, p)
	}
	return ps
}

// loadSystem reads the system files. A file that exists but cannot be read or parsed is an
// error problem: steward does not run under ceilings it cannot read (fail closed).
func (r *Resolved) loadSystem(paths []string) {
	for _, p := range paths {
		s := SystemSource{Path: p}
		data, err := readConfig(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			r.System = append(r.System, s)
			continue
		case err != nil:
			r.problem(
				SevError,
				"system-config",
				fmt.Sprintf(
					"the system config %s cannot be read (%s); steward does not run under limits it cannot read — ask the owner of "+
						"the file",
					p,
					osReason(err),
				),
			)
			s.Found = true
			r.System = append(r.System, s)
			continue
		}
		s.Found = true
		f, err := parseSystem(data)
		if err != nil {
			r.problem(
				SevError,
				"system-config",
				"the system config "+p+" "+err.Error()+" — ask the owner of the file to fix it",
			)
		}
		s.File = f
		for login, role := range f.Roles {
			if !roles[strings.ToLower(role)] {
				r.problem(
					SevError,
					"system-config",
					fmt.Sprintf(
						"the system config %s: roles.%s = %q: use viewer, operator, controller or admin",
						p,
						clip(login),
						clip(role),
					),
				)
			}
		}
		s.Protected = protected(p)
		if !s.Protected {
			r.problem(
				sevWarning,
				"system-config-permissions",
				"the system config "+p+" can be written by someone other than root: its limits still apply, but whoever can "+
					"write it can lift them",
			)
		}
		r.System = append(r.System, s)
	}
}

// parseSystem decodes a system file; only read_only and roles are accepted.
func parseSystem(data []byte) (SystemFile, error) {
	var f SystemFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return SystemFile{}, fmt.Errorf(
			"is not valid: %s (a system config holds only read_only and roles)",
			yamlReason(err.Error(), data),
		)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return SystemFile{}, errors.New("holds more than one YAML document")
	}
	return f, nil
}

// protected reports whether path and its folder are owned by root and writable by no one
// else. The folder of a path named relative to the working directory is that directory's
// (filepath.Dir: "."), never "/".
func protected(path string) bool {
	for _, p := range []string{path, filepath.Dir(path)} {
		fi, err := os.Stat(p)
		if err != nil {
			return false
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || st.Uid != 0 || fi.Mode().Perm()&0o022 != 0 {
			return false
		}
	}
	return true
}

// osReason is an OS error's reason without Go's operation prefix ("open /x: ").
func osReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
