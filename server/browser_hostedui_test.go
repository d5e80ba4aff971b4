package server_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
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
	var s struct {
		ReviewStatus string
		ReviewAnswer *string
	}
	in.expect(200, "GET", "/v1/applicants/"+extID+"/status", nil).json(in.t, &s)
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
	tb.contains("Identity verification", "Step 1 of")
	if v := eval[string](tb, `document.querySelector("input[name=lastName]").value`); v != "Lovelace" {
		t.Fatalf("lastName shows %q, want the partner's Lovelace", v)
	}
	tb.a11y()
	tb.shot("hosted-personal-phone")
	tb.submit("form[action$='/personal-info'] button[type=submit]")

	tb.contains("Identity document")
	tb.a11y()
	tb.upload("input[name=front]", tb.file("passport.png", pngImage(t, 400, 300, 1)))
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
