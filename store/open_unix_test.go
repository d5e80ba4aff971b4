//go:build unix

package store_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/complybox/complybox/store"
)

// TestOpenLeavesNoFileItCouldNotCreate: a new db whose first writes fail
// (a full disk, here a file-size limit of 8 KiB, below bbolt's first four
// pages) is not left behind: the next start would refuse it as a damaged
// db, with nothing in it to restore. Once the space is there, the same
// path makes a db. The Open runs in a child process (this test binary
// again), since the limit holds for a whole process.
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
	path := filepath.Join(t.TempDir(), "new.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestOpenLeavesNoFileItCouldNotCreate$")
	cmd.Env = append(os.Environ(), "COMPLYBOX_OPEN_UNDER_FSIZE="+path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the Open under the limit: %v\n%s", err, out)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a failed creation left %s behind: %v", path, err)
	}
	s, _ := mustOpen(t, path, store.Options{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
