package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/complybox/complybox/server/hostedui"
	"github.com/complybox/complybox/store/imagequality"
)

// Browser tests of the hosted verification UI (SPEC §3.8): an applicant in
// headless Chromium, from the link the partner sends to the partner's
// returnUrl.

// partnerSite is the partner's page that returnUrl points at: it records
// the query it was called with.
type partnerSite struct {
	*httptest.Server
	got chan url.Values
}

func newPartnerSite(t *testing.T) *partnerSite {
	ps := &partnerSite{got: make(chan url.Values, 10)}
	ps.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/done" {
			ps.got <- r.URL.Query()
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><html lang="en"><head><title>Partner</title><link rel="icon" href="data:,"></head><body><main><h1>Back at the partner</h1></main></body></html>`))
	}))
	t.Cleanup(ps.Close)
	return ps
}

// session opens a verification session for extID and returns the path of
// its short link and its hosted-UI page.
func (in *instance) session(extID string, body map[string]any) (short, page string) {
	in.t.Helper()
	var s struct{ URL, ShortURL string }
	in.expect(201, "POST", "/v1/applicants/"+extID+"/verification-sessions", body).json(in.t, &s)
	su, err := url.Parse(s.ShortURL)
	if err != nil {
		in.t.Fatal(err)
	}
	pu, err := url.Parse(s.URL)
	if err != nil {
		in.t.Fatal(err)
	}
	return su.Path, pu.Path
}

// reviewStatus reads the applicant's aggregate status.
func (in *instance) reviewStatus(extID string) (status, answer string) {
	in.t.Helper()
	return in.reviewStatusIn(extID, nil)
}

// reviewStatusIn reads the applicant's aggregate status with the request
// headers headers (another environment's credential).
func (in *instance) reviewStatusIn(extID string, headers []string) (status, answer string) {
	in.t.Helper()
	var s struct {
		ReviewStatus string
		ReviewAnswer *string
	}
	in.expect(200, "GET", "/v1/applicants/"+extID+"/status", nil, headers...).json(in.t, &s)
	if s.ReviewAnswer != nil {
		answer = *s.ReviewAnswer
	}
	return s.ReviewStatus, answer
}

// review lets the sandbox reviewer run: the clock passes review_delay and
// the dispatcher works off what is due.
func (in *instance) review(extID string) {
	in.t.Helper()
	in.advance(3 * time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if st, _ := in.reviewStatus(extID); st == "completed" {
			return
		}
		if time.Now().After(deadline) {
			st, _ := in.reviewStatus(extID)
			in.t.Fatalf("%s is %s 10s after the review delay", extID, st)
		}
		runtimeYield()
	}
}

// consent passes the intro page: it shows want (what will be asked, in
// the page's language), passes axe-core, and the consent box ticked and
// the button lead to the first step.
func (tb *tab) consent(want ...string) {
	tb.t.Helper()
	tb.waitFor("#intro")
	tb.contains(want...)
	tb.a11y()
	tb.click("input[name=consent]")
	tb.submit("#consent-form button[type=submit]")
	tb.waitFor("section.step")
}

// issuingCountry answers the identity document's first question, the
// issuing country, with code (the form is a plain GET form).
func (tb *tab) issuingCountry(code string) {
	tb.t.Helper()
	tb.waitFor("#country-form")
	tb.run(chromedp.SetValue(chromedp.CSS("#country-form select[name=country]"), code))
	tb.submit("#country-form button[type=submit]")
	tb.waitFor("#id-doc-form")
}

// TestBrowserIndividualPhone walks basic-kyc-level on a phone: the short
// link, the prefilled personal data, the identity document, the selfie,
// submission, the waiting view, the GREEN verdict with its visible
// countdown and the return to the partner with externalUserId and
// reviewAnswer. Every page passes axe-core.
func TestBrowserIndividualPhone(t *testing.T) {
	t.Parallel()
	in := start(t, servedAtPublicURL(t))
	site := newPartnerSite(t)
	in.createApplicant("phone-1", "Lovelace")
	short, _ := in.session("phone-1", map[string]any{"returnUrl": site.URL + "/done?from=kyc"})

	tb := in.chrome(t, phone)
	tb.open(short)
	// The intro says what will be asked; without the box ticked the
	// browser does not send the form (the server refuses it too:
	// TestSDKFormFlow).
	tb.waitFor("#intro")
	tb.contains("Before you start", "your personal details", "a photo of an identity document", "a photo of your face (selfie)",
		"I agree that my personal data")
	tb.lacks("Step 1 of", "Liveness")
	tb.a11y()
	tb.shot("hosted-intro-phone")
	tb.click("#consent-form button[type=submit]")
	if !eval[bool](tb, `document.querySelector('input[name=consent]').validity.valueMissing`) || tb.count("#intro") != 1 {
		t.Fatal("the intro went on without the consent box ticked")
	}
	tb.consent()
	tb.contains("Identity verification", "Step 1 of")
	if v := eval[string](tb, `document.querySelector("input[name=lastName]").value`); v != "Lovelace" {
		t.Fatalf("lastName shows %q, want the partner's Lovelace", v)
	}
	// The partner's nationality is picked in the (locked) list.
	if v := eval[string](tb, `document.querySelector('select[name=nationality]').value`); v != "GBR" {
		t.Errorf("nationality select shows %q, want the partner's GBR", v)
	}
	tb.a11y()
	tb.shot("hosted-personal-phone")
	tb.submit("form[action$='/personal-info'] button[type=submit]")

	// The issuing country first, starting on the nationality.
	tb.contains("Identity document", "Issuing country")
	if v := eval[string](tb, `document.querySelector('#country-form select[name=country]').value`); v != "GBR" {
		t.Errorf("the issuing country starts on %q, want the nationality GBR", v)
	}
	tb.a11y()
	tb.issuingCountry("GBR")
	tb.contains("Identity document", "Choose a photo or file")
	tb.a11y()
	// The native file control is hidden; the page's own button is in
	// English. Choosing shows a preview and a "Retake" button.
	if o := eval[string](tb, `getComputedStyle(document.querySelector('input[name=front]')).opacity`); o != "0" {
		t.Errorf("the native file control shows (opacity %s)", o)
	}
	tb.upload("input[name=front]", tb.file("passport.png", pngImage(t, 400, 300, 1)))
	tb.waitFor(".picked img")
	if w := value(tb, chromedp.Evaluate[int](`new Promise(r => { const i = document.querySelector('.picked img'); i.complete ? r(i.naturalWidth) : i.onload = () => r(i.naturalWidth); })`, chromedp.EvalAwaitPromise)); w != 400 {
		t.Errorf("the preview is %d px wide, want the chosen 400", w)
	}
	// The preview holds its room before its image has decoded: an image
	// without a source, in the same box, is as tall as the loaded one, so
	// the Continue button does not move under a tap (nor under the test's
	// click, which aims at where the button was).
	if h := value(tb, chromedp.Evaluate[[]float64](`(() => { const box = document.querySelector('.picked');
		const probe = document.createElement('img'); probe.alt = ''; box.prepend(probe);
		const empty = probe.getBoundingClientRect().height; probe.remove();
		return [empty, box.querySelector('img').getBoundingClientRect().height]; })()`)); len(h) != 2 || h[0] != h[1] || h[0] == 0 {
		t.Errorf("preview heights before and after its image loaded: %v, want equal and not 0", h)
	}
	tb.contains("Retake")
	tb.a11y()
	tb.shot("hosted-document-preview-phone")
	tb.submit("form[action$='/documents'] button[type=submit]")

	tb.contains("Selfie")
	tb.a11y()
	tb.upload("input[type=file][name=file]", tb.file("selfie.jpg", jpegImage(t, 300, 400, 2)))
	tb.submit("form[action$='/documents'] button[type=submit]")

	tb.contains("Review and submit")
	tb.a11y()
	tb.submit("form[action$='/submit'] button[type=submit]")

	tb.waitFor("#waiting")
	tb.a11y()
	in.review("phone-1")
	tb.waitFor("#verdict")
	tb.contains("You are verified")
	tb.a11y()
	tb.shot("hosted-verdict-phone")
	if n := tb.count(`meta[http-equiv=refresh]`); n != 0 {
		t.Errorf("the verdict page has %d meta refresh; the countdown is a script with a button", n)
	}
	tb.waitFor("#countdown")
	select {
	case q := <-site.got:
		if q.Get("externalUserId") != "phone-1" || q.Get("reviewAnswer") != "GREEN" || q.Get("from") != "kyc" {
			t.Fatalf("returnUrl called with %v", q)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the verdict page did not go on to returnUrl")
	}
	if u := tb.location(); !strings.HasPrefix(u, site.URL+"/done?") {
		t.Fatalf("the browser is at %s", u)
	}
}

// TestBrowserRetry: the sandbox reviewer rejects with RETRY. The verdict
// page says why in words (the label as a sentence), its main button leads
// into the step to redo (not back to the partner), the step no longer
// shows "Uploaded" but the reason; the applicant uploads again and
// resubmits, and the second review is GREEN.
func TestBrowserRetry(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("retry-1", "RETRY")
	_, page := in.session("retry-1", map[string]any{"returnUrl": "https://partner.example/back"})
	in.expect(200, "POST", "/v1/applicants/retry-1/verify", verifyBody(t, 61))
	if st, answer := in.reviewStatus("retry-1"); st != "completed" || answer != "RED" {
		t.Fatalf("after verify: %s %s", st, answer)
	}

	tb := in.chrome(t, phone)
	tb.open(page)
	tb.waitFor("#verdict")
	tb.contains("Please upload again", "The photos could not be used. Please take clear, well-lit photos")
	tb.lacks("UNSATISFACTORY_PHOTOS")
	tb.a11y()
	tb.shot("hosted-retry-phone")
	if href := eval[string](tb, `document.querySelector('#redo-start').getAttribute('href')`); !strings.Contains(href, "?step=") {
		t.Fatalf("the main button of a RETRY leads to %q, want a step to redo", href)
	}
	if n := tb.count(`#redo a[href*="?step="]`); n == 0 {
		t.Fatal("the steps to redo are not links")
	}
	tb.submit("#redo-start")
	// Its data came through the API: before it gives data in the hosted
	// UI, the intro asks for consent, then leads to the step to redo.
	tb.consent("Before you start")
	tb.waitFor("#retry-note")
	tb.contains("please provide again", "The photos could not be used")
	tb.lacks("✓ Uploaded")
	tb.a11y()

	// The partner corrects the name; the applicant uploads again.
	in.expect(200, "PATCH", "/v1/applicants/retry-1", map[string]any{"lastName": "Lovelace"})
	for guard := 0; guard < 4; guard++ {
		step := eval[string](tb, `document.querySelector('section.step').getAttribute('data-step')`)
		if step == "review" {
			break
		}
		switch step {
		case "identity_doc":
			tb.upload("input[name=front]", tb.file("front.png", pngImage(t, 400, 300, 62)))
		case "selfie":
			tb.upload("input[type=file][name=file]", tb.file("selfie.jpg", jpegImage(t, 300, 400, 63)))
		default:
			t.Fatalf("unexpected step %q after a RETRY", step)
		}
		tb.submit("section.step form button[type=submit]")
	}
	tb.contains("Review and submit")
	tb.submit("form[action$='/submit'] button[type=submit]")
	tb.waitFor("#waiting")
	in.review("retry-1")
	tb.waitFor("#verdict[data-answer=GREEN]")
	tb.contains("You are verified")
}

