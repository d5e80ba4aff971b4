package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestDemoStory runs the individual KYC and custody parts of the demo
// against a real server and receiver: every step holds and every webhook's
// two signatures verify.
func TestDemoStory(t *testing.T) {
	t.Parallel()
	var out, logs bytes.Buffer
	if err := runDemoParts(context.Background(), &out, &logs, demoIndividual, demoCustody); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out.String(), logs.String())
	}
	for _, want := range []string{
		"applicantReviewed", "demo-alice", "wallet.created", "transaction.created", "transaction.status.updated",
		"balance.updated", "total 0.5, available 0.5", "total 0.3999, available 0.3999", "Every step held",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "MISMATCH") {
		t.Errorf("a signature failed:\n%s", out.String())
	}
}

// TestDemoCommand runs `complybox demo` whole: exit 0. A build without
// beneficial-owner rows (before the UBO area is merged) skips.
func TestDemoCommand(t *testing.T) {
	t.Parallel()
	r := runCmd(t, "demo")
	if r.code != 0 {
		t.Fatalf("demo: exit code %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
