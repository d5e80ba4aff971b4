package server_test

import (
	"net/url"
	"testing"
	"time"
)

// TestSDKKybCompanyWording: a company's intro and verdict speak of the
// company, not of a person's identity, in English and German.
func TestSDKKybCompanyWording(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("kw", "Wording GmbH")
	personal := []string{`verify your identity`, `Have your document at hand`, `photos of my face`, `check your name against`}
	r := in.sdkGet("/sdk/" + in.sdkNewSession("kw", nil))
	wantStatusCode(t, r, 200, "intro")
	wantHTML(t, r, `id="intro"`, `To verify your company we will ask you for:`, `Have your company&#39;s documents at hand`,
		`to verify my company`, `check the company&#39;s name against`)
	noHTML(t, r, personal...)
	r = in.sdkGet("/sdk/" + in.sdkNewSession("kw", map[string]any{"lang": "de"}))
	wantHTML(t, r, `Um Ihr Unternehmen zu prüfen, bitten wir Sie um:`, `Halten Sie die Unterlagen Ihres Unternehmens bereit`)
	noHTML(t, r, `Ihre Identität`, `Halten Sie Ihr Dokument bereit`, `Fotos meines Gesichts`)

	// A RED verdict.
	token := in.sdkSession("kw", nil)
	page := "/sdk/" + token
	for i, dt := range []string{"certificate_of_incorporation", "register_of_shareholders"} {
		wantStatusCode(t, in.sdkUpload(page+"/documents", "", part{name: "kind", value: "company_docs"}, part{name: "docType", value: dt},
			part{name: "file", data: pngImage(t, 300, 420, uint64(60+i))}), 303, dt)
	}
	wantStatusCode(t, in.sdkForm(page+"/submit", url.Values{}), 303, "submit")
	in.expect(200, "POST", "/v1/applicants/kw/sandbox/review", map[string]any{"reviewAnswer": "RED", "reviewRejectType": "FINAL", "rejectLabels": []string{"OTHER"}})
	r = in.sdkGet(page)
	wantHTML(t, r, `id="verdict"`, `We could not verify your company with the data provided.`)
	noHTML(t, r, `your identity`)
	r = in.sdkGet("/sdk/" + in.sdkSession("kw", map[string]any{"lang": "de"}))
	wantHTML(t, r, `Wir konnten Ihr Unternehmen mit den angegebenen Daten nicht bestätigen.`)
	noHTML(t, r, `Ihre Identität`)
}

// TestSDKKybWaitsForOwners: a company whose own steps were reviewed and
// that waits for its beneficial owners says so, with how many are open.
func TestSDKKybWaitsForOwners(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("kwait", "Owners GmbH",
		map[string]any{"fullName": "Ada King", "roles": []string{"ubo"}, "ownershipPercent": 50},
		map[string]any{"fullName": "Bob Stone", "roles": []string{"director"}})
	token := in.sdkSession("kwait", nil)
	in.submitCompany("kwait", 70)
	// The reviewer's verdict on its own steps (the company stays in review).
	deadline := time.Now().Add(10 * time.Second)
	for in.stepStatuses("kwait")["company_docs"] != "completed/GREEN" {
		if time.Now().After(deadline) {
			t.Fatalf("steps %v, want the own steps reviewed", in.stepStatuses("kwait"))
		}
		runtimeYield()
	}
	in.waitReviewStatus("kwait", "in_review")
	in.spawn(201, "kwait", 0, nil)
	r := in.sdkGet("/sdk/" + token)
	wantStatusCode(t, r, 200, "waiting")
	wantHTML(t, r, `id="waiting"`, `Your company&#39;s data has been checked`,
		`id="owners-open">We are waiting for the beneficial owners to verify: 2 of 2 have not finished yet.`,
		`<strong class="name">Ada King</strong>.*<span class="status">verification in progress</span>`,
		`<strong class="name">Bob Stone</strong>.*<span class="status">not invited yet</span>`)
	noHTML(t, r, `We are checking your data`)
	r = in.sdkGet("/sdk/" + token + "?refresh=off")
	wantHTML(t, r, `id="owners-open"`, `id="refresh-check"`)
	r = in.sdkGet("/sdk/" + in.sdkSession("kwait", map[string]any{"lang": "de"}))
	wantHTML(t, r, `Die Daten Ihres Unternehmens wurden geprüft`, `2 von 2 haben noch nicht abgeschlossen`)
}

