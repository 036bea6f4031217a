package sim

import "syscall"

// childAttr makes a worker process die with the demo (Linux parent-death signal).
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
