package server_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/complybox/complybox/dispatch"
	"github.com/complybox/complybox/store"
)

func TestWebhookTestEvent(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc := newReceiver(t, in.Clock, nil)
	secret := in.configureWebhook(rc)
	if len(secret) != 44 {
		t.Fatalf("secret %q: want 44 characters of padded base64", secret)
	}
	if k, err := base64.StdEncoding.DecodeString(secret); err != nil || len(k) != 32 {
		t.Fatalf("secret %q is not 32 bytes of standard base64: %v", secret, err)
	}
	id := in.testEvent()

	got := rc.next(t)
	if !dispatch.Verify(secret, got.Body, got.Header.Get("X-Webhook-Signature")) {
		t.Errorf("X-Webhook-Signature does not verify")
	}
	var env struct {
		ID, EventType, EntityType, EntityID, Timestamp string
		Data                                           struct{ Message, SentAt string }
	}
	if err := json.Unmarshal(got.Body, &env); err != nil {
		t.Fatal(err)
	}
	ts, _ := strconv.ParseInt(got.Header.Get("webhook-timestamp"), 10, 64)
	if ts != testStart.Unix() {
		t.Errorf("webhook-timestamp %d, want the attempt's time %d", ts, testStart.Unix())
	}
	if want := dispatch.SignStandard(secret, env.ID, ts, got.Body); got.Header.Get("webhook-signature") != want {
		t.Errorf("webhook-signature %q, want %q", got.Header.Get("webhook-signature"), want)
	}
	for name, want := range map[string]string{
		"Content-Type":         "application/json",
		"User-Agent":           "complybox-webhooks/dev",
		"X-Webhook-Id":         id,
		"X-Webhook-Event-Type": "webhook.test",
		"X-Webhook-Attempt":    "1",
		"webhook-id":           env.ID,
	} {
		if v := got.Header.Get(name); v != want {
			t.Errorf("header %s = %q, want %q", name, v, want)
		}
	}
	if env.EventType != "webhook.test" || env.EntityType != "webhook" || env.EntityID != id || env.Data.Message == "" ||
		env.Data.SentAt != "2026-11-21T05:00:00.000Z" || env.Timestamp != "2026-11-21T05:00:00.000Z" || !store.IsUUID(env.ID) {
		t.Errorf("envelope %s", got.Body)
	}
	d := in.waitDelivery(id, "delivered", 1)
	if d.Payload == nil || *d.Payload != string(got.Body) {
		t.Errorf("payload %v, want the exact bytes sent %q", d.Payload, got.Body)
	}
	if d.EventID != env.ID || d.Destination != "custody" || d.DeliveredAt == nil || d.LastError != nil || len(d.Attempts) != 1 {
		t.Errorf("delivery %+v", d)
	}
	a := d.Attempts[0]
	if !a.Success || a.AttemptNumber != 1 || a.HTTPStatusCode == nil || *a.HTTPStatusCode != 200 || a.RequestURL != rc.URL || a.ErrorMessage != nil {
		t.Errorf("attempt %+v", a)
	}
}

