package store_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/complybox/complybox/store"
)

// slowReader is the client of a backup: it notes, on every write, how many
// read transactions the store holds open.
type slowReader struct {
	s        *store.Store
	f        *os.File
	n        int64
	openSeen int
}

func (r *slowReader) Write(p []byte) (int, error) {
	r.openSeen = max(r.openSeen, r.s.OpenReadTxs())
	r.n += int64(len(p))
	return r.f.Write(p)
}

// TestBackupHoldsNoTransactionWhileSending: the copy is taken before a byte
// reaches the client, so a client that reads slowly (or not at all) holds
// no read transaction — one open while the file must grow would hold every
// commit until the download ended. The copy is complete, has the size
// announced, and leaves no file behind.
func TestBackupHoldsNoTransactionWhileSending(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, _ := mustOpen(t, filepath.Join(dir, "test.db"), store.Options{})
	if _, err := s.CreateVault(store.Sandbox, store.VaultInput{Name: new("backup")}, store.Idem{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "copy.db")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	r := &slowReader{s: s, f: f}
	var size int64
	if err := s.Backup(r, func(n int64) {
		size = n
		if open := s.OpenReadTxs(); open != 0 {
			t.Errorf("%d read transactions open when the size is announced", open)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if r.openSeen != 0 {
		t.Errorf("%d read transactions open while the client read", r.openSeen)
	}
	if size == 0 || r.n != size {
		t.Errorf("sent %d bytes, announced %d", r.n, size)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), "backup") {
			t.Errorf("%s left beside the db", e.Name())
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(out, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatalf("the copy does not open: %v", err)
	}
	defer db.Close()
	if err := db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	}); err != nil {
		t.Errorf("the copy: %v", err)
	}
}

// TestOpenRefusesAnEmptyFile: an existing file of no bytes (a backup that
// failed into a redirected file) is not a db to restore: Open says so and
// leaves it as it is, where bbolt would write a new, empty db into it and
// the service would start with nothing. A file that does not exist still
// becomes a new db.
func TestOpenRefusesAnEmptyFile(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "restored.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if st, err := store.Open(empty, store.Options{}); err == nil || !strings.Contains(err.Error(), "empty") || !strings.Contains(err.Error(), empty) {
		if st != nil {
			st.Close()
		}
		t.Fatalf("Open of an empty file: %v", err)
	}
	if fi, err := os.Stat(empty); err != nil || fi.Size() != 0 {
		t.Fatalf("the empty file was written: %v %v", fi, err)
	}
	fresh := filepath.Join(t.TempDir(), "new.db")
	st, err := store.Open(fresh, store.Options{})
	if err != nil {
		t.Fatalf("Open of a new path: %v", err)
	}
	st.Close()
}
