package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// TestRestartDeliversEverything: events committed (202 answered) while the
// dispatcher is parked, while an attempt is in flight, or while the receiver
// is failing all reach the receiver after the process dies without draining
// and a new one opens the same db file.
func TestRestartDeliversEverything(t *testing.T) {
	clock := store.NewManualClock(testStart)
	path := filepath.Join(t.TempDir(), "complybox.db")
	const (
		hang = iota
		fail
		ok
	)
	var phase atomic.Int32
	release := make(chan struct{})
	rc := handlerReceiver(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		switch phase.Load() {
		case hang:
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case fail:
			w.WriteHeader(503)
		}
	})
	var closeRelease sync.Once
	t.Cleanup(func() { closeRelease.Do(func() { close(release) }) }) // before rc closes

	// The dispatcher never runs: three events wait in the outbox.
	a := boot(t, func(o *bootOptions) { o.path, o.clock, o.parked = path, clock, true })
	if r := doRequest(t, "GET", a.URL+"/healthz", nil); r.Status != 503 {
		t.Errorf("healthz without a running dispatcher: %d %s", r.Status, r.Body)
	}
	a.configureWebhook(rc)
	want := map[string]bool{}
	for range 3 {
		want[a.testEvent()] = true
	}
	rc.none(t, 50*time.Millisecond)
	a.kill()

	// The next process sends them, but the receiver hangs; a fourth event
	// joins them in flight, and a fifth fails while the receiver answers 503.
	b := boot(t, func(o *bootOptions) {
		o.path, o.clock = path, clock
		o.dispatch.AttemptTimeout = time.Minute
	})
	for range 3 {
		if id := rc.next(t).Header.Get("X-Webhook-Id"); !want[id] {
			t.Fatalf("unexpected delivery %s", id)
		}
	}
	want[b.testEvent()] = true
	rc.next(t)
	phase.Store(fail)
	fifth := b.testEvent()
	want[fifth] = true
	rc.next(t)
	b.waitDelivery(fifth, "failed", 1)
	b.kill()

	// The third process delivers every one: the four whose attempts were cut
	// short at once, the failed one when its retry falls due.
	phase.Store(ok)
	c := boot(t, func(o *bootOptions) { o.path, o.clock = path, clock })
	got := map[string]bool{}
	for range 4 {
		got[rc.next(t).Header.Get("X-Webhook-Id")] = true
	}
	rc.none(t, 50*time.Millisecond)
	c.advance(10 * time.Second)
	last := rc.next(t)
	got[last.Header.Get("X-Webhook-Id")] = true
	if last.Header.Get("X-Webhook-Attempt") != "2" || last.Header.Get("X-Webhook-Id") != fifth {
		t.Errorf("last delivery %s attempt %s, want %s attempt 2", last.Header.Get("X-Webhook-Id"), last.Header.Get("X-Webhook-Attempt"), fifth)
	}
	if len(got) != 5 {
		t.Fatalf("delivered %d distinct deliveries, want 5", len(got))
	}
	for id := range want {
		if !got[id] {
			t.Errorf("delivery %s never arrived after the restart", id)
		}
		c.waitDelivery(id, "delivered", 1)
	}
}

// apiError is the error body of every failure.
type apiError struct {
	Error struct {
		Code, Message, Field, RequestID string
	}
}

// expectError checks an error answer: status, JSON body with a code, a
// message and the request id of the X-Request-Id header.
func expectError(t *testing.T, r *response, status int, code string) apiError {
	t.Helper()
	var e apiError
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	r.json(t, &e)
	if (code != "" && e.Error.Code != code) || e.Error.Message == "" || e.Error.RequestID == "" || e.Error.RequestID != r.Header.Get("X-Request-Id") {
		t.Errorf("error body %s (X-Request-Id %q), want code %q", r.Body, r.Header.Get("X-Request-Id"), code)
	}
	return e
}

