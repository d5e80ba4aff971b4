package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/complybox/complybox/store"
	"github.com/complybox/complybox/store/imagecheck"
)

// TestOpenAPIDocumentsEveryRoute walks the routes of routes.go and checks
// that /openapi.json, a valid-looking OpenAPI 3.1 document, has each path
// and method of the JSON API (path parameters may be named differently),
// and no operation the router does not serve; that the HTML pages (console,
// the hosted pages' form posts and assets, the favicon) are left out, as
// they are not partner operations, but for the two pages a partner hands
// to people (documentedPage), which it must have; that every $ref
// resolves; and that every path parameter is declared, required, in its
// operation.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("routes.go")
	if err != nil {
		t.Fatal(err)
	}
	routeRE := regexp.MustCompile(`r\.(GET|POST|PUT|PATCH|DELETE)\("([^"]+)"`)
	paramRE := regexp.MustCompile(`[:*][A-Za-z]+|\{[A-Za-z]+\}`)
	shape := func(method, path string) string {
		return strings.ToLower(method) + " " + paramRE.ReplaceAllString(path, "{}")
	}
	routes, html := map[string]bool{}, map[string]bool{}
	for _, m := range routeRE.FindAllStringSubmatch(string(src), -1) {
		method, path := m[1], m[2]
		if method == "POST" && path == "/webhooks/deliveries/:id" {
			path = "/webhooks/deliveries/retry" // the one :id it serves
		}
		if htmlRoute(path) && !documentedPage[shape(method, path)] {
			html[shape(method, path)] = true
			continue
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
			if html[key] {
				t.Errorf("openapi.json documents the HTML page %s %s", method, path)
			} else if !routes[key] {
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

// documentedPage lists the HTML pages the document describes all the
// same: the two a partner hands to people (SPEC §3.4, §3.8), so that the
// document names every endpoint of the contract (SPEC §1).
var documentedPage = map[string]bool{"get /l/{}": true, "get /sdk/{}": true}

// htmlRoute reports whether path serves HTML to people rather than JSON to
// programs: the console, the hosted verification pages with their form
// posts and assets, and short links.
func htmlRoute(path string) bool {
	for _, prefix := range []string{"/console", "/sdk/", "/sdk-assets/", "/l/", "/favicon.ico"} {
		if strings.HasPrefix(path, prefix) {
			return true
		}
	}
	return false
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

func TestKYCOpenAPI(t *testing.T) {
	t.Parallel()
	in := start(t)
	var doc struct {
		Paths      map[string]map[string]any
		Components struct{ Schemas map[string]any }
	}
	if err := json.Unmarshal(doRequest(t, "GET", in.URL+"/openapi.json", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	for path, method := range map[string]string{
		"/v1/applicants": "post", "/v1/applicants/{id}/verify": "post", "/v1/applicants/{id}/review-history": "get",
		"/v1/levels/{levelName}": "patch", "/v1/admin/applicants/{id}/decision": "post",
		"/v1/applicants/{id}/company-info": "patch",
	} {
		if _, ok := doc.Paths[path][method]; !ok {
			t.Errorf("openapi: no %s %s", method, path)
		}
	}
	if _, ok := doc.Components.Schemas["Applicant"]; !ok {
		t.Errorf("openapi: no Applicant schema")
	}
	// ubos[] on create (SPEC §3.6) is in the create schema, with the
	// bound the store enforces (it was once missing).
	create, _ := json.Marshal(doc.Components.Schemas["ApplicantCreate"])
	var cs struct {
		AllOf []struct {
			Properties map[string]struct{ MaxItems int }
		}
	}
	if err := json.Unmarshal(create, &cs); err != nil || len(cs.AllOf) != 2 || cs.AllOf[1].Properties["ubos"].MaxItems != store.MaxUbos {
		t.Errorf("openapi: ApplicantCreate does not take ubos[] of at most %d rows: %s", store.MaxUbos, create)
	}
	// The image limit it states is the one enforced (it once said 50).
	body := string(doRequest(t, "GET", in.URL+"/openapi.json", nil).Body)
	if limit := fmt.Sprintf("Images over %d megapixels", imagecheck.MaxPixels/1_000_000); !strings.Contains(body, limit) {
		t.Errorf("openapi does not say %q", limit)
	}
}

func TestSDKOpenAPI(t *testing.T) {
	t.Parallel()
	in := start(t)
	var doc struct {
		Paths      map[string]map[string]any
		Components struct{ SecuritySchemes, Schemas map[string]any }
	}
	doRequest(t, "GET", in.URL+"/openapi.json", nil).json(t, &doc)
	for path, method := range map[string]string{
		"/api/v1/sdk/state": "get", "/api/v1/sdk/personal-info": "post", "/api/v1/sdk/documents": "post",
		"/api/v1/sdk/submit": "post", "/api/v1/sdk/ubos": "post",
	} {
		if doc.Paths[path][method] == nil {
			t.Errorf("openapi: no %s %s", method, path)
		}
	}
	if doc.Components.SecuritySchemes["sdkToken"] == nil || doc.Components.SecuritySchemes["apiKey"] == nil || doc.Components.Schemas["SDKState"] == nil {
		t.Errorf("openapi components: %v", doc.Components.SecuritySchemes)
	}
}

func TestUboOpenAPI(t *testing.T) {
	t.Parallel()
	in := start(t)
	var doc struct{ Paths map[string]map[string]any }
	in.expect(200, "GET", "/openapi.json", nil).json(t, &doc)
	for path, methods := range map[string][]string{
		"/v1/applicants/{id}/company-structure":               {"get", "patch"},
		"/v1/applicants/{id}/ubos":                            {"get", "post"},
		"/v1/applicants/{id}/ubos/{uboIndex}":                 {"patch"},
		"/v1/applicants/{id}/ubos/{uboIndex}/spawn-kyc":       {"post"},
		"/v1/applicants/{id}/ubos/{uboIndex}/regenerate-link": {"post"},
	} {
		for _, m := range methods {
			if doc.Paths[path][m] == nil {
				t.Errorf("openapi: no %s %s", m, path)
			}
		}
	}
}

func TestOpenAPIDescribesTheCustodyRecords(t *testing.T) {
	t.Parallel()
	in := start(t, func(o *options) { o.settings.Chain.AutoAdvance = false })
	var doc struct {
		Paths      map[string]any
		Components struct {
			Schemas map[string]struct{ Required []string }
		}
	}
	in.expect(200, "GET", "/openapi.json", nil).json(t, &doc)
	for _, p := range []string{"/assets", "/vaults", "/vaults/{id}", "/vaults/{id}/wallets", "/wallets/{id}",
		"/wallets/{id}/balance", "/transactions", "/transactions/{id}", "/transactions/{id}/advance",
		"/transactions/{id}/fail", "/transactions/{id}/cancel", "/sandbox/deposits"} {
		if doc.Paths[p] == nil {
			t.Errorf("openapi.json has no %s", p)
		}
	}
	v := in.vault("a")
	w := in.wallet(v, "ETH")
	var x map[string]any
	in.expect(201, "POST", "/sandbox/deposits", map[string]any{"walletId": w.WalletID, "amount": "1"}).json(t, &x)
	records := map[string]map[string]any{
		"Transaction": x,
		"Vault":       in.expect(200, "GET", "/vaults/"+v, nil).m(t),
		"Wallet":      in.expect(200, "GET", "/wallets/"+w.WalletID, nil).m(t),
		"Balance":     in.expect(200, "GET", "/wallets/"+w.WalletID+"/balance", nil).m(t),
	}
	for name, rec := range records {
		sameKeys(t, "schema "+name, rec, doc.Components.Schemas[name].Required...)
	}
}

// TestOpenAPIFragmentsGiveEachKeyOnce: no object of the document's sources
// names a key twice. JSON leaves a repeated key open, so one tool reads
// the first (an operation's description, say) and another the last, and
// a partner reads the one its tool picked.
func TestOpenAPIFragmentsGiveEachKeyOnce(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("openapi/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("openapi/*.json: %v (%d files)", err, len(paths))
	}
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(src))
		if err := keysOnce(dec, "$"); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// keysOnce reads one JSON value from dec and reports the first object in
// it (named by its path) that gives a key twice.
func keysOnce(dec *json.Decoder, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			key := k.(string)
			if seen[key] {
				return fmt.Errorf("%s gives %q twice", path, key)
			}
			seen[key] = true
			if err := keysOnce(dec, path+"."+key); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := keysOnce(dec, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return nil
}

// TestOpenAPIDeclares413WhereABodyIsRead: a DELETE reads its body as every
// call that takes none does, so one past the 1 MiB limit is a 413; the
// document lists 413 on each DELETE, as it does on every POST, PUT and
// PATCH.
func TestOpenAPIDeclares413WhereABodyIsRead(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("big-del", "Doe")
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]any
		}
	}
	if err := json.Unmarshal(doRequest(t, "GET", in.URL+"/openapi.json", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	big := `{"x":"` + strings.Repeat("a", 2<<20) + `"}`
	n := 0
	for path, ops := range doc.Paths {
		op, ok := ops["delete"]
		if !ok {
			continue
		}
		n++
		if op.Responses["413"] == nil {
			t.Errorf("DELETE %s does not list 413", path)
		}
		if r := in.do("DELETE", strings.ReplaceAll(path, "{id}", "big-del"), big); r.Status != 413 {
			t.Errorf("DELETE %s with a 2 MiB body: %d", path, r.Status)
		}
	}
	if n == 0 {
		t.Fatal("the document has no DELETE")
	}
	if a := in.expect(200, "GET", "/v1/applicants/big-del", nil).m(t); a["info"].(map[string]any)["lastName"] != "Doe" {
		t.Errorf("a refused DELETE erased the applicant: %v", a["info"])
	}
}
