package server_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/complybox/complybox/dispatch"
)

func TestWebhookTestEvent(t *testing.T) {
	in := start(t)
	rc := newReceiver(t, in.Clock, nil)
	secret := in.configureWebhook(rc)
	if len(secret) != 44 {
		t.Fatalf("secret %q: want 44 characters of padded base64", secret)
	}
	var out struct{ DeliveryID string }
	in.expect(202, "POST", "/webhooks/outbound/test", nil).json(t, &out)

	got := rc.next(t)
	if !dispatch.Verify(secret, got.Body, got.Header.Get("X-Webhook-Signature")) {
		t.Errorf("X-Webhook-Signature does not verify")
	}
	var env struct {
		ID, EventType, EntityType, EntityID string
	}
	if err := json.Unmarshal(got.Body, &env); err != nil {
		t.Fatal(err)
	}
	ts, _ := strconv.ParseInt(got.Header.Get("webhook-timestamp"), 10, 64)
	if want := dispatch.SignStandard(secret, env.ID, ts, got.Body); got.Header.Get("webhook-signature") != want {
		t.Errorf("webhook-signature %q, want %q", got.Header.Get("webhook-signature"), want)
	}
	if env.EventType != "webhook.test" || env.EntityType != "webhook" || env.EntityID != out.DeliveryID {
		t.Errorf("envelope %+v", env)
	}
	var d struct {
		Status   string
		Payload  string
		Attempts []struct{ Success bool }
	}
	in.expect(200, "GET", "/webhooks/deliveries/"+out.DeliveryID, nil).json(t, &d)
	for d.Status != "delivered" {
		in.expect(200, "GET", "/webhooks/deliveries/"+out.DeliveryID, nil).json(t, &d)
	}
	if d.Payload != string(got.Body) {
		t.Errorf("payload %q, want the exact bytes sent %q", d.Payload, got.Body)
	}
}
