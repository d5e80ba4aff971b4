package server_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// realEvents receives webhooks at rc until one of every type in types has
// arrived, and returns the first of each.
func realEvents(t *testing.T, rc *receiver, secret string, types []string) map[string]event {
	t.Helper()
	out := map[string]event{}
	for len(out) < len(types) {
		r := rc.next(t)
		if r.Header.Get("X-Webhook-Test") != "" {
			t.Fatalf("a real %s carries X-Webhook-Test", r.Header.Get("X-Webhook-Event-Type"))
		}
		e := verified(t, secret, r)
		if _, ok := out[e.EventType]; !ok {
			out[e.EventType] = e
		}
	}
	return out
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	}
	return "object"
}

// checkSample sends a test event of eventType through path, receives it at
// rc and compares it with real: signed, marked as a test, the real event's
// data keys exactly, values set in both of one JSON type, and listed in
// deliveries as a test.
func checkSample(t *testing.T, in *instance, rc *receiver, secret, path, eventType string, real event) event {
	t.Helper()
	var out struct{ DeliveryID string }
	in.expect(202, "POST", path, map[string]any{"eventType": eventType}).json(t, &out)
	var r received
	for r = rc.nextOfType(t, eventType); r.Header.Get("X-Webhook-Id") != out.DeliveryID; r = rc.nextOfType(t, eventType) {
	}
	e := verified(t, secret, r)
	if r.Header.Get("X-Webhook-Test") != "true" || r.Header.Get("X-Webhook-Id") != out.DeliveryID {
		t.Errorf("%s: X-Webhook-Test %q, X-Webhook-Id %q (delivery %s)", eventType, r.Header.Get("X-Webhook-Test"), r.Header.Get("X-Webhook-Id"), out.DeliveryID)
	}
	if e.EntityType != real.EntityType || e.EntityID == "" || e.EntityID == real.EntityID || !store.IsUUID(e.ID) {
		t.Errorf("%s: entity %s %s id %s; real %s %s", eventType, e.EntityType, e.EntityID, e.ID, real.EntityType, real.EntityID)
	}
	sameKeys(t, eventType+" sample data", e.Data, keys(real.Data)...)
	// A value may be null in one and set in the other (a withdrawal has no
	// txHash when submitted, a deposit has one); set in both, it has one type.
	for k, v := range e.Data {
		if v != nil && real.Data[k] != nil && jsonKind(v) != jsonKind(real.Data[k]) {
			t.Errorf("%s: %s is a %s in the sample, a %s in the real event", eventType, k, jsonKind(v), jsonKind(real.Data[k]))
		}
	}
	d := in.waitDelivery(out.DeliveryID, "delivered", 1)
	var listed struct{ Items []map[string]any }
	in.expect(200, "GET", "/webhooks/deliveries?eventType="+eventType+"&limit=200", nil).json(t, &listed)
	found := false
	for _, it := range listed.Items {
		if it["id"] == d.ID {
			found = it["test"] == true
		} else if it["test"] != nil {
			t.Errorf("%s: the real delivery %v is marked test", eventType, it["id"])
		}
	}
	if !found {
		t.Errorf("%s: delivery %s not listed as a test: %v", eventType, d.ID, listed.Items)
	}
	return e
}

