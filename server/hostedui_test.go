package server_test

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// sdkSession opens a hosted-UI session for extID, passes its intro as a
// browser does (the consent box ticked; internal history consent.given the first
// time) and returns its token.
func (in *instance) sdkSession(extID string, body map[string]any) string {
	in.t.Helper()
	token := in.sdkNewSession(extID, body)
	if r := in.sdkForm("/sdk/"+token+"/consent", url.Values{"consent": {"yes"}}); r.Status != 303 {
		in.t.Fatalf("consent: status %d, want 303; body %s", r.Status, r.Body)
	}
	return token
}

// sdkNewSession opens a hosted-UI session for extID and returns its token;
// the page starts with the intro unless the applicant consented before.
func (in *instance) sdkNewSession(extID string, body map[string]any) string {
	in.t.Helper()
	if body == nil {
		body = map[string]any{}
	}
	var link struct{ Token, URL string }
	in.expect(201, "POST", "/v1/applicants/"+extID+"/verification-sessions", body).json(in.t, &link)
	return link.Token
}

// sdkGet fetches a hosted-UI URL without following redirects.
func (in *instance) sdkGet(path string, headers ...string) *response {
	in.t.Helper()
	return in.sdkSend("GET", path, nil, "", headers...)
}

// sdkSend sends a request to the hosted UI or its API without following
// redirects and without API credentials.
func (in *instance) sdkSend(method, path string, body []byte, contentType string, headers ...string) *response {
	in.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, in.URL+path, rd)
	if err != nil {
		in.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		in.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		in.t.Fatal(err)
	}
	return &response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// sdkForm posts an HTML form (urlencoded) as a browser without JavaScript.
func (in *instance) sdkForm(path string, form url.Values) *response {
	in.t.Helper()
	return in.sdkSend("POST", path, []byte(form.Encode()), "application/x-www-form-urlencoded")
}

// part is one part of a multipart body: a field, or a file when data is set.
type part struct {
	name, value string
	data        []byte
	filename    *string // the part's file name; default name.bin
}

// named returns a pointer to s, a part's file name.
func named(s string) *string { return &s }

// multipartBody encodes parts and returns the body and its content type.
func multipartBody(t testing.TB, parts ...part) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		if p.data == nil && p.filename == nil {
			if err := mw.WriteField(p.name, p.value); err != nil {
				t.Fatal(err)
			}
			continue
		}
		fn := p.name + ".bin"
		if p.filename != nil {
			fn = *p.filename
		}
		w, err := mw.CreateFormFile(p.name, fn)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(p.data)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), mw.FormDataContentType()
}

// sdkUpload posts a multipart upload to path; bearer, if set, is sent as
// the Authorization token.
func (in *instance) sdkUpload(path, bearer string, parts ...part) *response {
	in.t.Helper()
	body, ct := multipartBody(in.t, parts...)
	var h []string
	if bearer != "" {
		h = []string{"Authorization", "Bearer " + bearer}
	}
	return in.sdkSend("POST", path, body, ct, h...)
}

// sdkAPI calls the page API with token as Bearer and a JSON body.
func (in *instance) sdkAPI(method, path, token string, body string) *response {
	in.t.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	return in.sdkSend(method, path, b, "application/json", "Authorization", "Bearer "+token)
}

// wantStatusCode fails unless r has status want.
func wantStatusCode(t testing.TB, r *response, want int, what string) {
	t.Helper()
	if r.Status != want {
		t.Fatalf("%s: status %d, want %d; body %.600s", what, r.Status, want, r.Body)
	}
}

// wantHTML fails unless the page body matches every pattern.
func wantHTML(t testing.TB, r *response, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		if !regexp.MustCompile(p).Match(r.Body) {
			t.Errorf("page lacks %s", p)
		}
	}
}

// noHTML fails if the page body matches any pattern.
func noHTML(t testing.TB, r *response, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		if regexp.MustCompile(p).Match(r.Body) {
			t.Errorf("page has %s", p)
		}
	}
}

// sdkVerdict waits until the session state carries a verdict.
func (in *instance) sdkVerdict(token string) map[string]any {
	in.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		r := in.sdkAPI("GET", "/api/v1/sdk/state", token, "")
		wantStatusCode(in.t, r, 200, "state")
		if v, ok := r.m(in.t)["verdict"].(map[string]any); ok {
			return v
		}
		select {
		case <-deadline:
			in.t.Fatalf("no verdict within 10s: %s", r.Body)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func TestSDKPageIndividual(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("page1", "Green") // firstName, lastName, dateOfBirth, nationality locked
	token := in.sdkSession("page1", map[string]any{"lang": "de", "theme": "dark"})

	r := in.sdkGet("/sdk/" + token)
	wantStatusCode(t, r, 200, "page")
	if ct := r.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	if rp := r.Header.Get("Referrer-Policy"); rp != "no-referrer" {
		t.Errorf("Referrer-Policy %q", rp)
	}
	wantHTML(t, r,
		`<html lang="de" class="theme-dark">`,
		`Persönliche Angaben`, `Ausweisdokument`, `Selfie`, `Schritt 1 von 4`,
		`<input type="text" name="firstName" value="Ada" disabled`,
		`<input type="text" name="lastName" value="Green" disabled`,
		`<input type="date" name="dateOfBirth" value="1990-04-01" disabled`,
		`<input type="email" name="email" value=""( required)? autocomplete="email">`,
		`action="/sdk/`+regexp.QuoteMeta(token)+`/personal-info"`,
		`<script src="/sdk-assets/app.js\?v=[0-9a-f]+" defer>`,
	)
	noHTML(t, r, `https?://`, `name="email"[^>]*disabled`, `name="address"`, `<script>`, `style=`)

	// The steps of the level, each a form that works without script. The
	// identity document asks the issuing country first (a GET form that
	// starts on the nationality), then offers the types that country
	// issues.
	r = in.sdkGet("/sdk/" + token + "?step=identity_doc")
	wantHTML(t, r, `<form method="get" action="/sdk/`+regexp.QuoteMeta(token)+`" class="stack" id="country-form">`,
		`<input type="hidden" name="step" value="identity_doc">`, `Ausstellendes Land`, `<option value="GBR" selected>Vereinigtes Königreich</option>`)
	noHTML(t, r, `name="front"`, `name="docType"`)
	r = in.sdkGet("/sdk/" + token + "?step=identity_doc&country=gbr")
	wantHTML(t, r, `enctype="multipart/form-data"`, `name="kind" value="identity_doc"`, `<option value="GBR" selected>Vereinigtes Königreich</option>`,
		`<input type="file" name="front" accept="image/jpeg,image/png,application/pdf" capture="environment"`,
		`<input type="file" name="back"`, `<option value="PASSPORT">Reisepass</option>`, `<option value="DRIVERS">Führerschein</option>`,
		`<option value="RESIDENCE_PERMIT">Aufenthaltstitel</option>`, `formmethod="get"`, `data-doctypes="`)
	noHTML(t, r, `<option value="ID_CARD">`) // the UK issues no national identity card
	r = in.sdkGet("/sdk/" + token + "?step=identity_doc&country=DEU")
	wantHTML(t, r, `<option value="PASSPORT">Reisepass</option><option value="ID_CARD">Personalausweis</option>`)
	wantHTML(t, in.sdkGet("/sdk/"+token+"?step=identity_doc&country=XXX"), `id="country-form"`) // not a country: ask again
	r = in.sdkGet("/sdk/" + token + "?step=selfie")
	wantHTML(t, r, `name="kind" value="selfie"`, `capture="user"`)

	// An unknown language falls back to English; the theme defaults to light.
	token2 := in.sdkSession("page1", map[string]any{"lang": "xx"})
	r = in.sdkGet("/sdk/" + token2)
	wantStatusCode(t, r, 200, "page")
	wantHTML(t, r, `<html lang="en" class="theme-light">`, `Personal information`, `Identity document`, `Step 1 of 4`)

	// The full level: liveness with a guided capture, proof of address, a
	// questionnaire from the level.
	in.expect(201, "POST", "/v1/levels", map[string]any{
		"name": "sdk-full", "applicantType": "individual",
		"steps":              []map[string]any{{"kind": "identity_doc"}, {"kind": "selfie"}, {"kind": "liveness"}, {"kind": "poa"}, {"kind": "questionnaire"}, {"kind": "aml"}},
		"personalInfoFields": []string{"firstName", "lastName", "gender", "address"},
		"questionnaire": []map[string]any{
			{"id": "pep", "text": "Are you a politically exposed person?", "type": "boolean", "required": true},
			{"id": "source", "text": "Source of funds", "type": "choice", "options": []string{"salary", "savings"}, "required": true},
			{"id": "note", "text": "Anything else?", "type": "text"},
		},
	})
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "page2", "verificationLevelName": "sdk-full"})
	token3 := in.sdkSession("page2", nil)
	r = in.sdkGet("/sdk/" + token3)
	wantHTML(t, r, `<select name="gender"`, `<input type="text" name="address"`, `Liveness check`, `Proof of address`, `Questionnaire`)
	noHTML(t, r, `Screening</a>`) // aml runs by itself
	r = in.sdkGet("/sdk/" + token3 + "?step=liveness")
	wantHTML(t, r, `name="kind" value="liveness"`, `multiple`, `data-liveness="3"`, `data-prompt-2="Turn your head slightly to the left"`)
	r = in.sdkGet("/sdk/" + token3 + "?step=questionnaire")
	wantHTML(t, r, `Are you a politically exposed person\?`, `name="q.pep" value="true"`, `<select id="q-source" name="q.source"`,
		`<option value="savings">savings</option>`, `<textarea id="q-note" name="q.note"`,
		`<label class="label" for="q-source">`, `<label class="label" for="q-note">`) // accessible names
	r = in.sdkGet("/sdk/" + token3 + "?step=poa")
	wantHTML(t, r, `name="kind" value="poa"`)

	// The assets are embedded and served with long caching.
	a := in.sdkGet("/sdk-assets/app.css")
	wantStatusCode(t, a, 200, "app.css")
	if !strings.HasPrefix(a.Header.Get("Content-Type"), "text/css") || !bytes.Contains(a.Body, []byte(".theme-dark")) {
		t.Errorf("app.css: %s", a.Header.Get("Content-Type"))
	}
	wantStatusCode(t, in.sdkGet("/sdk-assets/app.js"), 200, "app.js")
	wantStatusCode(t, in.sdkGet("/sdk-assets/nope.js"), 404, "unknown asset")
	wantStatusCode(t, in.sdkGet("/sdk-assets/../templates/page.html"), 404, "asset outside static")
}