func TestConventions(t *testing.T) {
	in := start(t)
	rc := newReceiver(t, in.Clock, nil)
	in.configureWebhook(rc)
	id := in.testEvent()
	rc.next(t)

	t.Run("Unauthorized", func(t *testing.T) {
		for _, h := range [][]string{
			{"X-Api-Key", ""},
			{"X-Api-Secret", ""},
			{"X-Api-Key", "", "X-Api-Secret", ""},
			{"X-Api-Secret", "wrong"},
			{"X-Api-Key", "nope"},
		} {
			expectError(t, in.do("GET", "/webhooks/outbound", nil, h...), 401, "unauthorized")
		}
		k, s := in.credential(store.Sandbox, store.RolePartner)
		in.expect(200, "GET", "/webhooks/outbound", nil, "X-Api-Key", k, "X-Api-Secret", s)
		if err := in.Store.RevokeCredential(k); err != nil {
			t.Fatal(err)
		}
		expectError(t, in.do("GET", "/webhooks/outbound", nil, "X-Api-Key", k, "X-Api-Secret", s), 401, "unauthorized")
	})
	t.Run("Environment", func(t *testing.T) {
		in.expect(200, "GET", "/webhooks/outbound", nil, "X-Environment", "sandbox")
		expectError(t, in.do("GET", "/webhooks/outbound", nil, "X-Environment", "production"), 403, "")
		e := expectError(t, in.do("GET", "/webhooks/outbound", nil, "X-Environment", "staging"), 400, "")
		if e.Error.Field != "X-Environment" {
			t.Errorf("field %q", e.Error.Field)
		}
	})
	t.Run("Admin", func(t *testing.T) {
		expectError(t, in.do("GET", "/v1/admin/backup", nil), 403, "admin_required")
		k, s := in.credential(store.Sandbox, store.RoleAdmin)
		r := in.expect(200, "GET", "/v1/admin/backup", nil, "X-Api-Key", k, "X-Api-Secret", s)
		if r.Header.Get("X-Request-Id") == "" || r.Header.Get("Content-Length") != strconv.Itoa(len(r.Body)) {
			t.Errorf("backup headers %v for %d bytes", r.Header, len(r.Body))
		}
		path := filepath.Join(t.TempDir(), "backup.db")
		if err := os.WriteFile(path, r.Body, 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := store.Open(path, store.Options{})
		if err != nil {
			t.Fatalf("backup does not open: %v", err)
		}
		defer st.Close()
		if err := st.Check(); err != nil {
			t.Fatal(err)
		}
		if d, err := st.Delivery(store.Sandbox, id); err != nil || d.ID != id {
			t.Errorf("backup lacks delivery %s: %v", id, err)
		}
	})
	t.Run("NotFound", func(t *testing.T) {
		expectError(t, in.do("GET", "/webhooks/deliveries/00000000-0000-4000-8000-000000000000", nil), 404, "delivery_not_found")
		expectError(t, in.do("GET", "/webhooks/deliveries/not-a-uuid", nil), 404, "delivery_not_found")
		expectError(t, in.do("GET", "/no/such/route", nil), 404, "")
	})
	t.Run("MethodNotAllowed", func(t *testing.T) {
		r := in.do("DELETE", "/webhooks/outbound", nil)
		expectError(t, r, 405, "method_not_allowed")
		if allow := r.Header.Get("Allow"); !strings.Contains(allow, "GET") || !strings.Contains(allow, "PUT") {
			t.Errorf("Allow %q", allow)
		}
		r = in.do("POST", "/webhooks/deliveries/"+id, nil)
		expectError(t, r, 405, "method_not_allowed")
		if allow := r.Header.Get("Allow"); allow != "GET" {
			t.Errorf("Allow %q", allow)
		}
		r = in.do("PUT", "/healthz", nil)
		expectError(t, r, 405, "")
		if r.Header.Get("Allow") == "" {
			t.Error("405 without Allow")
		}
	})
	t.Run("TooLarge", func(t *testing.T) {
		big := `{"url":"` + rc.URL + `","pad":"` + strings.Repeat("x", 1<<20) + `"}`
		expectError(t, in.do("PUT", "/webhooks/outbound", big), 413, "")
		expectError(t, in.do("POST", "/webhooks/deliveries/retry", big), 413, "")
		// Exactly at the limit is still read (and then judged on its content).
		atLimit := `{"status":"dead","x":"` + strings.Repeat("x", 1<<20-len(`{"status":"dead","x":""}`)) + `"}`
		in.expect(200, "POST", "/webhooks/deliveries/retry", atLimit)
	})
	t.Run("MalformedJSON", func(t *testing.T) {
		expectError(t, in.do("PUT", "/webhooks/outbound", `{"url":`), 400, "")
		expectError(t, in.do("PUT", "/webhooks/outbound", `[1]`), 400, "")
		expectError(t, in.do("PUT", "/webhooks/outbound", `{"url":"`+rc.URL+`"} trailing`), 400, "")
	})
	t.Run("Healthz", func(t *testing.T) {
		r := doRequest(t, "GET", in.URL+"/healthz", nil)
		if r.Status != 200 || strings.TrimSpace(string(r.Body)) != `{"status":"ok"}` || r.Header.Get("X-Request-Id") == "" {
			t.Errorf("healthz %d %s", r.Status, r.Body)
		}
	})
	t.Run("OpenAPI", func(t *testing.T) {
		r := doRequest(t, "GET", in.URL+"/openapi.json", nil)
		var doc struct {
			OpenAPI string `json:"openapi"`
			Paths   map[string]map[string]any
		}
		if r.Status != 200 || json.Unmarshal(r.Body, &doc) != nil || doc.OpenAPI != "3.1.0" {
			t.Fatalf("openapi %d %.200s", r.Status, r.Body)
		}
		for path, methods := range map[string][]string{
			"/healthz":                        {"get"},
			"/openapi.json":                   {"get"},
			"/v1/admin/backup":                {"get"},
			"/webhooks/outbound":              {"get", "put"},
			"/webhooks/outbound/test":         {"post"},
			"/webhooks/deliveries":            {"get"},
			"/webhooks/deliveries/{id}":       {"get"},
			"/webhooks/deliveries/{id}/retry": {"post"},
			"/webhooks/deliveries/retry":      {"post"},
			"/webhooks/events/catalog":        {"get"},
			"/v1/webhooks/events/catalog":     {"get"},
		} {
			for _, m := range methods {
				if doc.Paths[path][m] == nil {
					t.Errorf("openapi lacks %s %s", m, path)
				}
			}
		}
	})
}

func TestRequestIDOnEveryResponse(t *testing.T) {
	in := start(t)
	seen := map[string]bool{}
	for _, r := range []*response{
		in.do("GET", "/webhooks/outbound", nil),
		in.do("GET", "/webhooks/outbound", nil, "X-Api-Key", ""),
		in.do("GET", "/nope", nil),
		in.do("PATCH", "/webhooks/outbound", nil),
		doRequest(t, "GET", in.URL+"/healthz", nil),
		doRequest(t, "GET", in.URL+"/openapi.json", nil),
	} {
		id := r.Header.Get("X-Request-Id")
		if id == "" || seen[id] {
			t.Errorf("status %d: X-Request-Id %q", r.Status, id)
		}
		seen[id] = true
	}
	// A caller's own request id is adopted when it is sane, else replaced.
	r := in.do("GET", "/webhooks/deliveries/nope", nil, "X-Request-Id", "req-42.a:b_c")
	if r.Header.Get("X-Request-Id") != "req-42.a:b_c" || r.m(t)["error"].(map[string]any)["requestId"] != "req-42.a:b_c" {
		t.Errorf("caller's request id not adopted: %s %s", r.Header.Get("X-Request-Id"), r.Body)
	}
	r = in.do("GET", "/webhooks/outbound", nil, "X-Request-Id", "bad id "+strings.Repeat("x", 200))
	if id := r.Header.Get("X-Request-Id"); !store.IsUUID(id) {
		t.Errorf("unsafe request id kept: %q", id)
	}
}

// TestEnvironmentIsolation: a production credential sees its own webhook
// configuration and gets 404 for a sandbox delivery.
func TestEnvironmentIsolation(t *testing.T) {
	in := start(t)
	rc := newReceiver(t, in.Clock, nil)
	in.configureWebhook(rc)
	id := in.testEvent()
	rc.next(t)
	k, s := in.credential(store.Production, store.RolePartner)
	prod := []string{"X-Api-Key", k, "X-Api-Secret", s}

	if g := in.expect(200, "GET", "/webhooks/outbound", nil, prod...).m(t); g["isConfigured"] != false || g["url"] != nil {
		t.Errorf("production sees the sandbox configuration: %v", g)
	}
	expectError(t, in.do("GET", "/webhooks/deliveries/"+id, nil, prod...), 404, "delivery_not_found")
	expectError(t, in.do("POST", "/webhooks/deliveries/"+id+"/retry", nil, prod...), 404, "delivery_not_found")
	expectError(t, in.do("POST", "/webhooks/outbound/test", nil, prod...), 409, "webhook_not_configured")
	var p struct{ Items []any }
	in.expect(200, "GET", "/webhooks/deliveries", nil, prod...).json(t, &p)
	if len(p.Items) != 0 {
		t.Errorf("production lists %d sandbox deliveries", len(p.Items))
	}
	in.expect(200, "GET", "/webhooks/outbound", nil, append(prod, "X-Environment", "production")...)
	expectError(t, in.do("GET", "/webhooks/outbound", nil, append(prod, "X-Environment", "sandbox")...), 403, "")

	// Production's own configuration gets its own secret and deliveries.
	rc2 := newReceiver(t, in.Clock, nil)
	v := in.expect(200, "PUT", "/webhooks/outbound", map[string]any{"url": rc2.URL}, prod...).m(t)
	if v["signingSecret"] == nil {
		t.Fatal("no secret for production's first configuration")
	}
	var out struct{ DeliveryID string }
	in.expect(202, "POST", "/webhooks/outbound/test", nil, prod...).json(t, &out)
	if got := rc2.next(t); got.Header.Get("X-Webhook-Id") != out.DeliveryID {
		t.Errorf("production test event went astray")
	}
	rc.none(t, 50*time.Millisecond)
	expectError(t, in.do("GET", "/webhooks/deliveries/"+out.DeliveryID, nil), 404, "delivery_not_found")
	if g := in.expect(200, "GET", "/webhooks/outbound", nil).m(t); g["url"] != rc.URL {
		t.Errorf("sandbox configuration changed: %v", g)
	}
}

// TestOpenAPIDocumentsEveryRoute walks the routes of routes.go and checks
// that /openapi.json, a valid-looking OpenAPI 3.1 document, has each path
// and method (path parameters may be named differently), and no operation
// the router does not serve; that every $ref resolves; and that every
// path parameter is declared, required, in its operation.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	src, err := os.ReadFile("routes.go")
	if err != nil {
		t.Fatal(err)
	}
	routeRE := regexp.MustCompile(`r\.(GET|POST|PUT|PATCH|DELETE)\("([^"]+)"`)
	paramRE := regexp.MustCompile(`[:*][A-Za-z]+|\{[A-Za-z]+\}`)
	shape := func(method, path string) string {
		return strings.ToLower(method) + " " + paramRE.ReplaceAllString(path, "{}")
	}
	routes := map[string]bool{}
	for _, m := range routeRE.FindAllStringSubmatch(string(src), -1) {
		method, path := m[1], m[2]
		if method == "POST" && path == "/webhooks/deliveries/:id" {
			path = "/webhooks/deliveries/retry" // the one :id it serves
		}
		routes[shape(method, path)] = true
	}
	if len(routes) < 50 {
		t.Fatalf("found only %d routes in routes.go", len(routes))
	}

	in := start(t)
	r := doRequest(t, "GET", in.URL+"/openapi.json", nil)
	var doc map[string]any
	if r.Status != 200 || json.Unmarshal(r.Body, &doc) != nil {
		t.Fatalf("openapi.json: %d %.200s", r.Status, r.Body)
	}
	if v, _ := doc["openapi"].(string); !strings.HasPrefix(v, "3.1.") {
		t.Errorf("openapi = %q, want 3.1.x", v)
	}
	info, _ := doc["info"].(map[string]any)
	if info["title"] == nil || info["version"] == nil {
		t.Errorf("info lacks title or version: %v", info)
	}
	documented := map[string]bool{}
	paths, _ := doc["paths"].(map[string]any)
	for path, item := range paths {
		ops, _ := item.(map[string]any)
		for method, op := range ops {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
			default:
				continue
			}
			key := shape(method, path)
			documented[key] = true
			if !routes[key] {
				t.Errorf("openapi.json documents %s %s, which no route serves", method, path)
			}
			o, _ := op.(map[string]any)
			if o["responses"] == nil {
				t.Errorf("%s %s: no responses", method, path)
			}
			declared := map[string]bool{}
			params, _ := o["parameters"].([]any)
			common, _ := ops["parameters"].([]any)
			for _, p := range append(params, common...) {
				pm, _ := resolveRef(t, doc, p).(map[string]any)
				if pm["in"] == "path" {
					if pm["required"] != true {
						t.Errorf("%s %s: path parameter %v is not required", method, path, pm["name"])
					}
					declared[pm["name"].(string)] = true
				}
			}
			for _, name := range paramRE.FindAllString(path, -1) {
				if !declared[strings.Trim(name, "{}")] {
					t.Errorf("%s %s: path parameter %s is not declared", method, path, name)
				}
			}
		}
	}
	for key := range routes {
		if !documented[key] {
			t.Errorf("openapi.json lacks the route %s", key)
		}
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if _, ok := v["$ref"].(string); ok {
				resolveRef(t, doc, v)
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
}

// resolveRef follows a local {"$ref": "#/..."} of doc, failing the test when
// it points nowhere; other values are returned as they are.
func resolveRef(t *testing.T, doc map[string]any, v any) any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	ref, ok := m["$ref"].(string)
	if !ok {
		return v
	}
	if !strings.HasPrefix(ref, "#/") {
		t.Errorf("$ref %q is not local", ref)
		return nil
	}
	var cur any = doc
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		cm, _ := cur.(map[string]any)
		if cur = cm[part]; cur == nil {
			t.Errorf("$ref %q points nowhere", ref)
			return nil
		}
	}
	return cur
}