func TestWebhookConfig(t *testing.T) {
	t.Parallel()
	in := start(t)
	t.Run("Unconfigured", func(t *testing.T) {
		got := string(in.expect(200, "GET", "/webhooks/outbound", nil).Body)
		if want := `{"url":null,"signingSecret":null,"subscribedEventTypes":null,"isConfigured":false}` + "\n"; got != want {
			t.Errorf("GET before configuration: %s, want %s", got, want)
		}
		in.expect(409, "POST", "/webhooks/outbound/test", nil)
	})
	rc := newReceiver(t, in.Clock, nil)
	secret := in.configureWebhook(rc)
	t.Run("SameURLKeepsSecret", func(t *testing.T) {
		v := in.expect(200, "PUT", "/webhooks/outbound", map[string]any{"url": rc.URL, "subscribedEventTypes": []string{"wallet.created"}}).m(t)
		if v["signingSecret"] != nil || v["url"] != rc.URL || v["isConfigured"] != true {
			t.Errorf("re-PUT: %v", v)
		}
		// The scheme and the host are case-insensitive (RFC 3986 §6.2.2.1):
		// the same URL written in capitals keeps the secret too (it rotated).
		upper := strings.Replace(rc.URL, "http://", "HTTP://", 1)
		if v := in.expect(200, "PUT", "/webhooks/outbound", map[string]any{"url": upper, "subscribedEventTypes": []string{"wallet.created"}}).m(t); v["signingSecret"] != nil {
			t.Errorf("re-PUT of the URL with its scheme in capitals rotated the secret: %v", v)
		}
		if v := in.expect(200, "PUT", "/webhooks/outbound", map[string]any{"url": rc.URL, "subscribedEventTypes": []string{"wallet.created"}}).m(t); v["signingSecret"] != nil {
			t.Errorf("back to the URL in lower case rotated the secret: %v", v)
		}
		g := in.expect(200, "GET", "/webhooks/outbound", nil).m(t)
		if g["signingSecret"] != nil || g["isConfigured"] != true || len(g["subscribedEventTypes"].([]any)) != 1 {
			t.Errorf("GET: %v", g)
		}
		// The test event ignores the subscription and is signed with the kept secret.
		in.testEvent()
		if got := rc.next(t); !dispatch.Verify(secret, got.Body, got.Header.Get("X-Webhook-Signature")) {
			t.Error("the kept secret does not verify")
		}
	})
	t.Run("DuplicateTypesOnce", func(t *testing.T) {
		v := in.expect(200, "PUT", "/webhooks/outbound", map[string]any{"url": rc.URL,
			"subscribedEventTypes": []string{"wallet.created", "balance.updated", "wallet.created"}}).m(t)
		if got := v["subscribedEventTypes"].([]any); len(got) != 2 || got[0] != "wallet.created" || got[1] != "balance.updated" {
			t.Errorf("subscribedEventTypes %v", got)
		}
		v = in.expect(200, "PUT", "/webhooks/outbound", map[string]any{"url": rc.URL, "subscribedEventTypes": []string{}}).m(t)
		if got, ok := v["subscribedEventTypes"].([]any); !ok || len(got) != 0 {
			t.Errorf("an empty subscription became %v", v["subscribedEventTypes"])
		}
	})
	t.Run("URLChangeRotates", func(t *testing.T) {
		rc2 := newReceiver(t, in.Clock, nil)
		v := in.expect(200, "PUT", "/webhooks/outbound", map[string]any{"url": rc2.URL}).m(t)
		s2, _ := v["signingSecret"].(string)
		if len(s2) != 44 || s2 == secret || v["subscribedEventTypes"] != nil {
			t.Errorf("rotation: %v", v)
		}
		in.testEvent()
		if got := rc2.next(t); !dispatch.Verify(s2, got.Body, got.Header.Get("X-Webhook-Signature")) {
			t.Error("the rotated secret does not verify")
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, c := range []struct {
			body  string
			field string
		}{
			{`{}`, "url"},
			{`{"url":""}`, "url"},
			{`{"url":42}`, "url"},
			{`{"url":"not a url"}`, "url"},
			{`{"url":"ftp://127.0.0.1/x"}`, "url"},
			{`{"url":"http://93.184.216.34/hook"}`, "url"},
			{`{"url":"https://10.1.2.3/hook"}`, "url"},
			{`{"url":"https://192.168.0.10/hook"}`, "url"},
			{`{"url":"https://169.254.169.254/latest"}`, "url"},
			{`{"url":"https://[fd00::1]/hook"}`, "url"},
			{`{"url":"` + rc.URL + `","subscribedEventTypes":["wallet.created","nope"]}`, "subscribedEventTypes[1]"},
			{`{"url":"` + rc.URL + `","subscribedEventTypes":"wallet.created"}`, "subscribedEventTypes"},
			{`{"url":`, ""},
			{`{"url":"https://hooks.example.com/` + strings.Repeat("a", 2048) + `"}`, "url"},
		} {
			r := in.expect(400, "PUT", "/webhooks/outbound", c.body)
			var e struct {
				Error struct{ Code, Message, Field, RequestID string }
			}
			r.json(t, &e)
			if e.Error.Field != c.field || e.Error.Message == "" || e.Error.RequestID != r.Header.Get("X-Request-Id") {
				t.Errorf("%s: %s", c.body, r.Body)
			}
		}
		// Nothing changed.
		if g := in.expect(200, "GET", "/webhooks/outbound", nil).m(t); !strings.HasPrefix(g["url"].(string), "http://127.0.0.1:") {
			t.Errorf("config after refused PUTs: %v", g)
		}
	})
	t.Run("PrivateNetworksAllowed", func(t *testing.T) {
		in := start(t, func(o *options) { o.settings.AllowPrivateNetworks = true })
		in.expect(200, "PUT", "/webhooks/outbound", map[string]any{"url": "https://10.1.2.3/hook"})
		in.expect(400, "PUT", "/webhooks/outbound", map[string]any{"url": "http://10.1.2.3/hook"})
	})
	t.Run("UnresolvableHost", func(t *testing.T) {
		in := start(t)
		v := in.expect(200, "PUT", "/webhooks/outbound", map[string]any{"url": "https://hooks.complybox.invalid/in"}).m(t)
		if v["signingSecret"] == nil {
			t.Errorf("PUT: %v", v)
		}
		in.expect(400, "PUT", "/webhooks/outbound", map[string]any{"url": "http://hooks.complybox.invalid/in"})
	})
	t.Run("HTTPNever", func(t *testing.T) {
		in := start(t, func(o *options) { o.settings.AllowHTTP = "never" })
		in.expect(400, "PUT", "/webhooks/outbound", map[string]any{"url": rc.URL})
	})
}

func TestCatalogs(t *testing.T) {
	t.Parallel()
	in := start(t)
	var cat struct {
		EventTypes []struct{ Name, EntityType, Description string }
	}
	in.expect(200, "GET", "/webhooks/events/catalog", nil).json(t, &cat)
	var names []string
	for _, e := range cat.EventTypes {
		if e.Description == "" || e.EntityType == "" {
			t.Errorf("catalog entry %+v", e)
		}
		names = append(names, e.Name)
	}
	if got := strings.Join(names, " "); got != "transaction.created transaction.status.updated wallet.created balance.updated" {
		t.Errorf("custody catalog: %s", got)
	}
	cat.EventTypes = nil
	in.expect(200, "GET", "/v1/webhooks/events/catalog", nil).json(t, &cat)
	if len(cat.EventTypes) != 9 || cat.EventTypes[0].EntityType != "applicant" {
		t.Errorf("KYC catalog: %+v", cat.EventTypes)
	}
}

// TestRetrySchedule: a receiver answering 500 gets exactly max_attempts
// attempts at the configured delays, then the delivery is dead; a manual
// retry starts a fresh round whose attempt numbers keep counting.
func TestRetrySchedule(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc := handlerReceiver(t, in.Clock, func(n int, w http.ResponseWriter, r *http.Request) {
		if n <= 5 {
			w.WriteHeader(500)
			w.Write([]byte(strings.Repeat("x", 5000)))
			return
		}
		w.WriteHeader(204)
	})
	in.configureWebhook(rc)
	id := in.testEvent()
	delays := []time.Duration{10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute, 15 * time.Minute}
	var sent time.Time
	for n := 1; n <= 5; n++ {
		got := rc.next(t)
		if a := got.Header.Get("X-Webhook-Attempt"); a != strconv.Itoa(n) {
			t.Fatalf("attempt header %s, want %d", a, n)
		}
		if n > 1 && got.At.Sub(sent) != delays[n-2] {
			t.Errorf("attempt %d came %s after attempt %d, want %s", n, got.At.Sub(sent), n-1, delays[n-2])
		}
		sent = got.At
		if n == 5 {
			break
		}
		d := in.waitDelivery(id, "failed", n)
		if want := sent.Add(delays[n-1]).Format("2006-01-02T15:04:05.000Z"); d.NextAttemptAt == nil || *d.NextAttemptAt != want {
			t.Errorf("after attempt %d nextAttemptAt %v, want %s", n, d.NextAttemptAt, want)
		}
		in.advance(delays[n-1] - time.Second)
		rc.none(t, 50*time.Millisecond)
		in.advance(time.Second)
	}
	d := in.waitDelivery(id, "dead", 5)
	if len(d.Attempts) != 5 || d.NextAttemptAt != nil || d.LastError == nil || !strings.Contains(*d.LastError, "500") {
		t.Fatalf("dead delivery %+v", d)
	}
	for i, a := range d.Attempts {
		if a.AttemptNumber != i+1 || a.Success || a.HTTPStatusCode == nil || *a.HTTPStatusCode != 500 ||
			a.ResponseBody == nil || len(*a.ResponseBody) != 4096 || a.ErrorMessage == nil {
			t.Errorf("attempt %d: %+v", i+1, a)
		}
	}
	in.advance(time.Hour)
	rc.none(t, 50*time.Millisecond) // dead means no more automatic attempts

	r := in.expect(200, "POST", "/webhooks/deliveries/"+id+"/retry", nil).m(t)
	if r["status"] != "pending" {
		t.Errorf("retry answered %v", r)
	}
	if got := rc.next(t); got.Header.Get("X-Webhook-Attempt") != "6" {
		t.Errorf("attempt after manual retry: %s, want 6", got.Header.Get("X-Webhook-Attempt"))
	}
	d = in.waitDelivery(id, "delivered", 6)
	if d.AttemptCount != 6 || d.Attempts[5].AttemptNumber != 6 || !d.Attempts[5].Success || d.LastError != nil {
		t.Errorf("delivered after retry: %+v", d)
	}
	in.expect(409, "POST", "/webhooks/deliveries/"+id+"/retry", nil)
	in.expect(404, "POST", "/webhooks/deliveries/"+"00000000-0000-4000-8000-000000000000"+"/retry", nil)
}

// TestManualRetryFreshRound: a delivery retried by hand after dying gets a
// whole new round of max_attempts automatic attempts.
func TestManualRetryFreshRound(t *testing.T) {
	t.Parallel()
	in := start(t, func(o *options) {
		o.dispatch.MaxAttempts = 2
		o.dispatch.RetryDelays = []time.Duration{time.Minute}
	})
	rc := newReceiver(t, in.Clock, func(int) int { return 500 })
	in.configureWebhook(rc)
	id := in.testEvent()
	rc.next(t)
	in.waitDelivery(id, "failed", 1)
	in.advance(time.Minute)
	rc.next(t)
	in.waitDelivery(id, "dead", 2)
	// A malformed body is a client's bug, not a retry (SPEC §2): 400, and
	// the delivery stays dead.
	expectError(t, in.do("POST", "/webhooks/deliveries/"+id+"/retry", `{`), 400, "malformed_json")
	in.waitDelivery(id, "dead", 2)
	rc.none(t, 50*time.Millisecond)
	in.expect(200, "POST", "/webhooks/deliveries/"+id+"/retry", nil)
	if got := rc.next(t).Header.Get("X-Webhook-Id"); got != id {
		t.Errorf("X-Webhook-Id %q on a manual retry, want the delivery's id %s", got, id)
	}
	in.waitDelivery(id, "failed", 3)
	in.expect(200, "POST", "/webhooks/deliveries/"+id+"/retry", nil) // failed is retryable too, due now
	rc.next(t)
	in.waitDelivery(id, "failed", 4)
	in.advance(time.Minute)
	if got := rc.next(t); got.Header.Get("X-Webhook-Attempt") != "5" {
		t.Errorf("attempt %s, want 5", got.Header.Get("X-Webhook-Attempt"))
	}
	d := in.waitDelivery(id, "dead", 5)
	if d.AttemptCount != 5 {
		t.Errorf("attemptCount %d", d.AttemptCount)
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc := handlerReceiver(t, in.Clock, func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 1:
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(503)
		case 2:
			w.Header().Set("Retry-After", "5") // shorter than the 30s delay: the delay stands
			w.WriteHeader(429)
		case 3:
			w.Header().Set("Retry-After", "86400") // counts up to an hour
			w.WriteHeader(429)
		}
	})
	in.configureWebhook(rc)
	id := in.testEvent()
	rc.next(t)
	in.waitDelivery(id, "failed", 1)
	in.advance(10 * time.Second)
	rc.none(t, 50*time.Millisecond)
	in.advance(110 * time.Second)
	second := rc.next(t)
	if second.At.Sub(testStart) != 120*time.Second {
		t.Errorf("second attempt at +%s, want +2m", second.At.Sub(testStart))
	}
	in.waitDelivery(id, "failed", 2)
	in.advance(30 * time.Second)
	third := rc.next(t)
	in.waitDelivery(id, "failed", 3)
	d := in.waitDelivery(id, "failed", 3)
	if want := third.At.Add(time.Hour).Format("2006-01-02T15:04:05.000Z"); d.NextAttemptAt == nil || *d.NextAttemptAt != want {
		t.Errorf("nextAttemptAt %v, want %s", d.NextAttemptAt, want)
	}
}