func TestSDKPageCompany(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "co1", "type": "company", "companyName": "Acme GmbH", "country": "DEU"})
	token := in.sdkSession("co1", nil)
	r := in.sdkGet("/sdk/" + token)
	wantStatusCode(t, r, 200, "page")
	wantHTML(t, r, `Company verification`, `<h2>Company information</h2>`, `Company documents`, `Step 1 of 4`,
		`<input type="text" name="companyName" value="Acme GmbH" disabled`,
		`<input type="text" name="registrationNumber" value="" required>`,
		`<select name="legalForm"`, `<option value="gmbh">GmbH</option>`)
	noHTML(t, r, `Identity document`, `name="firstName"`, `Questionnaire`) // kyb-level asks no questions
	r = in.sdkGet("/sdk/" + token + "?step=company_docs")
	// One documents step, one form, one input per required document, each
	// with its state (issue 11, defect 1).
	wantHTML(t, r, `name="file.certificate_of_incorporation"`, `name="file.register_of_shareholders"`,
		`Certificate of incorporation <span class="state missing">still needed`, `Register of shareholders <span class="state missing">still needed`,
		`0 of 2 documents uploaded`)
	if n := strings.Count(string(r.Body), `action="/sdk/`+token+`/documents"`); n != 1 {
		t.Errorf("%d document forms on the company documents step, want 1", n)
	}

	// Only the certificate (the register's input left empty): the page
	// stays on the documents step and says the register is still needed.
	body, ct := multipartBody(t, part{name: "kind", value: "company_docs"},
		part{name: "file.certificate_of_incorporation", filename: named("cert.png"), data: pngImage(t, 210, 300, 1)},
		part{name: "file.register_of_shareholders", filename: named("")})
	r = in.sdkSend("POST", "/sdk/"+token+"/documents", body, ct)
	wantStatusCode(t, r, 303, "company doc")
	if loc := r.Header.Get("Location"); !strings.HasSuffix(loc, "?step=company_docs") {
		t.Errorf("after one of two documents the page goes to %q, want the documents step again", loc)
	}
	r = in.sdkGet("/sdk/" + token + "?step=company_docs")
	wantHTML(t, r, `Certificate of incorporation <span class="state ok">✓`, `Register of shareholders <span class="state missing">still needed`,
		`1 of 2 documents uploaded`)
	noHTML(t, r, `Register of shareholders <span class="state ok">`)

	// The register: both there, the page moves on.
	body, ct = multipartBody(t, part{name: "kind", value: "company_docs"},
		part{name: "file.register_of_shareholders", filename: named("reg.pdf"), data: []byte("%PDF-1.7\nx\n%%EOF")})
	r = in.sdkSend("POST", "/sdk/"+token+"/documents", body, ct)
	wantStatusCode(t, r, 303, "second company doc")
	if loc := r.Header.Get("Location"); strings.HasSuffix(loc, "?step=company_docs") {
		t.Errorf("with both documents the page stays on %q", loc)
	}
	st := in.sdkAPI("GET", "/api/v1/sdk/state", token, "").m(t)
	if docs, _ := st["documents"].([]any); len(docs) != 2 {
		t.Errorf("documents %v", st["documents"])
	}

	// In German.
	token = in.sdkSession("co1", map[string]any{"lang": "DE"})
	wantHTML(t, in.sdkGet("/sdk/"+token), `Unternehmensprüfung`, `Angaben zum Unternehmen`, `Unternehmensdokumente`)
}

// TestSDKFormFlow walks the hosted UI as a browser without JavaScript:
// plain forms, multipart uploads, redirects, the waiting page and the way
// back to the partner.
func TestSDKFormFlow(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "walk1"})
	token := in.sdkNewSession("walk1", map[string]any{"returnUrl": "https://partner.example/done?from=kyc"})
	page := "/sdk/" + token

	// The intro: what will be asked, derived from the level's steps, and
	// a consent line; no step before consent.
	r := in.sdkGet(page)
	wantStatusCode(t, r, 200, "intro")
	wantHTML(t, r, `id="intro"`, `<li data-ask="personal">your personal details`, `<li data-ask="identity_doc">a photo of an identity document`,
		`<li data-ask="selfie">a photo of your face`, `action="/sdk/`+regexp.QuoteMeta(token)+`/consent"`,
		`<input type="checkbox" name="consent" value="yes" required>`)
	noHTML(t, r, `data-ask="review"`, `name="firstName"`, `aria-current="step"`)
	wantHTML(t, in.sdkGet(page+"?step=selfie"), `id="intro"`) // no way around it
	// A data form posted before consent stores nothing and leads to the intro.
	r = in.sdkForm(page+"/personal-info", url.Values{"firstName": {"Early"}})
	if r.Status != 303 || r.Header.Get("Location") != page {
		t.Errorf("personal info before consent: %d %q", r.Status, r.Header.Get("Location"))
	}
	r = in.sdkUpload(page+"/documents", "", part{name: "kind", value: "selfie"}, part{name: "file", data: jpegImage(t, 220, 240, 8)})
	if r.Status != 303 || r.Header.Get("Location") != page {
		t.Errorf("upload before consent: %d %q", r.Status, r.Header.Get("Location"))
	}
	if a := in.expect(200, "GET", "/v1/applicants/walk1", nil).m(t); a["consentGivenAtUtc"] != nil || len(a["documents"].([]any)) != 0 ||
		a["info"].(map[string]any)["firstName"] != nil {
		t.Errorf("before consent: %v", a)
	}
	// The box left unticked: the intro again, the error naming the box.
	r = in.sdkForm(page+"/consent", url.Values{})
	wantStatusCode(t, r, 400, "consent unticked")
	wantHTML(t, r, `role="alert"`, `Please check: Consent`, `Please tick the box`, `aria-invalid="true"`)
	r = in.sdkForm(page+"/consent", url.Values{"consent": {"yes"}})
	wantStatusCode(t, r, 303, "consent")
	if loc := r.Header.Get("Location"); loc != page+"?step=personal" {
		t.Fatalf("after consent Location %q", loc)
	}
	a := in.expect(200, "GET", "/v1/applicants/walk1", nil).m(t)
	if at, _ := a["consentGivenAtUtc"].(string); at != "2026-11-21T05:00:00.000Z" {
		t.Errorf("consentGivenAtUtc %v", a["consentGivenAtUtc"])
	}
	// A second session of the same applicant goes straight to the steps;
	// consenting again records nothing.
	again := "/sdk/" + in.sdkNewSession("walk1", nil)
	noHTML(t, in.sdkGet(again), `id="intro"`)
	wantStatusCode(t, in.sdkForm(again+"/consent", url.Values{"consent": {"yes"}}), 303, "consent again")

	// Personal info: a bad value comes back as the page with the error.
	r = in.sdkForm(page+"/personal-info", url.Values{"firstName": {"Ada"}, "lastName": {"Walker"}, "dateOfBirth": {"1990-02-31"}, "email": {""}})
	wantStatusCode(t, r, 400, "bad date")
	wantHTML(t, r, `role="alert"`, `Please check: Date of birth`, `class="field invalid"`, `name="firstName" value="Ada"`)
	r = in.sdkForm(page+"/personal-info", url.Values{"firstName": {"Ada"}, "lastName": {"Walker"}, "dateOfBirth": {"1990-02-01"}, "email": {""}})
	wantStatusCode(t, r, 303, "personal info")
	if loc := r.Header.Get("Location"); loc != page+"?step=identity_doc" {
		t.Fatalf("Location %q", loc)
	}
	if r.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("redirect without Referrer-Policy")
	}
	// The page moves on to the identity document.
	wantHTML(t, in.sdkGet(r.Header.Get("Location")), `aria-current="step">Identity document`)

	// Documents: a bad image is named; the empty back input is skipped.
	// A type the chosen country does not issue (the page never offers
	// it): refused, naming the document type, with the country's types.
	r = in.sdkUpload(page+"/documents", "", part{name: "kind", value: "identity_doc"}, part{name: "docType", value: "ID_CARD"},
		part{name: "country", value: "GBR"}, part{name: "front", data: pngImage(t, 240, 220, 7)})
	wantStatusCode(t, r, 400, "ID_CARD of the UK")
	wantHTML(t, r, `Please check: Document type`, `not issued by the chosen country`, `<option value="GBR" selected>United Kingdom</option>`,
		`<option value="PASSPORT">Passport</option>`)
	noHTML(t, r, `<option value="ID_CARD">`)
	// No country: the form asks for it.
	r = in.sdkUpload(page+"/documents", "", part{name: "kind", value: "identity_doc"}, part{name: "docType", value: "PASSPORT"},
		part{name: "front", data: pngImage(t, 240, 220, 7)})
	wantStatusCode(t, r, 400, "no country")
	wantHTML(t, r, `Please check: Issuing country`, `id="country-form"`)
	r = in.sdkUpload(page+"/documents", "", part{name: "kind", value: "identity_doc"}, part{name: "docType", value: "PASSPORT"},
		part{name: "country", value: "GBR"}, part{name: "front", data: []byte("not an image")})
	wantStatusCode(t, r, 400, "bad image")
	wantHTML(t, r, `Please check: Front side`, `Please choose a photo \(JPEG or PNG\) or a PDF document\.`)
	noHTML(t, r, `must be a JPEG`, `front must`) // no developer wording (issue 11, defect 4)
	body, ct := multipartBody(t, part{name: "kind", value: "identity_doc"}, part{name: "docType", value: "PASSPORT"},
		part{name: "country", value: "gbr"}, part{name: "front", data: pngImage(t, 240, 220, 7)})
	wantStatusCode(t, in.sdkSend("POST", page+"/documents", body, ct), 303, "front")
	// Submitting too early answers 409 with the missing step.
	r = in.sdkForm(page+"/submit", url.Values{})
	wantStatusCode(t, r, 409, "early submit")
	wantHTML(t, r, `selfie`, `Please check: Selfie`) // the error names the missing step by its label
	noHTML(t, r, `Please check this entry`)
	wantStatusCode(t, in.sdkUpload(page+"/documents", "", part{name: "kind", value: "selfie"}, part{name: "file", data: jpegImage(t, 220, 240, 8)}), 303, "selfie")

	// Review: everything there, submit.
	r = in.sdkGet(page)
	wantHTML(t, r, `aria-current="step">Review and submit`, `action="/sdk/`+regexp.QuoteMeta(token)+`/submit"`)
	noHTML(t, r, `Complete these steps`)
	wantStatusCode(t, in.sdkForm(page+"/submit", url.Values{}), 303, "submit")

	// Waiting: the page refreshes itself without script; no way back yet.
	r = in.sdkGet(page)
	wantHTML(t, r, `id="waiting"`, `<noscript><meta http-equiv="refresh" content="5"></noscript>`)
	r = in.sdkGet(page + "/return")
	if r.Status != 303 || r.Header.Get("Location") != page {
		t.Errorf("return before the verdict: %d %q", r.Status, r.Header.Get("Location"))
	}
	wantStatusCode(t, in.sdkUpload(page+"/documents", "", part{name: "kind", value: "selfie"}, part{name: "file", data: jpegImage(t, 220, 240, 9)}), 409, "upload while in review")

	// The sandbox reviewer runs after review_delay: the verdict shows.
	in.advance(2 * time.Second)
	if v := in.sdkVerdict(token); v["reviewAnswer"] != "GREEN" {
		t.Fatalf("verdict %v", v)
	}
	if got := rc.reviewed(t, secret); got["reviewStatus"] != "completed" {
		t.Errorf("applicantReviewed %v", got)
	}
	r = in.sdkGet(page)
	// The way back is the returnUrl itself, its own parameters first.
	back := regexp.QuoteMeta("https://partner.example/done?from=kyc&externalUserId=walk1&reviewAnswer=GREEN")
	// The countdown's line is hidden until the script runs it: without
	// script nothing takes the applicant back but the button.
	wantHTML(t, r, `id="verdict"`, `You are verified`, `href="`+back+`"`, `id="countdown" data-seconds="5" aria-live="polite" hidden>`)
	noHTML(t, r, `http-equiv="refresh"`) // a countdown the applicant sees and can skip, not a meta refresh (WCAG 2.2.1)
	r = in.sdkGet(page + "/return")
	wantStatusCode(t, r, 303, "return")
	loc, err := url.Parse(r.Header.Get("Location"))
	if err != nil || loc.Host != "partner.example" || loc.Path != "/done" {
		t.Fatalf("return Location %q", r.Header.Get("Location"))
	}
	if q := loc.Query(); q.Get("externalUserId") != "walk1" || q.Get("reviewAnswer") != "GREEN" || q.Get("from") != "kyc" {
		t.Errorf("return query %v", q)
	}
	if strings.Contains(r.Header.Get("Location"), token) {
		t.Errorf("the token leaks to the returnUrl")
	}

	// The partner sees what the applicant did, as sdk.
	// Each call that gave data is applicant.updated by sdk: the personal
	// info and the two uploads (failed calls record nothing).
	want := []string{"enrollment.completed:system", "applicant.approved:system", "enrollment.submitted:sdk",
		"applicant.updated:sdk", "applicant.updated:sdk", "applicant.updated:sdk", "enrollment.created:partner",
		"enrollment.created:partner", "applicant.created:partner"}
	if h := in.historyTypes("walk1"); !slices.Equal(h, want) {
		t.Errorf("history %v, want %v", h, want)
	}
	// Each says what it was (the document's Hosted UI tag): personal info,
	// then the two uploads.
	var hist struct {
		Items []struct {
			EventType string
			Details   map[string]any
		}
	}
	in.expect(200, "GET", "/v1/applicants/walk1/review-history?eventType=applicant.updated", nil).json(t, &hist)
	var actions []any
	for _, it := range hist.Items {
		actions = append(actions, it.Details["action"])
	}
	if want := []any{"documents.uploaded", "documents.uploaded", "personal_info.changed"}; !slices.Equal(actions, want) {
		t.Errorf("applicant.updated actions %v, want %v", actions, want)
	}
	// consent.given is internal: the seed's partner-visible list is closed
	// (SPEC §3.3); the partner has consentGivenAtUtc, the console the entry.
	if _, f := errField(t, in.expect(400, "GET", "/v1/applicants/walk1/review-history?eventType=consent.given", nil)); f != "eventType" {
		t.Errorf("eventType=consent.given: field %q, want eventType", f)
	}
	if all, err := in.Store.ApplicantHistory(store.Sandbox, "walk1"); err != nil || !slices.ContainsFunc(all, func(h store.HistoryEntry) bool { return h.EventType == "consent.given" }) {
		t.Errorf("the stored history has no consent.given (err %v)", err)
	}
	a = in.expect(200, "GET", "/v1/applicants/walk1", nil).m(t)
	if docs := a["documents"].([]any); docs[0].(map[string]any)["country"] != "GBR" || docs[0].(map[string]any)["docType"] != "PASSPORT" {
		t.Errorf("identity document %v, want PASSPORT of GBR", docs[0])
	}
	if info := a["info"].(map[string]any); info["firstName"] != "Ada" || info["dateOfBirth"] != "1990-02-01" {
		t.Errorf("info %v", info)
	}
	if locked := a["lockedFields"].([]any); len(locked) != 0 {
		t.Errorf("fields filled in the hosted UI are locked: %v", locked)
	}
}

