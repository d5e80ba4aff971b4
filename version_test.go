package main

import (
	"regexp"
	"testing"
)

func TestVersionCommand(t *testing.T) {
	t.Parallel()
	out := mustRun(t, "version")
	if !regexp.MustCompile(`^complybox \S+\ncommit: \S+\ngo: go1\.\S+\n$`).MatchString(out) {
		t.Fatalf("version printed %q", out)
	}
}
