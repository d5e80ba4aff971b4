package server_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/complybox/complybox/store"
)

// deliveredWebhooks makes one instance send a real delivery of every
// custody and applicant event type (from a scenario through the API: a
// deposit and a withdrawal through every status, applicants created,
// changed, moved, reset, deactivated, activated and reviewed) and a test
// sample of every type and of webhook.test on both destinations, and
// returns every body received, with its headers, by event type: real
// deliveries first.
func deliveredWebhooks(t *testing.T) (*instance, map[string][]received) {
	t.Helper()
	in := start(t)
	custody := newReceiver(t, in.Clock, nil)
	in.configureWebhook(custody)
	kyc, _ := in.kycReceiver()

	// Custody: a wallet, a deposit, a withdrawal through every status.
	src := in.wallet(in.vault("hooks"), "ETH")
	in.fund(src.WalletID, "2")
	var x struct{ TransactionID string }
	in.expect(201, "POST", "/transactions", map[string]any{"type": "Withdrawal", "sourceWalletId": src.WalletID,
		"destinationAddress": "0x" + fmt.Sprintf("%040x", 7), "amount": "0.5", "note": "payout"}).json(t, &x)
	for range 4 {
		in.expect(200, "POST", "/transactions/"+x.TransactionID+"/advance", nil)
	}
	// KYC: every applicant event.
	in.createApplicant("hooks-1", "Lovelace")
	in.expect(200, "PATCH", "/v1/applicants/hooks-1", map[string]any{"lastName": "Byron"})
	in.expect(200, "POST", "/v1/applicants/hooks-1/levels/full-kyc-level", nil)
	in.expect(200, "POST", "/v1/applicants/hooks-1/reset", nil)
	in.expect(200, "POST", "/v1/applicants/hooks-1/deactivate", nil)
	in.expect(200, "POST", "/v1/applicants/hooks-1/activate", nil)
	in.createApplicant("hooks-2", "Hopper")
	in.expect(200, "POST", "/v1/applicants/hooks-2/verify", verifyBody(t, 3))
	in.advance(3 * time.Second) // the sandbox reviewer's delay
	pk, ps := in.credential(store.Production, store.RolePartner)
	prod := []string{"X-Api-Key", pk, "X-Api-Secret", ps}
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "hooks-3", "firstName": "Ada", "lastName": "King",
		"dateOfBirth": "1990-04-01", "nationality": "GBR"}, prod...)
	in.expect(200, "POST", "/v1/applicants/hooks-3/verify", verifyBody(t, 5), prod...) // production: on hold

	types := map[string][]string{}
	for _, c := range []struct{ path, dest string }{{"/webhooks/events/catalog", "custody"}, {"/v1/webhooks/events/catalog", "kyc"}} {
		var cat struct{ EventTypes []struct{ Name string } }
		in.expect(200, "GET", c.path, nil).json(t, &cat)
		for _, e := range cat.EventTypes {
			types[c.dest] = append(types[c.dest], e.Name)
		}
	}
	if len(types["custody"]) != 4 || len(types["kyc"]) != 9 {
		t.Fatalf("catalogs: %v", types)
	}
	samples := map[string]bool{} // delivery ids still to arrive
	for dest, path := range map[string]string{"custody": "/webhooks/outbound/test", "kyc": "/v1/webhooks/test"} {
		for _, typ := range append(types[dest], "") {
			var out struct{ DeliveryID string }
			body := map[string]any{}
			if typ != "" {
				body["eventType"] = typ
			}
			in.expect(202, "POST", path, body).json(t, &out)
			samples[out.DeliveryID] = true
		}
	}

	got := map[string][]received{}
	realSeen := map[string]bool{}
	missing := func() int {
		n := len(samples)
		for _, typs := range types {
			for _, typ := range typs {
				if !realSeen[typ] {
					n++
				}
			}
		}
		return n
	}
	deadline := time.After(20 * time.Second)
	for missing() > 0 {
		var r received
		select {
		case r = <-custody.got:
		case r = <-kyc.got:
		case <-deadline:
			t.Fatalf("%d deliveries did not arrive (samples %v, real %v)", missing(), samples, realSeen)
		}
		typ := r.Header.Get("X-Webhook-Event-Type")
		if r.Header.Get("X-Webhook-Test") == "true" {
			delete(samples, r.Header.Get("X-Webhook-Id"))
		} else {
			realSeen[typ] = true
		}
		got[typ] = append(got[typ], r)
	}
	for typ := range got { // real deliveries first, for the examples
		sort.SliceStable(got[typ], func(i, j int) bool {
			return got[typ][i].Header.Get("X-Webhook-Test") == "" && got[typ][j].Header.Get("X-Webhook-Test") != ""
		})
	}
	return in, got
}