// TestRetryAfterDateAfterAClockMove: a Retry-After HTTP date is a time of
// the receiver's clock (real time), so it is honoured after the sandbox
// clock moved ahead: the next attempt is that far after the attempt, not
// at the bare delay because the date lies behind the sandbox's time.
func TestRetryAfterDateAfterAClockMove(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(200, "POST", "/v1/sandbox/clock", map[string]any{"advanceBy": "20m"})
	rc := handlerReceiver(t, in.Clock, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", in.Clock.Now().Add(10*time.Minute).UTC().Format(http.TimeFormat))
		w.WriteHeader(429)
	})
	in.configureWebhook(rc)
	id := in.testEvent()
	rc.next(t)
	d := in.waitDelivery(id, "failed", 1)
	last, err1 := time.Parse(time.RFC3339, *d.LastAttemptAt)
	next, err2 := time.Parse(time.RFC3339, *d.NextAttemptAt)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	// An HTTP date has whole seconds: up to one less than ten minutes.
	if wait := next.Sub(last); wait < 10*time.Minute-time.Second || wait > 10*time.Minute {
		t.Errorf("next attempt %s after the last, want the 10m the receiver asked for", wait)
	}
}

func TestRedirectIsFailure(t *testing.T) {
	t.Parallel()
	in := start(t)
	target := newReceiver(t, in.Clock, nil)
	rc := handlerReceiver(t, in.Clock, func(n int, w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusFound)
	})
	in.configureWebhook(rc)
	id := in.testEvent()
	rc.next(t)
	d := in.waitDelivery(id, "failed", 1)
	a := d.Attempts[0]
	if a.Success || a.HTTPStatusCode == nil || *a.HTTPStatusCode != 302 || a.ErrorMessage == nil {
		t.Errorf("attempt %+v", a)
	}
	target.none(t, 50*time.Millisecond)
}