// TestBrowserCompany: a company on kyb-level with two required documents
// and two beneficial owners. The documents step stays until both are
// there; the company waits in_review after its own review until both
// children are verified, then closes GREEN.
func TestBrowserCompany(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "acme", "type": "company", "companyName": "Acme GmbH",
		"country": "DEU", "ubos": []map[string]any{
			{"fullName": "Anna Schmidt", "dateOfBirth": "1980-02-02", "ownershipPercent": 60, "roles": []string{"ubo", "director"}},
			{"fullName": "Bob Jones", "dateOfBirth": "1970-03-03", "ownershipPercent": 30, "roles": []string{"ubo"}}}})
	_, page := in.session("acme", map[string]any{})

	tb := in.chrome(t, desktop)
	tb.open(page)
	tb.consent("your company's details", "the company's documents", "the company's beneficial owners")
	tb.contains("Company verification", "Company information")
	tb.a11y()
	tb.fill("input[name=registrationNumber]", "HRB 12345")
	tb.submit("form[action$='/personal-info'] button[type=submit]")

	tb.contains("Company documents", "0 of 2 documents uploaded", "Certificate of incorporation", "Register of shareholders")
	if n := tb.count("form[action$='/documents']"); n != 1 {
		t.Fatalf("%d document forms, want one documents step", n)
	}
	tb.a11y()
	tb.upload("input[name='file.certificate_of_incorporation']", tb.file("cert.png", pngImage(t, 300, 420, 71)))
	// The register's input is required while it is missing: the browser
	// would not submit the form; a person without it leaves it out.
	tb.run(chromedp.RemoveAttribute(chromedp.CSS("input[name='file.register_of_shareholders']"), "required"))
	tb.submit("#company-docs button[type=submit]")
	tb.contains("Company documents", "1 of 2 documents uploaded", "still needed")
	tb.shot("hosted-company-docs")
	tb.upload("input[name='file.register_of_shareholders']", tb.file("register.png", pngImage(t, 300, 420, 72)))
	tb.submit("#company-docs button[type=submit]")

	tb.lacks("still needed")
	tb.submit("nav.steps a[href$='?step=ubo']")
	tb.contains("Beneficial owners", "Anna Schmidt", "Bob Jones", "not invited yet")
	tb.a11y()
	tb.submit("a[href$='?step=review']")
	tb.submit("form[action$='/submit'] button[type=submit]")
	tb.waitFor("#waiting")
	in.advance(3 * time.Second)

	// Its own steps are reviewed; the company waits for its owners.
	children := []string{}
	for i := range 2 {
		children = append(children, in.spawn(201, "acme", i, nil).ChildExternalUserID)
	}
	deadline := time.Now().Add(10 * time.Second)
	for st, _ := in.reviewStatus("acme"); st != "in_review"; st, _ = in.reviewStatus("acme") {
		if time.Now().After(deadline) {
			t.Fatalf("company is %s after its own review, want in_review", st)
		}
		runtimeYield()
	}
	in.expect(200, "POST", "/v1/applicants/"+children[0]+"/verify", verifyBody(t, 73))
	if st, answer := in.reviewStatus("acme"); st != "in_review" {
		t.Fatalf("one of two owners verified: company %s %s, want in_review", st, answer)
	}
	tb.contains("Thank you") // still waiting
	in.expect(200, "POST", "/v1/applicants/"+children[1]+"/verify", verifyBody(t, 74))
	if st, answer := in.reviewStatus("acme"); st != "completed" || answer != "GREEN" {
		t.Fatalf("both owners verified: company %s %s, want completed GREEN", st, answer)
	}
	tb.waitFor("#verdict[data-answer=GREEN]")
	tb.a11y()
}

