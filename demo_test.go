package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/complybox/complybox/dispatch"
)

// checkDemoOutput checks what every demo prints: lines under 100
// characters, no jargon, one signature summary per destination that
// received webhooks, and the want lines in this order (each a substring of
// one line).
func checkDemoOutput(t *testing.T, out string, destinations []string, want ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n >= 100 {
			t.Errorf("line of %d characters, want < 100: %q", n, l)
		}
	}
	for _, jargon := range []string{"allChildrenComplete", "review_delay", "signatures OK", "MISMATCH", "FAILED"} {
		if strings.Contains(out, jargon) {
			t.Errorf("the output says %q:\n%s", jargon, out)
		}
	}
	summary := regexp.MustCompile(`^(KYC callback|custody webhooks): (\d+) received, (\d+) signatures verified ` +
		`\(X-Webhook-Signature, Standard Webhooks\)$`)
	webhooks := map[string]int{}
	for _, l := range lines {
		if strings.HasPrefix(l, "   <- webhook ") {
			webhooks[map[bool]string{true: "custody webhooks", false: "KYC callback"}[isCustodyLine(l)]]++
		}
	}
	var got []string
	for _, l := range lines {
		if m := summary.FindStringSubmatch(l); m != nil {
			got = append(got, m[1])
			if m[2] != m[3] || m[2] != strconv.Itoa(webhooks[m[1]]) {
				t.Errorf("%q: want %d received and verified, as many as the webhook lines", l, webhooks[m[1]])
			}
		}
	}
	if strings.Join(got, ",") != strings.Join(destinations, ",") {
		t.Errorf("signature summaries for %q, want one each for %q:\n%s", got, destinations, out)
	}
	if strings.Count(out, "signatures verified") != len(destinations) {
		t.Errorf("signatures are summed up %d times, want %d:\n%s", strings.Count(out, "signatures verified"), len(destinations), out)
	}
	at := 0
	for _, w := range want {
		found := false
		for at < len(lines) {
			at++
			if strings.Contains(lines[at-1], w) {
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("the output lacks %q after the lines before it:\n%s", w, out)
		}
	}
}

// isCustodyLine reports whether a webhook line is a custody event.
func isCustodyLine(l string) bool {
	for _, p := range []string{"wallet.", "transaction.", "balance."} {
		if strings.Contains(l, "webhook "+p) {
			return true
		}
	}
	return false
}

// individualStory returns the key lines of that part, in order: action,
// the webhooks it caused, the resulting state.
func individualStory() []string {
	return []string{
		"== 1. Individual KYC",
		"-> create applicant demo-alice",
		"<- webhook applicantCreated demo-alice",
		"-> Alice sends a passport photo and a selfie",
		"<- webhook applicantPending demo-alice",
		"<- webhook applicantReviewed demo-alice GREEN",
		"= demo-alice is verified: GREEN",
		"-> create applicant demo-mallory",
		"<- webhook applicantReviewed demo-mallory RED FINAL [FORGERY]",
		"= demo-mallory is rejected for good",
	}
}

// custodyStory returns the key lines of that part, in order.
func custodyStory() []string {
	return []string{
		"Custody",
		"<- webhook wallet.created \"BTC hot wallet\"",
		"-> someone sends 0.5 BTC",
		"<- webhook transaction.created deposit of 0.5 BTC, Submitted",
		"<- webhook transaction.status.updated Submitted → Confirming",
		"<- webhook transaction.status.updated Confirming → Completed",
		"<- webhook balance.updated total 0.5 available 0.5",
		"= the wallet holds 0.5 BTC, 0.5 of it available",
		"-> withdraw 0.1 BTC",
		"<- webhook transaction.created withdrawal of 0.1 BTC, Submitted",
		"<- webhook balance.updated total 0.5 available 0.3999",
		"<- webhook transaction.status.updated Submitted → PendingSignature",
		"<- webhook transaction.status.updated PendingSignature → Broadcasting",
		"<- webhook transaction.status.updated Broadcasting → Confirming",
		"<- webhook transaction.status.updated Confirming → Completed",
		"<- webhook balance.updated total 0.3999 available 0.3999",
		"= the wallet holds 0.3999 BTC, 0.3999 of it available",
	}
}