// TestIdempotencyKeyConventions: within one environment and route, the same
// key and the same body (whitespace and key order aside) replay the first
// response; another body is 409; another route or environment is
// independent; after 24 h the key is free again.
func TestIdempotencyKeyConventions(t *testing.T) {
	in := start(t)
	first := in.expect(201, "POST", "/vaults", `{"name":"ops","externalId":"x-1"}`, "Idempotency-Key", "k")
	again := in.expect(201, "POST", "/vaults", "{ \"externalId\" : \"x-1\",\n \"name\": \"ops\" }", "Idempotency-Key", "k")
	if string(first.Body) != string(again.Body) {
		t.Fatalf("replay differs:\n%s\n%s", first.Body, again.Body)
	}
	expectError(t, in.do("POST", "/vaults", `{"name":"other","externalId":"x-1"}`, "Idempotency-Key", "k"), 409, "idempotency_key_reused")

	var v struct{ VaultID string }
	first.json(t, &v)
	in.expect(201, "POST", "/vaults/"+v.VaultID+"/wallets", map[string]any{"assetSymbol": "BTC"}, "Idempotency-Key", "k")
	key, secret := in.credential(store.Production, store.RolePartner)
	other := in.expect(201, "POST", "/vaults", `{"name":"ops","externalId":"x-1"}`, "Idempotency-Key", "k", "X-Api-Key", key, "X-Api-Secret", secret)
	if string(other.Body) == string(first.Body) {
		t.Fatal("another environment replayed the sandbox response")
	}

	in.advance(24*time.Hour + time.Second)
	later := in.expect(201, "POST", "/vaults", `{"name":"other","externalId":"x-2"}`, "Idempotency-Key", "k")
	if string(later.Body) == string(first.Body) {
		t.Fatal("a key older than 24 h replayed")
	}
}
