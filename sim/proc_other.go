//go:build !linux

package sim

import "syscall"

// childAttr: no parent-death signal outside Linux; Fleet.Close kills every child.
func childAttr() *syscall.SysProcAttr { return nil }