// TestBrowserGermanDarkAndLinks: a session in German with the dark theme
// passes axe-core (contrast included); its expired short link shows the
// friendly page in German and dark; an unknown short link the friendly
// page too, never JSON, each with the hosted UI's CSP.
func TestBrowserGermanDarkAndLinks(t *testing.T) {
	t.Parallel()
	in := start(t, servedAtPublicURL(t), func(o *options) {
		// A partner's branding, in dark: axe checks the accent's contrast.
		o.branding = hostedui.Branding{Name: "Acme Bank", Logo: pngImage(t, 120, 40, 3), LogoType: "image/png",
			Accent: "#0b6e4f", SupportEmail: "help@acme.example"}
		o.quality = imagequality.DefaultThresholds()
	})
	// No nationality from the partner: the applicant picks it.
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "de-1", "firstName": "Ada", "lastName": "Lovelace", "dateOfBirth": "1990-04-01"})
	short, _ := in.session("de-1", map[string]any{"lang": "de", "theme": "dark", "ttlSecs": 600})

	tb := in.chrome(t, phone)
	tb.open(short)
	tb.consent("Bevor Sie beginnen", "Acme Bank bittet uns", "ein Foto eines Ausweisdokuments", "Ich bin einverstanden, dass Acme Bank")
	tb.contains("Identitätsprüfung", "Persönliche Angaben", "Schritt 1 von", "Fragen? Schreiben Sie an", "help@acme.example")
	if c := eval[string](tb, `document.documentElement.className`); c != "theme-dark" {
		t.Fatalf("html class %q", c)
	}
	if w := eval[int](tb, `document.querySelector('.brand img').naturalWidth`); w != 120 {
		t.Errorf("the partner's logo is %d px wide, want 120", w)
	}
	if bg := eval[string](tb, `getComputedStyle(document.querySelector('button[type=submit]')).backgroundColor`); bg != "rgb(11, 110, 79)" {
		t.Errorf("the main button is %s, want the partner's accent", bg)
	}
	// Nationality is picked from the countries in German, ISO alpha-3
	// underneath; the search box narrows the list.
	if l := eval[string](tb, `document.querySelector('select[name=nationality] option[value=DEU]').textContent`); l != "Deutschland" {
		t.Errorf("DEU reads %q in German", l)
	}
	tb.run(chromedp.SendKeys("input.country-search", "österr"))
	if v := eval[string](tb, `document.querySelector('select[name=nationality]').value`); v != "AUT" {
		t.Errorf("searching österr picks %q, want AUT", v)
	}
	// A search that ends matching nothing leaves no country chosen: "zz"
	// matched Brazzaville on the way to "zzz", which stayed picked.
	clear := chromedp.Evaluate[bool](`document.querySelector('input.country-search').value = ''; true`)
	value(tb, clear)
	tb.run(chromedp.SendKeys("input.country-search", "zzz"))
	if v := eval[string](tb, `document.querySelector('select[name=nationality]').value`); v != "" {
		t.Errorf("searching zzz leaves %q chosen, want none", v)
	}
	value(tb, clear)
	tb.run(chromedp.SendKeys("input.country-search", "österr"))
	if v := eval[string](tb, `document.querySelector('select[name=nationality]').value`); v != "AUT" {
		t.Errorf("searching österr again picks %q, want AUT", v)
	}
	// A country the person picked stays when a later search matches
	// nothing (the English "Deutschland" of a German speaker, say).
	value(tb, chromedp.Evaluate[bool](`(() => { const s = document.querySelector('select[name=nationality]'); s.value = 'DEU';
		s.dispatchEvent(new Event('change')); return true; })()`))
	value(tb, clear)
	tb.run(chromedp.SendKeys("input.country-search", "zzz"))
	if v := eval[string](tb, `document.querySelector('select[name=nationality]').value`); v != "DEU" {
		t.Errorf("a search matching nothing turned the person's DEU into %q", v)
	}
	value(tb, clear)
	tb.run(chromedp.SendKeys("input.country-search", "österr"))
	tb.a11y()
	tb.shot("hosted-de-dark-phone")
	tb.submit("form[action$='/personal-info'] button[type=submit]")
	tb.contains("Ausstellendes Land")
	tb.issuingCountry("AUT")
	tb.upload("input[name=front]", tb.file("front.txt", []byte("not an image")))
	tb.expectError("status of 400")
	tb.submit("form[action$='/documents'] button[type=submit]")
	tb.contains("Bitte prüfen: Vorderseite", "Bitte wählen Sie ein Foto (JPEG oder PNG) oder ein PDF-Dokument.")
	tb.lacks("must be", "front")
	tb.a11y()
	// A dark photo is kept with a warning in words and a way on.
	tb.upload("input[name=front]", tb.file("dark.png", blackPNG(t, 800, 600)))
	tb.submit("form[action$='/documents'] button[type=submit]")
	tb.contains("Bitte prüfen Sie Ihr Foto", "Es ist zu dunkel", "Trotzdem weiter")
	tb.a11y()
	tb.shot("hosted-quality-de-dark")

	in.advance(11 * time.Minute)
	tb.expectError("status of 410")
	tb.open(short)
	tb.contains("Dieser Prüfungslink ist abgelaufen")
	if c := eval[string](tb, `document.documentElement.className`); c != "theme-dark" {
		t.Fatalf("expired page html class %q", c)
	}
	tb.a11y()

	tb.expectError("status of 410")
	tb.open("/l/nope")
	tb.contains("This verification link is not valid")
	tb.a11y()
	tb.shot("hosted-link-not-found")
	r := doRequest(t, "GET", in.URL+"/l/nope", nil, "Accept", "text/html")
	if r.Status != 410 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") || r.Header.Get("Content-Security-Policy") == "" {
		t.Fatalf("/l/nope: %d %s CSP %q", r.Status, r.Header.Get("Content-Type"), r.Header.Get("Content-Security-Policy"))
	}
	if r := doRequest(t, "GET", in.URL+"/l/nope", nil, "Accept", "application/json"); r.Status != 404 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("/l/nope asking for JSON: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	if r := doRequest(t, "GET", in.URL+"/favicon.ico", nil); r.Status != 200 || len(r.Body) == 0 {
		t.Fatalf("/favicon.ico: %d", r.Status)
	}
}

