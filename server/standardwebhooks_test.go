package server_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestStandardWebhooksLibraryVerifies sends a real delivery and checks it
// with the official Standard Webhooks library for Node, unchanged, as SPEC
// §5 promises receivers built on that spec. .ci/run installs the library
// and sets COMPLYBOX_NODE_MODULES; elsewhere the test is skipped unless CI
// is set, where a missing library is a failure.
func TestStandardWebhooksLibraryVerifies(t *testing.T) {
	modules := os.Getenv("COMPLYBOX_NODE_MODULES")
	node, err := exec.LookPath("node")
	if modules == "" || err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI needs node and COMPLYBOX_NODE_MODULES (set by .ci/run): node: %v, modules %q", err, modules)
		}
		t.Skip("set COMPLYBOX_NODE_MODULES to a node_modules holding standardwebhooks (see .ci/run)")
	}
	script, err := filepath.Abs("../testdata/standardwebhooks/verify.js")
	if err != nil {
		t.Fatal(err)
	}
	// The library refuses timestamps more than 5 minutes from its own clock,
	// so this instance runs on the real one.
	in := boot(t, func(o *bootOptions) { o.now = time.Now }).instance
	rc := newReceiver(t, nil, nil)
	secret := in.configureWebhook(rc)
	in.expect(202, "POST", "/webhooks/outbound/test", nil)
	got := rc.next(t)

	headers := map[string]string{}
	for _, h := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
		headers[h] = got.Header.Get(h)
	}
	dir := t.TempDir()
	hb, _ := json.Marshal(headers)
	headersFile, bodyFile := filepath.Join(dir, "headers.json"), filepath.Join(dir, "body.json")
	if err := os.WriteFile(headersFile, hb, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bodyFile, got.Body, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(secret string) ([]byte, error) {
		cmd := exec.Command(node, script, secret, headersFile, bodyFile)
		cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
		return cmd.CombinedOutput()
	}

	t.Run("OK", func(t *testing.T) {
		out, err := run(secret)
		if err != nil {
			t.Fatalf("the Standard Webhooks library refused the delivery: %v\n%s", err, out)
		}
		var payload struct{ ID, EventType string }
		if err := json.Unmarshal(out, &payload); err != nil || payload.EventType != "webhook.test" || payload.ID != headers["webhook-id"] {
			t.Errorf("verified payload %s: want the webhook.test event with id %s", out, headers["webhook-id"])
		}
	})
	t.Run("WrongSecret", func(t *testing.T) {
		other := "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" + secret[32:] // still base64, another key
		if out, err := run(other); err == nil {
			t.Errorf("the library accepted the delivery under another secret: %s", out)
		}
	})
}
