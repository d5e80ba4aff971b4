package server_test

import (
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/complybox/complybox/store/imagequality"
)

// TestBrowserConsoleEvidence: a production applicant held for an
// operator, with every kind of automatic finding: under 18, a selfie
// another applicant used, a sanctions-list match, and a dark document
// photo measured at upload in the hosted flow. On a laptop (1280×800) the
// applicant page shows the evidence (the images with rotate and zoom, the
// entered data with the document's type and issuing country, the
// findings in words) beside the decision form; on a phone (390×844) they
// stack. The history names events in words and shows local times.
func TestBrowserConsoleEvidence(t *testing.T) {
	t.Parallel()
	list := filepath.Join(t.TempDir(), "sanctions.txt")
	if err := os.WriteFile(list, []byte("Ivan Sanctionov\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	in := start(t, func(o *options) {
		o.settings.KYC.SanctionsFile = list
		o.quality = imagequality.DefaultThresholds()
	})
	pk, ps := in.credential("production", "partner")
	prod := []string{"X-Api-Key", pk, "X-Api-Secret", ps, "X-Environment", "production"}
	selfie := jpegImage(t, 300, 400, 97)

	// Another production applicant already used the selfie.
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "ev-other", "firstName": "Olga", "lastName": "Other", "dateOfBirth": "1980-01-01"}, prod...)
	body := verifyBody(t, 96)
	body["selfie"] = b64(selfie)
	in.expect(200, "POST", "/v1/applicants/ev-other/verify", body, prod...)

	// The applicant goes through the hosted flow (no script needed).
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "ev-1", "firstName": "Ivan", "lastName": "Sanctionov", "dateOfBirth": "2012-05-05"}, prod...)
	var link struct{ Token string }
	in.expect(201, "POST", "/v1/applicants/ev-1/verification-sessions", map[string]any{}, prod...).json(t, &link)
	page := "/sdk/" + link.Token
	wantStatusCode(t, in.sdkForm(page+"/consent", url.Values{"consent": {"yes"}}), 303, "consent")
	r := in.sdkUpload(page+"/documents", "", part{name: "kind", value: "identity_doc"}, part{name: "docType", value: "ID_CARD"},
		part{name: "country", value: "DEU"}, part{name: "front", data: blackPNG(t, 800, 600), filename: named("front.png")})
	wantStatusCode(t, r, 303, "dark front")
	wantStatusCode(t, in.sdkUpload(page+"/documents", "", part{name: "kind", value: "selfie"}, part{name: "file", data: selfie, filename: named("me.jpg")}), 303, "selfie")
	wantStatusCode(t, in.sdkForm(page+"/submit", url.Values{}), 303, "submit")
	if st, _ := in.reviewStatusIn("ev-1", prod); st != "awaitingOperatorReview" {
		t.Fatalf("ev-1 is %s, want awaitingOperatorReview", st)
	}

	if err := in.Store.SetConsolePassword(consolePassword); err != nil {
		t.Fatal(err)
	}
	login := func(vp viewport) *tab {
		tb := in.chrome(t, vp)
		tb.consoleLogin("admin")
		tb.run(chromedp.SetValue(chromedp.CSS("form[action='/console/env'] select[name=env]"), "production"))
		tb.submit("form[action='/console/env'] button[type=submit]")
		tb.open("/console/applicants/ev-1")
		tb.waitFor("#decision")
		return tb
	}
	tb := login(desktop)
	tb.contains("Automatic checks",
		"Age", "under 18", "Suggests the label Age requirement mismatch",
		"Duplicate Selfie", "The same image is used by applicant ev-other.",
		"Sanctions", `matches the list entry "Ivan Sanctionov"`,
		"Photo quality: Identity document (front)", "Too dark",
		"Images", "ID card", "issued by Germany", "Consent", "given")
	if n := tb.count(`#findings li[data-check]`); n < 5 {
		t.Errorf("%d findings, want images, age, duplicate, sanctions and photo quality", n)
	}
	for _, sel := range []string{`[data-check=age][data-result=under_18].f-bad`, `[data-check=duplicate][data-result=match].f-bad`,
		`[data-check=sanctions][data-result=match].f-bad`, `[data-check=image_quality].f-warn`} {
		if tb.count("#findings "+sel) == 0 {
			t.Errorf("no finding %s", sel)
		}
	}
	// The duplicate links to the applicant who used the image first.
	if href := eval[string](tb, `document.querySelector('#findings [data-check=duplicate] a').getAttribute('href')`); href != "/console/applicants/ev-other" {
		t.Errorf("the duplicate finding links to %q, want /console/applicants/ev-other", href)
	}
	// History in words and local time.
	tb.contains("Consent given", "Photo quality warning", "Automatic check", "On hold for an operator")
	if raw := eval[string](tb, `Array.from(document.querySelectorAll('table.history time')).map(e => e.textContent).filter(s => s.endsWith('Z')).join(', ')`); raw != "" {
		t.Errorf("history times left in UTC ISO form: %s", raw)
	}
	// Beside each other at 1280 px: the decision to the right of the
	// evidence, both starting at the top of the view.
	ev := eval[[]float64](tb, `(() => { const r = document.querySelector('.evidence').getBoundingClientRect(); return [r.left, r.right, r.top] })()`)
	dc := eval[[]float64](tb, `(() => { const r = document.querySelector('#decision').getBoundingClientRect(); return [r.left, r.right, r.top] })()`)
	if dc[0] < ev[1]-1 || dc[2] > ev[2]+200 || dc[1] > 1280 {
		t.Errorf("at 1280 px evidence %v and decision %v are not side by side", ev, dc)
	}
	// The steps table fits its column: no scrolling inside its box on a
	// laptop (its box scrolls only on a phone).
	if w := eval[[]int](tb, `(() => { const b = document.querySelector('#steps'); return [b.scrollWidth, b.clientWidth] })()`); w[0] > w[1] {
		t.Errorf("at 1280 px the steps table is %d px wide in a %d px box: it scrolls sideways; columns %s", w[0], w[1], eval[string](tb, `Array.from(document.querySelectorAll('#steps th')).map(e => e.textContent + ' ' + Math.round(e.getBoundingClientRect().width)).join(', ')`))
	}
	tb.click("button.rotate")
	tb.a11y()
	tb.shot("console-evidence-desktop")

	ph := login(phone)
	ph.contains("Automatic checks", "under 18")
	ev = eval[[]float64](ph, `(() => { const r = document.querySelector('.evidence').getBoundingClientRect(); return [r.left, r.bottom, r.top] })()`)
	dc = eval[[]float64](ph, `(() => { const r = document.querySelector('#decision').getBoundingClientRect(); return [r.left, r.right, r.top] })()`)
	if dc[2] < ev[1]-1 {
		t.Errorf("at 390 px the decision (top %v) is not below the evidence (bottom %v)", dc[2], ev[1])
	}
	if w := eval[int](ph, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("the applicant page is %d px wide at 390 px", w)
	}
	ph.a11y()
	ph.shot("console-evidence-phone")
}