// clockStory returns the key lines of the test clock's part, in order.
func clockStory() []string {
	return []string{
		"== 4. Test clock",
		"-> create applicant demo-erin and a verification link that lasts one hour",
		"<- webhook applicantCreated demo-erin",
		"= the link works: http://127.0.0.1:",
		"-> move the sandbox clock 2h ahead",
		", 2h0m0s ahead of this machine's",
		"= the link expired on the way: its page answers 410 Gone, Erin's steps are expired",
		"-> point custody webhooks at a receiver that is down, and send a test event",
		"-> move the sandbox clock 30m ahead",
		", 2h30m0s ahead of this machine's",
		"= the webhook is dead after 5 attempts, each answered 503",
		"made at ",
		"Production has no test clock",
	}
}

// demoEnd returns the key lines after the story, without --keep.
func demoEnd() []string {
	return []string{
		"== Webhook signatures",
		"Every step held.",
		"The links above stop working now",
		"complybox demo --keep",
	}
}

// TestDemoStory runs the individual KYC and custody parts of the demo
// against a real server and receiver: every step holds, every webhook's two
// signatures verify, and the story is told in order.
func TestDemoStory(t *testing.T) {
	t.Parallel()
	var out, logs bytes.Buffer
	if err := runDemoParts(context.Background(), &out, &logs, false, demoIndividual, demoCustody); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out.String(), logs.String())
	}
	want := append(append(append([]string{}, individualStory()...), custodyStory()...), demoEnd()...)
	checkDemoOutput(t, out.String(), []string{"KYC callback", "custody webhooks"}, want...)
}

// TestDemoCommand runs `complybox demo` whole: exit 0, and the company's
// verdict waits for every owner, then is stated.
func TestDemoCommand(t *testing.T) {
	t.Parallel()
	r := runCmd(t, "demo")
	if r.code != 0 {
		t.Fatalf("demo: exit code %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	company := []string{
		"== 2. Company KYB",
		"-> create company demo-acme",
		"<- webhook applicantCreated demo-acme",
		"-> send demo-acme to review",
		"<- webhook applicantPending demo-acme",
		"= demo-acme stays in review: 0 of its 2 owners verified",
		"-> start KYC for owner Bob Builder",
		"<- webhook applicantCreated demo-acme.ubo.1 (an owner of demo-acme)",
		"Bob Builder's own verification page: http://127.0.0.1:",
		"<- webhook applicantReviewed demo-acme.ubo.1 GREEN",
		"= demo-acme stays in review: 1 of its 2 owners verified",
		"-> start KYC for owner Carol Client",
		"<- webhook applicantCreated demo-acme.ubo.2 (an owner of demo-acme)",
		"<- webhook applicantReviewed demo-acme.ubo.2 GREEN",
		"<- webhook applicantReviewed demo-acme GREEN",
		"= demo-acme is verified: GREEN, now that its 2 owners are verified too",
	}
	want := append(append(append(append([]string{}, individualStory()...), company...), custodyStory()...), clockStory()...)
	want = append(want, demoEnd()...)
	checkDemoOutput(t, r.stdout, []string{"KYC callback", "custody webhooks"}, want...)
	if strings.Count(r.stdout, "applicantReviewed demo-acme ") != 1 {
		t.Errorf("the company's verdict was announced %d times, want once:\n%s", strings.Count(r.stdout, "applicantReviewed demo-acme "), r.stdout)
	}
}

// TestDemoClock runs the test clock's part alone: a link expires and a
// webhook to a receiver that is down dies, without waiting.
func TestDemoClock(t *testing.T) {
	t.Parallel()
	var out, logs bytes.Buffer
	if err := runDemoParts(context.Background(), &out, &logs, false, demoClock); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out.String(), logs.String())
	}
	want := append(clockStory(), demoEnd()...)
	want[0] = "== 1. Test clock"
	checkDemoOutput(t, out.String(), []string{"KYC callback"}, want...)
}

