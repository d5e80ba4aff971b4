package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/complybox/complybox/dispatch"
)

func TestVerifySignatureCommand(t *testing.T) {
	t.Parallel()
	secret := "dGhpcyBpcyBhIDMyIGJ5dGUgc2lnbmluZyBzZWNyZXQ="
	body := []byte(`{"id":"7c9e6679-7425-40de-944b-e07fc1f90ae7","eventType":"webhook.test"}`)
	file := filepath.Join(t.TempDir(), "body.json")
	if err := os.WriteFile(file, body, 0o600); err != nil {
		t.Fatal(err)
	}
	sig := dispatch.Sign(secret, body)

	t.Run("OK", func(t *testing.T) {
		if out := mustRun(t, "verify-signature", "--secret", secret, "--signature", sig, file); !strings.Contains(out, "signature OK") {
			t.Fatalf("printed %q", out)
		}
	})
	t.Run("ErrMismatch", func(t *testing.T) {
		for _, args := range [][]string{
			{"--secret", secret + "x", "--signature", sig, file},
			{"--secret", secret, "--signature", strings.Repeat("0", 64), file},
		} {
			r := runCmd(t, append([]string{"verify-signature"}, args...)...)
			if r.code != 1 {
				t.Fatalf("%q: %v (exit %d), want exit 1", args, r.stderr, r.code)
			}
		}
	})
	t.Run("StandardWebhooks", func(t *testing.T) {
		const id, ts = "msg_1", int64(1795000000)
		std := dispatch.SignStandard(secret, id, ts, body)
		stamp := fmt.Sprint(ts)
		mustRun(t, "verify-signature", "--secret", secret, "--signature", "v1,bm9wZQ== "+std, "--id", id, "--timestamp", stamp, file)
		for _, args := range [][]string{
			{"--signature", std, "--id", "msg_2", "--timestamp", stamp},
			{"--signature", std, "--id", id, "--timestamp", "1795000001"},
			{"--signature", "v1,bm9wZQ==", "--id", id, "--timestamp", stamp},
		} {
			r := runCmd(t, append(append([]string{"verify-signature", "--secret", secret}, args...), file)...)
			if r.code != 1 {
				t.Fatalf("%q: %v, want exit 1", args, r.err())
			}
		}
		r := runCmd(t, "verify-signature", "--secret", secret, "--signature", std, file)
		if r.code != 2 {
			t.Fatalf("v1 signature without --id: %v, want a usage error", r.err())
		}
	})
	t.Run("ErrUsage", func(t *testing.T) {
		r := runCmd(t, "verify-signature", "--signature", sig, file)
		if r.code != 2 {
			t.Fatalf("without --secret: %v (exit %d), want 2", r.stderr, r.code)
		}
		r = runCmd(t, "verify-signature", "--secret", secret, "--signature", sig, "--nope")
		if r.code != 2 {
			t.Fatalf("unknown flag: %v (exit %d), want 2", r.stderr, r.code)
		}
		// A signature of neither form is bad input, not a mismatch.
		for _, bad := range []string{"not-hex!", "abc", "v2,abc", "v1a,abc", "v1,!!!", "v1,"} {
			r = runCmd(t, "verify-signature", "--secret", secret, "--signature", bad, "--id", "msg_1", "--timestamp", "1795000000", file)
			if r.code != 2 || !strings.Contains(r.stderr, "--signature") {
				t.Errorf("--signature %q: %v (exit %d), want 2 naming the flag", bad, r.stderr, r.code)
			}
		}
	})
	t.Run("Binary", func(t *testing.T) {
		bin := buildBinary(t)
		for _, tc := range []struct {
			name     string
			sig      string
			args     []string
			stdin    []byte
			wantExit int
		}{
			{"StdinOK", sig, nil, body, 0},
			{"StdinMismatch", sig, nil, append(body, ' '), 1},
			{"FileOK", sig, []string{file}, nil, 0},
			{"FileMismatch", dispatch.Sign("other", body), []string{file}, nil, 1},
		} {
			cmd := exec.Command(bin, append([]string{"verify-signature", "--secret", secret, "--signature", tc.sig}, tc.args...)...)
			cmd.Stdin = bytes.NewReader(tc.stdin)
			out, _ := cmd.CombinedOutput()
			if got := cmd.ProcessState.ExitCode(); got != tc.wantExit {
				t.Errorf("%s: exit %d, want %d; output %s", tc.name, got, tc.wantExit, out)
			}
		}
	})
}
