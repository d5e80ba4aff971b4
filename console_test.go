package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/complybox/complybox/store"
)

// consoleLogin opens the db and tries password, returning the error.
func consoleLogin(t *testing.T, db, password string) error {
	t.Helper()
	st, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, err = st.ConsoleLogin(store.ConsoleFirstAdmin, password, "127.0.0.1")
	return err
}

func TestConsoleSetPassword(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "complybox.db")

	t.Run("Stdin", func(t *testing.T) {
		r := runWith(t, "from stdin 123\nignored second line\n", nil, "console", "set-password", "--db", db)
		if r.code != 0 {
			t.Fatal(r.err())
		}
		if !strings.Contains(r.stdout, "Console password set") {
			t.Fatalf("output %q", r.stdout)
		}
		if err := consoleLogin(t, db, "from stdin 123"); err != nil {
			t.Fatalf("login with the new password: %v", err)
		}
		if err := consoleLogin(t, db, "from stdin 1234"); store.ErrorCode(err) != store.EUNAUTHORIZED {
			t.Fatalf("login with another password: %v", err)
		}
	})

	t.Run("PipeReadsOneLine", func(t *testing.T) {
		stdin := strings.NewReader("exactly one line\nleft for the next reader\n")
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"console", "set-password", "--db", db}, stdin, &out, &errOut, nil)
		if code != 0 || errOut.String() != "" {
			t.Fatalf("exit code %d, stderr %q; want 0 and no prompt", code, errOut.String())
		}
		if rest, _ := io.ReadAll(stdin); string(rest) != "left for the next reader\n" {
			t.Fatalf("set-password read past its line: %q left", rest)
		}
		if err := consoleLogin(t, db, "exactly one line"); err != nil {
			t.Fatalf("login with the piped password: %v", err)
		}
	})

	t.Run("File", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "pw")
		if err := os.WriteFile(file, []byte("from a file 456\r\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		mustRun(t, "console", "set-password", "--db", db, "--password-file", file)
		if err := consoleLogin(t, db, "from a file 456"); err != nil {
			t.Fatalf("login with the file's password: %v", err)
		}
		if err := consoleLogin(t, db, "from stdin 123"); store.ErrorCode(err) != store.EUNAUTHORIZED {
			t.Fatalf("the old password still works: %v", err)
		}
	})

	t.Run("ErrTooShort", func(t *testing.T) {
		r := runWith(t, "short\n", nil, "console", "set-password", "--db", db)
		if r.code != 1 || !strings.Contains(r.stderr, "at least 8") {
			t.Fatalf("short password: %s (exit %d)", r.stderr, r.code)
		}
	})

	t.Run("ErrEmpty", func(t *testing.T) {
		r := runWith(t, "", nil, "console", "set-password", "--db", db)
		if r.code != 2 {
			t.Fatalf("empty stdin: %s (exit %d)", r.stderr, r.code)
		}
	})

	t.Run("Flag", func(t *testing.T) {
		mustRun(t, "console", "set-password", "--db", db, "--password", "on the command line")
		if err := consoleLogin(t, db, "on the command line"); err != nil {
			t.Fatalf("login with the --password password: %v", err)
		}
	})

	t.Run("Argument", func(t *testing.T) {
		mustRun(t, "console", "set-password", "--db", db, "as an argument")
		if err := consoleLogin(t, db, "as an argument"); err != nil {
			t.Fatalf("login with the argument's password: %v", err)
		}
	})

	t.Run("ErrTwoWays", func(t *testing.T) {
		r := runWith(t, "", nil, "console", "set-password", "--db", db, "--password", "one password", "another one")
		if r.code != 2 {
			t.Fatalf("two passwords: %s (exit %d)", r.stderr, r.code)
		}
	})
}

// TestConsoleUser: `console user add|list|remove` manage named operators
// through the command line; the password comes as set-password's does.
func TestConsoleUser(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "complybox.db")
	login := func(name, password string) (store.ConsoleSession, error) {
		t.Helper()
		st, err := store.Open(db, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		return st.ConsoleLogin(name, password, "127.0.0.1")
	}

	mustRun(t, "console", "set-password", "--db", db, "--password", "first admin pw")
	r := runWith(t, "reviewer password\nnot read\n", nil, "console", "user", "add", "rita", "--db", db)
	if r.code != 0 || !strings.Contains(r.stdout, "Operator rita added as reviewer") {
		t.Fatalf("user add: %s", r.err())
	}
	file := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(file, []byte("second admin pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "console", "user", "add", "bea", "--role", "admin", "--password-file", file, "--db", db)

	out := mustRun(t, "console", "user", "list", "--db", db)
	for _, want := range []string{"NAME", "admin", "bea", "rita", "reviewer"} {
		if !strings.Contains(out, want) {
			t.Errorf("user list lacks %q:\n%s", want, out)
		}
	}
	if sess, err := login("rita", "reviewer password"); err != nil || sess.Role != store.ConsoleReviewer {
		t.Fatalf("rita logs in: %+v %v", sess, err)
	}
	if sess, err := login("bea", "second admin pw"); err != nil || sess.Role != store.ConsoleAdmin {
		t.Fatalf("bea logs in: %+v %v", sess, err)
	}

	t.Run("ErrRole", func(t *testing.T) {
		r := runWith(t, "long enough pw\n", nil, "console", "user", "add", "otto", "--role", "owner", "--db", db)
		if r.code != 2 || !strings.Contains(r.stderr, "reviewer or admin") {
			t.Fatalf("bad role: %s (exit %d)", r.stderr, r.code)
		}
	})
	t.Run("ErrExists", func(t *testing.T) {
		r := runWith(t, "long enough pw\n", nil, "console", "user", "add", "rita", "--db", db)
		if r.code == 0 || !strings.Contains(r.stderr, "exists") {
			t.Fatalf("second rita: %s (exit %d)", r.stderr, r.code)
		}
	})
	t.Run("ErrName", func(t *testing.T) {
		r := runWith(t, "long enough pw\n", nil, "console", "user", "add", "Not A Name", "--db", db)
		if r.code == 0 || !strings.Contains(r.stderr, "name") {
			t.Fatalf("bad name: %s (exit %d)", r.stderr, r.code)
		}
	})

	mustRun(t, "console", "user", "remove", "rita", "--db", db)
	if _, err := login("rita", "reviewer password"); store.ErrorCode(err) != store.EUNAUTHORIZED {
		t.Fatalf("removed rita logs in: %v", err)
	}
	mustRun(t, "console", "user", "remove", "admin", "--db", db)
	r = runCmd(t, "console", "user", "remove", "bea", "--db", db)
	if r.code == 0 || !strings.Contains(r.stderr, "last admin") {
		t.Fatalf("remove the last admin: %s (exit %d)", r.stderr, r.code)
	}
	// set-password --user changes another operator's password.
	mustRun(t, "console", "set-password", "--user", "bea", "--db", db, "--password", "changed password")
	if _, err := login("bea", "changed password"); err != nil {
		t.Fatalf("bea after set-password --user: %v", err)
	}
}
