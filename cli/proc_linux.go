//go:build linux

package cli

import "syscall"

// childAttr makes a helper process (the demo's steward mcp) die with steward (Linux
// parent-death signal).
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM} }