// TestSDKUboChildNamesCompany: a beneficial owner's intro names the
// company the owner was invited for.
func TestSDKUboChildNamesCompany(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("kparent", "Parent & Söhne AG", map[string]any{"fullName": "Ada King", "roles": []string{"ubo"}, "ownershipPercent": 50},
		map[string]any{"fullName": "Bob Stone", "roles": []string{"director"}})
	child := in.spawn(201, "kparent", 0, nil)
	r := in.sdkGet("/sdk/" + child.SDKLink.Token)
	wantStatusCode(t, r, 200, "child intro")
	wantHTML(t, r, `id="intro"`, `id="ubo-parent">You were invited to verify as a beneficial owner of Parent &amp; Söhne AG.`,
		`To verify your identity`)
	de := in.spawn(201, "kparent", 1, map[string]any{"lang": "de"})
	wantHTML(t, in.sdkGet("/sdk/"+de.SDKLink.Token), `id="ubo-parent">Sie wurden eingeladen, sich als wirtschaftlich Berechtigte\(r\) von Parent &amp; Söhne AG zu verifizieren.`)
	// Anyone else's intro names no company.
	in.createApplicant("kalone", "Green")
	noHTML(t, in.sdkGet("/sdk/"+in.sdkNewSession("kalone", nil)), `id="ubo-parent"`)
}

// ownStepsReviewed waits until the sandbox reviewer judged the company
// extID's own steps and the company waits in_review for its owners.
func (in *instance) ownStepsReviewed(extID string) {
	in.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for in.stepStatuses(extID)["company_docs"] != "completed/GREEN" {
		if time.Now().After(deadline) {
			in.t.Fatalf("steps %v, want the own steps reviewed", in.stepStatuses(extID))
		}
		runtimeYield()
	}
	in.waitReviewStatus(extID, "in_review")
}

// TestSDKStateOwnersOpen: while a company's own steps are reviewed and its
// verdict waits for its beneficial owners, the page API's state says how
// many owners have not finished (ownersOpen) and the waiting page carries
// the same number (data-owners-open), which app.js compares to show the
// progress; an owner verified GREEN counts down at once. Before the
// company's own review and once its verdict is there it is null.
func TestSDKStateOwnersOpen(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("kopen", "Open GmbH",
		map[string]any{"fullName": "Ada King", "dateOfBirth": "1980-02-02", "roles": []string{"ubo"}, "ownershipPercent": 50},
		map[string]any{"fullName": "Bob Stone", "dateOfBirth": "1970-03-03", "roles": []string{"director"}})
	token := in.sdkSession("kopen", nil)
	ownersOpen := func(what string) any {
		t.Helper()
		r := in.sdkAPI("GET", "/api/v1/sdk/state", token, "")
		wantStatusCode(t, r, 200, what)
		v, ok := r.m(t)["ownersOpen"]
		if !ok {
			t.Fatalf("%s: state without ownersOpen: %.600s", what, r.Body)
		}
		return v
	}
	if v := ownersOpen("before submission"); v != nil {
		t.Errorf("before submission ownersOpen %v, want null", v)
	}
	in.submitCompany("kopen", 80)
	in.ownStepsReviewed("kopen")
	var children []string
	for i := range 2 {
		children = append(children, in.spawn(201, "kopen", i, nil).ChildExternalUserID)
	}
	if v := ownersOpen("both owners open"); v != 2.0 {
		t.Errorf("both owners open: ownersOpen %v, want 2", v)
	}
	r := in.sdkGet("/sdk/" + token)
	wantHTML(t, r, `id="waiting"[^>]* data-owners-open="2"`, `2 of 2 have not finished yet`,
		`<li class="row" data-ubo="0" data-status="pending">`, `<li class="row" data-ubo="1" data-status="pending">`)

	in.expect(200, "POST", "/v1/applicants/"+children[0]+"/verify", verifyBody(t, 82))
	if v := ownersOpen("one owner verified"); v != 1.0 {
		t.Errorf("one owner verified: ownersOpen %v, want 1", v)
	}
	r = in.sdkGet("/sdk/" + token)
	wantHTML(t, r, `id="waiting"[^>]* data-owners-open="1"`, `1 of 2 have not finished yet`,
		`<li class="row" data-ubo="0" data-status="completed">.*<span class="status">verified</span>`)
	// The page's words for each state, for app.js to show a change.
	wantHTML(t, r, `data-t-owners="We are waiting for the beneficial owners to verify: %d of %d have not finished yet."`,
		`data-t-enrollment-completed="verified"`, `data-t-enrollment-failed="must upload again"`)

	in.expect(200, "POST", "/v1/applicants/"+children[1]+"/verify", verifyBody(t, 84))
	in.waitReviewStatus("kopen", "completed")
	if v := ownersOpen("verdict"); v != nil {
		t.Errorf("with the verdict ownersOpen %v, want null", v)
	}

	// An individual has no owners to wait for.
	in.createApplicant("kopen-person", "Green")
	r = in.sdkAPI("GET", "/api/v1/sdk/state", in.sdkSession("kopen-person", nil), "")
	if m := r.m(t); m["ownersOpen"] != nil {
		t.Errorf("an individual's ownersOpen %v, want null", m["ownersOpen"])
	}
}