// TestBrowserFullLevelCamera walks full-kyc-level, every step kind, with
// the camera steps taken by Chromium's fake camera (selfie and the guided
// liveness frames) and the document steps as file uploads, to GREEN.
func TestBrowserFullLevelCamera(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "full-1", "verificationLevelName": "full-kyc-level",
		"firstName": "Ada", "lastName": "Lovelace", "dateOfBirth": "1990-04-01"})
	_, page := in.session("full-1", map[string]any{})

	tb := in.chrome(t, phone)
	tb.open(page)
	tb.consent("a short liveness check", "a proof of address", "sanctions and watch lists")
	tb.submit("form[action$='/personal-info'] button[type=submit]")
	for guard := 0; guard < 8; guard++ {
		step := eval[string](tb, `document.querySelector('section.step').getAttribute('data-step')`)
		if step == "review" {
			break
		}
		tb.a11y()
		switch step {
		case "personal":
			tb.submit("form[action$='/personal-info'] button[type=submit]")
			continue
		case "identity_doc":
			tb.issuingCountry("DEU")
			tb.upload("input[name=front]", tb.file("front.png", pngImage(t, 400, 300, 91)))
		case "selfie":
			// Cancel closes the camera; focus goes back to "Use camera",
			// not to the page's start (the focused button is gone).
			tb.click("section.step button.camera-open")
			tb.waitFor("div.camera video")
			// Once the video has its size, the buttons under it stop
			// moving: a click aimed before that can land on the video.
			value(tb, chromedp.Poll[bool](`document.querySelector('div.camera video').videoWidth > 0`))
			tb.click("div.camera button.secondary")
			if f := tb.focused(); f != "button.camera-open" {
				t.Errorf("after Cancel focus is on %s, want the Use camera button", f)
			}
			tb.click("section.step button.camera-open")
			tb.waitFor("div.camera video")
			value(tb, chromedp.Poll[bool](`document.querySelector('div.camera video').videoWidth > 0`))
			tb.click("div.camera button:not(.secondary)")
			tb.waitFor("div.thumbs p.hint")
			tb.capturedAnnounced()
			tb.a11y()
			tb.shot("hosted-selfie-camera")
		case "liveness":
			tb.click("section.step button.camera-open")
			tb.waitFor("div.camera video")
			value(tb, chromedp.Poll[bool](`document.querySelector('div.camera video').videoWidth > 0`))
			for i := 1; i <= 3; i++ {
				tb.click("div.camera button:not(.secondary)")
				value(tb, chromedp.Poll[bool](fmt.Sprintf(`document.querySelectorAll('div.thumbs img').length >= %d`, i)))
			}
			tb.waitFor("div.thumbs p.hint")
			tb.capturedAnnounced()
			if n := eval[int](tb, `document.querySelector('input[data-liveness]').files.length`); n != 3 {
				t.Fatalf("liveness input holds %d frames", n)
			}
		case "poa":
			tb.upload("input[type=file][name=file]", tb.file("bill.pdf", []byte("%PDF-1.7\nx\n%%EOF")))
		case "questionnaire":
			value(tb, chromedp.Evaluate[bool](`document.querySelectorAll('section.step input[type=radio][value=false]').forEach(e => e.checked = true);
				document.querySelectorAll('section.step select').forEach(s => { s.selectedIndex = 1 });
				document.querySelectorAll('section.step textarea').forEach(a => { a.value = 'Salary' }); true`))
		default:
			t.Fatalf("unexpected step %q", step)
		}
		tb.submit("section.step form button[type=submit]")
	}
	tb.contains("Review and submit")
	tb.lacks("Complete these steps")
	tb.submit("form[action$='/submit'] button[type=submit]")
	tb.waitFor("#waiting")
	in.review("full-1")
	tb.waitFor("#verdict[data-answer=GREEN]")
}

