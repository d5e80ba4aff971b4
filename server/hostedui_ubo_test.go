package server_test

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// uboRows returns the rows of GET /v1/applicants/{extID}/ubos.
func (in *instance) uboRows(extID string) []map[string]any {
	in.t.Helper()
	var out struct{ Items []map[string]any }
	in.expect(200, "GET", "/v1/applicants/"+extID+"/ubos?limit=200", nil).json(in.t, &out)
	return out.Items
}

// TestSDKUboForm: a company lists its beneficial owners in the hosted UI
// without JavaScript; rows added there have source sdk.
func TestSDKUboForm(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("ubo-form", "Form GmbH", map[string]any{"fullName": "Api Owner", "roles": []string{"ubo", "director"}, "ownershipPercent": 25})
	token := in.sdkSession("ubo-form", nil)
	page := "/sdk/" + token

	r := in.sdkGet(page)
	wantStatusCode(t, r, 200, "page")
	wantHTML(t, r, `Step 1 of 4`, `<a href="/sdk/`+regexp.QuoteMeta(token)+`\?step=ubo">Beneficial owners<span class="state-text"> \(done\)</span></a>`) // the partner's row
	r = in.sdkGet(page + "?step=ubo")
	wantStatusCode(t, r, 200, "ubo step")
	wantHTML(t, r, `aria-current="step">Beneficial owners`,
		`<strong class="name">Api Owner</strong> <span class="roles">Beneficial owner, Director</span> · <span class="ownership">25 %</span> · <span class="status">not invited yet</span>`,
		`<form method="post" action="/sdk/`+regexp.QuoteMeta(token)+`/ubos"`,
		`<input type="text" name="fullName" value="" maxlength="200" required`, `<input type="date" name="dateOfBirth"`,
		`name="ownershipPercent"`, `<input type="checkbox" name="roles" value="ubo"> Beneficial owner`,
		`name="roles" value="director"`, `name="roles" value="shareholder"`, `name="roles" value="representative"`,
		`<input type="email" name="email"`, `name="nationality"`, `href="/sdk/`+regexp.QuoteMeta(token)+`\?step=review"`)

	// A row through the form: back to the list, with source sdk.
	r = in.sdkForm(page+"/ubos", url.Values{"fullName": {" Bea Form "}, "dateOfBirth": {"1985-03-04"}, "ownershipPercent": {"12,5"},
		"roles": {"ubo", "shareholder"}, "email": {"bea@example.com"}, "nationality": {"aut"}})
	wantStatusCode(t, r, 303, "add row")
	if loc := r.Header.Get("Location"); loc != page+"?step=ubo" {
		t.Errorf("Location %q", loc)
	}
	wantHTML(t, in.sdkGet(page+"?step=ubo"), `<strong class="name">Bea Form</strong> <span class="roles">Beneficial owner, Shareholder</span> · <span class="ownership">12.5 %</span>`)
	rows := in.uboRows("ubo-form")
	if len(rows) != 2 {
		t.Fatalf("rows %v", rows)
	}
	b := rows[1]
	if b["source"] != "sdk" || b["fullName"] != "Bea Form" || b["dateOfBirth"] != "1985-03-04" || fmt.Sprint(b["ownershipPercent"]) != "12.5" ||
		fmt.Sprint(b["roles"]) != "[ubo shareholder]" || b["email"] != "bea@example.com" || b["nationality"] != "AUT" || b["enrollmentStatus"] != "none" {
		t.Errorf("row %v", b)
	}
	if rows[0]["source"] != "api" {
		t.Errorf("the partner's row: %v", rows[0])
	}
	// Optional inputs left empty are absent.
	wantStatusCode(t, in.sdkForm(page+"/ubos", url.Values{"fullName": {"Cleo Min"}, "ownershipPercent": {""}, "email": {""}, "roles": {"representative"}}), 303, "minimal row")
	if c := in.uboRows("ubo-form")[2]; c["email"] != nil || fmt.Sprint(c["ownershipPercent"]) != "0" || c["source"] != "sdk" {
		t.Errorf("minimal row %v", c)
	}

	// A bad row: the page again with the error, the input kept.
	for _, c := range []struct {
		form  url.Values
		field string
		label string
	}{
		{url.Values{"fullName": {"Dan Bad"}, "ownershipPercent": {"lots"}, "roles": {"ubo"}}, "ownershipPercent", "Ownership in %"},
		{url.Values{"fullName": {"Dan Bad"}, "ownershipPercent": {"70"}, "roles": {"ubo"}}, "ownershipPercent", "Ownership in %"}, // 25+12.5+70 > 100
		{url.Values{"fullName": {"Dan Bad"}, "ownershipPercent": {"5"}}, "roles", "Roles"},
		{url.Values{"fullName": {"Dan Bad"}, "roles": {"boss"}}, "roles", "Roles"},
		{url.Values{"fullName": {"  "}, "roles": {"ubo"}}, "fullName", "Full name"},
		{url.Values{"fullName": {"Dan Bad"}, "roles": {"ubo"}, "dateOfBirth": {"1990-02-31"}}, "dateOfBirth", "Date of birth"},
		{url.Values{"fullName": {"Dan Bad"}, "roles": {"ubo"}, "email": {"nope"}}, "email", "Email"},
	} {
		r := in.sdkForm(page+"/ubos", c.form)
		wantStatusCode(t, r, 400, c.field)
		wantHTML(t, r, `role="alert"`, `Please check: `+regexp.QuoteMeta(c.label), `aria-current="step">Beneficial owners`,
			`<(label|fieldset) class="field invalid"><(span class="label"|legend)>`+regexp.QuoteMeta(c.label))
		if c.form.Get("fullName") == "Dan Bad" {
			wantHTML(t, r, `name="fullName" value="Dan Bad"`)
		}
		if slices.Contains(c.form["roles"], "ubo") {
			wantHTML(t, r, `<input type="checkbox" name="roles" value="ubo" checked>`)
		}
	}
	if n := len(in.uboRows("ubo-form")); n != 3 {
		t.Errorf("a bad row was stored: %d rows", n)
	}

	// In German.
	de := in.sdkSession("ubo-form", map[string]any{"lang": "de"})
	wantHTML(t, in.sdkGet("/sdk/"+de+"?step=ubo"), `Wirtschaftlich Berechtigte`, `<span class="roles">Wirtschaftlich Berechtigter, Geschäftsführer</span>`,
		`noch nicht eingeladen`, `Person hinzufügen`, `Vollständiger Name`, `> Gesellschafter</label>`)

	// The partner sees the applicant's rows as sdk history.
	n := 0
	for _, h := range in.historyTypes("ubo-form") {
		if h == "applicant.updated:sdk" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("history %v: want two applicant.updated by sdk", in.historyTypes("ubo-form"))
	}
}

