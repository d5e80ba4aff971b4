package server_test

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

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
	wantHTML(t, in.sdkGet("/sdk/no-such-token"), `Verification link not found`)
}

// TestSDKAuditReturnURL: the way back is the partner's returnUrl with
// externalUserId and reviewAnswer added after its own parameters, the same
// in the state, the page's link and refresh, and /return.
func TestSDKAuditReturnURL(t *testing.T) {
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
	wantHTML(t, r, `<meta http-equiv="refresh" content="5;url=`+regexp.QuoteMeta(want)+`">`,
		`<a class="button" href="`+regexp.QuoteMeta(want)+`" rel="noreferrer"`)
	noHTML(t, r, `"hi"`, `<b>`)
}

// TestSDKAuditLang: an unknown language is English in the page and in the
// state; the theme is light unless dark.
func TestSDKAuditLang(t *testing.T) {
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
	in := start(t)
	in.expect(201, "POST", "/v1/levels", map[string]any{
		"name": "sdk-hist", "applicantType": "individual",
		"steps":              []map[string]any{{"kind": "selfie"}, {"kind": "questionnaire"}},
		"personalInfoFields": []string{"firstName", "email"},
		"questionnaire":      []map[string]any{{"id": "pep", "text": "PEP?", "type": "boolean", "required": true}},
	})
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "hist1", "verificationLevelName": "sdk-hist"})
	token := in.sdkSession("hist1", nil)
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
}

// TestSDKAuditCountryCase: a country code typed in lower case in a form is
// taken in upper case.
func TestSDKAuditCountryCase(t *testing.T) {
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
