package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