// TestOpenAPIWebhooksDescribeEveryDelivery receives a real delivery of
// every event type, custody and applicant, and a test sample of each and of
// webhook.test, and validates each against the document's webhooks
// section: the body against the schema of its event type's webhook, every
// key of the envelope and of data declared (no undocumented field), and
// every required header present.
func TestOpenAPIWebhooksDescribeEveryDelivery(t *testing.T) {
	t.Parallel()
	in, got := deliveredWebhooks(t)
	raw := doRequest(t, "GET", in.URL+"/openapi.json", nil).Body
	doc, err := libopenapi.NewDocument(raw)
	if err != nil {
		t.Fatal(err)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		t.Fatal(err)
	}
	hooks := model.Model.Webhooks
	if hooks == nil {
		t.Fatal("the document has no webhooks section")
	}
	sv := schema_validation.NewSchemaValidator()
	checked := 0
	for typ, rs := range got {
		item, ok := hooks.Get(typ)
		if !ok || item.Post == nil || item.Post.RequestBody == nil {
			t.Errorf("webhooks: no POST %q", typ)
			continue
		}
		mt, ok := item.Post.RequestBody.Content.Get("application/json")
		if !ok || mt.Schema == nil {
			t.Errorf("webhooks %q: no application/json schema", typ)
			continue
		}
		schema := mt.Schema.Schema()
		if mt.Example == nil {
			t.Errorf("webhooks %q: no example", typ)
		} else {
			var ex any
			if err := mt.Example.Decode(&ex); err != nil {
				t.Fatal(err)
			}
			exb, _ := json.Marshal(ex)
			if ok, errs := sv.ValidateSchemaBytes(schema, exb); !ok {
				t.Errorf("the example of webhook %s does not match its schema:%s", typ, explain(errs))
			}
			undeclared(t, typ+" example", exb, schema)
		}
		for _, r := range rs {
			checked++
			if ok, errs := sv.ValidateSchemaBytes(schema, r.Body); !ok {
				t.Errorf("webhook %s (test %q) does not match its schema:%s\n\t%s", typ, r.Header.Get("X-Webhook-Test"), explain(errs), r.Body)
			}
			undeclared(t, typ, r.Body, schema)
			checkWebhookHeaders(t, typ, item.Post, r)
		}
	}
	if checked < 2*(4+9)+2 {
		t.Errorf("checked only %d deliveries", checked)
	}
}

// undeclared reports the keys of the envelope and of its data that the
// schema does not declare: a delivery must carry no undocumented field.
func undeclared(t *testing.T, typ string, body []byte, schema *base.Schema) {
	t.Helper()
	var env map[string]any
	if err := json.Unmarshal(body, &env); err != nil {
		t.Errorf("webhook %s: %v", typ, err)
		return
	}
	check := func(where string, m map[string]any, s *base.Schema) {
		for k := range m {
			if s == nil || s.Properties == nil {
				t.Errorf("webhook %s: %s has no declared properties", typ, where)
				return
			}
			if _, ok := s.Properties.Get(k); !ok {
				t.Errorf("webhook %s: %s.%s is not declared", typ, where, k)
			}
		}
	}
	check("envelope", env, schema)
	data, _ := env["data"].(map[string]any)
	if ds, ok := schema.Properties.Get("data"); ok {
		check("data", data, ds.Schema())
	}
}

// checkWebhookHeaders checks that every header op declares as required is
// on r.
func checkWebhookHeaders(t *testing.T, typ string, op *v3.Operation, r received) {
	t.Helper()
	n := 0
	for _, p := range op.Parameters {
		if p.In != "header" {
			continue
		}
		n++
		if p.Required != nil && *p.Required && r.Header.Get(p.Name) == "" {
			t.Errorf("webhook %s: required header %s missing", typ, p.Name)
		}
	}
	for name := range r.Header {
		if strings.HasPrefix(strings.ToLower(name), "webhook-") || strings.HasPrefix(strings.ToLower(name), "x-webhook-") {
			found := false
			for _, p := range op.Parameters {
				found = found || strings.EqualFold(p.Name, name)
			}
			if !found {
				t.Errorf("webhook %s: header %s is not declared", typ, name)
			}
		}
	}
	if n == 0 {
		t.Errorf("webhook %s declares no header", typ)
	}
}