func TestHangingReceiverIsCut(t *testing.T) {
	t.Parallel()
	in := start(t, func(o *options) { o.dispatch.AttemptTimeout = 200 * time.Millisecond })
	release := make(chan struct{})
	defer close(release)
	rc := handlerReceiver(t, in.Clock, func(n int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	in.configureWebhook(rc)
	id := in.testEvent()
	rc.next(t)
	d := in.waitDelivery(id, "failed", 1)
	a := d.Attempts[0]
	if a.Success || a.HTTPStatusCode != nil || a.ErrorMessage == nil || !strings.Contains(*a.ErrorMessage, "timed out after 200ms") ||
		a.DurationMs < 200 || a.DurationMs > 2000 {
		t.Errorf("attempt %+v (error %v)", a, *a.ErrorMessage)
	}
	if d.NextAttemptAt == nil {
		t.Error("a timed-out attempt is retried")
	}
}

func TestBulkRetry(t *testing.T) {
	t.Parallel()
	in := start(t, func(o *options) { o.dispatch.MaxAttempts = 1 })
	rc := newReceiver(t, in.Clock, func(n int) int {
		if n <= 3 {
			return 500
		}
		return 200
	})
	in.configureWebhook(rc)
	var ids []string
	for range 3 {
		ids = append(ids, in.testEvent())
		rc.next(t)
		in.waitDelivery(ids[len(ids)-1], "dead", 1)
		in.advance(time.Minute)
	}
	for _, c := range []struct{ body, field string }{
		{`{}`, "status"},
		{`{"status":"pending"}`, "status"},
		{`{"status":"dead","since":"yesterday"}`, "since"},
		{`{"status":"dead","since":"2026-11-21T25:00"}`, "since"},
		{`{"status":"dead","until":5}`, "until"},
		{`{"status":"dead","destination":"mars"}`, "destination"},
		{`{"status":"dead","since":"2026-11-21T05:02:00Z","until":"2026-11-21T05:01:00Z"}`, "until"},
		{`{"status":"dead","since":"2026-11-21T05:02:00Z","until":"2026-11-21T05:02:00Z"}`, "until"},
	} {
		var e struct{ Error struct{ Field string } }
		in.expect(400, "POST", "/webhooks/deliveries/retry", c.body).json(t, &e)
		if e.Error.Field != c.field {
			t.Errorf("%s: field %q, want %q", c.body, e.Error.Field, c.field)
		}
	}
	var out struct{ Requeued int }
	in.expect(200, "POST", "/webhooks/deliveries/retry", map[string]any{"status": "dead", "since": "2026-11-21T05:03:00Z"}).json(t, &out)
	if out.Requeued != 0 {
		t.Errorf("requeued %d created after the last one", out.Requeued)
	}
	// The same ISO 8601 forms as review-history's since: no offset is
	// UTC, a plain date its midnight.
	in.expect(200, "POST", "/webhooks/deliveries/retry", map[string]any{"status": "dead", "since": "2026-11-21T05:03"}).json(t, &out)
	if out.Requeued != 0 {
		t.Errorf("requeued %d created after 05:03 (no offset)", out.Requeued)
	}
	in.expect(200, "POST", "/webhooks/deliveries/retry", map[string]any{"status": "dead", "until": "2026-11-21"}).json(t, &out)
	if out.Requeued != 0 {
		t.Errorf("requeued %d created before the day began", out.Requeued)
	}
	in.expect(200, "POST", "/webhooks/deliveries/retry", map[string]any{"status": "dead", "destination": "kyc"}).json(t, &out)
	if out.Requeued != 0 {
		t.Errorf("requeued %d kyc deliveries", out.Requeued)
	}
	in.expect(200, "POST", "/webhooks/deliveries/retry", map[string]any{"status": "dead", "since": "2026-11-21T05:01:00.000Z", "until": "2026-11-21T05:02:00.000Z"}).json(t, &out)
	if out.Requeued != 1 {
		t.Errorf("requeued %d in [05:01, 05:02), want 1", out.Requeued)
	}
	rc.next(t)
	in.waitDelivery(ids[1], "delivered", 2)
	in.expect(200, "POST", "/webhooks/deliveries/retry", map[string]any{"status": "dead", "destination": "custody"}).json(t, &out)
	if out.Requeued != 2 {
		t.Errorf("requeued %d, want 2", out.Requeued)
	}
	rc.next(t)
	rc.next(t)
	for _, id := range ids {
		in.waitDelivery(id, "delivered", 2)
	}
}

func TestListDeliveries(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc := newReceiver(t, in.Clock, func(n int) int {
		if n == 2 {
			return 500
		}
		return 200
	})
	in.configureWebhook(rc)
	var ids []string
	for range 3 {
		ids = append(ids, in.testEvent())
		rc.next(t)
		in.waitDelivery(ids[len(ids)-1], map[int]string{0: "delivered", 1: "failed", 2: "delivered"}[len(ids)-1], 1)
	}
	type page struct {
		Items      []map[string]any
		NextCursor *string
	}
	var p page
	in.expect(200, "GET", "/webhooks/deliveries", nil).json(t, &p)
	if len(p.Items) != 3 || p.NextCursor != nil || p.Items[0]["id"] != ids[2] || p.Items[2]["id"] != ids[0] {
		t.Fatalf("list: %+v", p)
	}
	for _, it := range p.Items {
		if _, ok := it["payload"]; ok {
			t.Error("list items carry payload")
		}
		if _, ok := it["attempts"]; ok {
			t.Error("list items carry attempts")
		}
	}
	// Cursor pages, newest first.
	var seen []string
	cursor := ""
	for {
		path := "/webhooks/deliveries?limit=1"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		var p page
		in.expect(200, "GET", path, nil).json(t, &p)
		for _, it := range p.Items {
			seen = append(seen, it["id"].(string))
		}
		if p.NextCursor == nil {
			break
		}
		cursor = *p.NextCursor
	}
	if strings.Join(seen, ",") != strings.Join([]string{ids[2], ids[1], ids[0]}, ",") {
		t.Errorf("paged: %v", seen)
	}
	for q, want := range map[string][]string{
		"status=failed":                   {ids[1]},
		"status=delivered&limit=1":        {ids[2]},
		"eventType=webhook.test":          {ids[2], ids[1], ids[0]},
		"eventType=wallet.created":        {},
		"entityId=" + ids[0]:              {ids[0]},
		"destination=kyc":                 {},
		"destination=custody&status=dead": {},
	} {
		var p page
		in.expect(200, "GET", "/webhooks/deliveries?"+q, nil).json(t, &p)
		var got []string
		for _, it := range p.Items {
			got = append(got, it["id"].(string))
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}
	for _, q := range []string{"status=lost", "destination=mars", "eventType=nope", "limit=0", "limit=201", "limit=x", "cursor=abc"} {
		in.expect(400, "GET", "/webhooks/deliveries?"+q, nil)
	}
}

// TestNoDuplicateAttempts: under concurrent enqueues every delivery reaches
// the receiver exactly once (claims outlive the scans that could still see
// a recorded job).
func TestNoDuplicateAttempts(t *testing.T) {
	t.Parallel()
	in := start(t, func(o *options) { o.dispatch.Concurrency = 16 })
	rc := newReceiver(t, in.Clock, nil)
	in.configureWebhook(rc)
	const clients, each = 16, 16
	ids := make(chan string, clients*each)
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				r := doRequest(t, "POST", in.URL+"/webhooks/outbound/test", nil, "X-Api-Key", in.Key, "X-Api-Secret", in.Secret)
				var out struct{ DeliveryID string }
				if err := json.Unmarshal(r.Body, &out); err != nil || r.Status != 202 {
					t.Errorf("test event: %d %s", r.Status, r.Body)
				}
				ids <- out.DeliveryID
			}
		}()
	}
	seen := map[string]int{}
	for range clients * each {
		seen[rc.next(t).Header.Get("X-Webhook-Id")]++
	}
	wg.Wait()
	close(ids)
	rc.none(t, 100*time.Millisecond)
	for id := range ids {
		if seen[id] != 1 {
			t.Errorf("delivery %s arrived %d times", id, seen[id])
		}
	}
}

