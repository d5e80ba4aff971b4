//go:build unix

package dispatch

import (
	"errors"
	"net"
	"syscall"
)

// alive reports whether an idle connection is still open. Nothing may
// arrive between answers, so a byte to read, or the end of the stream,
// means the receiver closed it or broke the protocol. One non-blocking
// peek; it never waits.
func alive(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open := false
	var buf [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		open = errors.Is(rerr, syscall.EAGAIN)
		return true
	})
	return err == nil && open
}