// TestSDKUboAPI: the page API adds rows with the validation of POST
// /v1/applicants/{id}/ubos and lists them in the state.
func TestSDKUboAPI(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("ubo-api", "Api GmbH")
	token := in.sdkSession("ubo-api", nil)

	r := in.sdkAPI("GET", "/api/v1/sdk/state", token, "")
	wantStatusCode(t, r, 200, "state")
	if u, ok := r.m(t)["ubos"].([]any); !ok || len(u) != 0 {
		t.Errorf("state ubos of a company without rows: %s", r.Body)
	}

	r = in.sdkAPI("POST", "/api/v1/sdk/ubos", token, `{"fullName":"Ada Owner","dateOfBirth":"1980-05-01","ownershipPercent":60.5,"roles":["ubo","director"],"email":"ada@example.com","nationality":"DEU"}`)
	wantStatusCode(t, r, 201, "add row")
	var added struct {
		UboIndex int
		Row      map[string]any
		Ubos     []map[string]any
		Missing  []string
	}
	r.json(t, &added)
	if added.UboIndex != 0 || added.Row["source"] != "sdk" || added.Row["fullName"] != "Ada Owner" || len(added.Ubos) != 1 || added.Missing == nil {
		t.Errorf("added %s", r.Body)
	}
	if _, ok := added.Row["verificationLinkUrl"]; ok {
		t.Errorf("the hosted UI shows a child's link: %v", added.Row)
	}
	rows := in.uboRows("ubo-api")
	if len(rows) != 1 || rows[0]["source"] != "sdk" || fmt.Sprint(rows[0]["ownershipPercent"]) != "60.5" || rows[0]["nationality"] != "DEU" {
		t.Errorf("rows %v", rows)
	}

	for body, field := range map[string]string{
		`{}`:                                      "fullName",
		`{"roles":["ubo"]}`:                       "fullName",
		`{"fullName":5,"roles":["ubo"]}`:          "fullName",
		`{"fullName":"X"}`:                        "roles",
		`{"fullName":"X","roles":[]}`:             "roles",
		`{"fullName":"X","roles":["ubo","boss"]}`: "roles[1]",
		`{"fullName":"X","roles":["ubo"],"ownershipPercent":"10"}`: "ownershipPercent",
		`{"fullName":"X","roles":["ubo"],"ownershipPercent":-1}`:   "ownershipPercent",
		`{"fullName":"X","roles":["ubo"],"ownershipPercent":40}`:   "ownershipPercent", // 60.5 + 40 > 100
		`{"fullName":"X","roles":["ubo"],"dateOfBirth":"soon"}`:    "dateOfBirth",
		`{"fullName":"X","roles":["ubo"],"email":"x"}`:             "email",
		`{"fullName":"X","roles":["ubo"],"nationality":"Germany"}`: "nationality",
	} {
		r := in.sdkAPI("POST", "/api/v1/sdk/ubos", token, body)
		wantStatusCode(t, r, 400, body)
		if _, f := errField(t, r); f != field {
			t.Errorf("%s: field %q, want %q", body, f, field)
		}
		// The public endpoint names the same field.
		p := in.do("POST", "/v1/applicants/ubo-api/ubos", rawJSON(body))
		if _, f := errField(t, p); p.Status != 400 || f != field {
			t.Errorf("%s: POST /v1/applicants/{id}/ubos: %d %q", body, p.Status, f)
		}
	}
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/ubos", token, `[1]`), 400, "not an object")

	// The state lists the rows.
	r = in.sdkAPI("GET", "/api/v1/sdk/state", token, "")
	var st struct{ Ubos []map[string]any }
	r.json(t, &st)
	if len(st.Ubos) != 1 || st.Ubos[0]["fullName"] != "Ada Owner" || st.Ubos[0]["enrollmentStatus"] != "none" ||
		fmt.Sprint(st.Ubos[0]["roles"]) != "[ubo director]" || fmt.Sprint(st.Ubos[0]["ownershipPercent"]) != "60.5" {
		t.Errorf("state ubos %s", r.Body)
	}
	if h := in.historyTypes("ubo-api"); len(h) == 0 || h[0] != "applicant.updated:sdk" {
		t.Errorf("history %v", h)
	}

	// Unknown token: 401.
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/ubos", "nope", `{"fullName":"X","roles":["ubo"]}`), 401, "unknown token")
}

