package server_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestSDKWaitingRefreshCanStop: without script the waiting view reloads
// itself (a meta refresh), so it shows the verdict when it arrives; a link
// turns that off (WCAG 2.2.1, F41): the same page with refresh=off has no
// meta refresh and a "Check again" link instead, and still shows the
// verdict once it is there.
func TestSDKWaitingRefreshCanStop(t *testing.T) {
	t.Parallel()
	in := start(t)
	token := in.sdkSubmitted("wait-stop", 80)
	page := "/sdk/" + token
	manual := regexp.QuoteMeta(`href="` + page + `?refresh=off"`)

	r := in.sdkGet(page)
	wantStatusCode(t, r, 200, "waiting")
	wantHTML(t, r, `id="waiting"`, `<noscript><meta http-equiv="refresh" content="5"></noscript>`,
		`<a `+manual+` id="refresh-stop"[^>]*>Stop checking automatically</a>`)

	r = in.sdkGet(page + "?refresh=off")
	wantStatusCode(t, r, 200, "waiting, refresh off")
	wantHTML(t, r, `id="waiting"`, `data-refresh="off"`, `no longer checks by itself`,
		`<a class="button" `+manual+` id="refresh-check">Check again</a>`)
	noHTML(t, r, `http-equiv="refresh"`, `Stop checking automatically`, `updates by itself`)

	// In German.
	de := in.sdkSession("wait-stop", map[string]any{"lang": "de"})
	wantHTML(t, in.sdkGet("/sdk/"+de), `>Nicht mehr automatisch prüfen</a>`)
	wantHTML(t, in.sdkGet("/sdk/"+de+"?refresh=off"), `>Erneut prüfen</a>`)

	// Checking again once the verdict is there shows it.
	in.advance(2 * time.Second)
	in.sdkVerdict(token)
	r = in.sdkGet(page + "?refresh=off")
	wantHTML(t, r, `id="verdict"`, `You are verified`)
	noHTML(t, r, `http-equiv="refresh"`)
}

// TestSDKStepStateInWords: the steps' navigation says in words, not only
// by colour, which steps are done and which need the applicant again
// (WCAG 1.4.1, 1.3.1), and marks the current one with aria-current.
func TestSDKStepStateInWords(t *testing.T) {
	t.Parallel()
	in := start(t)
	token := in.sdkSubmitted("steps-words", 82)
	in.expect(200, "POST", "/v1/applicants/steps-words/sandbox/review", map[string]any{"reviewAnswer": "RED", "reviewRejectType": "RETRY", "rejectLabels": []string{"UNSATISFACTORY_PHOTOS"}})
	r := in.sdkGet("/sdk/" + token + "?step=identity_doc")
	wantStatusCode(t, r, 200, "retry step")
	wantHTML(t, r,
		`<li class=" done"><a href="[^"]+\?step=personal">Personal information<span class="state-text"> \(done\)</span></a>`,
		`<li class="current retry"><a href="[^"]+\?step=identity_doc" aria-current="step">Identity document<span class="state-text"> \(needs attention\)</span></a>`,
		`<li class=""><a href="[^"]+\?step=review">Review and submit</a>`)

	de := in.sdkSession("steps-words", map[string]any{"lang": "de"})
	wantHTML(t, in.sdkGet("/sdk/"+de+"?step=selfie"), `Persönliche Angaben<span class="state-text"> \(erledigt\)</span>`,
		`aria-current="step">Selfie<span class="state-text"> \(erfordert Ihre Aufmerksamkeit\)</span>`)
}

// TestSDKFutureDateSaysSo: a date of birth in the future is refused with
// a sentence that says so, not "Please enter a real date" (WCAG 3.3.3),
// in the personal data and the beneficial-owner form, in en and de.
func TestSDKFutureDateSaysSo(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "future-1"})
	token := in.sdkSession("future-1", nil)
	r := in.sdkForm("/sdk/"+token+"/personal-info", url.Values{"firstName": {"Ada"}, "lastName": {"Walker"}, "dateOfBirth": {"2099-01-01"}})
	wantStatusCode(t, r, 400, "future date of birth")
	wantHTML(t, r, `Please check: Date of birth`, `The date cannot be in the future\.`)
	noHTML(t, r, `real date`)
	// A date that does not exist is still "a real date".
	r = in.sdkForm("/sdk/"+token+"/personal-info", url.Values{"dateOfBirth": {"1990-02-31"}})
	wantHTML(t, r, `Please enter a real date\.`)

	de := in.sdkSession("future-1", map[string]any{"lang": "de"})
	r = in.sdkForm("/sdk/"+de+"/personal-info", url.Values{"dateOfBirth": {"2099-01-01"}})
	wantHTML(t, r, `Das Datum darf nicht in der Zukunft liegen\.`)

	in.createCompany("future-co", "Future GmbH")
	co := in.sdkSession("future-co", nil)
	r = in.sdkForm("/sdk/"+co+"/ubos", url.Values{"fullName": {"Tim Later"}, "roles": {"ubo"}, "dateOfBirth": {"2099-01-01"}})
	wantStatusCode(t, r, 400, "future owner")
	wantHTML(t, r, `Please check: Date of birth`, `The date cannot be in the future\.`)
}