// TestSDKKybOwnStepRetryWhileOwnersOpen: a company whose own documents the
// reviewer asked for again (RED RETRY) while its verdict waits for its
// owners is asked for them on its page, which the page API's state says
// it takes (acceptsData, missing), not shown "we are checking your data"
// for ever; uploaded again and sent, they are reviewed again.
func TestSDKKybOwnStepRetryWhileOwnersOpen(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("kredo", "Retry", map[string]any{"fullName": "Ada King", "roles": []string{"ubo"}, "ownershipPercent": 50})
	token := in.sdkSession("kredo", nil)
	page := "/sdk/" + token
	in.submitCompany("kredo", 70)
	deadline := time.Now().Add(10 * time.Second)
	for in.stepStatuses("kredo")["company_docs"] != "completed/RED/RETRY" {
		if time.Now().After(deadline) {
			t.Fatalf("steps %v, want company_docs RED RETRY", in.stepStatuses("kredo"))
		}
		runtimeYield()
	}
	in.waitReviewStatus("kredo", "in_review")
	r := in.sdkGet(page)
	wantStatusCode(t, r, 200, "page")
	wantHTML(t, r, `data-mode="step"`, `<form[^>]*action="`+page+`/documents"`, `Why:`)
	noHTML(t, r, `We are checking your data`)

	in.expect(200, "PATCH", "/v1/applicants/kredo", map[string]any{"companyName": "Redone"}) // the sandbox's name rule
	for i, dt := range []string{"certificate_of_incorporation", "register_of_shareholders"} {
		wantStatusCode(t, in.sdkUpload(page+"/documents", "", part{name: "kind", value: "company_docs"}, part{name: "docType", value: dt},
			part{name: "file", data: pngImage(t, 300, 420, uint64(90+i))}), 303, dt)
	}
	wantStatusCode(t, in.sdkForm(page+"/submit", url.Values{}), 303, "submit")
	in.advance(2 * time.Second)
	in.ownStepsReviewed("kredo")
	wantHTML(t, in.sdkGet(page), `id="waiting"`, `We are waiting for the beneficial owners`)
}

// TestSDKKybGerman: a German company page is German throughout: the legal
// forms' words (the abbreviations stay), the steps' navigation as a
// screen reader names it, an owner's share with a decimal comma.
func TestSDKKybGerman(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("kde", "Deutsch GmbH", map[string]any{"fullName": "Ada King", "roles": []string{"ubo"}, "ownershipPercent": 30.5})
	page := "/sdk/" + in.sdkSession("kde", map[string]any{"lang": "de"})
	r := in.sdkGet(page + "?step=personal")
	wantStatusCode(t, r, 200, "company data")
	wantHTML(t, r, `<nav class="steps" aria-label="Schritte">`, `<option value="gmbh"[^>]*>GmbH</option>`,
		`<option value="sole_proprietorship"[^>]*>Einzelunternehmen</option>`, `<option value="foundation"[^>]*>Stiftung</option>`)
	noHTML(t, r, `SOLE PROPRIETORSHIP`, `FOUNDATION`, `aria-label="steps"`)
	wantHTML(t, in.sdkGet(page+"?step=ubo"), `<span class="ownership">30,5 %</span>`)
	wantHTML(t, in.sdkGet("/sdk/"+in.sdkSession("kde", nil)+"?step=ubo"), `<span class="ownership">30.5 %</span>`)
}
