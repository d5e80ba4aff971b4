package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/complybox/complybox/store"
)

func TestBackupCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "complybox.db")
	mustRun(t, "credentials", "create", "--db", db, "--env", "sandbox")
	mustRun(t, "credentials", "create", "--db", db, "--env", "production", "--role", "admin")

	out := filepath.Join(dir, "copy.db")
	if got := mustRun(t, "backup", "--db", db, out); !strings.Contains(got, out) {
		t.Fatalf("backup printed %q", got)
	}
	want := listKeys(t, db)
	if got := listKeys(t, out); got != want || want == "" {
		t.Fatalf("backup holds %q, want %q", got, want)
	}

	t.Run("Stdout", func(t *testing.T) {
		b := mustRun(t, "backup", "--db", db, "-")
		p := filepath.Join(t.TempDir(), "stdout.db")
		if err := os.WriteFile(p, []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := listKeys(t, p); got != want {
			t.Fatalf("stdout backup holds %q, want %q", got, want)
		}
	})
	t.Run("ErrMissingDB", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "missing.db")
		r := runCmd(t, "backup", "--db", missing, filepath.Join(t.TempDir(), "x.db"))
		wantErr(t, r.err(), "missing.db")
		if _, err := os.Stat(missing); err == nil {
			t.Fatal("backup created the missing db")
		}
	})
	t.Run("ErrOutIsDB", func(t *testing.T) {
		r := runCmd(t, "backup", "--db", db, filepath.Join(dir, ".", "complybox.db"))
		wantErr(t, r.err(), "the db itself")
		if got := listKeys(t, db); got != want {
			t.Fatalf("db holds %q after a refused backup, want %q", got, want)
		}
	})
	t.Run("LeavesTheDBAsItIs", func(t *testing.T) {
		// A backup reads the db read-only: not one byte of it changes (a
		// full open rewrote its meta pages, and would upgrade an old
		// layout before copying it).
		before, err := os.ReadFile(db)
		if err != nil {
			t.Fatal(err)
		}
		mustRun(t, "backup", "--db", db, filepath.Join(t.TempDir(), "again.db"))
		mustRun(t, "backup", "--db", db, "-")
		if after, _ := os.ReadFile(db); !bytes.Equal(before, after) {
			t.Fatal("backup changed the db it copied")
		}
	})
	t.Run("ErrEmptyFile", func(t *testing.T) {
		empty := filepath.Join(t.TempDir(), "empty.db")
		if err := os.WriteFile(empty, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		r := runCmd(t, "backup", "--db", empty, filepath.Join(t.TempDir(), "x.db"))
		if r.code != 1 || !strings.Contains(r.stderr, "empty.db: the file is empty") {
			t.Fatalf("backup of an empty file: exit %d, stderr %q", r.code, r.stderr)
		}
	})
	t.Run("ErrOutInUse", func(t *testing.T) {
		// OUT naming a db a running server holds (the live file of the
		// README's compaction steps, the next time round): renaming the
		// copy over it leaves the server writing to a file no name
		// reaches, and every write it acknowledges is lost at its next
		// start. backup and compact refuse it and leave it alone.
		live := filepath.Join(t.TempDir(), "live.db")
		mustRun(t, "credentials", "create", "--db", live, "--env", "sandbox")
		liveKeys := listKeys(t, live)
		st, err := store.Open(live, store.Options{OpenTimeout: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		for _, cmd := range []string{"backup", "compact"} {
			r := runCmd(t, cmd, "--db", db, live)
			if r.code != 1 || !strings.Contains(r.stderr, "live.db is in use by another process") {
				t.Errorf("%s onto a db in use: exit %d, stderr %q; want 1 naming it in use", cmd, r.code, r.stderr)
			}
		}
		st.Close()
		if got := listKeys(t, live); got != liveKeys {
			t.Fatalf("the db in use holds %q after refused copies onto it, want %q", got, liveKeys)
		}
		// Once it is free, it may be replaced.
		mustRun(t, "backup", "--db", db, live)
		if got := listKeys(t, live); got != want {
			t.Fatalf("backup onto a free file holds %q, want %q", got, want)
		}
	})
	t.Run("ErrNoOut", func(t *testing.T) {
		r := runCmd(t, "backup", "--db", db)
		if r.code != 2 {
			t.Fatalf("backup without OUT: %v, want a usage error", r.err())
		}
	})
}

// listKeys returns the credential keys of db, comma-separated.
func listKeys(t *testing.T, db string) string {
	t.Helper()
	st, err := store.Open(db, store.Options{OpenTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("open %s: %v", db, err)
	}
	defer st.Close()
	if err := st.Check(); err != nil {
		t.Fatalf("check %s: %v", db, err)
	}
	creds, err := st.Credentials()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, c := range creds {
		keys = append(keys, c.Key)
	}
	return strings.Join(keys, ",")
}

// TestDamagedDBFailsInOneLine: a truncated db file (a partial copy) makes
// every command that opens it fail with exit code 1 and one line naming
// the file, not a stack trace; none of them changes the file.
func TestDamagedDBFailsInOneLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "complybox.db")
	mustRun(t, "credentials", "create", "--db", db, "--env", "sandbox")
	mustRun(t, "seed", "--db", db, "--applicants", "300")
	whole, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	// used is how much of the file holds pages; the rest is room to grow.
	var used int64
	bdb, err := bolt.Open(db, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	bdb.View(func(tx *bolt.Tx) error { used = tx.Size(); return nil })
	bdb.Close()
	for i, args := range [][]string{
		{"backup", "--db", "", filepath.Join(dir, "b.db")},
		{"compact", "--db", "", filepath.Join(dir, "c.db")},
		{"credentials", "list", "--db", ""},
		{"serve", "--db", "", "--listen", "127.0.0.1:0"},
		{"seed", "--db", "", "--applicants", "1"},
		{"console", "user", "list", "--db", ""},
	} {
		// A copy each: bbolt leaves the file locked in this process when
		// it faults inside its own Open (a command's process ends there).
		// Cut at a third, or only the last page: bbolt faults in its
		// Open, or opens and would fault at a later read.
		cut := whole[:len(whole)/3]
		if i%2 == 1 {
			cut = whole[:used-4096]
		}
		trunc := filepath.Join(t.TempDir(), "trunc.db")
		if err := os.WriteFile(trunc, cut, 0o600); err != nil {
			t.Fatal(err)
		}
		args[slices.Index(args, "--db")+1] = trunc
		r := runCmd(t, args...)
		if r.code != 1 || !strings.Contains(r.stderr, "trunc.db") || !strings.Contains(r.stderr, "damaged (truncated:") ||
			strings.Contains(r.stderr, "goroutine") {
			t.Errorf("%s: exit %d, stderr %q", strings.Join(args[:2], " "), r.code, r.stderr)
		}
		if after, _ := os.ReadFile(trunc); !bytes.Equal(after, cut) {
			t.Errorf("%s changed the damaged file", strings.Join(args[:2], " "))
		}
	}
}