func TestSDKAPI(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("api1", "Green")
	token := in.sdkSession("api1", map[string]any{"ttlSecs": 600, "lang": "de", "theme": "dark", "returnUrl": "https://partner.example/back"})

	t.Run("State", func(t *testing.T) {
		r := in.sdkAPI("GET", "/api/v1/sdk/state", token, "")
		wantStatusCode(t, r, 200, "state")
		var st struct {
			Applicant              struct{ ExternalUserID, Type, LevelName string }
			Lang, Theme, ReturnURL string
			Steps                  []struct {
				Kind, ReviewStatus string
				HasData            bool
			}
			Fields []struct {
				Name   string
				Value  *string
				Locked bool
			}
			Verdict any
			Missing []string
		}
		r.json(t, &st)
		if st.Applicant.ExternalUserID != "api1" || st.Applicant.LevelName != "basic-kyc-level" || st.Lang != "de" || st.Theme != "dark" ||
			st.ReturnURL != "https://partner.example/back" || st.Verdict != nil {
			t.Errorf("state %s", r.Body)
		}
		if len(st.Steps) != 2 || st.Steps[0].Kind != "identity_doc" || st.Steps[0].ReviewStatus != "pending" || st.Steps[0].HasData {
			t.Errorf("steps %+v", st.Steps)
		}
		locked := map[string]bool{}
		for _, f := range st.Fields {
			locked[f.Name] = f.Locked
		}
		if len(st.Fields) != 7 || !locked["firstName"] || !locked["nationality"] || locked["email"] {
			t.Errorf("fields %s", r.Body)
		}
		if !slices.Equal(st.Missing, []string{"identity_doc", "selfie"}) {
			t.Errorf("missing %v", st.Missing)
		}
	})

	t.Run("ErrUnauthorized", func(t *testing.T) {
		for _, h := range [][]string{nil, {"Authorization", "Bearer "}, {"Authorization", "Basic " + token}, {"Authorization", "Bearer nope"}} {
			r := in.sdkSend("GET", "/api/v1/sdk/state", nil, "", h...)
			wantStatusCode(t, r, 401, "state "+strings.Join(h, " "))
			if r.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("401 without WWW-Authenticate")
			}
		}
		wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/personal-info", "nope", `{"email":"a@b.example"}`), 401, "personal-info")
		wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/submit", "nope", ""), 401, "submit")
		wantStatusCode(t, in.sdkUpload("/api/v1/sdk/documents", "nope", part{name: "kind", value: "selfie"}, part{name: "file", data: jpegImage(t, 220, 240, 1)}), 401, "documents")
		// The page of an unknown token: 410 page (SPEC §3.8).
		r := in.sdkGet("/sdk/nope")
		wantStatusCode(t, r, 410, "unknown page")
		wantHTML(t, r, `This verification link is not valid`)
	})

	t.Run("PersonalInfo", func(t *testing.T) {
		r := in.sdkAPI("POST", "/api/v1/sdk/personal-info", token, `{"email":"ada@example.com","firstName":"Eve"}`)
		wantStatusCode(t, r, 409, "locked field")
		if code, field := errField(t, r); code != "field_locked" || field != "firstName" {
			t.Errorf("locked: %s %s", code, field)
		}
		// The same value of a locked field changes nothing and passes.
		wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/personal-info", token, `{"firstName":"Ada"}`), 200, "same locked value")
		for body, field := range map[string]string{
			`{"email":"not-an-email"}`:          "email",
			`{"phone":"call me"}`:               "phone",
			`{"email":5}`:                       "email",
			`{"address":"1 Main St"}`:           "address", // not enabled by basic-kyc-level
			`{"email":"ada@example.com","x":1}`: "x",
			// As on the partner's API: exact names, each once.
			`{"email":"ada@example.com","email":"eve@example.com"}`: "email",
			`{"EMAIL":"ada@example.com"}`:                           "EMAIL",
			// Wrapped, a field is named as in the flat form.
			`{"fields":{"phone":"+49 30 1","phone":"+49 30 2"}}`: "phone",
			`{"fields":{"phone":5}}`:                             "phone",
			`{"info":{"email":"not-an-email"}}`:                  "email",
			// Flat and wrapped at once: the member beside the wrapper.
			`{"fields":{"phone":"+49 30 1"},"x":1}`: "x",
			`{"a":1,"info":{"phone":"+49 30 1"}}`:   "a",
		} {
			r := in.sdkAPI("POST", "/api/v1/sdk/personal-info", token, body)
			wantStatusCode(t, r, 400, body)
			if _, f := errField(t, r); f != field {
				t.Errorf("%s: field %q, want %q", body, f, field)
			}
		}
		wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/personal-info", token, `[1]`), 400, "not an object")
		r = in.sdkAPI("POST", "/api/v1/sdk/personal-info", token, `{"fields":{"firstName":"Eve"}}`)
		if code, field := errField(t, r); r.Status != 409 || code != "field_locked" || field != "firstName" {
			t.Errorf("wrapped fields: %d %s %s", r.Status, code, field)
		}
		r = in.sdkAPI("POST", "/api/v1/sdk/personal-info", token, `{"email":"ada@example.com","phone":"+49 30 1234567"}`)
		wantStatusCode(t, r, 200, "personal info")
		a := in.expect(200, "GET", "/v1/applicants/api1", nil).m(t)
		if info := a["info"].(map[string]any); info["email"] != "ada@example.com" || info["phone"] != "+49 30 1234567" {
			t.Errorf("info %v", info)
		}
		// The partner reopens a lock with null: the applicant may fill it in.
		in.expect(200, "PATCH", "/v1/applicants/api1", map[string]any{"firstName": nil})
		wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/personal-info", token, `{"firstName":"Eve"}`), 200, "reopened field")
	})

	t.Run("Documents", func(t *testing.T) {
		r := in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "selfie"}, part{name: "file", data: pngImage(t, 150, 300, 2)})
		wantStatusCode(t, r, 400, "small image")
		if _, f := errField(t, r); f != "file" {
			t.Errorf("small image: field %q", f)
		}
		r = in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "selfie"}, part{name: "file", data: []byte("%PDF-1.4\n%%EOF\n")})
		wantStatusCode(t, r, 400, "pdf selfie")
		for _, c := range []struct {
			parts []part
			field string
		}{
			{[]part{{name: "kind", value: "selfie"}}, "file"},
			{[]part{{name: "kind", value: "liveness"}, {name: "file", data: jpegImage(t, 220, 240, 3)}}, "kind"},
			{[]part{{name: "kind", value: "identity_doc"}, {name: "side", value: "top"}, {name: "file", data: pngImage(t, 240, 220, 3)}}, "side"},
			{[]part{{name: "kind", value: "identity_doc"}, {name: "docType", value: "LIBRARY_CARD"}, {name: "file", data: pngImage(t, 240, 220, 3)}}, "docType"},
		} {
			r := in.sdkUpload("/api/v1/sdk/documents", token, c.parts...)
			wantStatusCode(t, r, 400, c.field)
			if _, f := errField(t, r); f != c.field {
				t.Errorf("field %q, want %q", f, c.field)
			}
		}
		r = in.sdkSend("POST", "/api/v1/sdk/documents", []byte(`{"kind":"selfie"}`), "application/json", "Authorization", "Bearer "+token)
		wantStatusCode(t, r, 400, "json upload without image")
		if _, f := errField(t, r); f != "image" {
			t.Errorf("json upload: field %q", f)
		}
		r = in.sdkSend("POST", "/api/v1/sdk/documents", []byte(`{"kind":"selfie","image":"data:image/png;base64,`+b64(pngImage(t, 100, 100, 3))+`"}`), "application/json", "Authorization", "Bearer "+token)
		wantStatusCode(t, r, 400, "json upload of a small image")
		if _, f := errField(t, r); f != "image" {
			t.Errorf("json upload: field %q", f)
		}
		r = in.sdkSend("POST", "/api/v1/sdk/documents", []byte("--x--"), "text/plain", "Authorization", "Bearer "+token)
		wantStatusCode(t, r, 400, "plain text upload")
		// "image" is another name of the file part.
		r = in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "selfie"}, part{name: "image", data: []byte("nope")})
		if _, f := errField(t, r); r.Status != 400 || f != "file" {
			t.Errorf("image part: %d %q", r.Status, f)
		}

		r = in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "selfie"}, part{name: "file", data: jpegImage(t, 220, 240, 4)})
		wantStatusCode(t, r, 201, "selfie")
		var st struct {
			Documents []struct{ Kind, ContentType string }
			Missing   []string
		}
		r.json(t, &st)
		if len(st.Documents) != 1 || st.Documents[0].Kind != "selfie" || st.Documents[0].ContentType != "image/jpeg" || !slices.Equal(st.Missing, []string{"identity_doc"}) {
			t.Errorf("after selfie: %s", r.Body)
		}
	})

	t.Run("Submit", func(t *testing.T) {
		r := in.sdkAPI("POST", "/api/v1/sdk/submit", token, "")
		wantStatusCode(t, r, 409, "incomplete submit")
		if code, _ := errField(t, r); code != "missing_step_data" {
			t.Errorf("code %s", code)
		}
		r = in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "identity_doc"}, part{name: "docType", value: "ID_CARD"},
			part{name: "front", data: pngImage(t, 240, 220, 5)}, part{name: "back", data: []byte("%PDF-1.4\nbody\n%%EOF\n")})
		wantStatusCode(t, r, 201, "identity doc")
		a := in.expect(200, "GET", "/v1/applicants/api1", nil).m(t)
		if docs := a["documents"].([]any); len(docs) != 3 {
			t.Errorf("documents %v", docs)
		}
		r = in.sdkAPI("POST", "/api/v1/sdk/submit", token, "")
		wantStatusCode(t, r, 200, "submit")
		if st := r.m(t); st["inReview"] != true || st["reviewStatus"] != "in_review" {
			t.Errorf("after submit: %s", r.Body)
		}
		wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/submit", token, ""), 409, "second submit")
		in.advance(2 * time.Second)
		v := in.sdkVerdict(token)
		if v["reviewAnswer"] != "GREEN" || v["final"] != true {
			t.Errorf("verdict %v", v)
		}
		st := in.sdkAPI("GET", "/api/v1/sdk/state", token, "").m(t)
		if st["redirectUrl"] != "https://partner.example/back?externalUserId=api1&reviewAnswer=GREEN" {
			t.Errorf("redirectUrl %v", st["redirectUrl"])
		}
		h := in.historyTypes("api1")
		for _, want := range []string{"enrollment.submitted:sdk", "applicant.updated:sdk"} {
			if !slices.Contains(h, want) {
				t.Errorf("history %v lacks %s", h, want)
			}
		}
		if slices.Contains(h, "applicant.sent_to_review:partner") {
			t.Errorf("the hosted UI's submission is recorded as the partner's: %v", h)
		}
	})

	t.Run("Expired", func(t *testing.T) {
		in.advance(10 * time.Minute)
		r := in.sdkAPI("GET", "/api/v1/sdk/state", token, "")
		wantStatusCode(t, r, 401, "expired state")
		if code, _ := errField(t, r); code != "session_expired" {
			t.Errorf("code %s", code)
		}
		wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/personal-info", token, `{"email":"x@y.example"}`), 401, "expired personal-info")
		r = in.sdkGet("/sdk/" + token)
		wantStatusCode(t, r, 410, "expired page")
		// In the session's language and theme (issue 11, defect 3).
		wantHTML(t, r, `Dieser Prüfungslink ist abgelaufen`, `<html lang="de" class="theme-dark">`)
		if r.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("410 page without CSP")
		}
		wantStatusCode(t, in.sdkForm("/sdk/"+token+"/personal-info", url.Values{"email": {"x@y.example"}}), 410, "expired form post")
	})
}