// TestBrowserVerdictWithoutScript: with script off, the final verdict's
// page shows the button back to the partner and not the countdown's line,
// which only the script makes true ("You will be taken back in a few
// seconds"); the hidden attribute wins over the stylesheet.
func TestBrowserVerdictWithoutScript(t *testing.T) {
	t.Parallel()
	in := start(t, servedAtPublicURL(t))
	in.sdkSubmitted("noscript-1", 70)
	in.expect(200, "POST", "/v1/applicants/noscript-1/sandbox/review", map[string]any{"reviewAnswer": "GREEN"})
	var s struct{ URL string }
	in.expect(201, "POST", "/v1/applicants/noscript-1/verification-sessions", map[string]any{"returnUrl": "https://partner.example/done"}).json(t, &s)
	tb := in.chrome(t, phone)
	tb.run(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	}))
	tb.open(s.URL)
	tb.waitFor("#verdict")
	tb.contains("You are verified")
	if n := tb.count("#return"); n != 1 {
		t.Fatalf("%d buttons back to the partner, want 1", n)
	}
	if shown := tb.bodyText(); strings.Contains(shown, "taken back") || strings.Contains(shown, "Stay on this page") {
		t.Errorf("without script the page promises an automatic return or a way to stop one: %q", shown)
	}
	// axe-core needs script; the same page passes it in
	// TestBrowserIndividualPhone.
}

