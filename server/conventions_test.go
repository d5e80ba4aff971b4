package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/complybox/complybox/store"
)

// sweepRoute is one line of routes.go: its method, path and how it is
// guarded (api, admin, public, sdkAPI for ui.API, ui or console).
type sweepRoute struct {
	method, path, guard string
}

// sweepRoutes parses routes.go.
func sweepRoutes(t *testing.T) []sweepRoute {
	t.Helper()
	src, err := os.ReadFile("routes.go")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`r\.(GET|POST|PUT|PATCH|DELETE)\("([^"]+)", (s\.(api|admin|public)\(|ui\.API\(|ui\.|c\.)`)
	var out []sweepRoute
	for _, m := range re.FindAllStringSubmatch(string(src), -1) {
		g := m[4]
		switch {
		case m[3] == "ui.API(":
			g = "sdkAPI"
		case strings.HasPrefix(m[3], "ui."):
			g = "ui"
		case strings.HasPrefix(m[3], "c."):
			g = "console"
		}
		out = append(out, sweepRoute{m[1], m[2], g})
	}
	if len(out) < 100 {
		t.Fatalf("found only %d routes in routes.go", len(out))
	}
	return out
}

// sweepFixture holds one record of every kind, created in sandbox.
type sweepFixture struct {
	person, company, level, token, short string
	companyToken                         string
	vault, wallet, tx, delivery          string
	request                              string // a request id in the request log
}

// newSweepFixture creates an applicant, a company with a spawned UBO row, a
// level, a session, a vault, a wallet, a deposit and a delivery in sandbox.
func newSweepFixture(in *instance) sweepFixture {
	t := in.t
	var f sweepFixture
	f.person = in.createApplicant("sweep-person", "Lovelace")["externalUserId"].(string)
	f.company = in.createCompany("sweep-co", "Sweep Ltd", map[string]any{"fullName": "Una Owner", "dateOfBirth": "1980-01-02", "roles": []string{"ubo"}, "ownershipPercent": 60})["externalUserId"].(string)
	in.expect(201, "POST", "/v1/applicants/sweep-co/ubos/0/spawn-kyc", nil)
	in.expect(201, "POST", "/v1/levels", map[string]any{"name": "sweep-level", "applicantType": "individual",
		"steps": []map[string]any{{"kind": "identity_doc"}}})
	f.level = "sweep-level"
	s := in.expect(201, "POST", "/v1/applicants/sweep-person/verification-sessions", nil).m(t)
	f.token, f.short = s["token"].(string), s["shortCode"].(string)
	f.companyToken = in.expect(201, "POST", "/v1/applicants/sweep-co/verification-sessions", nil).m(t)["token"].(string)
	f.vault = in.vault("sweep")
	f.request = in.expect(200, "GET", "/vaults/"+f.vault, nil).Header.Get("X-Request-Id")
	f.wallet = in.wallet(f.vault, "ETH").WalletID
	var tx struct{ TransactionID string }
	in.expect(201, "POST", "/sandbox/deposits", map[string]any{"walletId": f.wallet, "amount": "1.5"}).json(t, &tx)
	f.tx = tx.TransactionID
	in.configureWebhook(newReceiver(t, in.Clock, func(int) int { return 500 }))
	f.delivery = in.testEvent()
	in.waitDelivery(f.delivery, "failed", 1)
	return f
}

// fill replaces the route's parameters with the fixture's records.
func (f sweepFixture) fill(path string) string {
	parts := strings.Split(path, "/")
	path = strings.TrimPrefix(path, "/console")
	for i, p := range parts {
		if !strings.HasPrefix(p, ":") && !strings.HasPrefix(p, "*") {
			continue
		}
		switch {
		case p == ":levelName" || p == ":name":
			parts[i] = f.level
		case p == ":uboIndex":
			parts[i] = "0"
		case p == ":token":
			parts[i] = f.token
		case p == ":code":
			parts[i] = f.short
		case p == ":requestId":
			parts[i] = f.request
		case strings.HasPrefix(path, "/v1/applicants/:id/ubos") || strings.HasPrefix(path, "/v1/applicants/:id/company"):
			parts[i] = f.company
		case strings.Contains(path, "applicants/"):
			parts[i] = f.person
		case strings.HasPrefix(path, "/vaults"):
			parts[i] = f.vault
		case strings.HasPrefix(path, "/wallets"):
			parts[i] = f.wallet
		case strings.HasPrefix(path, "/transactions"):
			parts[i] = f.tx
		case strings.HasPrefix(path, "/webhooks/deliveries"):
			parts[i] = f.delivery
		default:
			parts[i] = "x"
		}
	}
	return strings.Join(parts, "/")
}

// checkErrorBody fails unless r is a JSON error of the exact shape
// {"error":{"code","message","requestId"[,"field"]}} with X-Request-Id.
func checkErrorBody(t *testing.T, what string, r *response) {
	t.Helper()
	if r.Header.Get("X-Request-Id") == "" {
		t.Errorf("%s: no X-Request-Id", what)
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Errorf("%s: %d Content-Type %q; body %.200s", what, r.Status, r.Header.Get("Content-Type"), r.Body)
		return
	}
	var body map[string]map[string]any
	if err := json.Unmarshal(r.Body, &body); err != nil || len(body) != 1 || body["error"] == nil {
		t.Errorf("%s: error body %.200s", what, r.Body)
		return
	}
	e := body["error"]
	for _, k := range []string{"code", "message", "requestId"} {
		if s, _ := e[k].(string); s == "" {
			t.Errorf("%s: error.%s missing in %s", what, k, r.Body)
		}
	}
	for k := range e {
		if !slices.Contains([]string{"code", "message", "requestId", "field"}, k) {
			t.Errorf("%s: unexpected error.%s in %s", what, k, r.Body)
		}
	}
	if e["requestId"] != r.Header.Get("X-Request-Id") {
		t.Errorf("%s: requestId %v != X-Request-Id %q", what, e["requestId"], r.Header.Get("X-Request-Id"))
	}
}