// TestSDKQuestionnaireFormTakesAnswersAsTyped: the no-JS form stores what
// was typed, as the page API does. It trimmed every answer, so an option
// the levels API took with spaces around it (" padded ") could never be
// chosen and the flow could not finish, and a text lost its leading
// spaces and kept the CR LF a browser posts. A refused answer's control
// is tied to the error and takes the focus.
func TestSDKQuestionnaireFormTakesAnswersAsTyped(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/levels", map[string]any{
		"name": "typed", "applicantType": "individual",
		"steps": []map[string]any{{"kind": "questionnaire"}},
		"questionnaire": []map[string]any{
			{"id": "pick", "text": "Option with spaces", "type": "choice", "options": []string{" padded ", "Ja"}, "required": true},
			{"id": "role", "text": "Your role", "type": "text", "required": true},
			{"id": "pep", "text": "PEP?", "type": "boolean", "required": true},
		},
	})
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "typed1", "verificationLevelName": "typed"})
	token := in.sdkSession("typed1", nil)

	r := in.sdkForm("/sdk/"+token+"/questionnaire", url.Values{"q.pick": {" padded "}, "q.role": {"  Senior engineer\r\nsecond line"}})
	wantStatusCode(t, r, 400, "no answer to the yes/no question")
	wantHTML(t, r, `name="q\.pep" value="true" required aria-invalid="true" aria-describedby="error" autofocus>`)
	wantHTML(t, r, `name="q\.pep" value="false" aria-invalid="true" aria-describedby="error" autofocus>`)
	r = in.sdkForm("/sdk/"+token+"/questionnaire", url.Values{"q.pick": {" padded "}, "q.role": {"   "}, "q.pep": {"false"}})
	wantStatusCode(t, r, 400, "an answer of spaces alone")
	wantHTML(t, r, `<textarea id="q-role" name="q\.role" rows="3" maxlength="2000" required aria-invalid="true" aria-describedby="error" autofocus>`)

	wantStatusCode(t, in.sdkForm("/sdk/"+token+"/questionnaire", url.Values{"q.pick": {" padded "}, "q.role": {"  Senior engineer\r\nsecond line"}, "q.pep": {"false"}}), 303, "answers")
	a := in.expect(200, "GET", "/v1/applicants/typed1", nil).m(t)
	if q, _ := a["questionnaire"].(map[string]any); q["pick"] != " padded " || q["role"] != "  Senior engineer\nsecond line" || q["pep"] != false {
		t.Errorf("the applicant's questionnaire: %q", a["questionnaire"])
	}
}

