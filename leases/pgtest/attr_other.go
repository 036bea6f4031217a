//go:build !linux

package pgtest

import "syscall"

// serverAttr runs the server as cred in its own process group. Other systems have no
// parent-death signal: a test binary that dies leaves the server to Stop's caller.
func serverAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true}
}
