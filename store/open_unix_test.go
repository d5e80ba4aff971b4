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
	"time"

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

// TestOpenSameNewFileAtOnce: several first starts on one new db at once
// (scripts running `credentials create` in parallel) all succeed, one
// after the other, and every credential each one made is in the file: a
// loser sees the winner's file still empty for a moment, which is no
// damaged copy to refuse, and nobody removes it.
func TestOpenSameNewFileAtOnce(t *testing.T) {
	t.Parallel()
	for round := range 20 {
		path := filepath.Join(t.TempDir(), "new.db")
		errs := make(chan error, 4)
		for range 4 {
			go func() {
				s, err := store.Open(path, store.Options{OpenTimeout: 10 * time.Second, PasswordCost: 4})
				if err == nil {
					_, _, err = s.CreateCredential(store.Sandbox, store.RolePartner, "")
					err = errors.Join(err, s.Close())
				}
				errs <- err
			}()
		}
		for range 4 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		s, _ := mustOpen(t, path, store.Options{})
		creds, err := s.Credentials()
		s.Close()
		if err != nil || len(creds) != 4 {
			t.Fatalf("round %d: %d credentials in the file, want 4 (%v)", round, len(creds), err)
		}
	}
}

// TestOpenNewFileThroughALinkWithDotDot: a --db link whose target climbs
// out of a linked directory (sub/../t.db, sub a link) makes the db where
// the kernel resolves it, and no stray file where a lexical reading
// (filepath.Clean: ./t.db) would put it.
func TestOpenNewFileThroughALinkWithDotDot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "real", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("real", "deep"), filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/../t.db", filepath.Join(dir, "l.db")); err != nil {
		t.Fatal(err)
	}
	s, _ := mustOpen(t, filepath.Join(dir, "l.db"), store.Options{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "real", "t.db")); err != nil || fi.Size() == 0 {
		t.Fatalf("the db is not where the link leads: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "t.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a stray file beside the link: %v", err)
	}
}
