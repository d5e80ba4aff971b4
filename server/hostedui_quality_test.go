package server_test

import (
	"bytes"
	"image"
	"image/png"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/complybox/complybox/store/imagequality"
)

// blackPNG is a w×h black PNG: too dark, and flat (blurry).
func blackPNG(t testing.TB, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestHostedImageQuality: an uploaded photo that fails a check is kept
// (the step counts as done) and the page stays on the step, saying in the
// page's language what is wrong with which photo, with a way to go on; a
// good photo moves on to the next step as before. The findings in the
// query are the applicant's to edit: unknown ones are dropped.
func TestHostedImageQuality(t *testing.T) {
	t.Parallel()
	in := start(t, func(o *options) { o.quality = imagequality.DefaultThresholds() })
	in.createApplicant("q-1", "Quality")
	token := in.sdkSession("q-1", nil)
	base := "/sdk/" + token

	r := in.sdkUpload(base+"/documents", "", part{name: "kind", value: "identity_doc"}, part{name: "docType", value: "PASSPORT"}, part{name: "country", value: "GBR"},
		part{name: "front", data: blackPNG(t, 800, 600), filename: named("front.png")},
		part{name: "back", data: pngImage(t, 300, 200, 9), filename: named("back.png")})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	loc, err := url.Parse(r.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if q := loc.Query(); q.Get("step") != "identity_doc" || q.Get("quality") != "front:too_dark,blurry;back:too_small" {
		t.Fatalf("redirect to %s", loc)
	}
	page := string(in.sdkGet(loc.String()).Body)
	for _, want := range []string{"Please check your photo", "Front side", "It is too dark", "It is blurry", "It is too small to read",
		"Continue anyway", `href="/sdk/` + token + `?step=selfie"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// Kept: the step is done.
	st := in.sdkAPI("GET", "/api/v1/sdk/state", token, "").m(t)
	if missing, _ := st["missing"].([]any); len(missing) > 0 && missing[0] == "identity_doc" {
		t.Fatalf("identity_doc still missing after a warned upload: %v", st["missing"])
	}

	// German, and the query cannot inject words.
	de := in.sdkSession("q-1", map[string]any{"lang": "de"})
	page = string(in.sdkGet("/sdk/" + de + "?step=identity_doc&quality=" + url.QueryEscape("front:glare,<b>x</b>;zzz")).Body)
	if !strings.Contains(page, "Licht spiegelt sich darauf") || strings.Contains(page, "<b>x</b>") || strings.Contains(page, "zzz") {
		t.Fatalf("German warning page:\n%s", page)
	}

	// A good photo: on to the next step.
	r = in.sdkUpload("/sdk/"+de+"/documents", "", part{name: "kind", value: "selfie"}, part{name: "file", data: jpegImage(t, 800, 1000, 3), filename: named("me.jpg")})
	if loc := r.Header.Get("Location"); r.Status != http.StatusSeeOther || strings.Contains(loc, "quality=") {
		t.Fatalf("good selfie: %d to %s", r.Status, loc)
	}
}

// TestHostedImageQualityNamesTheCompanyDocument: on the company documents
// step the warning names the document it is about, as the identity step
// names the side: with two documents uploaded at once, "Company
// documents: it is too small" left the representative to guess which.
func TestHostedImageQualityNamesTheCompanyDocument(t *testing.T) {
	t.Parallel()
	in := start(t, func(o *options) { o.quality = imagequality.DefaultThresholds() })
	in.createCompany("qc-1", "Acme")
	for lang, want := range map[string]string{"en": "Register of shareholders", "de": "Gesellschafterliste"} {
		token := in.sdkSession("qc-1", map[string]any{"lang": lang})
		page := string(in.sdkGet("/sdk/" + token + "?step=company_docs&quality=" + url.QueryEscape("file.register_of_shareholders:too_small")).Body)
		_, notice, ok := strings.Cut(page, `id="quality"`)
		notice, _, _ = strings.Cut(notice, "</div>")
		if !ok {
			t.Fatalf("%s: no warning on the page:\n%s", lang, page)
		}
		if !strings.Contains(notice, "<strong>"+want+":</strong>") {
			t.Errorf("%s: the warning does not name %q:\n%s", lang, want, notice)
		}
	}
	// The query is the applicant's to edit: a made-up type names no words.
	token := in.sdkSession("qc-1", nil)
	page := string(in.sdkGet("/sdk/" + token + "?step=company_docs&quality=" + url.QueryEscape("file.free_cash_offer:too_small")).Body)
	if strings.Contains(page, "free cash offer") || strings.Contains(page, "free_cash_offer") {
		t.Errorf("a made-up document type shown in the warning")
	}
}