// TestBrowserVerdictStay: the final verdict's countdown back to the
// partner can be turned off (WCAG 2.2.1). "Stay on this page" is a
// button next to Continue; after it the line says so, focus is on
// Continue, and the page stays however long the applicant reads it; then
// Continue leads to returnUrl with externalUserId and reviewAnswer. The
// page's timers run on Chromium's virtual time, which the test advances.
func TestBrowserVerdictStay(t *testing.T) {
	t.Parallel()
	in := start(t)
	site := newPartnerSite(t)
	in.sdkSubmitted("stay-1", 76)
	in.expect(200, "POST", "/v1/applicants/stay-1/sandbox/review", map[string]any{"reviewAnswer": "GREEN"})
	_, page := in.session("stay-1", map[string]any{"returnUrl": site.URL + "/done"})

	tb := in.chrome(t, phone)
	tb.open(page)
	tb.virtualTime(emulation.VirtualTimePolicyPause, 0) // from here the countdown waits for the test
	tb.waitFor("#verdict")
	tb.waitFor("#countdown")
	tb.contains("You are verified", "Taking you back in", "Stay on this page")
	tb.shot("hosted-verdict-stay") // axe runs on this page in TestBrowserIndividualPhone (it needs timers)
	tb.click("#stay")
	tb.contains("You stay on this page")
	tb.lacks("Taking you back", "Stay on this page")
	if id := eval[string](tb, `document.activeElement.id`); id != "return" {
		t.Errorf("after Stay focus is on %q, want the Continue button", id)
	}
	t0 := eval[float64](tb, `performance.now()`)
	tb.virtualTime(emulation.VirtualTimePolicyAdvance, 30000) // 30 s later
	// Polls the browser, not the clock under test.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if u := tb.location(); !strings.HasSuffix(u, page) {
			t.Fatalf("after Stay the page went on to %s", u)
		}
		if eval[float64](tb, `performance.now()`) >= t0+29000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("virtual time did not advance")
		}
	}
	select {
	case q := <-site.got:
		t.Fatalf("after Stay the browser went to returnUrl with %v", q)
	default:
	}
	tb.contains("You stay on this page")
	tb.virtualTime(emulation.VirtualTimePolicyAdvance, 0) // timers run again, for axe
	tb.a11y()

	tb.click("#return")
	select {
	case q := <-site.got:
		if q.Get("externalUserId") != "stay-1" || q.Get("reviewAnswer") != "GREEN" {
			t.Fatalf("returnUrl called with %v", q)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Continue did not lead to returnUrl")
	}
}

// virtualTime sets the tab's virtual-time policy; a budget (virtual
// milliseconds) lets the page's timers run that far, then pauses them.
func (tb *tab) virtualTime(policy emulation.VirtualTimePolicy, budget float64) {
	tb.t.Helper()
	tb.run(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		p := emulation.SetVirtualTimePolicyParams{Policy: policy}
		if budget > 0 {
			p.Budget = &budget
		}
		_, err := cdp.Call(ctx, tg, emulation.SetVirtualTimePolicy, p)
		return err
	}))
}

// focused names the focused element: its tag and first class, or "body".
func (tb *tab) focused() string {
	tb.t.Helper()
	return eval[string](tb, `(e => e.tagName.toLowerCase() + (e.classList.length ? '.' + e.classList[0] : '') +
		(e.closest('.picked') ? ' in .picked' : ''))(document.activeElement)`)
}

// capturedAnnounced fails unless, after a camera capture, the photo's
// confirmation ("Photo taken") and the preview are status regions that a
// screen reader announces (WCAG 4.1.3), and focus moved to the preview's
// Retake button rather than falling to the page (the focused capture
// button is gone).
func (tb *tab) capturedAnnounced() {
	tb.t.Helper()
	if r := eval[string](tb, `document.querySelector('div.thumbs p.hint').closest('[role=status],[aria-live]') ? 'yes' : 'no'`); r != "yes" {
		tb.t.Error("the camera's confirmation is in no status region")
	}
	if r := eval[string](tb, `String(document.querySelector('section.step .picked').getAttribute('role'))`); r != "status" {
		tb.t.Errorf("the preview's role is %s, want status", r)
	}
	if f := tb.focused(); f != "button in .picked" {
		tb.t.Errorf("after the capture focus is on %s, want the preview's Retake button", f)
	}
}