// TestSweepConventions checks SPEC §2 on every API route of routes.go:
// auth, environment header, 405 with Allow, X-Request-Id, junk path ids,
// malformed and wrongly typed bodies, and body limits.
func TestSweepConventions(t *testing.T) {
	t.Parallel()
	routes := sweepRoutes(t)
	in := start(t)
	f := newSweepFixture(in)
	prodKey, prodSecret := in.credential(store.Production, store.RolePartner)
	adminKey, adminSecret := in.credential(store.Sandbox, store.RoleAdmin)
	methods := map[string][]string{}
	for _, rt := range routes {
		methods[rt.path] = append(methods[rt.path], rt.method)
	}
	cred := func(rt sweepRoute) []string {
		if rt.guard == "admin" {
			return []string{"X-Api-Key", adminKey, "X-Api-Secret", adminSecret}
		}
		return []string{"X-Api-Key", in.Key, "X-Api-Secret", in.Secret}
	}
	raw := func(method, path string, body any, h ...string) *response {
		var rd io.Reader
		switch b := body.(type) {
		case string:
			rd = strings.NewReader(b)
		case nil:
		default:
			j, _ := json.Marshal(b)
			rd = strings.NewReader(string(j))
		}
		return send(t, method, in.URL+path, rd, h...)
	}
	junkRE := regexp.MustCompile(`[:*][A-Za-z]+`)
	for _, rt := range routes {
		name := rt.method + " " + rt.path
		path := f.fill(rt.path)
		if rt.method == "POST" && rt.path == "/webhooks/deliveries/:id" {
			path = "/webhooks/deliveries/retry"
		}
		// Every route, pages included: X-Request-Id, 405 with Allow, and
		// never a 5xx for a junk path parameter.
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			if slices.Contains(methods[rt.path], m) || rt.path == "/sdk-assets/*file" {
				continue
			}
			r := sweepStatus(t, 405, name+" as "+m, raw(m, path, nil))
			if rt.path == "/console" || strings.HasPrefix(rt.path, "/console/") {
				// The console answers with its error page: a browser
				// shows JSON as text.
				if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
					t.Errorf("%s as %s: Content-Type %q, want the console's error page", name, m, ct)
				}
			} else {
				checkErrorBody(t, name+" as "+m, r)
			}
			allowed := methods[rt.path]
			if rt.path == "/webhooks/deliveries/:id" {
				allowed = []string{rt.method} // a delivery takes GET, "retry" POST: one place in the router
			}
			for _, want := range allowed {
				if !slices.Contains(strings.Split(r.Header.Get("Allow"), ", "), want) {
					t.Errorf("%s as %s: Allow %q lacks %s", name, m, r.Header.Get("Allow"), want)
				}
			}
			break
		}
		if strings.ContainsAny(rt.path, ":*") {
			for _, junk := range []string{"..%2F..", "..", strings.Repeat("a", 200), "%00", "%E2%98%83%C3%BC", "%20", "%FF", "-1", "99999999999999999999"} {
				r := raw(rt.method, junkRE.ReplaceAllString(rt.path, junk), "{}", cred(rt)...)
				if r.Status >= 500 || r.Header.Get("X-Request-Id") == "" {
					t.Errorf("%s with id %q: status %d, X-Request-Id %q: %.200s", name, junk, r.Status, r.Header.Get("X-Request-Id"), r.Body)
				}
				if rt.guard == "api" || rt.guard == "admin" || rt.guard == "sdkAPI" {
					if r.Status < 400 {
						t.Errorf("%s with id %q: status %d %.200s", name, junk, r.Status, r.Body)
					}
					if r.Status >= 400 {
						checkErrorBody(t, name+" junk "+junk, r)
					}
				}
			}
		}
		if rt.guard == "sdkAPI" && rt.method == "POST" {
			big := `{"x":"` + strings.Repeat("a", limitOf(rt.path)) + `"}`
			h := []string{"Authorization", "Bearer " + f.token}
			checkErrorBody(t, name+" too large", sweepStatus(t, 413, name+" too large", raw(rt.method, path, big, h...)))
		}
		if rt.guard != "api" && rt.guard != "admin" && rt.guard != "sdkAPI" {
			r := raw(rt.method, path, nil)
			if r.Status >= 500 || r.Header.Get("X-Request-Id") == "" {
				t.Errorf("%s: status %d, X-Request-Id %q", name, r.Status, r.Header.Get("X-Request-Id"))
			}
			continue
		}
		if rt.guard == "admin" {
			checkErrorBody(t, name+" as partner", sweepStatus(t, 403, name+" as partner", raw(rt.method, path, nil, "X-Api-Key", in.Key, "X-Api-Secret", in.Secret)))
		}
		if rt.guard == "sdkAPI" {
			checkErrorBody(t, name+" no token", sweepStatus(t, 401, name+" no token", raw(rt.method, path, nil)))
			checkErrorBody(t, name+" unknown token", sweepStatus(t, 401, name+" unknown token", raw(rt.method, path, nil, "Authorization", "Bearer nope")))
			continue
		}
		// Auth: a 401 names its scheme (RFC 9110 §11.6.1).
		noCred := raw(rt.method, path, nil)
		checkErrorBody(t, name+" no credential", sweepStatus(t, 401, name+" no credential", noCred))
		if !strings.HasPrefix(noCred.Header.Get("WWW-Authenticate"), "ApiKey ") {
			t.Errorf("%s: 401 with WWW-Authenticate %q", name, noCred.Header.Get("WWW-Authenticate"))
		}
		checkErrorBody(t, name+" wrong secret", sweepStatus(t, 401, name+" wrong secret", raw(rt.method, path, nil, "X-Api-Key", in.Key, "X-Api-Secret", "wrong")))
		// X-Environment.
		h := cred(rt)
		checkErrorBody(t, name+" other env", sweepStatus(t, 403, name+" other env", raw(rt.method, path, nil, append(h, "X-Environment", "production")...)))
		checkErrorBody(t, name+" prod cred sandbox env", sweepStatus(t, 403, name+" prod cred sandbox env", raw(rt.method, path, nil, "X-Api-Key", prodKey, "X-Api-Secret", prodSecret, "X-Environment", "sandbox")))
		for _, env := range []string{"staging", "SANDBOX", "prod"} {
			checkErrorBody(t, name+" "+env, sweepStatus(t, 400, name+" X-Environment "+env, raw(rt.method, path, nil, append(h, "X-Environment", env)...)))
		}
		if rt.method == "GET" {
			if r := raw(rt.method, path, nil, append(h, "X-Environment", "sandbox")...); r.Status != 200 && rt.path != "/v1/admin/backup" {
				t.Errorf("%s with its own X-Environment: %d %.200s", name, r.Status, r.Body)
			}
		}
		if rt.method == "GET" || rt.method == "DELETE" {
			continue
		}
		// Over the body limit.
		big := `{"x":"` + strings.Repeat("a", limitOf(rt.path)) + `"}`
		checkErrorBody(t, name+" too large", sweepStatus(t, 413, name+" too large", raw(rt.method, path, big, h...)))
		if limitOf(rt.path) > 1<<20 {
			// Between the two limits: read, not refused for its size.
			r := raw(rt.method, path, `{"x":"`+strings.Repeat("a", 2<<20)+`"}`, h...)
			if r.Status == 413 || r.Status >= 500 {
				t.Errorf("%s with 2 MiB: %d %.200s", name, r.Status, r.Body)
			}
		}
	}
}

// limitOf is the body limit of a path (SPEC §2).
func limitOf(path string) int {
	if strings.HasSuffix(path, "/verify") || strings.HasSuffix(path, "/documents") {
		return 25 << 20
	}
	return 1 << 20
}

// chunked sends body without a Content-Length.
func chunked(t *testing.T, method, url, body string, headers ...string) *response {
	t.Helper()
	return send(t, method, url, io.MultiReader(strings.NewReader(body)), headers...)
}

