package server_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/complybox/complybox/store"
)

// TestConsoleTrailingSlash: GET /console/ is the overview's address with a
// slash too many; it redirects to /console.
func TestConsoleTrailingSlash(t *testing.T) {
	in := start(t)
	b := in.browser()
	r := b.get("/console/?ok=env")
	expectStatus(t, "GET /console/", r, http.StatusMovedPermanently)
	if loc := r.Header.Get("Location"); loc != "/console?ok=env" {
		t.Fatalf("GET /console/ redirects to %q", loc)
	}
}

// TestConsolePostWithoutSession: a form posted without a session carries no
// valid CSRF token: 403, and nothing happens.
func TestConsolePostWithoutSession(t *testing.T) {
	in := start(t)
	if err := in.Store.SetConsolePassword(consolePassword); err != nil {
		t.Fatal(err)
	}
	b := in.browser()
	for _, path := range []string{"/console/credentials", "/console/logout", "/console/settings/callback/rotate",
		"/console/applicants/nobody/decision", "/console/retry-deliveries"} {
		r := b.post(path, url.Values{"csrf": {"guessed"}, "environment": {"sandbox"}, "status": {"failed"}})
		expectStatus(t, "POST "+path+" without a session", r, http.StatusForbidden)
	}
	creds, err := in.Store.Credentials()
	if err != nil || len(creds) != 1 {
		t.Fatalf("credentials %v %v, want the harness's one", creds, err)
	}
	// A GET without a session still goes to the login page.
	r := b.get("/console/applicants")
	expectStatus(t, "GET without a session", r, http.StatusSeeOther)
	if loc := r.Header.Get("Location"); loc != "/console/login" {
		t.Fatalf("GET without a session redirects to %q", loc)
	}
}

// TestConsoleEscapesUserData: names, labels and notes a partner or an
// applicant typed are shown as text, never as markup.
func TestConsoleEscapesUserData(t *testing.T) {
	in := start(t)
	const evil = "<script>alert(1)</script>"
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "xss-1", "firstName": evil, "lastName": "MANUAL"})
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "xss-co", "type": "company", "companyName": evil,
		"country": "DEU", "ubos": []map[string]any{{"fullName": "Eve " + evil, "dateOfBirth": "1980-01-01", "ownershipPercent": 50, "roles": []string{"ubo"}}}})
	vault := in.vault(evil)
	b := in.operator()
	for _, path := range []string{"/console/applicants", "/console/applicants?q=script", "/console/applicants/xss-1",
		"/console/applicants/xss-co", "/console/vaults", "/console/vaults/" + vault} {
		r := b.get(path)
		expectStatus(t, path, r, http.StatusOK)
		if strings.Contains(string(r.Body), evil) {
			t.Fatalf("GET %s renders the markup unescaped:\n%s", path, r.Body)
		}
		if !strings.Contains(string(r.Body), "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Fatalf("GET %s does not show the escaped value:\n%s", path, r.Body)
		}
	}
}

// TestConsoleApplicantList: the list names each applicant and filters by
// type; search also answers to ?search=.
func TestConsoleApplicantList(t *testing.T) {
	in := start(t)
	in.createApplicant("list-ada", "Lovelace")
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "list-co", "type": "company", "companyName": "Acme Holding", "country": "DEU"})
	b := in.operator()
	b.page("/console/applicants", "Lovelace", "Acme Holding")
	page := b.page("/console/applicants?type=company", "list-co")
	if strings.Contains(page, "list-ada") {
		t.Fatal("type=company lists an individual")
	}
	page = b.page("/console/applicants?type=individual&q=list", "list-ada")
	if strings.Contains(page, "list-co") {
		t.Fatal("type=individual&q=list lists a company")
	}
	page = b.page("/console/applicants?search=acme", "list-co")
	if strings.Contains(page, "list-ada") {
		t.Fatal("search=acme lists list-ada")
	}
	expectStatus(t, "unknown type", b.get("/console/applicants?type=robot"), http.StatusBadRequest)
}

// TestConsoleCompanyStructure: a company's page shows its structure's flags
// and counts and its rows with their children; a child's page names its
// parent.
func TestConsoleCompanyStructure(t *testing.T) {
	in := start(t)
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "holding", "type": "company", "companyName": "Holding AG",
		"country": "DEU", "ubos": []map[string]any{
			{"fullName": "Anna Maria Schmidt", "dateOfBirth": "1980-02-02", "ownershipPercent": 60, "roles": []string{"ubo", "director"}},
			{"fullName": "Bob Jones", "dateOfBirth": "1970-03-03", "ownershipPercent": 30, "roles": []string{"ubo"}}}})
	in.spawn(201, "holding", 0, nil)
	b := in.operator()
	page := b.page("/console/applicants/holding", "Company structure", "Anna Maria Schmidt", "Bob Jones",
		`<a href="/console/applicants/holding.ubo.1">holding.ubo.1</a>`, "allChildrenComplete", "hasNoUbos")
	for _, kv := range []string{"<th>spawned</th><td>1</td>", "<th>pending</th><td>1</td>", "<th>total</th><td>2</td>"} {
		if !strings.Contains(page, kv) {
			t.Fatalf("the company page has no %s:\n%s", kv, page)
		}
	}
	b.page("/console/applicants/holding.ubo.1", "parentExternalUserId", `<a href="/console/applicants/holding">holding</a>`)
}