// TestBrowserCountdownLastSecond: the countdown back to the partner
// counts down in words a person reads, "in 2 seconds" then "in 1
// second" ("1 seconds" was wrong), in English and German, on Chromium's
// virtual time.
func TestBrowserCountdownLastSecond(t *testing.T) {
	t.Parallel()
	in := start(t)
	site := newPartnerSite(t)
	for _, c := range []struct{ lang, two, one string }{
		{"en", "Taking you back in 2 seconds…", "Taking you back in 1 second…"},
		{"de", "Sie werden in 2 Sekunden zurückgeleitet…", "Sie werden in 1 Sekunde zurückgeleitet…"},
	} {
		id := "count-" + c.lang
		in.sdkSubmitted(id, 77)
		in.expect(200, "POST", "/v1/applicants/"+id+"/sandbox/review", map[string]any{"reviewAnswer": "GREEN"})
		_, page := in.session(id, map[string]any{"returnUrl": site.URL + "/done", "lang": c.lang})
		tb := in.chrome(t, phone)
		tb.open(page)
		tb.virtualTime(emulation.VirtualTimePolicyPause, 0)
		tb.waitFor("#countdown")
		text := func(want string) {
			t.Helper()
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				got := eval[string](tb, `document.getElementById('countdown').textContent`)
				if got == want {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: the countdown says %q, want %q", c.lang, got, want)
				}
			}
		}
		tb.virtualTime(emulation.VirtualTimePolicyAdvance, 3000) // 5, 4, 3, 2
		text(c.two)
		tb.virtualTime(emulation.VirtualTimePolicyAdvance, 1000)
		text(c.one)
	}
}

// TestBrowserSubmitOnce: a second tap on a form's button while the first
// submission is on its way sends nothing (a double tap on "Submit"
// answered 409 over the waiting view), and a waiting view that is the
// answer to a form (a submission that found the applicant already sent)
// comes back by GET when the verdict arrives, never by posting the form
// again (the verdict page then carried "nothing new to send").
func TestBrowserSubmitOnce(t *testing.T) {
	t.Parallel()
	in := start(t)
	for _, id := range []string{"twice-1", "twice-2"} {
		in.createApplicant(id, "Green")
		in.expect(201, "POST", "/v1/applicants/"+id+"/documents", map[string]any{"kind": "identity_doc", "image": b64(pngImage(t, 220, 220, 93))})
		in.expect(201, "POST", "/v1/applicants/"+id+"/documents", map[string]any{"kind": "selfie", "image": b64(jpegImage(t, 220, 220, 94))})
	}

	_, page := in.session("twice-1", map[string]any{})
	tb := in.chrome(t, phone)
	tb.open(page + "?step=review")
	tb.consent()
	tb.waitFor("form[action$='/submit']")
	sent := eval[[]bool](tb, `(() => {
		const seen = [];
		document.addEventListener('submit', e => seen.push(e.defaultPrevented));
		const f = document.querySelector("form[action$='/submit']");
		f.requestSubmit();
		f.requestSubmit();
		return seen;
	})()`)
	if len(sent) != 2 || sent[0] || !sent[1] {
		t.Errorf("two submissions in a row: sent as prevented %v, want the first sent and the second held back", sent)
	}
	tb.waitFor("#waiting")
	tb.lacks("not possible")

	// A submission stopped on its way (Esc, a lost connection) can be
	// made again once the double tap's two seconds have passed.
	in.createApplicant("again-1", "Green")
	_, page = in.session("again-1", map[string]any{})
	tb = in.chrome(t, phone)
	tb.open(page + "?step=identity_doc")
	tb.consent()
	tb.issuingCountry("GBR")
	sent = eval[[]bool](tb, `(() => {
		const seen = [];
		document.addEventListener('submit', e => { seen.push(e.defaultPrevented); e.preventDefault(); });
		const f = document.querySelector("form[action$='/documents']");
		f.noValidate = true; // no file chosen: the test's own listener stops both
		f.querySelector('button[type=submit]').click();
		f.setAttribute('data-sent', String(Date.now() - 2500)); // the first, 2.5 s ago, stopped
		f.querySelector('button[type=submit]').click();
		return seen;
	})()`)
	if len(sent) != 2 || sent[0] || sent[1] {
		t.Errorf("a submission 2.5 s after one that was stopped: prevented %v, want both sent", sent)
	}

	_, page = in.session("twice-2", map[string]any{})
	tb = in.chrome(t, phone)
	tb.open(page + "?step=review")
	tb.consent()
	tb.waitFor("form[action$='/submit']")
	in.expect(200, "POST", "/v1/applicants/twice-2/review", nil) // sent meanwhile, elsewhere
	tb.expectError("status of 409")
	tb.submit("form[action$='/submit'] button[type=submit]")
	tb.waitFor("#waiting")
	in.review("twice-2")
	tb.waitFor("#verdict[data-answer=GREEN]")
	tb.lacks("nothing new")
	if n := tb.count("#error"); n != 0 {
		t.Errorf("the verdict page shows an error: %s", tb.bodyText())
	}
	if loc := tb.location(); !strings.HasSuffix(loc, page) {
		t.Errorf("the verdict is at %s, want the page %s", loc, page)
	}

	// Back from the partner's returnUrl to the verdict, which the
	// countdown left: it is not loaded again (a new countdown would send
	// the applicant on to the partner once more).
	site := newPartnerSite(t)
	in.createApplicant("back-2", "Green")
	in.expect(200, "POST", "/v1/applicants/back-2/verify", verifyBody(t, 99))
	_, page = in.session("back-2", map[string]any{"returnUrl": site.URL + "/done"})
	tb = in.chrome(t, phone)
	tb.open(page)
	tb.waitFor("#countdown")
	verdict := eval[string](tb, `String(performance.timeOrigin)`)
	select {
	case <-site.got:
	case <-time.After(20 * time.Second):
		t.Fatal("the countdown did not lead to returnUrl")
	}
	tb.waitNewDocument(verdict)
	partner := eval[string](tb, `String(performance.timeOrigin)`)
	eval[any](tb, `history.back()`) // a page from the back/forward cache fires no load event
	tb.waitNewDocument(partner)
	if !eval[bool](tb, `!!document.querySelector('#verdict')`) {
		t.Fatalf("Back from returnUrl: not the verdict, at %s", tb.location())
	}
	if origin := eval[string](tb, `String(performance.timeOrigin)`); origin != verdict {
		t.Errorf("Back from returnUrl loaded the verdict page again (a new countdown)")
	}
	// And it counts down no more, restored or loaded anew (a browser
	// without the cache): the applicant came back on purpose.
	quiet := `(() => { const c = document.querySelector('#countdown'); return !!c && c.hidden && !document.querySelector('#stay'); })()`
	for i := 0; !eval[bool](tb, quiet); i++ {
		if i == 100 {
			t.Fatal("the verdict restored by Back still counts down")
		}
		time.Sleep(20 * time.Millisecond) // polls the browser, not the clock under test
	}
	tb.open(page)
	if !eval[bool](tb, quiet) {
		t.Error("the verdict loaded again after the applicant went back to the partner counts down again")
	}

	// Back to a step just done: the browser's back/forward cache would
	// show it as it was left (no "✓ Uploaded", the file required again);
	// the page loads afresh.
	in.createApplicant("back-1", "Green")
	_, page = in.session("back-1", map[string]any{})
	tb = in.chrome(t, phone)
	tb.open(page + "?step=identity_doc")
	tb.consent()
	tb.issuingCountry("GBR")
	tb.upload("input[name=front]", tb.file("front.png", pngImage(t, 400, 300, 95)))
	tb.waitFor(".picked img")
	left := eval[string](tb, `String(performance.timeOrigin)`) // the document Back would restore
	tb.submit("form[action$='/documents'] button[type=submit]")
	tb.contains("Selfie")
	tb.run(chromedp.NavigateBack())
	tb.waitNewDocument(left)
	tb.waitFor("section.step[data-step=identity_doc]")
	tb.contains("✓ Uploaded")
}