// send sends a request and does not follow redirects.
func send(t *testing.T, method, url string, body io.Reader, headers ...string) *response {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return &response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// TestSweepBodies sends malformed JSON, arrays and wrongly typed fields (from
// the OpenAPI request schemas) to every POST, PUT and PATCH: 400, never 5xx.
func TestSweepBodies(t *testing.T) {
	t.Parallel()
	routes := sweepRoutes(t)
	in := start(t)
	f := newSweepFixture(in)
	adminKey, adminSecret := in.credential(store.Sandbox, store.RoleAdmin)
	var doc map[string]any
	in.expect(200, "GET", "/openapi.json", nil).json(t, &doc)
	paths, _ := doc["paths"].(map[string]any)
	paramRE := regexp.MustCompile(`[:*][A-Za-z]+|\{[A-Za-z]+\}`)
	schemaOf := func(method, path string) map[string]any {
		for p, item := range paths {
			if paramRE.ReplaceAllString(p, "{}") != paramRE.ReplaceAllString(path, "{}") {
				continue
			}
			op, _ := item.(map[string]any)[strings.ToLower(method)].(map[string]any)
			rb, _ := resolveRef(t, doc, op["requestBody"]).(map[string]any)
			c, _ := rb["content"].(map[string]any)
			j, _ := c["application/json"].(map[string]any)
			s, _ := resolveRef(t, doc, j["schema"]).(map[string]any)
			return s
		}
		return nil
	}
	var properties func(s map[string]any, into map[string]map[string]any)
	properties = func(s map[string]any, into map[string]map[string]any) {
		for _, key := range []string{"allOf", "anyOf", "oneOf"} {
			list, _ := s[key].([]any)
			for _, sub := range list {
				sm, _ := resolveRef(t, doc, sub).(map[string]any)
				properties(sm, into)
			}
		}
		props, _ := s["properties"].(map[string]any)
		for k, v := range props {
			vm, _ := resolveRef(t, doc, v).(map[string]any)
			if vm["readOnly"] != true {
				into[k] = vm
			}
		}
	}
	for _, rt := range routes {
		if rt.method == "GET" || rt.method == "DELETE" || (rt.guard != "api" && rt.guard != "admin" && rt.guard != "sdkAPI") {
			continue
		}
		name := rt.method + " " + rt.path
		h := []string{"X-Api-Key", in.Key, "X-Api-Secret", in.Secret}
		if rt.guard == "admin" {
			h = []string{"X-Api-Key", adminKey, "X-Api-Secret", adminSecret}
		}
		if rt.guard == "sdkAPI" {
			h = []string{"Authorization", "Bearer " + f.token}
			if strings.HasSuffix(rt.path, "/ubos") {
				h[1] = "Bearer " + f.companyToken
			}
		}
		path, route := f.fill(rt.path), rt.path
		if rt.method == "POST" && rt.path == "/webhooks/deliveries/:id" {
			path, route = "/webhooks/deliveries/retry", "/webhooks/deliveries/retry" // the one :id it serves
		}
		schema := schemaOf(rt.method, route)
		if schema == nil {
			continue // no JSON body
		}
		big := `{"x":"` + strings.Repeat("a", limitOf(rt.path)) + `"}`
		checkErrorBody(t, name+" too large, chunked", sweepStatus(t, 413, name+" too large, chunked", chunked(t, rt.method, in.URL+path, big, h...)))
		for _, body := range []string{`{`, `null`, `true`, `[]`, `[{}]`, `"x"`, `42`, `{"a":1}x`, `{"a":`} {
			r := doRequest(t, rt.method, in.URL+path, body, h...)
			checkErrorBody(t, name+" body "+body, sweepStatus(t, 400, name+" body "+body, r))
		}
		props := map[string]map[string]any{}
		properties(schema, props)
		for field, ps := range props {
			var wrong any = 12345
			switch ps["type"] {
			case "string":
				wrong = 12345
			case "integer", "number":
				wrong = "seven"
			case "boolean":
				wrong = "yes"
			case "array":
				wrong = "not-a-list"
			case "object":
				wrong = []int{1}
			}
			if ts, ok := ps["type"].([]any); ok && len(ts) > 0 {
				switch ts[0] {
				case "integer", "number":
					wrong = "seven"
				case "boolean":
					wrong = "yes"
				case "array":
					wrong = "not-a-list"
				case "object":
					wrong = []int{1}
				}
			}
			body := map[string]any{}
			for k, v := range sweepBase[rt.path] {
				body[k] = v
			}
			if rt.path == "/v1/applicants" {
				body["externalUserId"] = "typed-" + field
			}
			body[field] = wrong
			hh := h
			if applicantFields[rt.path] {
				hh = append(slices.Clip(h), beyondContract, droppedField)
			}
			r := doRequest(t, rt.method, in.URL+path, body, hh...)
			if r.Status < 300 && applicantFields[rt.path] && !strings.Contains(string(r.Body), "12345") {
				continue // a field the level does not enable is dropped (SPEC §3.2)
			}
			if r.Status >= 500 || r.Status < 400 {
				t.Errorf("%s {%q: %v}: status %d %.200s", name, field, wrong, r.Status, r.Body)
				continue
			}
			var e struct{ Error struct{ Code, Field string } }
			_ = json.Unmarshal(r.Body, &e)
			if r.Status != 400 || e.Error.Field != field && !strings.HasPrefix(e.Error.Field, field+".") && !strings.HasPrefix(e.Error.Field, field+"[") {
				t.Errorf("%s {%q: %v}: %d field %q, want 400 naming %s: %.200s", name, field, wrong, r.Status, e.Error.Field, field, r.Body)
			}
		}
	}
}

// sweepStatus reports a status other than want and returns r.
func sweepStatus(t *testing.T, want int, what string, r *response) *response {
	t.Helper()
	if r.Status != want {
		t.Errorf("%s: status %d, want %d; body %.200s", what, r.Status, want, r.Body)
	}
	return r
}

// TestSweepEnvironments checks that a production credential sees none of the
// sandbox records: 404 on every route that names one, and separate lists.
func TestSweepEnvironments(t *testing.T) {
	t.Parallel()
	routes := sweepRoutes(t)
	in := start(t)
	f := newSweepFixture(in)
	key, secret := in.credential(store.Production, store.RolePartner)
	admin, adminSecret := in.credential(store.Production, store.RoleAdmin)
	for _, rt := range routes {
		if (rt.guard != "api" && rt.guard != "admin") || !strings.Contains(rt.path, ":") {
			continue
		}
		if rt.path == "/webhooks/deliveries/:id" && rt.method == "POST" {
			continue // bulk retry
		}
		h := []string{"X-Api-Key", key, "X-Api-Secret", secret}
		if rt.guard == "admin" {
			h = []string{"X-Api-Key", admin, "X-Api-Secret", adminSecret}
		}
		var body any
		if strings.HasSuffix(rt.path, "/decision") {
			body = map[string]any{"reviewAnswer": "GREEN"}
		}
		r := doRequest(t, rt.method, in.URL+f.fill(rt.path), body, h...)
		if r.Status == 403 && strings.Contains(string(r.Body), `"sandbox_only"`) && sandboxOnlyRoutes[rt.path] {
			continue // SPEC §2: 403 for a sandbox-only call
		}
		checkErrorBody(t, rt.method+" "+rt.path+" from production", sweepStatus(t, 404, rt.method+" "+rt.path+" from production", r))
	}
	// Records named in bodies.
	ph := []string{"X-Api-Key", key, "X-Api-Secret", secret}
	pv := doRequest(t, "POST", in.URL+"/vaults", map[string]any{"name": "p", "externalId": "p"}, ph...)
	var vault struct{ VaultID string }
	pv.json(t, &vault)
	var w wallet
	doRequest(t, "POST", in.URL+"/vaults/"+vault.VaultID+"/wallets", map[string]any{"assetSymbol": "ETH"}, ph...).json(t, &w)
	sweepStatus(t, 404, "production transfer from a sandbox wallet", doRequest(t, "POST", in.URL+"/transactions",
		map[string]any{"type": "InternalTransfer", "sourceWalletId": f.wallet, "destinationWalletId": w.WalletID, "amount": "1"}, ph...))
	sweepStatus(t, 404, "production transfer to a sandbox wallet", doRequest(t, "POST", in.URL+"/transactions",
		map[string]any{"type": "InternalTransfer", "sourceWalletId": w.WalletID, "destinationWalletId": f.wallet, "amount": "1"}, ph...))
	doRequest(t, "POST", in.URL+"/v1/applicants", map[string]any{"externalUserId": "prod-one"}, ph...)
	sweepStatus(t, 404, "production applicant on a sandbox level", doRequest(t, "POST", in.URL+"/v1/applicants/prod-one/levels/"+f.level, nil, ph...))
	// Lists.
	for _, l := range []string{"/v1/applicants", "/vaults", "/transactions", "/webhooks/deliveries", "/vaults/" + vault.VaultID + "/wallets"} {
		b := string(doRequest(t, "GET", in.URL+l, nil, ph...).Body)
		for _, id := range []string{f.person, f.company, f.vault, f.wallet, f.tx, f.delivery} {
			if strings.Contains(b, id) {
				t.Errorf("production GET %s shows sandbox %s", l, id)
			}
		}
	}
	b := string(doRequest(t, "GET", in.URL+"/v1/levels", nil, ph...).Body)
	if strings.Contains(b, f.level) {
		t.Errorf("production GET /v1/levels shows the sandbox level")
	}
	// The same externalUserId is another applicant in production.
	same := doRequest(t, "POST", in.URL+"/v1/applicants", map[string]any{"externalUserId": f.person}, ph...)
	if same.Status != 201 {
		t.Errorf("production POST /v1/applicants with a sandbox externalUserId: %d %.200s", same.Status, same.Body)
	}
	sweepStatus(t, 201, "production level named like a sandbox one", doRequest(t, "POST", in.URL+"/v1/levels", map[string]any{"name": f.level, "applicantType": "individual",
		"steps": []map[string]any{{"kind": "selfie"}}}, ph...))
	var sl, pl struct{ Steps []struct{ Kind string } }
	in.expect(200, "GET", "/v1/levels/"+f.level, nil).json(t, &sl)
	doRequest(t, "GET", in.URL+"/v1/levels/"+f.level, nil, ph...).json(t, &pl)
	if len(sl.Steps) != 1 || len(pl.Steps) != 1 || sl.Steps[0].Kind != "identity_doc" || pl.Steps[0].Kind != "selfie" {
		t.Errorf("levels of the same name: sandbox %v, production %v", sl, pl)
	}
	// Webhook configuration, idempotency keys and bulk retry are per
	// environment too.
	var wh struct{ IsConfigured bool }
	doRequest(t, "GET", in.URL+"/webhooks/outbound", nil, ph...).json(t, &wh)
	if wh.IsConfigured {
		t.Errorf("production sees the sandbox webhook configuration")
	}
	sweepStatus(t, 409, "production test event without its own webhook", doRequest(t, "POST", in.URL+"/webhooks/outbound/test", nil, ph...))
	idem := []string{"Idempotency-Key", "sweep-idem"}
	sv := in.expect(201, "POST", "/vaults", map[string]any{"name": "same", "externalId": "same"}, idem...).m(t)
	pvr := doRequest(t, "POST", in.URL+"/vaults", map[string]any{"name": "same", "externalId": "same"}, append(ph, idem...)...)
	if pvr.Status != 201 || pvr.m(t)["vaultId"] == sv["vaultId"] {
		t.Errorf("production replays a sandbox Idempotency-Key: %d %s", pvr.Status, pvr.Body)
	}
	var rq struct{ Requeued int }
	doRequest(t, "POST", in.URL+"/webhooks/deliveries/retry", map[string]any{"status": "failed"}, ph...).json(t, &rq)
	if rq.Requeued != 0 {
		t.Errorf("production bulk retry requeued %d sandbox deliveries", rq.Requeued)
	}
	in.expect(200, "POST", "/webhooks/deliveries/retry", map[string]any{"status": "failed"}).json(t, &rq)
	if rq.Requeued != 1 {
		t.Errorf("sandbox bulk retry requeued %d, want its 1 failed delivery", rq.Requeued)
	}
	// And the other way round.
	for _, l := range []string{"/v1/applicants", "/vaults"} {
		b := string(in.expect(200, "GET", l, nil).Body)
		if strings.Contains(b, "prod-one") || strings.Contains(b, vault.VaultID) {
			t.Errorf("sandbox GET %s shows production records", l)
		}
	}
}

// sweepBase is a valid body of a route, so that the wrongly typed field is
// the only fault.
var sweepBase = map[string]map[string]any{
	"/v1/applicants/:id/ubos": {"fullName": "Ann Owner", "roles": []string{"ubo"}, "ownershipPercent": 1},
	"/api/v1/sdk/ubos":        {"fullName": "Ann Owner", "roles": []string{"ubo"}, "ownershipPercent": 1},
}

// applicantFields are the routes that drop fields the level does not enable.
var applicantFields = map[string]bool{"/v1/applicants": true, "/v1/applicants/:id": true, "/v1/applicants/:id/company-info": true}

// sandboxOnlyRoutes answer 403 sandbox_only in production.
var sandboxOnlyRoutes = map[string]bool{"/transactions/:id/advance": true, "/transactions/:id/fail": true,
	"/v1/applicants/:id/sandbox/review": true, "/sandbox/deposits": true}

var (
	sweepTime = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
	sweepDec  = regexp.MustCompile(`^(0|[1-9]\d*)(\.\d*[1-9])?$`)
)

// sweepWalk checks the timestamps, minted ids and decimals of v.
func sweepWalk(t *testing.T, where string, key string, v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			sweepWalk(t, where+"."+k, k, c)
		}
	case []any:
		for _, c := range x {
			sweepWalk(t, where+"[]", key, c)
		}
	case string:
		lk := strings.ToLower(key)
		if strings.HasSuffix(key, "At") || strings.HasSuffix(key, "AtUtc") || strings.HasSuffix(key, "Utc") || key == "timestamp" || key == "since" || key == "until" {
			if !sweepTime.MatchString(x) {
				t.Errorf("%s = %q: not a UTC timestamp with milliseconds", where, x)
			}
		}
		if (key == "id" || strings.HasSuffix(key, "Id")) && !strings.Contains(lk, "external") && key != "requestId" {
			for _, part := range strings.Split(x, ":") { // a balance entityId is vaultId:assetId (seed 001)
				u, err := uuid.Parse(part)
				if err != nil || u.Version() != 7 || len(part) != 36 {
					t.Errorf("%s = %q: not a uuid v7 (SPEC §2: every id the service mints)", where, x)
				}
			}
		}
		switch key {
		case "amount", "fee", "networkFee", "total", "available", "pending", "usdPrice":
			if !sweepDec.MatchString(x) {
				t.Errorf("%s = %q: not a plain decimal without trailing zeros", where, x)
			}
		}
	}
}

