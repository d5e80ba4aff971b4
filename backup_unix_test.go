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

// TestCopyOntoWhatIsNoRegularFile: a named pipe, a symbolic link, a device
// or a directory as OUT of backup or compact is refused, exit 1, naming
// what it is, and stays: the copy would replace it, and opening a pipe to
// lock it waited for a writer for ever. An OUT in a missing directory
// names the directory.
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
	// A directory: its message says a directory, not its type bits as
	// permissions (d---------).
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, out := range []struct {
		path, kind string
		mode       os.FileMode
	}{{fifo, "a named pipe", os.ModeNamedPipe}, {link, "a symbolic link", os.ModeSymlink}, {sub, "a directory", os.ModeDir}} {
		for _, cmd := range []string{"backup", "compact"} {
			done := make(chan result, 1)
			go func() { done <- runCmd(t, cmd, "--db", db, out.path) }()
			select {
			case r := <-done:
				if r.code != 1 || !strings.Contains(r.stderr, out.path+" is "+out.kind+", not a regular file") {
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
	// An OUT in a directory that does not exist names that directory, not
	// the temporary file the copy would have been built in.
	for _, cmd := range []string{"backup", "compact"} {
		out := filepath.Join(dir, "nodir", "x.db")
		r := runCmd(t, cmd, "--db", db, out)
		if r.code != 1 || !strings.Contains(r.stderr, "OUT "+out+": cannot create a file in its directory "+filepath.Join(dir, "nodir")+": no such file or directory") || strings.Contains(r.stderr, ".complybox-") {
			t.Errorf("%s into a missing directory: exit %d, stderr %q", cmd, r.code, r.stderr)
		}
	}
}