// TestConsoleCredentialDefaults: a credential made without naming an
// environment is one of the environment the console shows.
func TestConsoleCredentialDefaults(t *testing.T) {
	in := start(t)
	b := in.operator()
	b.page("/console/credentials")
	expectStatus(t, "switch", b.submit("/console/env", url.Values{"env": {"production"}}), http.StatusSeeOther)
	b.page("/console/credentials")
	r := b.submit("/console/credentials", nil)
	expectStatus(t, "create without fields", r, http.StatusOK)
	creds, err := in.Store.Credentials()
	if err != nil {
		t.Fatal(err)
	}
	var made *store.Credential
	for i := range creds {
		if creds[i].Key != in.Key {
			made = &creds[i]
		}
	}
	if made == nil || made.Environment != store.Production || made.Role != store.RolePartner {
		t.Fatalf("credentials %+v: want a production partner credential", creds)
	}

	// Revoked from the sandbox view, the event still belongs to production.
	b.page("/console/credentials")
	expectStatus(t, "switch back", b.submit("/console/env", url.Values{"env": {"sandbox"}}), http.StatusSeeOther)
	b.page("/console/credentials")
	expectStatus(t, "revoke", b.submit("/console/credentials/"+made.Key+"/revoke", nil), http.StatusSeeOther)
	if events := consoleEvents(t, in, store.Production); !slices.Contains(events, "console.credential_revoked") {
		t.Fatalf("production console events %v have no console.credential_revoked", events)
	}
}

// postMultipart submits fields to path as multipart/form-data, as curl -F
// does.
func (b *browser) postMultipart(path string, fields map[string]string) *response {
	b.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			b.t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		b.t.Fatal(err)
	}
	req, err := http.NewRequest("POST", b.base+path, &body)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return b.send(req)
}

// TestConsoleMultipartForms: forms posted as multipart/form-data work like
// URL-encoded ones, CSRF check included.
func TestConsoleMultipartForms(t *testing.T) {
	in := start(t)
	if err := in.Store.SetConsolePassword(consolePassword); err != nil {
		t.Fatal(err)
	}
	b := in.browser()
	b.page("/console/login")
	expectStatus(t, "multipart login", b.postMultipart("/console/login", map[string]string{"password": consolePassword, "csrf": b.csrf}), http.StatusSeeOther)
	b.page("/console/credentials")
	expectStatus(t, "multipart form without its token", b.postMultipart("/console/credentials", map[string]string{"environment": "sandbox"}), http.StatusForbidden)
	r := b.postMultipart("/console/credentials", map[string]string{"environment": "sandbox", "name": "multi", "csrf": b.csrf})
	expectStatus(t, "multipart credential", r, http.StatusOK)
	if !strings.Contains(string(r.Body), "multi") {
		t.Fatalf("credential page: %s", r.Body)
	}
}

// TestConsoleLevels: levels are created and edited from the console with
// the JSON of the API; each edit is an internal console event.
func TestConsoleLevels(t *testing.T) {
	in := start(t)
	b := in.operator()
	b.page("/console/levels", "Create a level")
	r := b.submit("/console/levels", url.Values{"level": {`{"name":"console-level","applicantType":"individual","steps":[{"kind":"identity_doc"},{"kind":"selfie"}],"personalInfoFields":["firstName","lastName"]}`}})
	expectStatus(t, "create a level", r, http.StatusSeeOther)
	if loc := r.Header.Get("Location"); !strings.HasPrefix(loc, "/console/levels/console-level") {
		t.Fatalf("create redirects to %q", loc)
	}
	in.expect(200, "GET", "/v1/levels/console-level", nil)
	b.page("/console/levels/console-level", "identity_doc", "Edit")
	expectStatus(t, "edit a level", b.submit("/console/levels/console-level", url.Values{"level": {`{"steps":[{"kind":"identity_doc"}]}`}}), http.StatusSeeOther)
	var l store.Level
	in.expect(200, "GET", "/v1/levels/console-level", nil).json(t, &l)
	if len(l.Steps) != 1 || l.Steps[0].Kind != "identity_doc" {
		t.Fatalf("steps after the edit: %+v", l.Steps)
	}
	b.page("/console/levels/console-level")
	expectStatus(t, "edit with bad JSON", b.submit("/console/levels/console-level", url.Values{"level": {`{"steps":`}}), http.StatusBadRequest)
	expectStatus(t, "edit with a wrong type", b.submit("/console/levels/console-level", url.Values{"level": {`{"steps":"x"}`}}), http.StatusBadRequest)
	expectStatus(t, "edit an unknown level", b.submit("/console/levels/nope", url.Values{"level": {`{}`}}), http.StatusNotFound)
	expectStatus(t, "create without a token", b.post("/console/levels", url.Values{"level": {`{"name":"x"}`}}), http.StatusForbidden)
	events := consoleEvents(t, in, store.Sandbox)
	if !slices.Contains(events, "console.level_created") || !slices.Contains(events, "console.level_edited") {
		t.Fatalf("console events %v", events)
	}
}