// TestSDKUboConflicts: the 409s of POST /v1/applicants/{id}/ubos, and no
// rows while the company is in review.
func TestSDKUboConflicts(t *testing.T) {
	t.Parallel()
	in := start(t)
	var full []map[string]any
	for i := range 100 {
		full = append(full, map[string]any{"fullName": fmt.Sprintf("Director %d", i), "roles": []string{"director"}})
	}
	in.createCompany("ubo-full", "Full GmbH", full...)
	token := in.sdkSession("ubo-full", nil)
	r := in.sdkAPI("POST", "/api/v1/sdk/ubos", token, `{"fullName":"One More","roles":["director"]}`)
	wantStatusCode(t, r, 409, "101st row")
	if code, _ := errField(t, r); code != "too_many_ubos" {
		t.Errorf("code %q", code)
	}
	r = in.sdkForm("/sdk/"+token+"/ubos", url.Values{"fullName": {"One More"}, "roles": {"director"}})
	wantStatusCode(t, r, 409, "101st row by form")
	wantHTML(t, r, `role="alert"`)

	in.createCompany("ubo-busy", "Busy GmbH")
	token = in.sdkSession("ubo-busy", nil)
	for i, dt := range []string{"certificate_of_incorporation", "register_of_shareholders"} {
		in.expect(201, "POST", "/v1/applicants/ubo-busy/documents", map[string]any{"kind": "company_docs", "docType": dt,
			"image": b64(pngImage(t, 210, 210, uint64(90+i)))})
	}
	in.expect(200, "POST", "/v1/applicants/ubo-busy/review", nil) // in review until review_delay passes
	r = in.sdkAPI("POST", "/api/v1/sdk/ubos", token, `{"fullName":"Late","roles":["ubo"]}`)
	wantStatusCode(t, r, 409, "row while in review")
	if code, _ := errField(t, r); code != "review_in_progress" {
		t.Errorf("code %q", code)
	}
	if n := len(in.uboRows("ubo-busy")); n != 0 {
		t.Errorf("%d rows", n)
	}
}