// TestSDKLivenessAndQuestionnaire fills a full level through the API:
// guided liveness frames, proof of address as PDF, questionnaire answers.
func TestSDKLivenessAndQuestionnaire(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/levels", map[string]any{
		"name": "sdk-live", "applicantType": "individual",
		"steps":              []map[string]any{{"kind": "liveness"}, {"kind": "poa"}, {"kind": "questionnaire"}, {"kind": "aml"}},
		"personalInfoFields": []string{"firstName", "lastName"},
		"questionnaire": []map[string]any{
			{"id": "pep", "text": "PEP?", "type": "boolean", "required": true},
			{"id": "source", "text": "Source of funds", "type": "choice", "options": []string{"salary", "savings"}, "required": true},
			{"id": "note", "text": "Anything else?", "type": "text"},
		},
	})
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "live1", "verificationLevelName": "sdk-live", "firstName": "Lia", "lastName": "Green"})
	token := in.sdkSession("live1", nil)
	frames := func(n int) []part {
		ps := []part{{name: "kind", value: "liveness"}}
		for i := 0; i < n; i++ {
			ps = append(ps, part{name: "file", data: jpegImage(t, 220, 240, uint64(20+i))})
		}
		return ps
	}
	r := in.sdkUpload("/api/v1/sdk/documents", token, frames(2)...)
	wantStatusCode(t, r, 400, "two frames")
	if _, f := errField(t, r); f != "file" {
		t.Errorf("field %q", f)
	}
	bad := append(frames(2), part{name: "file", data: []byte("GIF89a")})
	r = in.sdkUpload("/api/v1/sdk/documents", token, bad...)
	wantStatusCode(t, r, 400, "bad frame")
	if _, f := errField(t, r); f != "file[2]" {
		t.Errorf("bad frame field %q", f)
	}
	wantStatusCode(t, in.sdkUpload("/api/v1/sdk/documents", token, frames(3)...), 201, "frames")
	wantStatusCode(t, in.sdkUpload("/api/v1/sdk/documents", token, frames(4)...), 201, "frames again")
	wantStatusCode(t, in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "poa"}, part{name: "file", data: []byte("%PDF-1.7\nx\n%%EOF")}), 201, "poa")

	// Questionnaire through the no-JS form: a bad choice, then good answers.
	r = in.sdkForm("/sdk/"+token+"/questionnaire", url.Values{"q.pep": {"false"}, "q.source": {"lottery"}})
	wantStatusCode(t, r, 400, "bad choice")
	wantHTML(t, r, `Please choose one of the options\.`)
	noHTML(t, r, `questionnaire\.source`)
	// A text answer is at most 2,000 characters (not bytes), and the page
	// says so rather than asking for an answer.
	r = in.sdkForm("/sdk/"+token+"/questionnaire", url.Values{"q.pep": {"false"}, "q.source": {"savings"}, "q.note": {strings.Repeat("é", 2001)}})
	wantStatusCode(t, r, 400, "long answer")
	wantHTML(t, r, `This answer is too long: at most 2,000 characters\.`)
	r = in.sdkForm("/sdk/"+token+"/ubos", url.Values{"fullName": {"Ann Owner"}, "roles": {"ubo"}})
	wantStatusCode(t, r, 400, "owner row of a person")
	wantHTML(t, r, `Beneficial owners belong to a company&#39;s verification; this one is for a person\.`)
	wantStatusCode(t, in.sdkForm("/sdk/"+token+"/questionnaire", url.Values{"q.pep": {"false"}, "q.source": {"savings"}, "q.note": {strings.Repeat("a\r\n", 1000)}}), 303, "2,000 characters with line breaks")
	wantStatusCode(t, in.sdkForm("/sdk/"+token+"/questionnaire", url.Values{"q.pep": {"false"}, "q.source": {"savings"}, "q.note": {strings.Repeat("é", 2000)}}), 303, "answers")
	// Every answer error names questionnaire.<id>: a wrong type, an
	// answer given twice (the first is not silently dropped), text that is
	// not UTF-8 or holds a control character.
	for body, field := range map[string]string{
		`{"pep":"maybe","source":"salary"}`:                          "questionnaire.pep",
		`{"pep":false,"source":"salary","source":"savings"}`:         "questionnaire.source",
		`{"pep":false,"source":"savings","note":"a\u0000b"}`:         "questionnaire.note",
		`{"pep":false,"source":"savings","note":"a\u0007b"}`:         "questionnaire.note",
		`{"pep":false,"source":"savings","note":"a\u0085b"}`:         "questionnaire.note",
		"{\"pep\":false,\"source\":\"savings\",\"note\":\"a\xffb\"}": "questionnaire.note",
	} {
		r = in.sdkAPI("POST", "/api/v1/sdk/questionnaire", token, body)
		wantStatusCode(t, r, 400, body)
		if _, f := errField(t, r); f != field {
			t.Errorf("%s: field %q, want %q", body, f, field)
		}
	}
	// The page says what is wrong with such an answer, not "please answer".
	r = in.sdkForm("/sdk/"+token+"/questionnaire", url.Values{"q.pep": {"false"}, "q.source": {"savings"}, "q.note": {"a\x07b"}})
	wantStatusCode(t, r, 400, "answer with a control character")
	wantHTML(t, r, `This text holds an invisible control character`)
	// A text answer keeps its line breaks and tabs (pasted from a sheet).
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/questionnaire", token, `{"pep":false,"source":"savings","note":"two\tcolumns\nlines"}`), 200, "answer with a tab, on two lines")
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/questionnaire", token, `{"pep":false,"source":"savings","note":"two\nlines"}`), 200, "answer on two lines")
	st := in.sdkAPI("GET", "/api/v1/sdk/state", token, "").m(t)
	qs := st["questionnaire"].([]any)
	if qs[0].(map[string]any)["answer"] != false || qs[1].(map[string]any)["answer"] != "savings" {
		t.Errorf("answers %v", qs)
	}
	a := in.expect(200, "GET", "/v1/applicants/live1", nil).m(t)
	// The partner reads the answers on the applicant, as they were given.
	if q, _ := a["questionnaire"].(map[string]any); q["pep"] != false || q["source"] != "savings" || q["note"] != "two\nlines" {
		t.Errorf("the applicant's questionnaire: %v", a["questionnaire"])
	}
	live := 0
	for _, d := range a["documents"].([]any) {
		if d.(map[string]any)["kind"] == "liveness" {
			live++
		}
	}
	if live != 4 {
		t.Errorf("liveness frames %d, want the last upload's 4", live)
	}
	// Submit takes no body, as POST …/review: anything but an empty body
	// or a JSON object is refused and changes nothing.
	for _, body := range []string{"garbage", "[1]", `"x"`} {
		r := in.sdkAPI("POST", "/api/v1/sdk/submit", token, body)
		if code, _ := errField(t, r); r.Status != 400 || code != "malformed_json" {
			t.Errorf("submit with %s: %d %s", body, r.Status, code)
		}
	}
	if rs := in.expect(200, "GET", "/v1/applicants/live1/status", nil).m(t)["reviewStatus"]; rs == "in_review" || rs == "completed" {
		t.Fatalf("a refused submit sent the applicant to review: %v", rs)
	}
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/submit", token, `{"any":"member"}`), 200, "submit")
	in.advance(2 * time.Second)
	if v := in.sdkVerdict(token); v["reviewAnswer"] != "GREEN" {
		t.Errorf("verdict %v", v)
	}
	if h := in.historyTypes("live1"); !slices.Contains(h, "aml.run:system") || !slices.Contains(h, "enrollment.submitted:sdk") {
		t.Errorf("history %v", h)
	}
}

// sdkSubmitted creates a basic-kyc-level applicant (last name Green, so the
// sandbox reviewer answers GREEN), and through a hosted session uploads its
// document front and selfie (images seeded from seed) and submits; it
// returns the session's token.
func (in *instance) sdkSubmitted(extID string, seed uint64) string {
	t := in.t
	t.Helper()
	in.createApplicant(extID, "Green")
	token := in.sdkSession(extID, nil)
	wantStatusCode(t, in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "identity_doc"}, part{name: "front", data: pngImage(t, 240, 220, seed)}), 201, "front")
	wantStatusCode(t, in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "selfie"}, part{name: "file", data: jpegImage(t, 220, 240, seed+1)}), 201, "selfie")
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/submit", token, ""), 200, "submit")
	return token
}

// TestSDKRetry: a RETRY verdict sends the applicant back to the step; new
// data and a second submission reach GREEN.
func TestSDKRetry(t *testing.T) {
	t.Parallel()
	in := start(t)
	token := in.sdkSubmitted("retry1", 30)
	in.expect(200, "POST", "/v1/applicants/retry1/sandbox/review", map[string]any{"reviewAnswer": "RED", "reviewRejectType": "RETRY", "rejectLabels": []string{"UNSATISFACTORY_PHOTOS"}})
	r := in.sdkGet("/sdk/" + token)
	wantHTML(t, r, `Please upload again`, `\?step=identity_doc">Identity document`)
	noHTML(t, r, `http-equiv="refresh"`)
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/submit", token, ""), 409, "submit without new data")
	wantStatusCode(t, in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "identity_doc"}, part{name: "front", data: pngImage(t, 240, 220, 32)}), 201, "front again")
	wantStatusCode(t, in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "selfie"}, part{name: "file", data: jpegImage(t, 220, 240, 33)}), 201, "selfie again")
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/submit", token, ""), 200, "resubmit")
	in.advance(2 * time.Second)
	deadline := time.After(10 * time.Second)
	for {
		v := in.sdkVerdict(token)
		if v["reviewAnswer"] == "GREEN" {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("verdict %v", v)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestSDKCompanyFlow: a company fills its data and documents in the hosted
// UI and submits; a missing required company field holds the submission.
func TestSDKCompanyFlow(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "co2", "type": "company", "companyName": "Acme GmbH", "country": "DEU"})
	token := in.sdkSession("co2", map[string]any{"returnUrl": "https://partner.example/kyb"})
	page := "/sdk/" + token
	for i, dt := range []string{"certificate_of_incorporation", "register_of_shareholders"} {
		r := in.sdkUpload(page+"/documents", "", part{name: "kind", value: "company_docs"}, part{name: "docType", value: dt},
			part{name: "file", data: pngImage(t, 300, 420, uint64(40+i))})
		wantStatusCode(t, r, 303, dt)
	}
	r := in.sdkForm(page+"/submit", url.Values{})
	wantStatusCode(t, r, 409, "submit without registrationNumber")
	wantHTML(t, r, `Please check: Registration number`)
	r = in.sdkForm(page+"/personal-info", url.Values{"registrationNumber": {"HRB 12345"}, "legalForm": {"GMBH"}, "companyName": {"Acme GmbH"}})
	wantStatusCode(t, r, 303, "company info")
	a := in.expect(200, "GET", "/v1/applicants/co2/company-info", nil).m(t)
	if a["registrationNumber"] != "HRB 12345" || a["legalForm"] != "gmbh" {
		t.Errorf("company info %v", a)
	}
	r = in.sdkForm(page+"/personal-info", url.Values{"companyName": {"Other Ltd"}})
	wantStatusCode(t, r, 409, "locked company name")
	wantHTML(t, r, `Company name was provided by the service and cannot be changed here.`)
	wantStatusCode(t, in.sdkForm(page+"/submit", url.Values{}), 303, "submit")
	wantHTML(t, in.sdkGet(page), `id="waiting"`)
	in.advance(2 * time.Second)
	if v := in.sdkVerdict(token); v["reviewAnswer"] != "GREEN" {
		t.Fatalf("verdict %v", v)
	}
	r = in.sdkGet(page + "/return")
	if r.Header.Get("Location") != "https://partner.example/kyb?externalUserId=co2&reviewAnswer=GREEN" {
		t.Errorf("return %q", r.Header.Get("Location"))
	}
}

// TestSDKProduction: in production the hosted UI waits for the operator's
// decision, then shows it.
func TestSDKProduction(t *testing.T) {
	t.Parallel()
	in := start(t)
	key, secret := in.credential(store.Production, store.RoleAdmin)
	prod := []string{"X-Api-Key", key, "X-Api-Secret", secret}
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "prod1", "firstName": "Pia", "lastName": "Stone", "dateOfBirth": "1980-01-02"}, prod...)
	var link struct{ Token string }
	in.expect(201, "POST", "/v1/applicants/prod1/verification-sessions", map[string]any{}, prod...).json(t, &link)
	token := link.Token
	wantStatusCode(t, in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "identity_doc"}, part{name: "front", data: pngImage(t, 240, 220, 50)}), 201, "front")
	wantStatusCode(t, in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "selfie"}, part{name: "file", data: jpegImage(t, 220, 240, 51)}), 201, "selfie")
	r := in.sdkAPI("POST", "/api/v1/sdk/submit", token, "")
	wantStatusCode(t, r, 200, "submit")
	if st := r.m(t); st["reviewStatus"] != "awaitingOperatorReview" || st["inReview"] != true {
		t.Errorf("after submit %s", r.Body)
	}
	wantHTML(t, in.sdkGet("/sdk/"+token), `id="waiting"`)
	in.expect(200, "POST", "/v1/admin/applicants/prod1/decision", map[string]any{"reviewAnswer": "RED", "reviewRejectType": "FINAL", "rejectLabels": []string{"FORGERY"}}, prod...)
	r = in.sdkGet("/sdk/" + token)
	wantHTML(t, r, `Verification not successful`, `data-answer="RED"`)
	noHTML(t, r, `/return`) // no returnUrl: nowhere to go back to
}

// sdkRoutes are the page API's calls with a valid body each.
func sdkAPICalls(t *testing.T, in *instance, token string) map[string]*response {
	t.Helper()
	return map[string]*response{
		"state":         in.sdkAPI("GET", "/api/v1/sdk/state", token, ""),
		"personal-info": in.sdkAPI("POST", "/api/v1/sdk/personal-info", token, `{"email":"a@b.example"}`),
		"documents":     in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "selfie"}, part{name: "file", data: jpegImage(t, 220, 240, 3)}),
		"questionnaire": in.sdkAPI("POST", "/api/v1/sdk/questionnaire", token, `{}`),
		"ubos":          in.sdkAPI("POST", "/api/v1/sdk/ubos", token, `{"fullName":"X","roles":["ubo"]}`),
		"submit":        in.sdkAPI("POST", "/api/v1/sdk/submit", token, ""),
	}
}