// TestSweepFormats walks every GET the fixture reaches and checks timestamps,
// ids and decimals; lists answer {items, nextCursor} and reject limit 0, 201
// and a bogus cursor.
func TestSweepFormats(t *testing.T) {
	t.Parallel()
	routes := sweepRoutes(t)
	in := start(t)
	f := newSweepFixture(in)
	w2 := in.wallet(f.vault, "ETH").WalletID
	in.fund(f.wallet, "2.5")
	// The answers of POSTs follow the same formats.
	for _, c := range []struct {
		status int
		path   string
		body   any
	}{
		{201, "/transactions", map[string]any{"type": "Withdrawal", "sourceWalletId": f.wallet, "destinationAddress": "0x" + strings.Repeat("ab", 20), "amount": "0.250"}},
		{201, "/transactions", map[string]any{"type": "InternalTransfer", "sourceWalletId": f.wallet, "destinationWalletId": w2, "amount": "0.1"}},
		{201, "/sandbox/deposits", map[string]any{"walletId": w2, "amount": "10.000"}},
		{201, "/vaults", map[string]any{"name": "formats", "externalId": "formats"}},
		{201, "/vaults/" + f.vault + "/wallets", map[string]any{"assetSymbol": "XRP"}},
		{201, "/v1/applicants/sweep-person/verification-sessions", map[string]any{"ttlSecs": 600}},
		{201, "/v1/applicants/sweep-co/ubos", map[string]any{"fullName": "Ben Director", "roles": []string{"director"}}},
		{200, "/v1/applicants/sweep-co/ubos/0/spawn-kyc", nil},
		{200, "/v1/applicants/sweep-co/ubos/0/regenerate-link", nil},
		{200, "/v1/applicants/sweep-person/verify", verifyBody(t, 7)},
		{202, "/webhooks/outbound/test", nil},
	} {
		var v any
		in.expect(c.status, "POST", c.path, c.body).json(t, &v)
		sweepWalk(t, "POST "+c.path, "", v)
	}
	adminKey, adminSecret := in.credential(store.Sandbox, store.RoleAdmin)
	for _, rt := range routes {
		if rt.method != "GET" || (rt.guard != "api" && rt.guard != "admin" && rt.guard != "sdkAPI") || rt.path == "/v1/admin/backup" {
			continue
		}
		h := []string{"X-Api-Key", in.Key, "X-Api-Secret", in.Secret}
		if rt.guard == "admin" {
			h = []string{"X-Api-Key", adminKey, "X-Api-Secret", adminSecret}
		}
		if rt.guard == "sdkAPI" {
			h = []string{"Authorization", "Bearer " + f.token}
		}
		path := f.fill(rt.path)
		r := doRequest(t, "GET", in.URL+path, nil, h...)
		if r.Status != 200 {
			t.Errorf("GET %s: %d %.200s", path, r.Status, r.Body)
			continue
		}
		if r.Header.Get("X-Request-Id") == "" || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			t.Errorf("GET %s: X-Request-Id %q, Content-Type %q", path, r.Header.Get("X-Request-Id"), r.Header.Get("Content-Type"))
		}
		var v map[string]any
		r.json(t, &v)
		sweepWalk(t, path, "", v)
		if _, ok := v["items"]; !ok {
			continue
		}
		if _, ok := v["nextCursor"]; !ok {
			t.Errorf("GET %s: list without nextCursor", path)
		}
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		for _, q := range []string{"limit=0", "limit=201", "limit=-1", "limit=x", "cursor=bogus", "cursor=" + url.QueryEscape("%%%")} {
			checkErrorBody(t, path+" "+q, sweepStatus(t, 400, "GET "+path+"?"+q, doRequest(t, "GET", in.URL+path+sep+q, nil, h...)))
		}
		for _, q := range []string{"limit=1", "limit=200"} {
			sweepStatus(t, 200, "GET "+path+"?"+q, doRequest(t, "GET", in.URL+path+sep+q, nil, h...))
		}
	}
	// Health and the OpenAPI document: public, with X-Request-Id.
	for _, p := range []string{"/healthz", "/openapi.json"} {
		r := doRequest(t, "GET", in.URL+p, nil)
		if r.Status != 200 || r.Header.Get("X-Request-Id") == "" {
			t.Errorf("GET %s: %d, X-Request-Id %q", p, r.Status, r.Header.Get("X-Request-Id"))
		}
	}
	var hz map[string]any
	doRequest(t, "GET", in.URL+"/healthz", nil).json(t, &hz)
	if len(hz) != 1 || hz["status"] != "ok" {
		t.Errorf("healthz = %v", hz)
	}
}