// TestSDKUboIndividual: an individual has no UBO step and the API refuses
// rows with not_a_company.
func TestSDKUboIndividual(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("ubo-person", "Green")
	token := in.sdkSession("ubo-person", nil)
	for _, p := range []string{"", "?step=ubo"} {
		r := in.sdkGet("/sdk/" + token + p)
		wantStatusCode(t, r, 200, "page"+p)
		noHTML(t, r, `Beneficial owners`, `step=ubo`, `/ubos"`, `name="roles"`)
	}
	r := in.sdkAPI("POST", "/api/v1/sdk/ubos", token, `{"fullName":"X","roles":["ubo"]}`)
	wantStatusCode(t, r, 400, "individual")
	if code, _ := errField(t, r); code != "not_a_company" {
		t.Errorf("code %q", code)
	}
	r = in.sdkForm("/sdk/"+token+"/ubos", url.Values{"fullName": {"X"}, "roles": {"ubo"}})
	wantStatusCode(t, r, 400, "individual form")
	wantHTML(t, r, `role="alert"`)
	if st := in.sdkAPI("GET", "/api/v1/sdk/state", token, "").m(t); fmt.Sprint(st["ubos"]) != "[]" {
		t.Errorf("state ubos of an individual: %v", st["ubos"])
	}
	if strings.Contains(fmt.Sprint(in.historyTypes("ubo-person")), "applicant.updated:sdk") {
		t.Errorf("a refused row left history: %v", in.historyTypes("ubo-person"))
	}
}

// TestUboRowsFromHostedUI: a company's hosted-UI session adds rows, through
// the page API and the no-JS form, and they carry source "sdk" (SPEC 3.8).
func TestUboRowsFromHostedUI(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("hosted", "Hosted", map[string]any{"fullName": "Api Row", "roles": []string{"ubo"}, "ownershipPercent": 50})
	token := in.sdkSession("hosted", nil)

	r := in.sdkAPI("POST", "/api/v1/sdk/ubos", token, `{"fullName":"Sdk Row","dateOfBirth":"1980-05-06","ownershipPercent":30,"roles":["ubo","director"],"source":"api"}`)
	wantStatusCode(t, r, 201, "page API row")
	added := r.m(t)
	row := added["row"].(map[string]any)
	if added["uboIndex"] != 1.0 || row["source"] != "sdk" || row["fullName"] != "Sdk Row" || row["ownershipPercent"] != 30.0 {
		t.Fatalf("added %v", added)
	}
	// The rules of POST …/ubos hold: the ubo ownership stays at most 100.
	r = in.sdkAPI("POST", "/api/v1/sdk/ubos", token, `{"fullName":"Too Much","ownershipPercent":21,"roles":["ubo"]}`)
	if _, f := errField(t, r); r.Status != 400 || f != "ownershipPercent" {
		t.Fatalf("over 100: %d %s", r.Status, r.Body)
	}
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/ubos", "nope", `{"fullName":"A B","roles":["ubo"]}`), 401, "unknown token")

	// The page's form, as a browser without JavaScript posts it.
	r = in.sdkForm("/sdk/"+token+"/ubos", url.Values{"fullName": {"Form Row"}, "ownershipPercent": {"12.5"},
		"roles": {"shareholder", "representative"}, "email": {"form@example.com"}})
	wantStatusCode(t, r, 303, "form row")
	r = in.sdkForm("/sdk/"+token+"/ubos", url.Values{"fullName": {"Bad Percent"}, "ownershipPercent": {"lots"}, "roles": {"director"}})
	wantStatusCode(t, r, 400, "form row with a bad percent")

	var list struct{ Items []map[string]any }
	in.expect(200, "GET", "/v1/applicants/hosted/ubos", nil).json(t, &list)
	if len(list.Items) != 3 || list.Items[0]["source"] != "api" || list.Items[1]["source"] != "sdk" || list.Items[2]["source"] != "sdk" ||
		list.Items[2]["ownershipPercent"] != 12.5 || list.Items[2]["email"] != "form@example.com" {
		t.Fatalf("rows %v", list.Items)
	}
	wantCounts(t, in.structure("hosted"), false, 3, 2, 1, 1, 1, 0, 0, 0, 0)

	// A person's session has no rows.
	in.createApplicant("solo", "Solo")
	r = in.sdkAPI("POST", "/api/v1/sdk/ubos", in.sdkSession("solo", nil), `{"fullName":"A B","roles":["ubo"]}`)
	if code, _ := errField(t, r); r.Status != 400 || code != "not_a_company" {
		t.Fatalf("individual: %d %s", r.Status, r.Body)
	}
}

