package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{"nosuchcommand"}, {"credentials", "rotate"}, {"serve", "--bogus"}, {"version", "extra"}} {
		_, err := runCmd(t, args...)
		if exitCode(err) != 2 {
			t.Errorf("complybox %q: %v (exit %d), want a usage error (2)", args, err, exitCode(err))
		}
	}
}

// TestGolden compares version-free CLI output with testdata/*.golden; run
// `go test -run TestGolden -update` to rewrite them.
func TestGolden(t *testing.T) {
	db := filepath.Join(t.TempDir(), "empty.db")
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
