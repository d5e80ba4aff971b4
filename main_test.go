package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/complybox/complybox/store"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"nosuchcommand"}, {"credentials", "rotate"}, {"serve", "--bogus"}, {"version", "extra"}} {
		r := runCmd(t, args...)
		if r.code != 2 {
			t.Errorf("complybox %q: %v (exit %d), want a usage error (2)", args, r.stderr, r.code)
		}
	}
}

// TestErrorOutput checks what a failed command prints and its exit code:
// "complybox: " once, then the human message without the API's machine code
// (the field named when there is one); 2 for a usage error, 1 otherwise.
func TestErrorOutput(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "complybox.db")
	mustRun(t, "credentials", "create", "--db", db, "--env", "sandbox")
	missing := filepath.Join(t.TempDir(), "missing.db")
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"nosuch"}, 2, `unknown command "nosuch"; see complybox --help`},
		{[]string{"credentials", "rotate"}, 2, `credentials: unknown command "rotate"; see complybox credentials --help`},
		{[]string{"help", "nosuch"}, 2, `help: unknown help topic "nosuch"; see complybox help --help`},
		{[]string{"serve", "--bogus"}, 2, "serve: unknown flag: --bogus; see complybox serve --help"},
		{[]string{"--bogus"}, 2, "unknown flag: --bogus; see complybox --help"},
		{[]string{"version", "extra"}, 2, "version: expected no arguments; see complybox version --help"},
		{[]string{"credentials", "revoke", "--db", db}, 2,
			"credentials revoke: expected one credential KEY; see complybox credentials revoke --help"},
		{[]string{"credentials", "create", "--db", db, "--env", "staging"}, 2,
			`credentials create: --env "staging": the environment must be sandbox or production; see complybox credentials create --help`},
		{[]string{"credentials", "create", "--db", db, "--env", "sandbox", "--role", "root"}, 2,
			`credentials create: --role "root": the role must be partner or admin; see complybox credentials create --help`},
		{[]string{"credentials", "revoke", "--db", db, "sbx_key_nope"}, 1, `credential "sbx_key_nope" not found`},
		{[]string{"console", "set-password", "--db", db, "short"}, 1,
			"the console password must have at least 8 characters (field password)"},
		{[]string{"backup", "--db", missing, "out.db"}, 1, "the db file " + missing + " does not exist"},
	} {
		r := runCmd(t, tc.args...)
		if r.code != tc.code || r.stderr != "complybox: "+tc.stderr+"\n" {
			t.Errorf("complybox %s: exit code %d, stderr %q; want %d, %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.code, "complybox: "+tc.stderr+"\n")
		}
	}
}

// TestGolden compares version-free CLI output with testdata/*.golden; run
// `go test -run TestGolden -update` to rewrite them.
func TestGolden(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "empty.db") // a db without credentials
	st, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"help", []string{"--help"}},
		{"serve-help", []string{"serve", "--help"}},
		{"credentials-help", []string{"credentials"}},
		{"credentials-create-help", []string{"credentials", "create", "--help"}},
		{"backup-help", []string{"backup", "--help"}},
		{"verify-signature-help", []string{"verify-signature", "--help"}},
		{"credentials-list-empty", []string{"credentials", "list", "--db", db}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mustRun(t, tc.args...)
			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Fatalf("complybox %s differs from %s (go test -update rewrites it):\n got:\n%s\nwant:\n%s", strings.Join(tc.args, " "), path, got, want)
			}
		})
	}
}