// TestSDKUboSentTwice: a row sent again from the hosted UI (a double
// click, the back button, a retried request) is the row the company
// already has, not a second owner whose verification it would wait for.
func TestSDKUboSentTwice(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("ubo-twice", "Twice GmbH", map[string]any{"fullName": "Api Owner", "roles": []string{"ubo"}, "ownershipPercent": 30})
	token := in.sdkSession("ubo-twice", nil)
	page := "/sdk/" + token

	form := url.Values{"fullName": {"Bea Form"}, "dateOfBirth": {"1985-03-04"}, "ownershipPercent": {"60"}, "roles": {"ubo", "director"}}
	for i := range 2 {
		r := in.sdkForm(page+"/ubos", form)
		wantStatusCode(t, r, 303, fmt.Sprintf("form, time %d", i+1))
		if loc := r.Header.Get("Location"); loc != page+"?step=ubo" {
			t.Errorf("time %d: Location %q", i+1, loc)
		}
	}
	if rows := in.uboRows("ubo-twice"); len(rows) != 2 || rows[1]["fullName"] != "Bea Form" {
		t.Fatalf("the form sent twice: rows %v", rows)
	}

	// The page API: 201 for the new row, 200 and the same index for it
	// again, roles in another order included.
	body := `{"fullName":"Cleo Api","roles":["director","shareholder"],"email":"cleo@example.com"}`
	r := in.sdkAPI("POST", "/api/v1/sdk/ubos", token, body)
	wantStatusCode(t, r, 201, "new row")
	if i := r.m(t)["uboIndex"]; fmt.Sprint(i) != "2" {
		t.Errorf("new row's index %v", i)
	}
	for _, again := range []string{body, `{"fullName":"Cleo Api","roles":["shareholder","director"],"email":"cleo@example.com"}`} {
		r = in.sdkAPI("POST", "/api/v1/sdk/ubos", token, again)
		wantStatusCode(t, r, 200, again)
		if m := r.m(t); fmt.Sprint(m["uboIndex"]) != "2" || len(m["ubos"].([]any)) != 3 {
			t.Errorf("%s again: %s", again, r.Body)
		}
	}
	// The partner's own row, typed in again on the page, is that row too.
	r = in.sdkAPI("POST", "/api/v1/sdk/ubos", token, `{"fullName":"Api Owner","roles":["ubo"],"ownershipPercent":30}`)
	wantStatusCode(t, r, 200, "the partner's row again")
	if i := r.m(t)["uboIndex"]; fmt.Sprint(i) != "0" {
		t.Errorf("the partner's row again: index %v", i)
	}
	// Another ownership or another role is another row.
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/ubos", token, `{"fullName":"Cleo Api","roles":["director"],"email":"cleo@example.com"}`), 201, "other roles")
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/ubos", token, `{"fullName":"Api Owner","roles":["ubo"],"ownershipPercent":5}`), 201, "other ownership")

	if rows := in.uboRows("ubo-twice"); len(rows) != 5 {
		t.Errorf("rows %d, want 5", len(rows))
	}
	n := 0
	for _, h := range in.historyTypes("ubo-twice") {
		if h == "applicant.updated:sdk" {
			n++
		}
	}
	if n != 4 {
		t.Errorf("history %v: want four applicant.updated by sdk, one per row added", in.historyTypes("ubo-twice"))
	}
}
