//go:build !linux

package cli

import "syscall"

// childAttr: no parent-death signal outside Linux; the demo stops its steward mcp on exit.
func childAttr() *syscall.SysProcAttr { return nil }