// TestManualRetryDuringAttempt: a manual retry while an automatic attempt is
// in flight waits for it (never two attempts at once), and that attempt
// does not eat into the new round.
func TestManualRetryDuringAttempt(t *testing.T) {
	t.Parallel()
	in := start(t, func(o *options) {
		o.dispatch.MaxAttempts = 2
		o.dispatch.AttemptTimeout = 30 * time.Second
	})
	release := make(chan struct{})
	rc := handlerReceiver(t, in.Clock, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 2 {
			<-release
		}
		w.WriteHeader(500)
	})
	in.configureWebhook(rc)
	id := in.testEvent()
	rc.next(t)
	in.waitDelivery(id, "failed", 1)
	in.advance(10 * time.Second)
	rc.next(t) // attempt 2 hangs
	in.expect(200, "POST", "/webhooks/deliveries/"+id+"/retry", nil)
	rc.none(t, 50*time.Millisecond) // the re-queued attempt waits for the one in flight
	close(release)
	if got := rc.next(t); got.Header.Get("X-Webhook-Attempt") != "3" {
		t.Fatalf("attempt %s, want 3", got.Header.Get("X-Webhook-Attempt"))
	}
	d := in.waitDelivery(id, "failed", 3)
	if d.NextAttemptAt == nil {
		t.Fatalf("the new round ended after one attempt: %+v", d)
	}
	in.advance(10 * time.Second)
	rc.next(t)
	in.waitDelivery(id, "dead", 4)
}