// sdkPageCalls are the page and its form posts.
func sdkPageCalls(t *testing.T, in *instance, token string) map[string]*response {
	t.Helper()
	page := "/sdk/" + token
	return map[string]*response{
		"page":          in.sdkGet(page),
		"return":        in.sdkGet(page + "/return"),
		"personal-info": in.sdkForm(page+"/personal-info", url.Values{"email": {"a@b.example"}}),
		"documents":     in.sdkUpload(page+"/documents", "", part{name: "kind", value: "selfie"}, part{name: "file", data: jpegImage(t, 220, 240, 4)}),
		"questionnaire": in.sdkForm(page+"/questionnaire", url.Values{}),
		"ubos":          in.sdkForm(page+"/ubos", url.Values{"fullName": {"X"}, "roles": {"ubo"}}),
		"submit":        in.sdkForm(page+"/submit", url.Values{}),
	}
}

// TestSDKAuditTokens: an unknown or expired token is 401 JSON from the
// page API and a 410 page from the hosted UI, for every call (SPEC §3.8).
func TestSDKAuditTokens(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("tok1", "Green")
	token := in.sdkSession("tok1", map[string]any{"ttlSecs": 60})

	check := func(token, code string) {
		t.Helper()
		for name, r := range sdkAPICalls(t, in, token) {
			wantStatusCode(t, r, 401, name)
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s: Content-Type %q", name, ct)
			}
			if c, _ := errField(t, r); c != code {
				t.Errorf("%s: code %q, want %q", name, c, code)
			}
		}
		for name, r := range sdkPageCalls(t, in, token) {
			wantStatusCode(t, r, 410, name+" page")
			if ct := r.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Errorf("%s page: Content-Type %q", name, ct)
			}
		}
	}
	check("no-such-token", "invalid_token")
	in.advance(61 * time.Second)
	check(token, "session_expired")
	wantHTML(t, in.sdkGet("/sdk/"+token), `This verification link has expired`)
	// A link retention removed after its expiry reads as unknown: the
	// page says it may have expired rather than that it was mistyped.
	wantHTML(t, in.sdkGet("/sdk/no-such-token"), `This verification link is not valid`, `It may have expired`)
}

// TestSDKExpiredAfterSubmission: a link that expires after its applicant
// submitted still answers 410 (SPEC §3.8), but its page does not send the
// applicant for a new link: the waiting page reloads into it when its poll
// meets the expiry, and a new link would change nothing while the review
// runs or once the verdict is final. A link that expired before submission
// still asks for a new one.
func TestSDKExpiredAfterSubmission(t *testing.T) {
	t.Parallel()
	in := start(t)
	submitted := func(extID, lastName string, body map[string]any) string {
		t.Helper()
		in.createApplicant(extID, lastName)
		token := in.sdkSession(extID, body)
		wantStatusCode(t, in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "identity_doc"}, part{name: "front", data: pngImage(t, 240, 220, 60)}), 201, extID+" front")
		wantStatusCode(t, in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "selfie"}, part{name: "file", data: jpegImage(t, 220, 240, 61)}), 201, extID+" selfie")
		wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/submit", token, ""), 200, extID+" submit")
		return token
	}
	green := submitted("exp-green", "Green", map[string]any{"ttlSecs": 60})
	waiting := submitted("exp-manual", "MANUAL", map[string]any{"ttlSecs": 60})
	german := submitted("exp-de", "Green", map[string]any{"ttlSecs": 60, "lang": "de"})
	retry := submitted("exp-retry", "RETRY", map[string]any{"ttlSecs": 60})
	in.createApplicant("exp-open", "Green")
	open := in.sdkSession("exp-open", map[string]any{"ttlSecs": 60})
	in.createApplicant("exp-erased", "Green")
	erased := in.sdkSession("exp-erased", map[string]any{"ttlSecs": 60})
	in.expect(204, "DELETE", "/v1/applicants/exp-erased", nil)
	in.advance(61 * time.Second)
	for _, extID := range []string{"exp-green", "exp-de", "exp-retry"} {
		in.waitReviewStatus(extID, "completed")
	}
	in.waitReviewStatus("exp-manual", "awaitingOperatorReview")

	for _, token := range []string{green, waiting} {
		r := in.sdkGet("/sdk/" + token)
		wantStatusCode(t, r, 410, "submitted, expired")
		wantHTML(t, r, `This verification link has expired`, `nothing more to do`)
		noHTML(t, r, `ask for a new link`)
	}
	r := in.sdkGet("/sdk/" + german)
	wantStatusCode(t, r, 410, "submitted, expired, de")
	wantHTML(t, r, `Dieser Prüfungslink ist abgelaufen`, `nichts mehr zu tun`)
	// RETRY wants new uploads, which take a new link; so does a link that
	// expired before its applicant submitted.
	for _, token := range []string{retry, open} {
		r := in.sdkGet("/sdk/" + token)
		wantStatusCode(t, r, 410, "expired")
		wantHTML(t, r, `ask for a new link`)
		noHTML(t, r, `nothing more to do`)
	}
	// An erased applicant can get no new link: the page does not send
	// the person to ask for one.
	r = in.sdkGet("/sdk/" + erased)
	wantStatusCode(t, r, 410, "erased, expired")
	wantHTML(t, r, `cannot be continued`)
	noHTML(t, r, `ask for a new link`, `nothing more to do`)
}

// TestSDKAuditReturnURL: the way back is the partner's returnUrl with
// externalUserId and reviewAnswer added after its own parameters, the same
// in the state, the page's link and refresh, and /return.
func TestSDKAuditReturnURL(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("ret1", "Green")
	token := in.sdkSession("ret1", map[string]any{"returnUrl": `https://partner.example/back?b=2&a=1&externalUserId=old&msg="hi"<b>#top`})
	wantStatusCode(t, in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "identity_doc"}, part{name: "front", data: pngImage(t, 240, 220, 60)}), 201, "front")
	wantStatusCode(t, in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "selfie"}, part{name: "file", data: jpegImage(t, 220, 240, 61)}), 201, "selfie")
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/submit", token, ""), 200, "submit")
	in.advance(2 * time.Second)
	in.sdkVerdict(token)

	want := "https://partner.example/back?b=2&a=1&msg=%22hi%22%3Cb%3E&externalUserId=ret1&reviewAnswer=GREEN#top"
	if got := in.sdkAPI("GET", "/api/v1/sdk/state", token, "").m(t)["redirectUrl"]; got != want {
		t.Errorf("redirectUrl %v, want %s", got, want)
	}
	r := in.sdkGet("/sdk/" + token + "/return")
	if r.Status != 303 || r.Header.Get("Location") != want {
		t.Errorf("return: %d %q", r.Status, r.Header.Get("Location"))
	}
	r = in.sdkGet("/sdk/" + token)
	wantHTML(t, r, `id="countdown"`, `<a class="button" href="`+regexp.QuoteMeta(want)+`" rel="noreferrer"`)
	noHTML(t, r, `"hi"`, `<b>`)
}

// TestSDKAuditLang: an unknown language is English in the page and in the
// state; the theme is light unless dark.
func TestSDKAuditLang(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("lang1", "Green")
	for _, c := range []struct{ lang, theme, wantLang, wantTheme, text string }{
		{"fr", "", "en", "light", "Identity verification"},
		{"DE", "dark", "de", "dark", "Identitätsprüfung"},
		{"", "light", "en", "light", "Identity verification"},
	} {
		body := map[string]any{}
		if c.lang != "" {
			body["lang"] = c.lang
		}
		if c.theme != "" {
			body["theme"] = c.theme
		}
		token := in.sdkSession("lang1", body)
		st := in.sdkAPI("GET", "/api/v1/sdk/state", token, "").m(t)
		if st["lang"] != c.wantLang || st["theme"] != c.wantTheme {
			t.Errorf("%v: state lang %v theme %v", c, st["lang"], st["theme"])
		}
		wantHTML(t, in.sdkGet("/sdk/"+token), `<html lang="`+c.wantLang+`" class="theme-`+c.wantTheme+`">`, c.text)
	}
}

// TestSDKAuditHistory: every page-API call that gives data is a partner-
// visible history event by sdk; a read is recorded internally only.
func TestSDKAuditHistory(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/levels", map[string]any{
		"name": "sdk-hist", "applicantType": "individual",
		"steps":              []map[string]any{{"kind": "selfie"}, {"kind": "questionnaire"}},
		"personalInfoFields": []string{"firstName", "email"},
		"questionnaire":      []map[string]any{{"id": "pep", "text": "PEP?", "type": "boolean", "required": true}},
	})
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "hist1", "verificationLevelName": "sdk-hist"})
	token := in.sdkNewSession("hist1", nil) // the page API asks for no consent
	sdkEvents := func() int {
		n := 0
		for _, h := range in.historyTypes("hist1") {
			if strings.HasSuffix(h, ":sdk") {
				n++
			}
		}
		return n
	}
	steps := []struct {
		name string
		call func() *response
		want int
	}{
		{"state", func() *response { return in.sdkAPI("GET", "/api/v1/sdk/state", token, "") }, 200},
		{"personal-info", func() *response {
			return in.sdkAPI("POST", "/api/v1/sdk/personal-info", token, `{"firstName":"Ida","email":"ida@example.com"}`)
		}, 200},
		{"documents", func() *response {
			return in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "selfie"}, part{name: "file", data: jpegImage(t, 220, 240, 70)})
		}, 201},
		{"questionnaire", func() *response { return in.sdkAPI("POST", "/api/v1/sdk/questionnaire", token, `{"pep":false}`) }, 200},
		{"submit", func() *response { return in.sdkAPI("POST", "/api/v1/sdk/submit", token, "") }, 200},
	}
	for _, s := range steps {
		before := sdkEvents()
		wantStatusCode(t, s.call(), s.want, s.name)
		added := sdkEvents() - before
		if s.name == "state" && added != 0 || s.name != "state" && added != 1 {
			t.Errorf("%s: %d partner-visible sdk events", s.name, added)
		}
	}
	want := []string{"enrollment.submitted:sdk", "applicant.updated:sdk", "applicant.updated:sdk", "applicant.updated:sdk", "enrollment.created:partner", "applicant.created:partner"}
	if h := in.historyTypes("hist1"); !slices.Equal(h, want) {
		t.Errorf("history %v, want %v", h, want)
	}

	// A refused call is a call too: an internal sdk entry names it, its
	// error code and field, and nothing else of it is kept. One with an
	// unknown token has no applicant to record it on.
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/personal-info", token, `{"email":"ida@example.net"}`), 409, "data after submit")
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/personal-info", "nope", `{"email":"nope"}`), 401, "unknown token")
	in.createApplicant("hist2", "Green")
	token2 := in.sdkNewSession("hist2", nil)
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/personal-info", token2, `{"email":"not-an-email","phone":"+49 30 1234567"}`), 400, "bad email")
	refused := func(id string) []map[string]any {
		all, err := in.Store.ApplicantHistory(store.Sandbox, id)
		if err != nil {
			t.Fatal(err)
		}
		var out []map[string]any
		for _, h := range all {
			if h.EventType == "sdk.call_refused" {
				if !h.Internal || h.ActorType != "sdk" {
					t.Errorf("%s: sdk.call_refused internal %v by %s", id, h.Internal, h.ActorType)
				}
				out = append(out, h.Details)
			}
		}
		return out
	}
	if got := refused("hist1"); len(got) != 1 || got[0]["call"] != "POST /api/v1/sdk/personal-info" || got[0]["code"] != "review_in_progress" {
		t.Errorf("hist1 refused calls %v", got)
	}
	if got := refused("hist2"); len(got) != 1 || got[0]["code"] != "validation_failed" || got[0]["field"] != "email" {
		t.Errorf("hist2 refused calls %v", got)
	}
	// The caller names the field: its entry keeps no more than 200 bytes
	// of the name, however long.
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/questionnaire", token2, `{"`+strings.Repeat("k", 100000)+`":"x"}`), 400, "a long unknown question")
	got := refused("hist2")
	if len(got) != 2 {
		t.Fatalf("hist2 refused calls: %d, want 2", len(got))
	}
	for _, d := range got {
		if f, _ := d["field"].(string); len(f) > 210 || f == "" {
			t.Errorf("a refused call kept a field name of %d bytes", len(f))
		}
	}
	if info := in.expect(200, "GET", "/v1/applicants/hist2", nil).m(t)["info"]; info != nil && info.(map[string]any)["phone"] != nil {
		t.Errorf("a refused call kept part of its data: %v", info)
	}
}