// TestConsoleDecisionWords: the decision form also reads approve/reject and
// a lower-case reject type, as a script filling it in may write them.
func TestConsoleDecisionWords(t *testing.T) {
	in := start(t)
	in.createApplicant("words-1", "MANUAL")
	in.expect(200, "POST", "/v1/applicants/words-1/verify", verifyBody(t, 21))
	in.createApplicant("words-2", "MANUAL")
	in.expect(200, "POST", "/v1/applicants/words-2/verify", verifyBody(t, 22))
	b := in.operator()
	b.page("/console/applicants/words-1", "Record decision")
	r := b.submit("/console/applicants/words-1/decision", url.Values{"decision": {"reject"}, "reviewRejectType": {"retry"}, "rejectLabels": {"FORGERY"}})
	expectStatus(t, "reject", r, http.StatusSeeOther)
	st := in.expect(200, "GET", "/v1/applicants/words-1/status", nil).m(t)
	if st["reviewAnswer"] != "RED" || st["reviewRejectType"] != "RETRY" {
		t.Fatalf("status after reject: %v", st)
	}
	b.page("/console/applicants/words-2", "Record decision")
	expectStatus(t, "approve", b.submit("/console/applicants/words-2/decision", url.Values{"reviewAnswer": {"Approve"}}), http.StatusSeeOther)
	if st := in.expect(200, "GET", "/v1/applicants/words-2/status", nil).m(t); st["reviewAnswer"] != "GREEN" {
		t.Fatalf("status after approve: %v", st)
	}
}

// TestConsoleSettingsScripted: a script posting only a URL subscribes the
// webhook to every type; the page's form with no box ticked is refused;
// the callback form also takes its URL as "url".
func TestConsoleSettingsScripted(t *testing.T) {
	in := start(t)
	rc := newReceiver(t, in.Clock, nil)
	b := in.operator()
	b.page("/console/settings")
	expectStatus(t, "the page's form with no type", b.submit("/console/settings/webhook", url.Values{"url": {rc.URL}, "subscription": {"boxes"}}), http.StatusBadRequest)
	r := b.submit("/console/settings/webhook", url.Values{"url": {rc.URL}})
	expectStatus(t, "only a URL", r, http.StatusOK)
	if secretOnPage(r.Body) == "" {
		t.Fatalf("no secret shown: %s", r.Body)
	}
	if cfg := in.expect(200, "GET", "/webhooks/outbound", nil).m(t); cfg["url"] != rc.URL || cfg["subscribedEventTypes"] != nil {
		t.Fatalf("webhook config %v, want every type", cfg)
	}
	b.page("/console/settings")
	expectStatus(t, "callback as url", b.submit("/console/settings/callback", url.Values{"url": {rc.URL}}), http.StatusSeeOther)
	if u, err := in.Store.CallbackURL(); err != nil || u != rc.URL {
		t.Fatalf("callback URL %q %v", u, err)
	}
}

// TestConsoleBulkRetryAnyStatus: bulk retry without a status queues the
// failed and the dead deliveries alike.
func TestConsoleBulkRetryAnyStatus(t *testing.T) {
	in := start(t)
	rc := newReceiver(t, in.Clock, func(n int) int {
		if n <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	in.configureWebhook(rc)
	one, two := in.testEvent(), in.testEvent()
	in.waitDelivery(one, "failed", 1)
	in.waitDelivery(two, "failed", 1)
	b := in.operator()
	b.page("/console/deliveries", "failed or dead")
	r := b.submit("/console/retry-deliveries", nil)
	expectStatus(t, "bulk retry without a status", r, http.StatusOK)
	if !strings.Contains(string(r.Body), "2 deliveries were queued") {
		t.Fatalf("bulk retry page: %s", r.Body)
	}
	in.waitDelivery(one, "delivered", 2)
	in.waitDelivery(two, "delivered", 2)
	b.page("/console/deliveries")
	expectStatus(t, "bulk retry of delivered ones", b.submit("/console/retry-deliveries", url.Values{"status": {"delivered"}}), http.StatusBadRequest)
}
