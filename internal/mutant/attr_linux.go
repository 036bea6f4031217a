package main

import "syscall"

// childAttr puts a child in its own process group and, on Linux, ties its life to the
// thread that started it (Pdeathsig), so a run killed from outside leaves nothing behind.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
