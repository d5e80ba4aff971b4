//go:build unix

package main

import "syscall"

// processEnded reports whether no process with id pid exists.
func processEnded(pid int) bool {
	return syscall.Kill(pid, 0) == syscall.ESRCH
}
