package pgtest

import "syscall"

// serverAttr runs the server as cred in its own process group, killed (SIGQUIT: an
// immediate shutdown) when the thread that started it dies.
func serverAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
}