// walkPages follows nextCursor from path (which has a query) and returns the
// items of every page; it fails on a repeated cursor.
func walkPages(t *testing.T, in *instance, path string) []map[string]any {
	t.Helper()
	var all []map[string]any
	seen := map[string]bool{}
	cursor := ""
	for {
		p := path
		if cursor != "" {
			p += "&cursor=" + url.QueryEscape(cursor)
		}
		var page struct {
			Items      []map[string]any
			NextCursor *string
		}
		in.expect(200, "GET", p, nil).json(t, &page)
		all = append(all, page.Items...)
		if page.NextCursor == nil {
			return all
		}
		if seen[*page.NextCursor] || len(page.Items) == 0 {
			t.Fatalf("GET %s: cursor %q repeats or page empty", p, *page.NextCursor)
		}
		seen[*page.NextCursor] = true
		cursor = *page.NextCursor
	}
}

// TestSweepPagedLevelsAndHistory walks the level list and the review history
// a page at a time: the pages together are the whole list, in order.
func TestSweepPagedLevelsAndHistory(t *testing.T) {
	t.Parallel()
	in := start(t)
	for _, n := range []string{"a-level", "m-level", "z-level"} {
		in.expect(201, "POST", "/v1/levels", map[string]any{"name": n, "applicantType": "individual", "steps": []map[string]any{{"kind": "selfie"}}})
	}
	// Levels newest first (SPEC §2): those created last, then the built-in
	// ones made at the first start.
	var levels struct{ Items []struct{ Name string } }
	in.expect(200, "GET", "/v1/levels", nil).json(t, &levels)
	var names []string
	for _, l := range levels.Items {
		names = append(names, l.Name)
	}
	if want := []string{"z-level", "m-level", "a-level", "kyb-level", "full-kyc-level", "basic-kyc-level"}; !slices.Equal(names, want) {
		t.Errorf("GET /v1/levels: %v, want %v", names, want)
	}
	in.createApplicant("pager", "Pager")
	for _, a := range []string{"deactivate", "activate", "monitoring", "reset", "blocklist"} {
		in.expect(200, "POST", "/v1/applicants/pager/"+a, nil)
	}
	for _, c := range []struct{ path, key string }{{"/v1/levels?limit=", "name"}, {"/assets?limit=", "symbol"}, {"/v1/applicants/pager/review-history?limit=", "id"}} {
		var whole struct {
			Items      []map[string]any
			NextCursor *string
			TotalItems *int
		}
		in.expect(200, "GET", c.path+"200", nil).json(t, &whole)
		if len(whole.Items) < 5 || whole.NextCursor != nil {
			t.Fatalf("GET %s200: %d items, nextCursor %v", c.path, len(whole.Items), whole.NextCursor)
		}
		if whole.TotalItems != nil && *whole.TotalItems != len(whole.Items) {
			t.Errorf("%s: totalItems %d for %d items", c.path, *whole.TotalItems, len(whole.Items))
		}
		for _, size := range []string{"1", "2", "5"} {
			pages := walkPages(t, in, c.path+size)
			var got, want []any
			for _, it := range pages {
				got = append(got, it[c.key])
			}
			for _, it := range whole.Items {
				want = append(want, it[c.key])
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s%s pages: %v, want %v", c.path, size, got, want)
			}
		}
	}
}