// TestSDKFormatAndLengthSaySo: a phone number or a name the store refuses
// gets a sentence naming the rule (WCAG 3.3.3: a suggestion for the
// correction), not "Please check this entry", in en and de.
func TestSDKFormatAndLengthSaySo(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "format-1"})
	token := in.sdkSession("format-1", nil)
	r := in.sdkForm("/sdk/"+token+"/personal-info", url.Values{"phone": {"call me"}})
	wantStatusCode(t, r, 400, "bad phone")
	wantHTML(t, r, `Please check: Phone`, `6 to 15 digits, such as (\+|&#43;)49 30 1234567`)
	noHTML(t, r, `Please check this entry`)
	r = in.sdkForm("/sdk/"+token+"/personal-info", url.Values{"middleName": {strings.Repeat("x", 201)}})
	wantStatusCode(t, r, 400, "long middle name")
	wantHTML(t, r, `This is too long: at most 200 characters\.`)
	de := in.sdkSession("format-1", map[string]any{"lang": "de"})
	wantHTML(t, in.sdkForm("/sdk/"+de+"/personal-info", url.Values{"phone": {"123"}}), `Telefonnummer mit 6 bis 15 Ziffern`)
}

// TestSDKInvalidFieldNamed: the field a failed form names is marked for
// assistive technology, not by its red border only (WCAG 1.3.1): it has
// aria-invalid and is described by the error box, in the personal data
// and the beneficial-owner form; and it takes the focus, so the person
// lands where the fix is.
func TestSDKInvalidFieldNamed(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "invalid-1"})
	token := in.sdkSession("invalid-1", nil)
	r := in.sdkForm("/sdk/"+token+"/personal-info", url.Values{"firstName": {"Ada"}, "dateOfBirth": {"1990-02-31"}, "nationality": {"GBR"}})
	wantStatusCode(t, r, 400, "bad date")
	wantHTML(t, r, `<div class="error" role="alert" id="error">`,
		`<input type="date" name="dateOfBirth" value="1990-02-31"[^>]* aria-invalid="true" aria-describedby="error" autofocus>`)
	noHTML(t, r, `name="firstName"[^>]*aria-invalid`, `<select name="nationality"[^>]*aria-invalid`)
	r = in.sdkForm("/sdk/"+token+"/personal-info", url.Values{"nationality": {"XXX"}})
	wantStatusCode(t, r, 400, "bad nationality")
	wantHTML(t, r, `<select name="nationality"[^>]* aria-invalid="true" aria-describedby="error" autofocus>`)
	noHTML(t, r, `name="dateOfBirth"[^>]*aria-invalid`)
	noHTML(t, in.sdkGet("/sdk/"+token), `aria-invalid`, `aria-describedby="error"`) // no error, no mark

	in.createCompany("invalid-co", "Invalid GmbH")
	co := "/sdk/" + in.sdkSession("invalid-co", nil)
	for _, c := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"fullName": {"Dan Bad"}, "ownershipPercent": {"lots"}, "roles": {"ubo"}}, `<input type="text" name="ownershipPercent"[^>]* aria-invalid="true" aria-describedby="error" autofocus>`},
		{url.Values{"fullName": {" "}, "roles": {"ubo"}}, `<input type="text" name="fullName"[^>]* aria-invalid="true" aria-describedby="error" autofocus>`},
		{url.Values{"fullName": {"Dan Bad"}, "roles": {"ubo"}, "dateOfBirth": {"1990-02-31"}}, `<input type="date" name="dateOfBirth"[^>]* aria-invalid="true" aria-describedby="error" autofocus>`},
		{url.Values{"fullName": {"Dan Bad"}, "roles": {"ubo"}, "email": {"nope"}}, `<input type="email" name="email"[^>]* aria-invalid="true" aria-describedby="error" autofocus>`},
		{url.Values{"fullName": {"Dan Bad"}, "roles": {"ubo"}, "nationality": {"XXX"}}, `<select name="nationality"[^>]* aria-invalid="true" aria-describedby="error" autofocus>`},
		{url.Values{"fullName": {"Dan Bad"}}, `<input type="checkbox" name="roles" value="ubo" aria-invalid="true" aria-describedby="error" autofocus>`},
	} {
		r := in.sdkForm(co+"/ubos", c.form)
		wantStatusCode(t, r, 400, c.want)
		wantHTML(t, r, c.want)
		if n := len(regexp.MustCompile(`aria-invalid="true"`).FindAll(r.Body, -1)); c.form["roles"] != nil && n != 1 {
			t.Errorf("%v: %d fields marked invalid, want 1", c.form, n)
		}
	}
}
