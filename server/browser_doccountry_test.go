package server_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserDocumentCountry: the identity document asks the issuing
// country first, then offers only the types that country issues; with
// script the list follows the country at once (also through the search
// box). A type the country does not issue, forced into the form, is
// refused by the server naming the document type.
func TestBrowserDocumentCountry(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "dc-1", "firstName": "Ada", "lastName": "Lovelace",
		"dateOfBirth": "1990-04-01", "nationality": "GBR"})
	_, page := in.session("dc-1", map[string]any{})

	tb := in.chrome(t, desktop)
	tb.open(page)
	tb.consent("a photo of an identity document")
	tb.submit("form[action$='/personal-info'] button[type=submit]")
	tb.contains("Issuing country", "The country that issued your document.")
	if v := eval[string](tb, `document.querySelector('#country-form select[name=country]').value`); v != "GBR" {
		t.Errorf("the issuing country starts on %q, want the nationality GBR", v)
	}
	tb.a11y()
	tb.issuingCountry("GBR")

	types := func() []string {
		t.Helper()
		return strings.Fields(eval[string](tb, `Array.from(document.querySelectorAll('#id-doc-form select[name=docType] option')).map(o => o.value).join(' ')`))
	}
	if got := types(); !slices.Equal(got, []string{"PASSPORT", "DRIVERS", "RESIDENCE_PERMIT"}) {
		t.Fatalf("types offered for the UK: %v", got)
	}
	if n := tb.count("#id-doc-form [data-nojs]"); n != 0 {
		t.Errorf("with script the no-script button stays (%d)", n)
	}
	tb.a11y()
	tb.shot("hosted-doc-country-desktop")
	// Another country: the list follows at once.
	value(tb, chromedp.Evaluate[bool](`(() => { const s = document.querySelector('#id-doc-form select[name=country]'); s.value = 'DEU';
		s.dispatchEvent(new Event('change')); return true })()`))
	if got := types(); !slices.Equal(got, []string{"PASSPORT", "ID_CARD", "DRIVERS", "RESIDENCE_PERMIT"}) {
		t.Fatalf("types offered for Germany: %v", got)
	}
	tb.run(chromedp.SetValue(chromedp.CSS("#id-doc-form select[name=docType]"), "ID_CARD"))
	// Back to the UK through the search box: ID_CARD goes.
	tb.run(chromedp.SendKeys("#id-doc-form input.country-search", "United Kin"))
	if v := eval[string](tb, `document.querySelector('#id-doc-form select[name=country]').value`); v != "GBR" {
		t.Fatalf("searching United Kin picks %q", v)
	}
	if got := types(); slices.Contains(got, "ID_CARD") {
		t.Fatalf("types offered for the UK after the search: %v", got)
	}

	// Forced: the server refuses it, naming the document type, and shows
	// the country's types again.
	value(tb, chromedp.Evaluate[bool](`(() => { const s = document.querySelector('#id-doc-form select[name=docType]');
		const o = document.createElement('option'); o.value = 'ID_CARD'; o.textContent = 'ID card'; s.appendChild(o); s.value = 'ID_CARD'; return true })()`))
	tb.upload("input[name=front]", tb.file("front.png", pngImage(t, 400, 300, 81)))
	tb.expectError("status of 400")
	tb.submit("#id-doc-form button[type=submit]:not(.secondary)")
	tb.contains("Please check: Document type", "not issued by the chosen country")
	if got := types(); slices.Contains(got, "ID_CARD") || eval[string](tb, `document.querySelector('#id-doc-form select[name=country]').value`) != "GBR" {
		t.Fatalf("after the refusal: country %s, types %v", eval[string](tb, `document.querySelector('#id-doc-form select[name=country]').value`), got)
	}
	tb.a11y()
	if d := in.expect(200, "GET", "/v1/applicants/dc-1", nil).m(t)["documents"].([]any); len(d) != 0 {
		t.Fatalf("the refused upload was stored: %v", d)
	}

	tb.run(chromedp.SetValue(chromedp.CSS("#id-doc-form select[name=docType]"), "DRIVERS"))
	tb.upload("input[name=front]", tb.file("front.png", pngImage(t, 400, 300, 82)))
	tb.submit("#id-doc-form button[type=submit]:not(.secondary)")
	tb.contains("Selfie")
	d := in.expect(200, "GET", "/v1/applicants/dc-1", nil).m(t)["documents"].([]any)
	if len(d) != 1 || d[0].(map[string]any)["country"] != "GBR" || d[0].(map[string]any)["docType"] != "DRIVERS" {
		t.Fatalf("documents %v, want the driving licence of the UK", d)
	}
}