// TestSweepHead answers HEAD as GET without a body, auth included.
func TestSweepHead(t *testing.T) {
	t.Parallel()
	in := start(t)
	for _, c := range []struct {
		path    string
		want    int
		headers []string
	}{
		{"/healthz", 200, nil},
		{"/openapi.json", 200, nil},
		{"/v1/applicants", 401, nil},
		{"/v1/applicants", 200, []string{"X-Api-Key", in.Key, "X-Api-Secret", in.Secret}},
		{"/vaults", 200, []string{"X-Api-Key", in.Key, "X-Api-Secret", in.Secret}},
	} {
		r := send(t, "HEAD", in.URL+c.path, nil, c.headers...)
		if r.Status != c.want || len(r.Body) != 0 || r.Header.Get("X-Request-Id") == "" {
			t.Errorf("HEAD %s: %d, %d body bytes, X-Request-Id %q; want %d", c.path, r.Status, len(r.Body), r.Header.Get("X-Request-Id"), c.want)
		}
	}
	r := send(t, "HEAD", in.URL+"/sandbox/deposits", nil, "X-Api-Key", in.Key, "X-Api-Secret", in.Secret)
	if r.Status != 405 || r.Header.Get("Allow") == "" {
		t.Errorf("HEAD on a POST-only route: %d, Allow %q", r.Status, r.Header.Get("Allow"))
	}
}

// TestSweepPages drives every console and hosted-UI route as a logged-in
// operator and a browser: with real and junk ids, never a 5xx, always
// X-Request-Id.
func TestSweepPages(t *testing.T) {
	t.Parallel()
	routes := sweepRoutes(t)
	in := start(t)
	f := newSweepFixture(in)
	op := in.operator()
	junkRE := regexp.MustCompile(`[:*][A-Za-z]+`)
	for _, rt := range routes {
		if rt.guard != "console" && rt.guard != "ui" && rt.guard != "public" {
			continue
		}
		if rt.path == "/console/logout" || rt.path == "/console/login" || rt.path == "/console/credentials/:key/revoke" {
			continue // keep the session and the credentials
		}
		paths := []string{f.fill(rt.path)}
		if strings.ContainsAny(rt.path, ":*") {
			for _, junk := range []string{"..%2F..", strings.Repeat("a", 200), "%00", "%E2%98%83%C3%BC", "%FF", "-1"} {
				paths = append(paths, junkRE.ReplaceAllString(rt.path, junk))
			}
		}
		for _, p := range paths {
			var r *response
			if rt.method == "GET" {
				r = op.get(p)
			} else {
				r = op.submit(p, url.Values{"x": {"1"}})
			}
			if r.Status >= 500 || r.Header.Get("X-Request-Id") == "" {
				t.Errorf("%s %s: status %d, X-Request-Id %q: %.300s", rt.method, p, r.Status, r.Header.Get("X-Request-Id"), r.Body)
			}
		}
	}
}

