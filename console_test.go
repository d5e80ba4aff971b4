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

// runWithStdin runs the command line with stdin as the process's input.
func runWithStdin(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	a := &app{stdin: strings.NewReader(stdin), stderr: io.Discard}
	root := newRootCmd(a)
	var out bytes.Buffer
	root.SetArgs(args)
	root.SetIn(a.stdin)
	root.SetOut(&out)
	root.SetErr(io.Discard)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// consoleLogin opens the db and tries password, returning the error.
func consoleLogin(t *testing.T, db, password string) error {
	t.Helper()
	st, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, err = st.ConsoleLogin(password, "127.0.0.1")
	return err
}

func TestConsoleSetPassword(t *testing.T) {
	db := filepath.Join(t.TempDir(), "complybox.db")

	t.Run("Stdin", func(t *testing.T) {
		out, err := runWithStdin(t, "from stdin 123\nignored second line\n", "console", "set-password", "--db", db)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "Console password set") {
			t.Fatalf("output %q", out)
		}
		if err := consoleLogin(t, db, "from stdin 123"); err != nil {
			t.Fatalf("login with the new password: %v", err)
		}
		if err := consoleLogin(t, db, "from stdin 1234"); store.ErrorCode(err) != store.EUNAUTHORIZED {
			t.Fatalf("login with another password: %v", err)
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
		_, err := runWithStdin(t, "short\n", "console", "set-password", "--db", db)
		if err == nil || !strings.Contains(err.Error(), "at least 8") || exitCode(err) != 1 {
			t.Fatalf("short password: %v (exit %d)", err, exitCode(err))
		}
	})

	t.Run("ErrEmpty", func(t *testing.T) {
		_, err := runWithStdin(t, "", "console", "set-password", "--db", db)
		if err == nil || exitCode(err) != 2 {
			t.Fatalf("empty stdin: %v (exit %d)", err, exitCode(err))
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
		_, err := runWithStdin(t, "", "console", "set-password", "--db", db, "--password", "one password", "another one")
		if err == nil || exitCode(err) != 2 {
			t.Fatalf("two passwords: %v (exit %d)", err, exitCode(err))
		}
	})
}