// TestCustodyTestEvents: POST /webhooks/outbound/test {eventType} sends a
// signed sample of every custody type, with the data keys of the real
// event of that type, marked X-Webhook-Test: true and listed as a test.
func TestCustodyTestEvents(t *testing.T) {
	t.Parallel()
	in := start(t)
	r := in.expect(409, "POST", "/webhooks/outbound/test", map[string]any{"eventType": "wallet.created"})
	if r.m(t)["error"].(map[string]any)["code"] != "webhook_not_configured" {
		t.Fatalf("not configured: %s", r.Body)
	}
	rc := newReceiver(t, in.Clock, nil)
	secret := in.configureWebhook(rc, "transaction.created") // a test is sent whatever the subscription
	in.expect(200, "PUT", "/webhooks/outbound", map[string]any{"url": rc.URL})

	// One real event of every type: a wallet, a withdrawal through every
	// status, and the balance changes.
	src := in.wallet(in.vault("real"), "ETH")
	in.fund(src.WalletID, "2")
	var x struct{ TransactionID string }
	in.expect(201, "POST", "/transactions", map[string]any{"type": "Withdrawal", "sourceWalletId": src.WalletID,
		"destinationAddress": "0x" + fmt.Sprintf("%040x", 7), "amount": "0.5", "note": "real"}).json(t, &x)
	for range 4 {
		in.expect(200, "POST", "/transactions/"+x.TransactionID+"/advance", nil)
	}
	custody := []string{"transaction.created", "transaction.status.updated", "wallet.created", "balance.updated"}
	real := realEvents(t, rc, secret, custody)

	var assets struct{ Items []struct{ ID string } }
	in.expect(200, "GET", "/assets", nil).json(t, &assets)
	known := map[string]bool{}
	for _, a := range assets.Items {
		known[a.ID] = true
	}
	for _, typ := range custody {
		e := checkSample(t, in, rc, secret, "/webhooks/outbound/test", typ, real[typ])
		if !known[e.Data["assetId"].(string)] {
			t.Errorf("%s: assetId %v is no asset of GET /assets", typ, e.Data["assetId"])
		}
		for _, k := range []string{"transactionId", "vaultId", "walletId", "vaultAccountId"} {
			if v, ok := e.Data[k]; ok && !store.IsUUID(v.(string)) {
				t.Errorf("%s: %s %v is not a uuid", typ, k, v)
			}
		}
	}

	// Without eventType: webhook.test, also marked.
	id := in.testEvent()
	got := rc.nextOfType(t, "webhook.test")
	if got.Header.Get("X-Webhook-Test") != "true" || got.Header.Get("X-Webhook-Id") != id {
		t.Errorf("webhook.test headers %v", got.Header)
	}
	// Named, the default is webhook.test too.
	var named struct{ DeliveryID string }
	in.expect(202, "POST", "/webhooks/outbound/test", map[string]any{"eventType": "webhook.test"}).json(t, &named)
	if got := rc.nextOfType(t, "webhook.test"); got.Header.Get("X-Webhook-Id") != named.DeliveryID || got.Header.Get("X-Webhook-Test") != "true" {
		t.Errorf("eventType webhook.test: headers %v, want delivery %s", got.Header, named.DeliveryID)
	}
	// Unknown or foreign types: 400 naming eventType.
	for _, body := range []any{map[string]any{"eventType": "nope"}, map[string]any{"eventType": "applicantReviewed"},
		map[string]any{"eventType": ""}, map[string]any{"eventType": 3}} {
		r := in.expect(400, "POST", "/webhooks/outbound/test", body)
		if f := r.m(t)["error"].(map[string]any)["field"]; f != "eventType" {
			t.Errorf("%v: field %v", body, f)
		}
	}
}

// TestKYCTestEvents: POST /v1/webhooks/test {eventType} does the same for
// the KYC callback and every applicant type.
func TestKYCTestEvents(t *testing.T) {
	t.Parallel()
	in := start(t)
	r := in.expect(409, "POST", "/v1/webhooks/test", nil)
	if r.m(t)["error"].(map[string]any)["code"] != "webhook_not_configured" {
		t.Fatalf("not configured: %s", r.Body)
	}
	rc, secret := in.kycReceiver()

	in.createApplicant("real-1", "Lovelace")
	in.expect(200, "PATCH", "/v1/applicants/real-1", map[string]any{"lastName": "Byron"})
	in.expect(200, "POST", "/v1/applicants/real-1/levels/full-kyc-level", nil)
	in.expect(200, "POST", "/v1/applicants/real-1/reset", nil)
	in.expect(200, "POST", "/v1/applicants/real-1/deactivate", nil)
	in.expect(200, "POST", "/v1/applicants/real-1/activate", nil)
	in.createApplicant("real-2", "Hopper")
	in.expect(200, "POST", "/v1/applicants/real-2/verify", verifyBody(t, 3))
	in.advance(3 * time.Second) // the sandbox reviewer's delay
	pk, ps := in.credential(store.Production, store.RolePartner)
	prod := []string{"X-Api-Key", pk, "X-Api-Secret", ps}
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "real-3", "firstName": "Ada", "lastName": "King",
		"dateOfBirth": "1990-04-01", "nationality": "GBR"}, prod...)
	in.expect(200, "POST", "/v1/applicants/real-3/verify", verifyBody(t, 5), prod...)

	var kyc []string
	var cat struct{ EventTypes []struct{ Name string } }
	in.expect(200, "GET", "/v1/webhooks/events/catalog", nil).json(t, &cat)
	for _, e := range cat.EventTypes {
		kyc = append(kyc, e.Name)
	}
	real := realEvents(t, rc, secret, kyc)
	for _, typ := range kyc {
		e := checkSample(t, in, rc, secret, "/v1/webhooks/test", typ, real[typ])
		if !store.IsUUID(e.Data["applicantId"].(string)) || e.Data["environment"] != "sandbox" {
			t.Errorf("%s: data %v", typ, e.Data)
		}
		// The review status is the one a real event of the type carries.
		if e.Data["reviewStatus"] != real[typ].Data["reviewStatus"] {
			t.Errorf("%s: sample reviewStatus %v, a real one %v", typ, e.Data["reviewStatus"], real[typ].Data["reviewStatus"])
		}
	}
	in.expect(202, "POST", "/v1/webhooks/test", map[string]any{"eventType": "webhook.test"})
	rc.nextOfType(t, "webhook.test")
	r = in.expect(400, "POST", "/v1/webhooks/test", map[string]any{"eventType": "wallet.created"})
	if f := r.m(t)["error"].(map[string]any)["field"]; f != "eventType" {
		t.Errorf("custody type on the KYC callback: field %v", f)
	}
}
