package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// sqliteHeader opens every SQLite database file.
const sqliteHeader = "SQLite format 3\x00"

// CheckPaths adds a problem for every path setting that does not name what steward will
// use — all of them, not the first: the lock directory must be a directory steward can list;
// db_path a regular SQLite file it can read; repo_root a directory holding branches/ (where
// the workers' worktrees live: without it every worktree would read missing); the audit
// log a regular file, or a place one can be created. A path steward can read but not
// write is a warning, unless steward is read-only: it can show the workspace but not act
// on it. A db_path that is a URL (a database server) is not a file and is not checked here.
// It reads only metadata and, of the DB, its first 16 bytes; it writes nothing. `steward
// config check` calls it; the other commands do not (status must still run, and say
// unavailable, when a path is wrong).
func (r *Resolved) CheckPaths() {
	ro := r.Grant.ReadOnly
	if s := r.Get(KeyLocksDir); !s.Invalid && s.Value != "" {
		r.checkDir(s, "locks-dir", "the supervised system's lock directory", ro)
	}
	if s := r.Get(KeyDBPath); !s.Invalid && s.Value != "" && !strings.Contains(s.Value, "://") {
		r.checkDB(s, ro)
	}
	if s := r.Get(KeyRepoRoot); !s.Invalid && s.Value != "" {
		if r.checkDir(s, "repo-root", "the canonical repository root", true) {
			b := filepath.Join(s.Value, "branches")
			fi, err := os.Stat(b)
			switch {
			case err != nil:
				r.problem(
					SevError,
					"repo-root",
					fmt.Sprintf(
						"repo_root %s (%s) has no branches/ (%s): the workers' worktrees live under repo_root/branches, and without "+
							"it every worktree would read missing. Point repo_root at the canonical checkout",
						s.Value,
						origin(s),
						reason(err),
					),
				)
			case !fi.IsDir():
				r.problem(
					SevError,
					"repo-root",
					fmt.Sprintf("repo_root %s (%s): branches is not a directory", s.Value, origin(s)),
				)
			}
		}
	}
	if s := r.Get(KeyAuditLog); !s.Invalid && s.Value != "" {
		r.checkAudit(s, ro)
	}
}

func origin(s Setting) string {
	if s.Origin == "" {
		return "default"
	}
	return s.Origin
}

// reason is an OS error's reason without Go's operation prefix.
func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// checkDir checks that s names a directory steward can list, and (unless readOnly) write.
// It reports whether the directory exists.
func (r *Resolved) checkDir(s Setting, code, what string, readOnly bool) bool {
	fi, err := os.Stat(s.Value)
	switch {
	case err != nil:
		r.problem(
			SevError,
			code,
			fmt.Sprintf("%s %s (%s) cannot be used: %s. It should be %s", s.Key, s.Value, origin(s), reason(err), what),
		)
		return false
	case !fi.IsDir():
		r.problem(
			SevError,
			code,
			fmt.Sprintf("%s %s (%s) is not a directory; it should be %s", s.Key, s.Value, origin(s), what),
		)
		return false
	}
	if f, err := os.Open(s.Value); err != nil {
		r.problem(
			SevError,
			code,
			fmt.Sprintf("%s %s (%s) cannot be listed: %s", s.Key, s.Value, origin(s), reason(err)),
		)
	} else {
		_, err := f.Readdirnames(1)
		f.Close()
		if err != nil && !errors.Is(err, io.EOF) {
			r.problem(SevError, code, fmt.Sprintf("%s %s (%s) cannot be listed: %s", s.Key, s.Value, origin(s), reason(err)))
		}
	}
	if !readOnly && syscall.Access(s.Value, 0x2) != nil {
		r.problem(
			sevWarning,
			code+"-read-only",
			fmt.Sprintf(
				"%s %s (%s) is not writable by you: steward can show it but every action that writes there will fail; run as "+
					"the workers' user, or set read_only: true",
				s.Key,
				s.Value,
				origin(s),
			),
		)
	}
	return true
}

// checkDB checks that db_path is a regular SQLite file steward can read, and write with its
// folder (SQLite's journal lives beside it) unless read-only.
func (r *Resolved) checkDB(s Setting, readOnly bool) {
	fail := func(msg string) {
		r.problem(SevError, "db-path", fmt.Sprintf("db_path %s (%s) %s", s.Value, origin(s), msg))
	}
	fi, err := os.Stat(s.Value)
	switch {
	case err != nil:
		fail("cannot be used: " + reason(err) + ". It should be the supervised system's control-plane SQLite file")
		return
	case fi.IsDir():
		fail("is a directory, not a SQLite file")
		return
	case !fi.Mode().IsRegular():
		fail("is not a regular file (" + fi.Mode().Type().String() + ")")
		return
	}
	f, err := os.Open(s.Value)
	if err != nil {
		fail("cannot be read: " + reason(err))
		return
	}
	head := make([]byte, len(sqliteHeader))
	n, _ := io.ReadFull(f, head)
	f.Close()
	if string(head[:n]) != sqliteHeader {
		what := "is not a SQLite database (its first bytes are not SQLite's header)"
		if n == 0 {
			what = "is empty, not the supervised system's database"
		}
		fail(what)
		return
	}
	if !readOnly && (syscall.Access(s.Value, 0x2) != nil || syscall.Access(filepath.Dir(s.Value), 0x2) != nil) {
		r.problem(
			sevWarning,
			"db-path-read-only",
			fmt.Sprintf(
				"db_path %s (%s) or its folder is not writable by you: steward can show it but every action on a lease will "+
					"fail; run as the workers' user, or set read_only: true",
				s.Value,
				origin(s),
			),
		)
	}
}

// checkAudit checks the audit log: an existing one is a regular file steward can append
// to; a missing one needs a folder steward can create it in.
func (r *Resolved) checkAudit(s Setting, readOnly bool) {
	fi, err := os.Stat(s.Value)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		r.problem(SevError, "audit-log", fmt.Sprintf("audit_log %s (%s) is not a regular file", s.Value, origin(s)))
	case err == nil:
		if !readOnly && syscall.Access(s.Value, 0x2) != nil {
			r.problem(
				sevWarning,
				"audit-log-read-only",
				fmt.Sprintf(
					"audit_log %s (%s) is not writable by you: every action will be refused audit_unavailable",
					s.Value,
					origin(s),
				),
			)
		}
	case !errors.Is(err, fs.ErrNotExist):
		r.problem(
			SevError,
			"audit-log",
			fmt.Sprintf("audit_log %s (%s) cannot be used: %s", s.Value, origin(s), reason(err)),
		)
	case !readOnly:
		// The log and its folders are created on the first action: the nearest existing
		// folder must take them.
		d := filepath.Dir(s.Value)
		for {
			if fi, err := os.Stat(d); err == nil {
				if !fi.IsDir() {
					r.problem(
						SevError,
						"audit-log",
						fmt.Sprintf(
							"audit_log %s (%s) cannot be created: %s is not a directory",
							s.Value,
							origin(s),
							d,
						),
					)
				} else if syscall.Access(d, 0x2) != nil {
					r.problem(sevWarning, "audit-log-read-only", fmt.Sprintf("audit_log %s (%s) cannot be created: %s is not "+
						"writable by you; every action will be refused audit_unavailable", s.Value, origin(s), d))
				}
				return
			}
			up := filepath.Dir(d)
			if up == d {
				return
			}
			d = up
		}
	}
}
