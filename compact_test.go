package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/complybox/complybox/store"
)

// TestCompact: compact writes a smaller copy of a db that the store opens
// with the same data, and refuses a missing source or OUT being the db.
func TestCompact(t *testing.T) {
	dir := t.TempDir()
	db, out := filepath.Join(dir, "full.db"), filepath.Join(dir, "compact.db")
	mustRun(t, "seed", "--db", db, "--applicants", "300", "--transactions", "300", "--deliveries", "1500", "--wallets", "10")

	got := mustRun(t, "compact", "--db", db, out)
	if !strings.Contains(got, out) {
		t.Errorf("compact printed %q", got)
	}
	before, after := fileSize(t, db), fileSize(t, out)
	if after >= before {
		t.Errorf("compacted %d bytes to %d", before, after)
	}
	if used := usedSize(t, out); after != used {
		t.Errorf("compacted file is %d bytes, its pages %d: an empty tail", after, used)
	}
	// A db with nothing to give back does not come out larger.
	small, smallOut := filepath.Join(dir, "small.db"), filepath.Join(dir, "small-compact.db")
	mustRun(t, "seed", "--db", small, "--applicants", "3", "--transactions", "3", "--deliveries", "3", "--wallets", "1")
	mustRun(t, "compact", "--db", small, smallOut)
	if before, after := fileSize(t, small), fileSize(t, smallOut); after > before {
		t.Errorf("compacted a small db of %d bytes to %d", before, after)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".complybox-compact-*")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}

	// The same records, read through the store.
	snapshot := func(path string) string {
		t.Helper()
		st, err := store.Open(path, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if err := st.Check(); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var b strings.Builder
		p := store.Page{Limit: store.MaxLimit}
		for {
			l, next, err := st.Deliveries(store.Sandbox, store.DeliveryFilter{}, p)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range l {
				full, err := st.Delivery(store.Sandbox, d.ID)
				if err != nil {
					t.Fatal(err)
				}
				b.WriteString(d.ID + " " + d.Status + " " + full.Payload + "\n")
			}
			if next == nil {
				break
			}
			p.Cursor = *next
		}
		as, _, err := st.Applicants(store.Sandbox, store.ApplicantFilter{}, store.Page{Limit: store.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range as {
			b.WriteString(a.ID + " " + a.ExternalUserID + "\n")
		}
		return b.String()
	}
	// Snapshot the copy first: opening the source writes nothing it holds.
	if a, b := snapshot(out), snapshot(db); a != b || strings.Count(a, "\n") < 1500 {
		t.Errorf("the compacted copy differs (%d lines vs %d)", strings.Count(a, "\n"), strings.Count(b, "\n"))
	}

	if r := runCmd(t, "compact", "--db", filepath.Join(dir, "missing.db"), filepath.Join(dir, "x.db")); r.code != 1 ||
		!strings.Contains(r.stderr, "does not exist") {
		t.Errorf("compact of a missing db: exit %d, %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.db")); !os.IsNotExist(err) {
		t.Errorf("compact of a missing db left OUT: %v", err)
	}
	if r := runCmd(t, "compact", "--db", db, "-"); r.code != 2 || !strings.Contains(r.stderr, "must be a file") {
		t.Errorf("compact to -: exit %d, %q; want a usage error (backup takes - as stdout, compact cannot)", r.code, r.stderr)
	}
	if r := runCmd(t, "compact", "--db", db, db); r.code == 0 {
		t.Errorf("compact onto the db itself succeeded: %q", r.stdout)
	}
}

// usedSize is the bytes of the db's pages up to its high-water mark.
func usedSize(t *testing.T, path string) int64 {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.View(func(tx *bolt.Tx) error { n = tx.Size(); return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