// TestSDKAuditCountryCase: a country code typed in lower case in a form is
// taken in upper case.
func TestSDKAuditCountryCase(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "case1"})
	token := in.sdkSession("case1", nil)
	wantStatusCode(t, in.sdkForm("/sdk/"+token+"/personal-info", url.Values{"nationality": {" deu "}}), 303, "nationality")
	if info := in.expect(200, "GET", "/v1/applicants/case1", nil).m(t)["info"].(map[string]any); info["nationality"] != "DEU" {
		t.Errorf("info %v", info)
	}
}

// TestSDKAuditUploadNames: the page API's multipart upload takes the names
// a partner may use: type for kind, idDocType for docType, a file part of
// any name.
func TestSDKAuditUploadNames(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "names1"})
	token := in.sdkSession("names1", nil)
	r := in.sdkUpload("/api/v1/sdk/documents", token, part{name: "type", value: "identity_doc"}, part{name: "idDocType", value: "ID_CARD"},
		part{name: "document", data: pngImage(t, 240, 220, 80)})
	wantStatusCode(t, r, 201, "identity_doc")
	r = in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "selfie"}, part{name: "selfie", data: jpegImage(t, 220, 240, 81)})
	wantStatusCode(t, r, 201, "selfie")
	var st struct {
		Documents []struct{ Kind, Side, DocType string }
		Missing   []string
	}
	r.json(t, &st)
	if len(st.Documents) != 2 || st.Documents[0].DocType != "ID_CARD" || st.Documents[0].Side != "front" || len(st.Missing) != 0 {
		t.Errorf("state %s", r.Body)
	}
}

// TestSDKAuditInfoWrapper: personal info may come as {"info": {...}}, the
// shape of the applicant's info.
func TestSDKAuditInfoWrapper(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("wrap1", "Green")
	token := in.sdkSession("wrap1", nil)
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/personal-info", token, `{"info":{"email":"w@example.com"}}`), 200, "info")
	r := in.sdkAPI("POST", "/api/v1/sdk/personal-info", token, `{"info":{"lastName":"Other"}}`)
	if code, field := errField(t, r); r.Status != 409 || code != "field_locked" || field != "lastName" {
		t.Errorf("locked in info: %d %s %s", r.Status, code, field)
	}
	if info := in.expect(200, "GET", "/v1/applicants/wrap1", nil).m(t)["info"].(map[string]any); info["email"] != "w@example.com" {
		t.Errorf("info %v", info)
	}
}

// TestSDKPageFormBodies: a form post over the 25 MiB limit is answered
// with the page in the applicant's language (413), not the API's JSON
// error, which a browser shows as text.
func TestSDKPageFormBodies(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("big1", "Green")
	token := in.sdkSession("big1", nil)
	r := in.sdkUpload("/sdk/"+token+"/documents", "", part{name: "kind", value: "selfie"}, part{name: "file", data: make([]byte, 26<<20)})
	wantStatusCode(t, r, 413, "oversize form upload")
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("Content-Type %q, want a page", ct)
	}
	wantHTML(t, r, `The upload is too large\.`)
	// The other forms keep the 1 MiB limit of every body, refused before
	// any handler: submit does not run.
	for _, form := range []string{"personal-info", "submit"} {
		r := in.sdkSend("POST", "/sdk/"+token+"/"+form, bytes.Repeat([]byte("a"), 2<<20), "application/x-www-form-urlencoded")
		wantStatusCode(t, r, 413, "oversize "+form+" form")
	}
	// Sent chunked, with no Content-Length, the same: the body is read up
	// to the limit before any handler (submit never reads its own).
	for _, path := range []string{"/sdk/" + token + "/submit", "/api/v1/sdk/submit"} {
		req, err := http.NewRequest("POST", in.URL+path, io.MultiReader(bytes.NewReader(bytes.Repeat([]byte("a"), 2<<20))))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 413 || req.ContentLength != 0 {
			t.Errorf("chunked oversize %s: %d (Content-Length %d), want 413", path, resp.StatusCode, req.ContentLength)
		}
	}
	if st := in.status("big1"); st["reviewStatus"] != "pending" {
		t.Errorf("an oversize submit changed the applicant: %v", st["reviewStatus"])
	}
	// A small chunked body still reaches its handler.
	req, _ := http.NewRequest("POST", in.URL+"/api/v1/sdk/personal-info", io.MultiReader(strings.NewReader(`{"email":"big1@example.com"}`)))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("a small chunked body: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// The API's JSON, or multipart junk, posted to a form that takes
	// url-encoded fields is refused, not taken as an empty form.
	for _, ct := range []string{"multipart/form-data; boundary=x", "application/json"} {
		r := in.sdkSend("POST", "/sdk/"+token+"/personal-info", []byte(`junk`), ct)
		wantStatusCode(t, r, 400, ct+" to the personal data form")
		wantHTML(t, r, `The form could not be read\.`)
	}
	// The page API still answers JSON.
	r = in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "selfie"}, part{name: "file", data: make([]byte, 26<<20)})
	if code, _ := errField(t, r); r.Status != 413 || code != "body_too_large" {
		t.Errorf("page API: %d %s", r.Status, code)
	}
}

// TestSDKTakesNoDataAfterGreen: GREEN is terminal (SPEC §3.5): the session
// that led to it cannot replace the approved data afterwards (409
// review_completed, through the page API and the page's forms), so the
// verdict never stands over data nobody reviewed; the state says so.
func TestSDKTakesNoDataAfterGreen(t *testing.T) {
	t.Parallel()
	in := start(t)
	token := in.sdkSubmitted("green1", 50)
	in.expect(200, "POST", "/v1/applicants/green1/sandbox/review", map[string]any{"reviewAnswer": "GREEN"})
	before := in.expect(200, "GET", "/v1/applicants/green1", nil).m(t)

	for _, r := range []*response{
		in.sdkAPI("POST", "/api/v1/sdk/personal-info", token, `{"email":"someone@example.com"}`),
		in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "selfie"}, part{name: "file", data: jpegImage(t, 220, 240, 52)}),
	} {
		wantStatusCode(t, r, 409, "data after GREEN")
		if code, _ := errField(t, r); code != "review_completed" {
			t.Errorf("code %s, want review_completed", code)
		}
	}
	r := in.sdkForm("/sdk/"+token+"/personal-info", url.Values{"email": {"someone@example.com"}})
	wantStatusCode(t, r, 409, "the page's form after GREEN")
	wantHTML(t, r, `Your verification is complete. Nothing more is needed.`)
	var st struct{ AcceptsData bool }
	in.sdkAPI("GET", "/api/v1/sdk/state", token, "").json(t, &st)
	if st.AcceptsData {
		t.Error("the state says the session accepts data after GREEN")
	}
	after := in.expect(200, "GET", "/v1/applicants/green1", nil).m(t)
	if fmt.Sprint(after["info"], after["documents"], after["review"]) != fmt.Sprint(before["info"], before["documents"], before["review"]) {
		t.Errorf("the applicant changed after GREEN:\n%v\n%v", before, after)
	}
}

// TestSDKCompanyDocumentHistoryNamesItsType: a company document uploaded
// the way the page's form sends it (its type in the file field's name,
// file.<docType>) is recorded in the history with that docType.
func TestSDKCompanyDocumentHistoryNamesItsType(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "co7", "type": "company", "companyName": "Acme GmbH", "country": "DEU"})
	token := in.sdkSession("co7", nil)
	r := in.sdkUpload("/sdk/"+token+"/documents", "", part{name: "kind", value: "company_docs"},
		part{name: "file.certificate_of_incorporation", data: pngImage(t, 300, 420, 60)})
	wantStatusCode(t, r, 303, "certificate of incorporation")
	var h struct {
		Items []struct {
			EventType string
			Details   map[string]any
		}
	}
	in.expect(200, "GET", "/v1/applicants/co7/review-history", nil).json(t, &h)
	found := false
	for _, e := range h.Items {
		if e.Details["action"] == "documents.uploaded" {
			found = true
			if e.Details["docType"] != "certificate_of_incorporation" {
				t.Errorf("%s details %v, want docType certificate_of_incorporation", e.EventType, e.Details)
			}
		}
	}
	if !found {
		t.Fatalf("no documents.uploaded event in %+v", h.Items)
	}
}

