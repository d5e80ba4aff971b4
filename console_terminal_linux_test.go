package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/complybox/complybox/store"
)

// openPTY opens a pseudo-terminal: the controller, which plays the person at
// the keyboard, and the terminal, which is the command's stdin.
func openPTY(t *testing.T) (controller, tty *os.File) {
	t.Helper()
	controller, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { controller.Close() })
	fd := int(controller.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open the terminal side: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return controller, tty
}

// typeAfter waits for prompt on stderr and for the terminal to stop
// echoing, then types line on the keyboard.
func typeAfter(t *testing.T, stderr *syncBuffer, controller, tty *os.File, prompt, line string) {
	t.Helper()
	stderr.waitFor(t, prompt)
	deadline := time.Now().Add(10 * time.Second)
	for {
		tio, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		if tio.Lflag&unix.ECHO == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the terminal still echoes 10s after %q", prompt)
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := controller.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}

// echoed returns what the terminal showed since it was opened, up to a
// marker typed once the command is done (the terminal echoes again then).
func echoed(t *testing.T, controller *os.File) string {
	t.Helper()
	const marker = "END-OF-TEST"
	if _, err := controller.WriteString(marker + "\n"); err != nil {
		t.Fatal(err)
	}
	var shown []byte
	b := make([]byte, 256)
	for !bytes.Contains(shown, []byte(marker)) {
		n, err := controller.Read(b)
		if err != nil {
			t.Fatalf("read the terminal: %v (so far %q)", err, shown)
		}
		shown = append(shown, b[:n]...)
	}
	return string(shown)
}

// TestConsoleSetPasswordTerminal: on a terminal, set-password prompts twice
// on stderr, echoes nothing, and refuses two different answers.
func TestConsoleSetPasswordTerminal(t *testing.T) {
	t.Parallel()
	setPassword := func(t *testing.T, db, first, second string) (code int, stdout, stderr, shown string) {
		controller, tty := openPTY(t)
		var out bytes.Buffer
		errOut := newSyncBuffer()
		done := make(chan int, 1)
		go func() {
			done <- run(context.Background(), []string{"console", "set-password", "--db", db}, tty, &out, errOut, nil)
		}()
		typeAfter(t, errOut, controller, tty, "New password: ", first)
		typeAfter(t, errOut, controller, tty, "Repeat password: ", second)
		select {
		case code = <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("set-password did not return; stderr %q", errOut.String())
		}
		return code, out.String(), errOut.String(), echoed(t, controller)
	}

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "complybox.db")
		code, stdout, stderr, shown := setPassword(t, db, "typed at a terminal", "typed at a terminal")
		if code != 0 || !strings.Contains(stdout, "Console password set") {
			t.Fatalf("exit code %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		if stderr != "New password: \nRepeat password: \n" {
			t.Fatalf("stderr %q, want the two prompts", stderr)
		}
		if strings.Contains(shown, "typed") {
			t.Fatalf("the terminal echoed the password: %q", shown)
		}
		if err := consoleLogin(t, db, "typed at a terminal"); err != nil {
			t.Fatalf("login with the typed password: %v", err)
		}
	})

	// A db that a running server holds is named before any prompt, so
	// nobody types a new password twice for nothing.
	t.Run("ErrInUse", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "complybox.db")
		held, err := store.Open(db, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer held.Close()
		for _, args := range [][]string{{"console", "set-password", "--db", db}, {"console", "user", "add", "rita", "--db", db}} {
			controller, tty := openPTY(t)
			var out bytes.Buffer
			errOut := newSyncBuffer()
			done := make(chan int, 1)
			go func() { done <- run(context.Background(), args, tty, &out, errOut, nil) }()
			var code int
			select {
			case code = <-done:
			case <-time.After(20 * time.Second):
				controller.Close() // the prompt's read fails, and the command returns
				<-done
				t.Fatalf("%v still waits after 20s; stderr %q", args, errOut.String())
			}
			if code != 1 || strings.Contains(errOut.String(), "password:") || !strings.Contains(errOut.String(), "in use by another process") {
				t.Fatalf("%v: exit code %d, stderr %q; want 1 naming the db in use, before any prompt", args, code, errOut.String())
			}
		}
	})

	t.Run("ErrMismatch", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "complybox.db")
		mustRun(t, "console", "set-password", "--db", db, "--password", "the old password")
		code, _, stderr, shown := setPassword(t, db, "first answer 1", "second answer 2")
		if code != 1 || !strings.HasSuffix(stderr, "complybox: the two passwords differ; nothing was changed\n") {
			t.Fatalf("exit code %d, stderr %q; want 1 and the passwords differ", code, stderr)
		}
		if strings.Contains(shown, "answer") {
			t.Fatalf("the terminal echoed a password: %q", shown)
		}
		if err := consoleLogin(t, db, "the old password"); err != nil {
			t.Fatalf("the old password no longer works: %v", err)
		}
		if err := consoleLogin(t, db, "first answer 1"); store.ErrorCode(err) != store.EUNAUTHORIZED {
			t.Fatalf("login with a refused password: %v", err)
		}
	})
}