// TestBrowserLongOwnerName: an owner's name of one long word wraps on a
// phone; the owners step never scrolls sideways (WCAG 1.4.10 reflow).
func TestBrowserLongOwnerName(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("long-owner", "Long GmbH", map[string]any{"fullName": "Hubert " + strings.Repeat("Wolfeschlegel", 12), "roles": []string{"director"}})
	_, page := in.session("long-owner", map[string]any{})
	tb := in.chrome(t, phone)
	tb.open(page + "?step=ubo")
	tb.consent()
	tb.waitFor(".rows .name")
	if w := eval[int](tb, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("the owners step is %d px wide at 390 px", w)
	}
	tb.a11y()
}

// TestBrowserLongQuestion: a question whose text is one long word (a URL)
// wraps on a phone (the page was 1170 px wide at 390), and a question the
// server refuses takes the focus, tied to the error.
func TestBrowserLongQuestion(t *testing.T) {
	t.Parallel()
	in := start(t)
	long := "See https://docs.partner.example/compliance/" + strings.Repeat("source-of-funds-", 6) + "policy before you answer"
	in.expect(201, "POST", "/v1/levels", map[string]any{
		"name": "long-question", "applicantType": "individual",
		"steps": []map[string]any{{"kind": "questionnaire"}},
		"questionnaire": []map[string]any{
			{"id": "pep", "text": long, "type": "boolean", "required": true},
			{"id": "role", "text": long, "type": "text", "required": true},
		},
	})
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "long-q", "verificationLevelName": "long-question"})
	_, page := in.session("long-q", map[string]any{})
	tb := in.chrome(t, phone)
	tb.open(page + "?step=questionnaire")
	tb.consent()
	tb.waitFor("textarea[name='q.role']")
	if w := eval[int](tb, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("the questionnaire is %d px wide at 390 px", w)
	}
	tb.a11y()
	// The browser's own checks off, as when the server is the one to
	// refuse: the answer of spaces alone is refused and focused.
	value(tb, chromedp.Evaluate[bool](`document.querySelectorAll('[required]').forEach(e => e.removeAttribute('required'));
		document.querySelector("input[name='q.pep'][value=false]").checked = true; true`))
	tb.run(chromedp.SendKeys("textarea[name='q.role']", "   "))
	tb.expectError("status of 400")
	tb.submit("form[action$='/questionnaire'] button[type=submit]")
	tb.waitFor("#error")
	if id := eval[string](tb, `document.activeElement.name + ' ' + document.activeElement.getAttribute('aria-describedby')`); id != "q.role error" {
		t.Errorf("focused after the refused answer: %q, want the question's control described by the error", id)
	}
	if w := eval[int](tb, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("the refused questionnaire is %d px wide at 390 px; widest: %s", w, eval[string](tb, `Array.from(document.querySelectorAll('body *')).filter(e => e.getBoundingClientRect().right > 391).slice(0, 6).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).join('; ')`))
	}
	tb.a11y()
}