// TestSweepImageLimitOnlyOnUploads keeps the 25 MiB limit to the upload
// routes: an applicant whose externalUserId is "documents" or "verify" is
// patched under the 1 MiB limit.
func TestSweepImageLimitOnlyOnUploads(t *testing.T) {
	t.Parallel()
	in := start(t)
	body := `{"firstName":"` + strings.Repeat("a", 2<<20) + `"}`
	for _, id := range []string{"documents", "verify"} {
		in.createApplicant(id, "Limit")
		checkErrorBody(t, "PATCH "+id, sweepStatus(t, 413, "PATCH /v1/applicants/"+id+" with 2 MiB", in.do("PATCH", "/v1/applicants/"+id, body)))
		r := in.do("POST", "/v1/applicants/"+id+"/documents", body)
		if r.Status == 413 || r.Status >= 500 {
			t.Errorf("POST /v1/applicants/%s/documents with 2 MiB: %d", id, r.Status)
		}
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
	t.Parallel()
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
		// Sent, the header names one environment: empty, or twice (even
		// twice the same), it is a 400, never read as absent or as its
		// first value.
		for name, values := range map[string][]string{"empty": {""}, "twice": {"sandbox", "production"}, "twice the same": {"sandbox", "sandbox"}} {
			req, err := http.NewRequest("GET", in.URL+"/webhooks/outbound", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Api-Key", in.Key)
			req.Header.Set("X-Api-Secret", in.Secret)
			req.Header["X-Environment"] = values
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			e := expectError(t, &response{Status: resp.StatusCode, Header: resp.Header, Body: b}, 400, "validation_failed")
			if e.Error.Field != "X-Environment" {
				t.Errorf("X-Environment %s: field %q", name, e.Error.Field)
			}
		}
	})
	t.Run("Admin", func(t *testing.T) {
		expectError(t, in.do("GET", "/v1/admin/backup", nil), 403, "admin_required")
		k, s := in.credential(store.Sandbox, store.RoleAdmin)
		r := in.expect(200, "GET", "/v1/admin/backup", nil, "X-Api-Key", k, "X-Api-Secret", s)
		if r.Header.Get("X-Request-Id") == "" || r.Header.Get("Content-Length") != strconv.Itoa(len(r.Body)) || r.Header.Get("Cache-Control") != "no-store" {
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
		// A delivery takes GET (and so HEAD), bulk retry POST, though
		// the two share the router's place: every answer of a path names
		// one Allow.
		for _, c := range []struct{ method, path, allow string }{
			{"POST", "/webhooks/deliveries/" + id, "GET, HEAD, OPTIONS"},
			{"PUT", "/webhooks/deliveries/" + id, "GET, HEAD, OPTIONS"},
			{"OPTIONS", "/webhooks/deliveries/" + id, "GET, HEAD, OPTIONS"},
			{"PUT", "/v1/levels", "GET, HEAD, OPTIONS, POST"},
			{"OPTIONS", "/healthz", "GET, HEAD, OPTIONS"},
			{"GET", "/webhooks/deliveries/retry", "OPTIONS, POST"},
			{"HEAD", "/webhooks/deliveries/retry", "OPTIONS, POST"},
			{"DELETE", "/webhooks/deliveries/retry", "OPTIONS, POST"},
			{"OPTIONS", "/webhooks/deliveries/retry", "OPTIONS, POST"},
		} {
			r := in.do(c.method, c.path, nil)
			if c.method == "OPTIONS" {
				wantStatusCode(t, r, 200, c.method+" "+c.path)
			} else if c.method != "HEAD" {
				expectError(t, r, 405, "method_not_allowed")
			} else if r.Status != 405 {
				t.Errorf("HEAD %s: %d", c.path, r.Status)
			}
			if allow := r.Header.Get("Allow"); allow != c.allow {
				t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, allow, c.allow)
			}
		}
		if r := in.do("DELETE", "/console/settings", nil); r.Status != 405 || r.Header.Get("Allow") != "GET, HEAD, OPTIONS" {
			t.Errorf("DELETE /console/settings: %d, Allow %q", r.Status, r.Header.Get("Allow"))
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
		// GET and DELETE read no body: one sent with them is left unread,
		// whatever its size (the document lists 413 only where a body is
		// taken).
		in.expect(200, "GET", "/webhooks/deliveries/"+id, big)
		in.expect(200, "GET", "/webhooks/outbound", big)
	})
	t.Run("EncodedSlash", func(t *testing.T) {
		// The router matches the decoded path: an id holding %2F must not
		// reach the route its decoded slash would name.
		in.expect(201, "POST", "/v1/applicants", `{"externalUserId":"slash-1"}`)
		in.expect(200, "POST", "/v1/applicants/slash-1/blocklist", nil)
		for _, p := range []string{"/v1/applicants/slash-1%2Fblocklist", "/v1/applicants/slash-1%2fblocklist"} {
			expectError(t, in.do("DELETE", p, nil), 404, "route_not_found")
		}
		expectError(t, in.do("GET", "/v1/applicants/slash-1%2Fstatus", nil), 404, "route_not_found")
		expectError(t, in.do("GET", "/webhooks/deliveries/"+id+"%2Fretry", nil), 404, "route_not_found")
		var a struct{ Status string }
		in.expect(200, "GET", "/v1/applicants/slash-1", nil).json(t, &a)
		if a.Status != "blocklisted" {
			t.Errorf("status %q after DELETE …%%2Fblocklist: the blocklist was removed", a.Status)
		}
		// Other encoded characters keep working.
		in.expect(200, "GET", "/v1/applicants/slash%2D1", nil)
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
	t.Parallel()
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

// TestBodiesAreUTF8: a body whose text is not UTF-8 (a Latin-1 "ü", a
// common slip of a partner's client) or holds half a surrogate pair is 400
// naming the field, and nothing is stored, where encoding/json alone would
// store U+FFFD in the partner's data; UTF-8 and escaped pairs are kept
// exactly.
func TestBodiesAreUTF8(t *testing.T) {
	t.Parallel()
	in := start(t)
	for _, c := range []struct{ body, field string }{
		{"{\"externalUserId\":\"latin1\",\"lastName\":\"M\xfcller\"}", "lastName"},
		{`{"externalUserId":"half","info":{"firstName":"\ud800"}}`, "info.firstName"},
	} {
		r := in.do("POST", "/v1/applicants", []byte(c.body))
		if code, field := errField(t, r); r.Status != 400 || code != "validation_failed" || field != c.field {
			t.Errorf("%q: %d %s, want 400 naming %s", c.body, r.Status, r.Body, c.field)
		}
	}
	in.expect(404, "GET", "/v1/applicants/latin1", nil)
	in.expect(404, "GET", "/v1/applicants/half", nil)

	var a struct{ Info struct{ LastName string } }
	in.expect(201, "POST", "/v1/applicants", []byte(`{"externalUserId":"utf8","lastName":"Müller \ud83d\ude00"}`)).json(t, &a)
	if a.Info.LastName != "Müller 😀" {
		t.Errorf("lastName stored as %q", a.Info.LastName)
	}
}

// TestEnvironmentIsolation: a production credential sees its own webhook
// configuration and gets 404 for a sandbox delivery.
func TestEnvironmentIsolation(t *testing.T) {
	t.Parallel()
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

// TestIdempotencyKeyConventions: within one environment and route, the same
// key and the same body (whitespace and key order aside) replay the first
// response; another body is 409; another route or environment is
// independent; after 24 h the key is free again.
func TestIdempotencyKeyConventions(t *testing.T) {
	t.Parallel()
	in := start(t)
	// At most 255 characters, counted as characters: 255 two-byte ones pass.
	in.expect(201, "POST", "/vaults", `{"name":"long"}`, "Idempotency-Key", strings.Repeat("é", 255))
	expectError(t, in.do("POST", "/vaults", `{"name":"long"}`, "Idempotency-Key", strings.Repeat("é", 256)), 400, "validation_failed")
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

// TestIdempotencyKeyVerificationSide: a beneficial-owner row and a
// verification session are created by POSTs too, and a retried one with
// its Idempotency-Key returns the first answer: no second row (rows are
// never deleted, and the replay of a row that filled the 100 % is not a
// 400), no second session; another body is 409.
func TestIdempotencyKeyVerificationSide(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("idem-co", "Idem GmbH")
	row := map[string]any{"fullName": "Ada Lovelace", "dateOfBirth": "1980-01-01", "ownershipPercent": 60, "roles": []string{"ubo"}}
	first := in.expect(201, "POST", "/v1/applicants/idem-co/ubos", row, "Idempotency-Key", "row-1")
	again := in.expect(201, "POST", "/v1/applicants/idem-co/ubos", row, "Idempotency-Key", "row-1")
	if string(first.Body) != string(again.Body) {
		t.Fatalf("replay differs:\n%s\n%s", first.Body, again.Body)
	}
	var rows struct{ Items []map[string]any }
	in.expect(200, "GET", "/v1/applicants/idem-co/ubos", nil).json(t, &rows)
	if len(rows.Items) != 1 {
		t.Fatalf("%d rows after a replay, want 1", len(rows.Items))
	}
	row["ownershipPercent"] = 50
	expectError(t, in.do("POST", "/v1/applicants/idem-co/ubos", row, "Idempotency-Key", "row-1"), 409, "idempotency_key_reused")
	in.expect(201, "POST", "/v1/applicants/idem-co/ubos", map[string]any{"fullName": "Bob Builder", "roles": []string{"director"}}, "Idempotency-Key", "row-2")

	in.createApplicant("idem-1", "Green")
	s1 := in.expect(201, "POST", "/v1/applicants/idem-1/verification-sessions", map[string]any{"lang": "de"}, "Idempotency-Key", "s")
	s2 := in.expect(201, "POST", "/v1/applicants/idem-1/verification-sessions", map[string]any{"lang": "de"}, "Idempotency-Key", "s")
	if string(s1.Body) != string(s2.Body) {
		t.Fatalf("session replay differs:\n%s\n%s", s1.Body, s2.Body)
	}
	expectError(t, in.do("POST", "/v1/applicants/idem-1/verification-sessions", map[string]any{"lang": "en"}, "Idempotency-Key", "s"), 409, "idempotency_key_reused")
	// The scope is the applicant's route: another applicant's key is its own.
	in.createApplicant("idem-2", "Green")
	s3 := in.expect(201, "POST", "/v1/applicants/idem-2/verification-sessions", map[string]any{"lang": "de"}, "Idempotency-Key", "s")
	if string(s3.Body) == string(s1.Body) {
		t.Fatal("another applicant's route replayed the session")
	}
	var h struct{ Items []struct{ EventType string } }
	in.expect(200, "GET", "/v1/applicants/idem-1/review-history?eventType=enrollment.created", nil).json(t, &h)
	if len(h.Items) != 1 {
		t.Fatalf("%d enrollment.created entries, want 1", len(h.Items))
	}

	// Erasure forgets the remembered answers, which hold the row's
	// personal data and the link: a replay meets the erasure.
	in.expect(204, "DELETE", "/v1/applicants/idem-co", nil)
	row["ownershipPercent"] = 60
	expectError(t, in.do("POST", "/v1/applicants/idem-co/ubos", row, "Idempotency-Key", "row-1"), 409, "applicant_erased")
	in.expect(204, "DELETE", "/v1/applicants/idem-1", nil)
	expectError(t, in.do("POST", "/v1/applicants/idem-1/verification-sessions", map[string]any{"lang": "de"}, "Idempotency-Key", "s"), 409, "applicant_erased")
	in.expect(201, "POST", "/v1/applicants/idem-2/verification-sessions", map[string]any{"lang": "de"}, "Idempotency-Key", "s")
}

// TestBadQueryEncoding: a list's parameter that is not valid URL encoding
// is a 400 naming it, in the API and in the console, not a first page
// (net/url's Query drops such a pair without a word).
func TestBadQueryEncoding(t *testing.T) {
	t.Parallel()
	in := start(t)
	for _, c := range []struct{ path, field string }{
		{"/v1/applicants?cursor=%%%", "cursor"},
		{"/v1/applicants?limit=%zz", "limit"},
		{"/transactions?status=Completed&cursor=%G1", "cursor"},
		{"/webhooks/deliveries?%zz=1", "%zz"},
	} {
		r := in.do("GET", c.path, nil)
		if r.Status != 400 {
			t.Errorf("%s: %d, want 400 naming %s", c.path, r.Status, c.field)
			continue
		}
		if _, f := errField(t, r); f != c.field {
			t.Errorf("%s: %d %s, want 400 naming %s", c.path, r.Status, r.Body, c.field)
		}
	}
	in.expect(200, "GET", "/v1/applicants?cursor=&limit=%31", nil) // "%31" is "1"
	op := in.operator()
	if r := op.get("/console/applicants?cursor=%%%"); r.Status != 400 {
		t.Errorf("console list with cursor=%%%%%%: %d", r.Status)
	}
}

// TestAsteriskTarget: "*" as the request target is OPTIONS's alone; any
// other method gets 400 bad_request, not a 405 whose Allow lists the
// method it refused.
func TestAsteriskTarget(t *testing.T) {
	t.Parallel()
	in := start(t)
	u, err := url.Parse(in.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{"GET", "POST", "DELETE"} {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "%s * HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", method, u.Host)
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		conn.Close()
		if res.StatusCode != 400 || !strings.Contains(string(body), `"bad_request"`) || res.Header.Get("Allow") != "" {
			t.Errorf("%s *: %d Allow %q %s, want 400 bad_request", method, res.StatusCode, res.Header.Get("Allow"), body)
		}
	}
}

// TestBodyCutShort: a body that ends before it said it would is a request
// that could not be read, 400 bad_request without a field, whether its
// length came from Content-Length or from chunks (SPEC §2: bad input gets
// a clear 4xx; the code table names the cut-short body).
func TestBodyCutShort(t *testing.T) {
	t.Parallel()
	// Unchecked: the contract check cannot read a request cut short.
	in := boot(t, func(o *bootOptions) { o.unchecked = true }).instance
	u, err := url.Parse(in.URL)
	if err != nil {
		t.Fatal(err)
	}
	auth := "X-Api-Key: " + in.Key + "\r\nX-Api-Secret: " + in.Secret + "\r\n"
	for name, req := range map[string]string{
		"Content-Length": "Content-Length: 50\r\n\r\n{\"name\":\"x\"}",
		"chunked":        "Transfer-Encoding: chunked\r\n\r\n64\r\n{\"name\":\"x\"}",
		"bad chunk size": "Transfer-Encoding: chunked\r\n\r\nzz\r\n{\"name\":\"x\"}\r\n0\r\n\r\n",
	} {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST /vaults HTTP/1.1\r\nHost: %s\r\n%s%s", u.Host, auth, req)
		conn.(*net.TCPConn).CloseWrite()
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var e struct {
			Error struct{ Code, Field string }
		}
		err = json.NewDecoder(res.Body).Decode(&e)
		conn.Close()
		if err != nil || res.StatusCode != 400 || e.Error.Code != "bad_request" || e.Error.Field != "" {
			t.Errorf("%s: %d %+v %v, want 400 bad_request without a field", name, res.StatusCode, e, err)
		}
		// Its requestId finds it in the request log, as any refused call's.
		in.expect(200, "GET", "/v1/requests/"+res.Header.Get("X-Request-Id"), nil)
	}
	if n := len(in.expect(200, "GET", "/vaults", nil).m(t)["items"].([]any)); n != 0 {
		t.Errorf("%d vaults after bodies cut short", n)
	}
}

// TestBackupFailureIsAnError: when the server cannot take its copy of the
// db (here its directory is gone, as a full or read-only disk would refuse
// the temporary file), GET /v1/admin/backup answers a 5xx JSON error, never
// a 200 with an empty body that a nightly `curl -f` takes for a backup.
func TestBackupFailureIsAnError(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "db")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	in := start(t, func(o *options) { o.path = filepath.Join(dir, "complybox.db") })
	k, s := in.credential(store.Sandbox, store.RoleAdmin)
	if err := os.RemoveAll(dir); err != nil { // the open db lives on, unlinked
		t.Fatal(err)
	}
	r := in.do("GET", "/v1/admin/backup", nil, "X-Api-Key", k, "X-Api-Secret", s)
	if r.Status != http.StatusInternalServerError || r.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(r.Body), `"requestId"`) {
		t.Errorf("backup without room for its copy: %d %s %q", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
}

// TestAPIAnswersAreNotStored: API answers carry secrets (a webhook signing
// secret, session URLs, applicant data), so no cache or browser may keep
// them: every JSON answer, success or error, says Cache-Control: no-store.
func TestAPIAnswersAreNotStored(t *testing.T) {
	t.Parallel()
	in := start(t)
	for _, r := range []*response{
		in.expect(200, "PUT", "/webhooks/outbound", map[string]any{"url": "https://hooks.example.com/x"}),
		in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "nostore-1"}),
		in.expect(200, "GET", "/v1/applicants/nostore-1", nil),
		in.do("GET", "/webhooks/deliveries/nope", nil),
		in.do("GET", "/webhooks/outbound", nil, "X-Api-Key", ""),
	} {
		if got := r.Header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("status %d %s: Cache-Control %q, want no-store", r.Status, r.Body, got)
		}
	}
}

// TestMessagesSayWhatIsWrong: a value that was sent but is wrong is not
// called missing ("is required"), and a length is reported as a length
// only when the length is what is wrong.
func TestMessagesSayWhatIsWrong(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "co-msg", "type": "company", "companyName": "Msg GmbH"})
	w := in.wallet(in.vault("msg"), "ETH")
	in.fund(w.WalletID, "1")
	for _, c := range []struct {
		what, method, path string
		body               map[string]any
		field, want, not   string
	}{
		{"no id", "POST", "/v1/applicants", map[string]any{}, "externalUserId", "is required", ""},
		{"an id with a space", "POST", "/v1/applicants", map[string]any{"externalUserId": "a b"}, "externalUserId", "must be 1-100 characters", "required"},
		{"an id of 101 characters", "POST", "/v1/applicants", map[string]any{"externalUserId": strings.Repeat("a", 101)}, "externalUserId", "must be 1-100 characters", "required"},
		{"a blank owner", "POST", "/v1/applicants/co-msg/ubos", map[string]any{"fullName": "  ", "roles": []string{"ubo"}}, "fullName", "is required", ""},
		{"a long owner", "POST", "/v1/applicants/co-msg/ubos", map[string]any{"fullName": strings.Repeat("é", 201), "roles": []string{"ubo"}}, "fullName", "at most 200 characters", "required"},
		{"a company document type in capitals", "POST", "/v1/applicants/co-msg/documents", map[string]any{"kind": "company_docs", "docType": "Certificate_Of_Incorporation", "image": b64(pngImage(t, 210, 210, 5))}, "docType", "must be 1-64 characters of a-z0-9_", "required"},
		{"no company document type", "POST", "/v1/applicants/co-msg/documents", map[string]any{"kind": "company_docs", "image": b64(pngImage(t, 210, 210, 5))}, "docType", "is required", ""},
		{"a non-ASCII address of 65 characters", "POST", "/transactions", map[string]any{"type": "Withdrawal", "sourceWalletId": w.WalletID, "amount": "0.1", "destinationAddress": strings.Repeat("é", 65)}, "destinationAddress", "non-ASCII", "1 to 128"},
	} {
		r := in.do(c.method, c.path, c.body)
		var e apiError
		r.json(t, &e)
		if r.Status != 400 || e.Error.Field != c.field || !strings.Contains(e.Error.Message, c.want) || (c.not != "" && strings.Contains(e.Error.Message, c.not)) {
			t.Errorf("%s: %d %q %q; want 400 naming %s with %q", c.what, r.Status, e.Error.Field, e.Error.Message, c.field, c.want)
		}
	}
}
