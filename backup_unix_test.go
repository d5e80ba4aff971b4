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

// TestCopyOntoWhatIsNoRegularFile: a named pipe or a symbolic link (or a device)
// as OUT of backup or compact is refused, exit 1, and stays: the copy
// would replace it, and opening a pipe to lock it waited for a writer
// for ever.
func TestCopyOntoWhatIsNoRegularFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "complybox.db")
	mustRun(t, "credentials", "create", "--db", db, "--env", "sandbox")
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	// A symbolic link: the copy would replace the link, not write its
	// target.
	target := filepath.Join(dir, "target.db")
	if err := os.WriteFile(target, []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, out := range []struct {
		path string
		mode os.FileMode
	}{{fifo, os.ModeNamedPipe}, {link, os.ModeSymlink}} {
		for _, cmd := range []string{"backup", "compact"} {
			done := make(chan result, 1)
			go func() { done <- runCmd(t, cmd, "--db", db, out.path) }()
			select {
			case r := <-done:
				if r.code != 1 || !strings.Contains(r.stderr, out.path+" is not a regular file") {
					t.Errorf("%s onto %s: exit %d, stderr %q", cmd, out.path, r.code, r.stderr)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("%s onto %s did not end", cmd, out.path)
			}
			if fi, err := os.Lstat(out.path); err != nil || fi.Mode().Type() != out.mode {
				t.Errorf("%s after %s: %v %v", out.path, cmd, fi, err)
			}
		}
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "kept" {
		t.Errorf("the link's target after refused copies: %q %v", b, err)
	}
}
