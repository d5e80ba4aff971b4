//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCopyOntoANamedPipe: a named pipe (or a device) as OUT of backup or
// compact is refused, exit 1, and stays: the copy would replace it, and
// opening a pipe to lock it waited for a writer for ever.
func TestCopyOntoANamedPipe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "complybox.db")
	mustRun(t, "credentials", "create", "--db", db, "--env", "sandbox")
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	for _, cmd := range []string{"backup", "compact"} {
		done := make(chan result, 1)
		go func() { done <- runCmd(t, cmd, "--db", db, fifo) }()
		select {
		case r := <-done:
			if r.code != 1 || !strings.Contains(r.stderr, "pipe is not a regular file") {
				t.Errorf("%s onto a named pipe: exit %d, stderr %q", cmd, r.code, r.stderr)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s onto a named pipe did not end", cmd)
		}
		if fi, err := os.Lstat(fifo); err != nil || fi.Mode().Type() != os.ModeNamedPipe {
			t.Errorf("the named pipe after %s: %v %v", cmd, fi, err)
		}
	}
}
