//go:build unix

package store_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/complybox/complybox/store"
)

// TestOpenLeavesNoFileItCouldNotCreate: a new db whose first writes fail
// (a full disk, here a file-size limit of 8 KiB, below bbolt's first four
// pages) is not left behind: the next start would refuse it as a damaged
// db, with nothing in it to restore. Once the space is there, the same
// path makes a db. The Open runs in a child process (this test binary
// again), since the limit holds for a whole process. A --db that is a
// symbolic link to a file not made yet loses the file it made too.
func TestOpenLeavesNoFileItCouldNotCreate(t *testing.T) {
	if path := os.Getenv("COMPLYBOX_OPEN_UNDER_FSIZE"); path != "" {
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 8 << 10, Max: 8 << 10}); err != nil {
			t.Fatal(err)
		}
		if s, err := store.Open(path, store.Options{}); err == nil {
			s.Close()
			t.Fatal("Open made a db under an 8 KiB file-size limit")
		}
		return
	}
	dir := t.TempDir()
	// A plain path, and a symbolic link to a file not made yet (--db
	// naming a link): the file made through the link goes too.
	target := filepath.Join(dir, "target.db")
	if err := os.Symlink("target.db", filepath.Join(dir, "link.db")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ open, made string }{{filepath.Join(dir, "new.db"), filepath.Join(dir, "new.db")}, {filepath.Join(dir, "link.db"), target}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestOpenLeavesNoFileItCouldNotCreate$")
		cmd.Env = append(os.Environ(), "COMPLYBOX_OPEN_UNDER_FSIZE="+c.open)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the Open of %s under the limit: %v\n%s", c.open, err, out)
		}
		if _, err := os.Stat(c.made); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("a failed creation left %s behind: %v", c.made, err)
		}
		s, _ := mustOpen(t, c.open, store.Options{})
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOpenNeverRemovesAnotherProcessFile: a file another process made
// between this Open's look and its own create is that process's, even
// when this Open then fails on it (here: it is still empty, as a db being
// laid out is): it stays. Only a file this Open made itself is removed.
func TestOpenNeverRemovesAnotherProcessFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "theirs.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Open(path, store.Options{}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("Open of an empty file another process made: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the other process's file is gone: %v", err)
	}
}
