//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// processEnded reports whether no process with id pid exists.
func processEnded(pid int) bool {
	return syscall.Kill(pid, 0) == syscall.ESRCH
}

// lockOut takes the lock bbolt takes on a db file on out, when out exists,
// and returns its release. A server (or any command) holding out as its db
// makes it fail naming out: renaming a copy over a db in use leaves its
// server writing to a file no name reaches, and every write it answers
// afterwards is lost at its next start. Held until the copy is renamed
// into place, it also keeps a server from opening out meanwhile.
//
// An OUT that is not a regular file (a symbolic link, which the copy
// would replace, not write through; a named pipe, whose open waits for a
// writer; a device such as /dev/null) is refused, and so is one this user
// can neither read nor write: whether a server holds it cannot be told.
func lockOut(out string) (release func(), err error) {
	fi, err := os.Lstat(out)
	if errors.Is(err, os.ErrNotExist) {
		return func() {}, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("OUT %s is %s, not a regular file: the copy would replace it; name a file (backup writes to stdout with -)", out, fileKind(fi.Mode()))
	}
	f, err := os.OpenFile(out, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrPermission) {
		f, err = os.OpenFile(out, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	}
	if errors.Is(err, os.ErrPermission) {
		return nil, fmt.Errorf("OUT %s exists and may not be opened by this user, so whether a running server holds it cannot be told: remove it first, or choose another OUT", out)
	}
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("OUT %s is in use by another process (a running server's db?): stop it first, or choose another OUT", out)
		}
		return nil, fmt.Errorf("lock %s: %w", out, err)
	}
	return func() { f.Close() }, nil
}