// TestSDKCompanyCountryInFlight: the hosted UI cannot change a company's
// country while its verification is in flight, as the partner's PATCH
// cannot (seed rule 5: level applicability depends on country; SPEC §2's
// in flight includes submitted).
func TestSDKCompanyCountryInFlight(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/levels", map[string]any{"name": "kyb-docs-only", "applicantType": "company",
		"steps":             []map[string]any{{"kind": "company_docs", "optional": false}},
		"companyDataFields": []string{"companyName", "country"}, "companyRequiredFields": []string{"companyName"},
		"companyRequiredDocuments": []string{"certificate_of_incorporation"}})
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "cty1", "type": "company", "verificationLevelName": "kyb-docs-only", "companyName": "Cty One"})
	token := in.sdkSession("cty1", nil)
	// Before the data is complete the applicant fills its country in.
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/personal-info", token, `{"country":"FRA"}`), 200, "country while pending")
	in.expect(201, "POST", "/v1/applicants/cty1/documents", map[string]any{"kind": "company_docs", "docType": "certificate_of_incorporation", "image": b64(jpegImage(t, 300, 400, 5))})
	wantStatus(t, in.status("cty1"), "submitted", nil, nil, 0)
	in.expect(409, "PATCH", "/v1/applicants/cty1/company-info", map[string]any{"country": "DEU"})

	r := in.sdkAPI("POST", "/api/v1/sdk/personal-info", token, `{"country":"DEU"}`)
	wantStatusCode(t, r, 409, "country while submitted")
	if code, field := errField(t, r); code != "review_in_progress" || field != "country" {
		t.Errorf("error %s/%s, want review_in_progress naming country", code, field)
	}
	wantStatusCode(t, in.sdkForm("/sdk/"+token+"/personal-info", url.Values{"companyName": {"Cty One"}, "country": {"MEX"}}), 409, "the form")
	// The same country again is no change.
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/personal-info", token, `{"country":"FRA"}`), 200, "same country")
	if c := in.expect(200, "GET", "/v1/applicants/cty1/company-info", nil).m(t)["country"]; c != "FRA" {
		t.Fatalf("country %v after the refused changes, want FRA", c)
	}
}

// TestSDKSubmitNeedsRequiredFields: the page marks a person's names and
// date of birth required (where the level collects them) and its submit
// holds to that, as it holds to consent: 409 missing_step_data naming the
// field, the page saying what is missing. The page API, for a partner's
// own interface, and the partner API leave them out: the level requires
// no personal field (seed 2.5).
func TestSDKSubmitNeedsRequiredFields(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "u6"})
	token := in.sdkSession("u6", nil)
	wantStatusCode(t, in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "identity_doc"}, part{name: "front", data: pngImage(t, 240, 220, 61)}), 201, "front")
	wantStatusCode(t, in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "selfie"}, part{name: "file", data: jpegImage(t, 220, 240, 62)}), 201, "selfie")
	r := in.sdkForm("/sdk/"+token+"/submit", url.Values{})
	wantStatusCode(t, r, 409, "the page's submit without names")
	wantHTML(t, r, `role="alert"`)
	wantStatus(t, in.status("u6"), "submitted", nil, nil, 0)
	wantStatusCode(t, in.sdkForm("/sdk/"+token+"/personal-info", url.Values{"firstName": {"Ada"}, "lastName": {"Lovelace"}, "dateOfBirth": {"1990-04-01"}}), 303, "names")
	wantStatusCode(t, in.sdkForm("/sdk/"+token+"/submit", url.Values{}), 303, "the page's submit")
	wantStatus(t, in.status("u6"), "in_review", nil, nil, 1)

	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "u8", "lastName": "Doe"})
	token = in.sdkNewSession("u8", nil)
	wantStatusCode(t, in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "identity_doc"}, part{name: "front", data: pngImage(t, 240, 220, 64)}), 201, "front")
	wantStatusCode(t, in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "selfie"}, part{name: "file", data: jpegImage(t, 220, 240, 65)}), 201, "selfie")
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/submit", token, ""), 200, "the page API's submit")
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "u7"})
	wantStatus(t, in.expect(200, "POST", "/v1/applicants/u7/verify", verifyBody(t, 63)).m(t), "completed", "GREEN", nil, 1)
}

// TestSDKFormAddressOpened: a form's address opened with GET (Enter in the
// address bar after a form came back with an error) leads back to the
// page, not to a bare JSON 405.
func TestSDKFormAddressOpened(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("get1", "Doe")
	token := in.sdkSession("get1", nil)
	for _, form := range []string{"consent", "personal-info", "documents", "questionnaire", "ubos", "submit"} {
		r := in.sdkSend("GET", "/sdk/"+token+"/"+form, nil, "")
		if r.Status != 303 || r.Header.Get("Location") != "/sdk/"+token {
			t.Errorf("GET %s: %d to %q, want 303 to the page", form, r.Status, r.Header.Get("Location"))
		}
	}
	if r := in.sdkSend("GET", "/sdk/"+token+"/elsewhere", nil, ""); r.Status != 404 {
		t.Errorf("GET an address that is no form: %d, want 404", r.Status)
	}
}

// TestSDKConsentKeepsRequestedStep: an applicant who opens a new session at
// a step (a RETRY's "upload again" link) gives consent first and then lands
// on that step, not on the first one.
func TestSDKConsentKeepsRequestedStep(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("again1", "Doe")
	token := in.sdkNewSession("again1", nil)
	r := in.sdkGet("/sdk/" + token + "?step=selfie")
	wantHTML(t, r, `id="consent-form"`, `name="step" value="selfie"`)
	r = in.sdkForm("/sdk/"+token+"/consent", url.Values{"consent": {"yes"}, "step": {"selfie"}})
	if r.Status != 303 || r.Header.Get("Location") != "/sdk/"+token+"?step=selfie" {
		t.Fatalf("consent: %d to %q, want 303 to the selfie step", r.Status, r.Header.Get("Location"))
	}
	// A step the level does not have is no step: the first open one.
	in.createApplicant("again2", "Doe")
	token = in.sdkNewSession("again2", nil)
	noHTML(t, in.sdkGet("/sdk/"+token+"?step=liveness"), `name="step"`)
	r = in.sdkForm("/sdk/"+token+"/consent", url.Values{"consent": {"yes"}, "step": {"liveness"}})
	if r.Status != 303 || r.Header.Get("Location") != "/sdk/"+token+"?step=personal" {
		t.Fatalf("consent with an unknown step: %d to %q, want the first step", r.Status, r.Header.Get("Location"))
	}
}

// TestSDKRepeatedCallsAreOneEntry: each call of the page's API is an sdk
// history event (SPEC §3.8), but a page on its waiting view reads the
// state every few seconds, for as long as it stays open, and the history
// of an applicant is never removed by retention. A run of the same call
// (the same state read, the same refused call) is one internal entry that
// counts the calls and says when the last came; a call in between starts
// a new entry. Partner-visible history is unchanged.
func TestSDKRepeatedCallsAreOneEntry(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("poll1", "Green")
	token := in.sdkSession("poll1", nil)
	entries := func(eventType string) []store.HistoryEntry {
		t.Helper()
		all, err := in.Store.ApplicantHistory(store.Sandbox, "poll1")
		if err != nil {
			t.Fatal(err)
		}
		var out []store.HistoryEntry
		for _, h := range all {
			if h.EventType == eventType {
				out = append(out, h)
			}
		}
		return out
	}
	visible := len(in.historyTypes("poll1"))
	for range 30 {
		wantStatusCode(t, in.sdkAPI("GET", "/api/v1/sdk/state", token, ""), 200, "state")
		in.Clock.Advance(5 * time.Second)
	}
	reads := entries("sdk.state_read")
	if len(reads) != 1 || fmt.Sprint(reads[0].Details["calls"]) != "30" || reads[0].Details["lastAtUtc"] == nil {
		t.Fatalf("30 state reads in a row: %d entries %+v, want one that counts 30", len(reads), reads)
	}
	if n := len(in.historyTypes("poll1")); n != visible {
		t.Errorf("partner-visible history %d entries, was %d", n, visible)
	}

	// A change in between starts a new run.
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/personal-info", token, `{"email":"poll@example.net"}`), 200, "personal-info")
	wantStatusCode(t, in.sdkAPI("GET", "/api/v1/sdk/state", token, ""), 200, "state")
	if reads := entries("sdk.state_read"); len(reads) != 2 || reads[0].Details["calls"] != nil {
		t.Errorf("a read after a change: %+v, want a second entry of one call", reads)
	}

	// The same refused call repeated is one entry too; another refusal is
	// its own.
	for range 5 {
		wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/personal-info", token, `{"email":"not-an-email"}`), 400, "bad email")
	}
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/personal-info", token, `{"phone":"x"}`), 400, "bad phone")
	refused := entries("sdk.call_refused")
	if len(refused) != 2 || refused[0].Details["field"] != "phone" || refused[1].Details["field"] != "email" || fmt.Sprint(refused[1].Details["calls"]) != "5" {
		t.Errorf("refused calls: %+v, want the phone's and one counting 5 of the email's", refused)
	}
}

// TestSDKReviewSummaryAfterRetry: after a RED RETRY the review step's
// summary does not tick the steps the reviewer asked for again (it said
// "Identity document ✓" right above "Complete these steps before you
// submit: Identity document"); once uploaded again they are ticked.
func TestSDKReviewSummaryAfterRetry(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("sum-retry", "Retry")
	in.expect(200, "POST", "/v1/applicants/sum-retry/verify", verifyBody(t, 96))
	token := in.sdkSession("sum-retry", nil)
	r := in.sdkGet("/sdk/" + token + "?step=review")
	wantStatusCode(t, r, 200, "review")
	wantHTML(t, r, `<li class="">Identity document</li>`, `<li class="">Selfie</li>`, `Complete these steps before you submit`)
	noHTML(t, r, `Identity document ✓`, `Selfie ✓`)

	in.expect(200, "PATCH", "/v1/applicants/sum-retry", map[string]any{"lastName": "Lovelace"})
	in.expect(201, "POST", "/v1/applicants/sum-retry/documents", map[string]any{"kind": "identity_doc", "image": b64(pngImage(t, 220, 220, 97))})
	r = in.sdkGet("/sdk/" + token + "?step=review")
	wantHTML(t, r, `<li class="done">Identity document ✓</li>`, `<li class="">Selfie</li>`)
}

// TestSDKDocTypeKept: the identity document type chosen stays chosen when
// the upload comes back with an error, and on the step after an upload (a
// retake, a photo-quality warning): it went back to the first type, so a
// retake sent a passport for a driving licence.
func TestSDKDocTypeKept(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("dt-kept", "Green")
	page := "/sdk/" + in.sdkSession("dt-kept", nil)
	fake := "fake.jpg"
	r := in.sdkUpload(page+"/documents", "", part{name: "kind", value: "identity_doc"}, part{name: "country", value: "GBR"},
		part{name: "docType", value: "DRIVERS"}, part{name: "front", data: []byte("not an image"), filename: &fake})
	wantStatusCode(t, r, 400, "a front that is no image")
	wantHTML(t, r, `<option value="DRIVERS" selected>`)
	noHTML(t, r, `<option value="PASSPORT" selected>`)

	wantStatusCode(t, in.sdkUpload(page+"/documents", "", part{name: "kind", value: "identity_doc"}, part{name: "country", value: "GBR"},
		part{name: "docType", value: "DRIVERS"}, part{name: "front", data: pngImage(t, 400, 300, 98)}), 303, "upload")
	r = in.sdkGet(page + "?step=identity_doc")
	wantHTML(t, r, `<option value="DRIVERS" selected>`)
}
