//go:build !linux

package main

import "syscall"

// childAttr puts a child in its own process group. Pdeathsig is Linux's alone: elsewhere
// only the deadline's kill of the process group ends a child whose parent died.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