// TestStandardWebhooksLibraryVerifies sends a real delivery and checks it
// with the official Standard Webhooks library for Node, unchanged, as SPEC
// §5 promises receivers built on that spec. .ci/run installs the library
// and sets COMPLYBOX_NODE_MODULES; elsewhere the test is skipped unless CI
// is set, where a missing library is a failure.
func TestStandardWebhooksLibraryVerifies(t *testing.T) {
	t.Parallel()
	modules := os.Getenv("COMPLYBOX_NODE_MODULES")
	node, err := exec.LookPath("node")
	if modules == "" || err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI needs node and COMPLYBOX_NODE_MODULES (set by .ci/run): node: %v, modules %q", err, modules)
		}
		t.Skip("needs node and the Standard Webhooks library: apt-get install nodejs npm; npm install --prefix DIR standardwebhooks@1.1.1; COMPLYBOX_NODE_MODULES=DIR/node_modules (as .ci/run does)")
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

// TestDeliveredAtIsWhenTheAnswerArrived: a delivery is delivered when the
// receiver answers 2xx (seed 001 §3), not when the attempt began; a slow
// receiver shows the difference. The attempt and lastAttemptAt keep its
// start.
func TestDeliveredAtIsWhenTheAnswerArrived(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc := handlerReceiver(t, in.Clock, func(_ int, w http.ResponseWriter, _ *http.Request) {
		in.Clock.Advance(3 * time.Second) // the receiver takes 3 s of the test clock
		w.WriteHeader(http.StatusOK)
	})
	in.expect(200, "PUT", "/webhooks/outbound", map[string]any{"url": rc.URL})
	id := in.testEvent()
	rc.next(t)
	d := in.waitDelivery(id, "delivered", 1)
	began := d.Attempts[0].AttemptedAt
	if d.LastAttemptAt == nil || *d.LastAttemptAt != began || d.DeliveredAt == nil {
		t.Fatalf("delivery %+v", d)
	}
	start, err := time.Parse(time.RFC3339, began)
	if err != nil {
		t.Fatal(err)
	}
	if want := store.At(start.Add(3 * time.Second)).String(); *d.DeliveredAt != want {
		t.Errorf("deliveredAt %s, want %s: the attempt began at %s and its answer came 3 s later", *d.DeliveredAt, want, began)
	}
}