// TestDemoKeep: with --keep the demo serves on after the story with the
// credential it prints, until its context ends.
func TestDemoKeep(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := newSyncBuffer()
	done := make(chan error, 1)
	go func() { done <- runDemoParts(ctx, out, &bytes.Buffer{}, true, demoIndividual) }()
	out.waitFor(t, "console  ")
	checkDemoOutput(t, out.String(), []string{"KYC callback"}, append(append([]string{}, individualStory()...),
		"Every step held.", "Still serving (--keep) until Ctrl-C", "X-Api-Key: demo_key", "X-Api-Secret: ", "/console  name: admin  password: ")...)
	m := regexp.MustCompile(`API +(http://\S+) +X-Api-Key: (\S+)\n +X-Api-Secret: (\S+)\n`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no API address and credential printed:\n%s", out.String())
	}
	if status, body := call(t, "GET", m[1]+"/v1/applicants/demo-alice/status", m[2], m[3], nil); status != http.StatusOK ||
		!strings.Contains(string(body), `"reviewAnswer":"GREEN"`) {
		t.Fatalf("the kept server: %d %s", status, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("demo --keep after Ctrl-C: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("demo --keep did not stop within 20s of Ctrl-C")
	}
	if _, err := http.Get(m[1] + "/healthz"); err == nil {
		t.Fatal("the kept server still answers after Ctrl-C")
	}
}

// TestDemoDescribe: a webhook line says what happened.
func TestDemoDescribe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		event demoEvent
		want  string
	}{
		{demoEvent{eventType: "applicantReviewed", entityID: "a-1",
			data: json.RawMessage(`{"reviewResult":{"reviewAnswer":"GREEN","reviewRejectType":null,"rejectLabels":[]}}`)},
			"applicantReviewed a-1 GREEN"},
		{demoEvent{eventType: "applicantReviewed", entityID: "a-2",
			data: json.RawMessage(`{"reviewResult":{"reviewAnswer":"RED","reviewRejectType":"FINAL","rejectLabels":["FORGERY","SANCTIONS"]}}`)},
			"applicantReviewed a-2 RED FINAL [FORGERY, SANCTIONS]"},
		{demoEvent{eventType: "applicantCreated", entityID: "c.ubo.1", data: json.RawMessage(`{"parentExternalUserId":"c"}`)},
			"applicantCreated c.ubo.1 (an owner of c)"},
		{demoEvent{eventType: "transaction.status.updated", entityID: "x",
			data: json.RawMessage(`{"status":"Confirming","previousStatus":"Submitted"}`)},
			"transaction.status.updated Submitted → Confirming"},
		{demoEvent{eventType: "balance.updated", balance: "total 1.5 available 1.5"}, "balance.updated total 1.5 available 1.5"},
	} {
		if got := tc.event.describe(); got != tc.want {
			t.Errorf("describe() = %q, want %q", got, tc.want)
		}
	}
}

// TestDemoReceiverRefusesBadSignature: a delivery with a wrong signature is
// answered 401 and ends the demo's wait with an error, so the demo cannot
// exit 0.
func TestDemoReceiverRefusesBadSignature(t *testing.T) {
	t.Parallel()
	rc, err := startDemoReceiver()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.close()
	rc.setSecret(demoKYCPath, randomSecret())
	body := []byte(`{"id":"e1","eventType":"applicantCreated","entityId":"a"}`)
	req, err := http.NewRequest("POST", rc.url+demoKYCPath, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Webhook-Signature", dispatch.Sign(randomSecret(), body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("bad signature answered %d, want 401", resp.StatusCode)
	}
	if _, err := rc.wait(demoKYCPath, "applicantCreated", "a", nil); err == nil || !strings.Contains(err.Error(), "signature") {
		t.Fatalf("wait after a bad signature: %v", err)
	}
	if err := rc.problems(); err == nil {
		t.Fatal("problems() reports nothing after a bad signature")
	}
}
