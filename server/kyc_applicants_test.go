package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func errField(t *testing.T, r *response) (string, string) {
	t.Helper()
	e := r.m(t)["error"].(map[string]any)
	f, _ := e["field"].(string)
	return e["code"].(string), f
}

func TestCreateApplicant(t *testing.T) {
	t.Parallel()
	in := start(t)
	t.Run("OK", func(t *testing.T) {
		r := in.expect(201, "POST", "/v1/applicants", map[string]any{
			"externalUserId": "a.b_c:d@e-1", "firstName": "Ada", "lastName": "Lovelace", "dateOfBirth": "1990-02-28",
			"nationality": "GBR", "email": "ada@example.com", "phone": "+44 20 7946 0958",
			"gender": 42, "address": map[string]any{"nested": true}, "companyName": []int{1}, "bogus": "x",
		}, beyondContract, droppedField)
		if r.Header.Get("Location") != "/v1/applicants/a.b_c:d@e-1" {
			t.Errorf("Location %q", r.Header.Get("Location"))
		}
		// "." and ".." are valid ids: their Location, resolved as a client
		// resolves a reference (RFC 3986 §5.2.4), still names the applicant.
		for _, id := range []string{".", ".."} {
			created := in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": id})
			ref, err := url.Parse(created.Header.Get("Location"))
			if err != nil {
				t.Fatal(err)
			}
			base, _ := url.Parse(in.URL + "/v1/applicants")
			var got struct{ ExternalUserID string }
			in.expect(200, "GET", base.ResolveReference(ref).EscapedPath(), nil).json(t, &got)
			if got.ExternalUserID != id {
				t.Errorf("Location %q of %q leads to %q", created.Header.Get("Location"), id, got.ExternalUserID)
			}
		}
		a := r.m(t)
		info := a["info"].(map[string]any)
		if info["firstName"] != "Ada" || info["gender"] != nil || info["address"] != nil {
			t.Errorf("info %v", info)
		}
		if _, ok := a["companyInfo"]; ok {
			t.Errorf("companyInfo on an individual")
		}
		locked := fmt.Sprint(a["lockedFields"])
		if locked != "[firstName lastName dateOfBirth nationality email phone]" {
			t.Errorf("lockedFields %s", locked)
		}
		for _, k := range []string{"id", "externalUserId", "type", "verificationLevelName", "status", "riskLevel", "documents", "review", "monitoring", "createdAtUtc", "updatedAtUtc"} {
			if _, ok := a[k]; !ok {
				t.Errorf("no %s in %v", k, a)
			}
		}
		rev := a["review"].(map[string]any)
		if rev["reviewStatus"] != "pending" || rev["reviewAnswer"] != nil || rev["rejectLabels"] == nil {
			t.Errorf("review %v", rev)
		}
	})
	t.Run("Existing", func(t *testing.T) {
		first := in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "dup", "lastName": "One"}).m(t)
		again := in.expect(200, "POST", "/v1/applicants", map[string]any{"externalUserId": "dup", "lastName": "Two", "nationality": "nope"}, beyondContract, existingApplicant).m(t)
		if again["id"] != first["id"] || again["info"].(map[string]any)["lastName"] != "One" {
			t.Errorf("second create changed the applicant: %v", again)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		codes := make([]int, 16)
		ids := make([]string, 16)
		for i := range codes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := in.do("POST", "/v1/applicants", map[string]any{"externalUserId": "race", "lastName": "R"})
				codes[i] = r.Status
				ids[i] = r.m(t)["id"].(string)
			}()
		}
		wg.Wait()
		created := 0
		for i, c := range codes {
			if c == 201 {
				created++
			} else if c != 200 {
				t.Errorf("status %d", c)
			}
			if ids[i] != ids[0] {
				t.Errorf("two applicants for one externalUserId")
			}
		}
		if created != 1 {
			t.Errorf("%d creations, want 1", created)
		}
		var l struct{ Items []map[string]any }
		in.expect(200, "GET", "/v1/applicants?limit=200", nil).json(t, &l)
		n := 0
		for _, it := range l.Items {
			if it["externalUserId"] == "race" {
				n++
			}
		}
		if n != 1 {
			t.Errorf("list holds %d applicants race", n)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, c := range []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{}, "externalUserId"},
			{map[string]any{"externalUserId": ""}, "externalUserId"},
			{map[string]any{"externalUserId": "has space"}, "externalUserId"},
			{map[string]any{"externalUserId": strings.Repeat("x", 101)}, "externalUserId"},
			{map[string]any{"externalUserId": 12}, "externalUserId"},
			{map[string]any{"externalUserId": "v1", "type": "robot"}, "type"},
			{map[string]any{"externalUserId": "v2", "nationality": "deu"}, "nationality"},
			{map[string]any{"externalUserId": "v3", "nationality": "XXX"}, "nationality"},
			{map[string]any{"externalUserId": "v4", "dateOfBirth": "1990-02-30"}, "dateOfBirth"},
			{map[string]any{"externalUserId": "v5", "dateOfBirth": "01/02/1990"}, "dateOfBirth"},
			{map[string]any{"externalUserId": "v6", "email": "not-an-email"}, "email"},
			// What JSON Schema's email format (the document's) refuses, a
			// client validating answers would refuse too: a domain label
			// starting with a hyphen or holding an underscore, non-ASCII.
			{map[string]any{"externalUserId": "v6a", "email": "ada@-example.com"}, "email"},
			{map[string]any{"externalUserId": "v6b", "email": "a_b@ex_ample.com"}, "email"},
			{map[string]any{"externalUserId": "v6c", "email": "ÄDA@bücher.de"}, "email"},
			{map[string]any{"externalUserId": "v6d", "email": "ada@localhost"}, "email"},
			{map[string]any{"externalUserId": "v7", "phone": "call me"}, "phone"},
			{map[string]any{"externalUserId": "v8", "firstName": 7}, "firstName"},
			{map[string]any{"externalUserId": "v9", "verificationLevelName": "full-kyc-level", "gender": "robot"}, "gender"},
			{map[string]any{"externalUserId": "v10", "verificationLevelName": "kyb-level"}, "verificationLevelName"},
			{map[string]any{"externalUserId": "v11", "type": "company", "legalForm": "corporation"}, "legalForm"},
			{map[string]any{"externalUserId": "v12", "type": "company", "country": "DE"}, "country"},
			{map[string]any{"externalUserId": "v13", "type": "company", "incorporationDate": "2021-13-01"}, "incorporationDate"},
			// Control characters: a NUL in a name, a line break outside an address.
			{map[string]any{"externalUserId": "v14", "firstName": "Ada\u0000"}, "firstName"},
			{map[string]any{"externalUserId": "v15", "type": "company", "companyName": "Acme\nLtd"}, "companyName"},
		} {
			r := in.expect(400, "POST", "/v1/applicants", c.body)
			if _, f := errField(t, r); f != c.field {
				t.Errorf("%v: field %q, want %q (%s)", c.body, f, c.field, r.Body)
			}
		}
		in.expect(400, "POST", "/v1/applicants", "{not json")
		in.expect(400, "POST", "/v1/applicants", "[]")
		r := in.expect(404, "POST", "/v1/applicants", map[string]any{"externalUserId": "v20", "verificationLevelName": "no-such-level"})
		if c, _ := errField(t, r); c != "level_not_found" {
			t.Errorf("code %s", c)
		}
		in.expect(404, "GET", "/v1/applicants/v1", nil)
	})
	t.Run("Company", func(t *testing.T) {
		r := in.expect(201, "POST", "/v1/applicants", map[string]any{
			"externalUserId": "acme", "type": "company", "companyName": "Acme", "registrationNumber": "HRB 1",
			"legalForm": "GmbH", "country": "DEU", "incorporationDate": "2001-01-01", "firstName": "dropped",
			"email": "office@acme.example",
		}).m(t)
		if r["verificationLevelName"] != "kyb-level" {
			t.Errorf("level %v", r["verificationLevelName"])
		}
		ci := r["companyInfo"].(map[string]any)
		if ci["legalForm"] != "gmbh" || ci["email"] != "office@acme.example" {
			t.Errorf("companyInfo %v", ci)
		}
		if _, ok := r["info"]; ok {
			t.Errorf("info on a company")
		}
		c := in.expect(200, "GET", "/v1/applicants/acme/company-info", nil).m(t)
		if c["legalForm"] != "gmbh" || c["companyName"] != "Acme" || c["verificationLevelName"] != "kyb-level" || c["status"] != "active" {
			t.Errorf("company-info %v", c)
		}
		in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "person"})
		if code, _ := errField(t, in.expect(400, "GET", "/v1/applicants/person/company-info", nil)); code != "not_a_company" {
			t.Errorf("code %s", code)
		}
		c = in.expect(200, "PATCH", "/v1/applicants/acme/company-info", map[string]any{"legalForm": "AG", "registeredAddress": "Main St 1"}).m(t)
		if c["legalForm"] != "ag" || c["registeredAddress"] != "Main St 1" {
			t.Errorf("patched company-info %v", c)
		}
	})
}

func TestLocks(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, _ := in.kycReceiver()
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "lk", "firstName": "Ada", "lastName": "L", "gender": "female"})
	rc.nextOfType(t, "applicantCreated")
	locked := func() string {
		return fmt.Sprint(in.expect(200, "GET", "/v1/applicants/lk", nil).m(t)["lockedFields"])
	}
	if l := locked(); l != "[firstName lastName]" {
		t.Fatalf("kept values locked, dropped gender not: %s", l)
	}
	// A value replaces and stays locked; a new value locks.
	a := in.expect(200, "PATCH", "/v1/applicants/lk", map[string]any{"firstName": "Augusta", "nationality": "GBR"}).m(t)
	if a["info"].(map[string]any)["firstName"] != "Augusta" || fmt.Sprint(a["lockedFields"]) != "[firstName lastName nationality]" {
		t.Fatalf("patched %v", a)
	}
	ev := rc.nextOfType(t, "applicantPersonalInfoChanged")
	if !strings.Contains(string(ev.Body), `"fields":["firstName","nationality"]`) {
		t.Errorf("event %s", ev.Body)
	}
	// null clears and unlocks.
	a = in.expect(200, "PATCH", "/v1/applicants/lk", map[string]any{"firstName": nil}).m(t)
	if a["info"].(map[string]any)["firstName"] != nil || fmt.Sprint(a["lockedFields"]) != "[lastName nationality]" {
		t.Fatalf("cleared %v", a)
	}
	// Fields the level does not enable are dropped, whatever their type.
	a = in.expect(200, "PATCH", "/v1/applicants/lk", map[string]any{"gender": 5, "address": "x", "companyName": false}, beyondContract, droppedField).m(t)
	if fmt.Sprint(a["lockedFields"]) != "[lastName nationality]" {
		t.Fatalf("dropped fields locked: %v", a)
	}
	// Bad values: 400 naming the field, nothing written.
	r := in.expect(400, "PATCH", "/v1/applicants/lk", map[string]any{"lastName": "New", "nationality": "ZZZ"})
	if _, f := errField(t, r); f != "nationality" {
		t.Errorf("field %q", f)
	}
	if in.expect(200, "GET", "/v1/applicants/lk", nil).m(t)["info"].(map[string]any)["lastName"] != "L" {
		t.Errorf("half-written patch")
	}
	// A field locked again takes its place in field order.
	a = in.expect(200, "PATCH", "/v1/applicants/lk", map[string]any{"firstName": "Ada"}).m(t)
	if fmt.Sprint(a["lockedFields"]) != "[firstName lastName nationality]" {
		t.Errorf("locked again: %v", a["lockedFields"])
	}
	in.expect(404, "PATCH", "/v1/applicants/nobody", map[string]any{"firstName": "x"})
	want := []string{"applicant.updated:partner", "applicant.updated:partner", "applicant.updated:partner", "applicant.created:partner"}
	if h := in.historyTypes("lk"); !slices.Equal(h, want) {
		t.Fatalf("history %v, want %v", h, want)
	}
}

// TestCompanyCountryLockedWhileSubmitted: a company whose every required
// step holds data is submitted, in flight by SPEC §2, before anyone sends
// it to review: its country answers 409 until a reset.
func TestCompanyCountryLockedWhileSubmitted(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/levels", map[string]any{"name": "docs-only", "applicantType": "company",
		"steps": []map[string]any{{"kind": "company_docs"}}, "companyDataFields": []string{"companyName", "registrationNumber", "country"}})
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "cs", "type": "company", "verificationLevelName": "docs-only",
		"companyName": "Acme", "registrationNumber": "1", "country": "DEU"})
	in.expect(200, "PATCH", "/v1/applicants/cs/company-info", map[string]any{"country": "AUT"})
	in.expect(201, "POST", "/v1/applicants/cs/documents", map[string]any{"kind": "company_docs", "docType": "certificate_of_incorporation",
		"image": b64(pngImage(t, 210, 210, 60))})
	wantStatus(t, in.status("cs"), "submitted", nil, nil, 0)
	if c, _ := errField(t, in.expect(409, "PATCH", "/v1/applicants/cs/company-info", map[string]any{"country": "FRA"})); c != "review_in_progress" {
		t.Fatalf("country while submitted: code %s, want review_in_progress", c)
	}
	in.expect(200, "POST", "/v1/applicants/cs/reset", nil)
	in.expect(200, "PATCH", "/v1/applicants/cs/company-info", map[string]any{"country": "FRA"})
}

func TestCompanyCountryLockedInFlight(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "co", "type": "company", "companyName": "Acme", "registrationNumber": "1", "country": "DEU"})
	r := in.expect(409, "POST", "/v1/applicants/co/review", nil)
	if c, _ := errField(t, r); c != "missing_step_data" {
		t.Fatalf("code %s", c)
	}
	for i, dt := range []string{"certificate_of_incorporation", "register_of_shareholders"} {
		d := in.expect(201, "POST", "/v1/applicants/co/documents", map[string]any{"kind": "company_docs", "docType": dt, "image": b64(pngImage(t, 210, 210, uint64(40+i)))}).m(t)
		if d["docType"] != dt || d["contentType"] != "image/png" || len(d["sha256"].(string)) != 64 {
			t.Fatalf("document %v", d)
		}
	}
	// kyb-level's aml step gets its data at submission: still pending,
	// not in flight, so the country may change.
	wantStatus(t, in.status("co"), "pending", nil, nil, 0)
	in.expect(200, "PATCH", "/v1/applicants/co/company-info", map[string]any{"country": "DEU"})
	in.expect(200, "POST", "/v1/applicants/co/review", nil)
	r = in.expect(409, "PATCH", "/v1/applicants/co/company-info", map[string]any{"country": "FRA"})
	if c, _ := errField(t, r); c != "review_in_progress" {
		t.Fatalf("code %s", c)
	}
	in.expect(200, "PATCH", "/v1/applicants/co/company-info", map[string]any{"registeredAddress": "Elsewhere 2"})
	in.advance(2 * time.Second)
	rc.reviewed(t, secret)
	wantStatus(t, in.status("co"), "completed", "GREEN", nil, 1)
	wantSteps(t, in.stepStatuses("co"), map[string]string{"company_docs": "completed/GREEN", "questionnaire": "completed/GREEN", "aml": "completed/GREEN"})
	in.expect(200, "PATCH", "/v1/applicants/co/company-info", map[string]any{"country": "FRA"})
	want := []string{"applicant.updated:partner", "applicant.approved:system", "applicant.updated:partner", "aml.run:system",
		"applicant.sent_to_review:partner", "applicant.created:partner"}
	if h := in.historyTypes("co"); !slices.Equal(h, want) {
		t.Fatalf("history %v, want %v", h, want)
	}
}

func TestApplicantActions(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, _ := in.kycReceiver()
	in.createApplicant("act", "Green")
	rc.nextOfType(t, "applicantCreated")
	status := func(path, method string) string {
		t.Helper()
		return in.expect(200, method, "/v1/applicants/act"+path, nil).m(t)["status"].(string)
	}
	if s := status("/deactivate", "POST"); s != "deactivated" {
		t.Fatalf("status %s", s)
	}
	rc.nextOfType(t, "applicantDeactivated")
	in.expect(409, "POST", "/v1/applicants/act/verify", verifyBody(t, 60))
	in.expect(409, "POST", "/v1/applicants/act/verification-sessions", nil)
	if s := status("/activate", "POST"); s != "active" {
		t.Fatalf("status %s", s)
	}
	rc.nextOfType(t, "applicantActivated")
	if s := status("/blocklist", "POST"); s != "blocklisted" {
		t.Fatalf("status %s", s)
	}
	in.expect(409, "POST", "/v1/applicants/act/activate", nil)
	if s := status("/blocklist", "DELETE"); s != "active" {
		t.Fatalf("status %s", s)
	}
	if m := in.expect(200, "POST", "/v1/applicants/act/monitoring", nil).m(t)["monitoring"]; m != true {
		t.Fatalf("monitoring %v", m)
	}
	if m := in.expect(200, "DELETE", "/v1/applicants/act/monitoring", nil).m(t)["monitoring"]; m != false {
		t.Fatalf("monitoring %v", m)
	}

	// Level change: steps rebuilt; wrong type 400; unknown 404.
	if c, _ := errField(t, in.expect(404, "POST", "/v1/applicants/act/levels/nope", nil)); c != "level_not_found" {
		t.Errorf("code %s", c)
	}
	if _, f := errField(t, in.expect(400, "POST", "/v1/applicants/act/levels/kyb-level", nil)); f != "levelName" {
		t.Errorf("field %s", f)
	}
	a := in.expect(200, "POST", "/v1/applicants/act/levels/full-kyc-level", nil).m(t)
	if a["verificationLevelName"] != "full-kyc-level" || len(in.stepStatuses("act")) != 7 {
		t.Fatalf("level change %v", a)
	}
	ev := rc.nextOfType(t, "applicantLevelChanged")
	var env struct{ Data map[string]any }
	json.Unmarshal(ev.Body, &env)
	if env.Data["previousLevelName"] != "basic-kyc-level" || env.Data["levelName"] != "full-kyc-level" {
		t.Errorf("applicantLevelChanged %s", ev.Body)
	}
	in.expect(200, "POST", "/v1/applicants/act/levels/basic-kyc-level", nil)

	// Reset after a verdict.
	wantStatus(t, in.expect(200, "POST", "/v1/applicants/act/verify", verifyBody(t, 61)).m(t), "completed", "GREEN", nil, 1)
	a = in.expect(200, "POST", "/v1/applicants/act/reset", nil).m(t)
	if r := a["review"].(map[string]any); r["reviewStatus"] != "pending" || r["reviewAnswer"] != nil || a["riskLevel"] != "unknown" {
		t.Fatalf("after reset %v", a)
	}
	rc.nextOfType(t, "applicantReset")
	wantSteps(t, in.stepStatuses("act"), map[string]string{"identity_doc": "pending", "selfie": "pending"})

	want := []string{"applicant.reset:partner", "applicant.approved:system", "enrollment.submitted:partner",
		"applicant.updated:partner", "applicant.updated:partner", "applicant.monitoring_disabled:partner",
		"applicant.monitoring_enabled:partner", "applicant.blocklist_removed:partner", "applicant.blocklisted:partner",
		"applicant.activated:partner", "applicant.deactivated:partner", "applicant.created:partner"}
	if h := in.historyTypes("act"); !slices.Equal(h, want) {
		t.Fatalf("history %v, want %v", h, want)
	}
	for _, p := range []string{"/reset", "/deactivate", "/activate", "/blocklist", "/monitoring", "/review", "/levels/basic-kyc-level", "/verify", "/documents", "/verification-sessions"} {
		in.expect(404, "POST", "/v1/applicants/nobody"+p, map[string]any{})
	}
	for _, p := range []string{"", "/status", "/steps", "/review-history", "/company-info"} {
		in.expect(404, "GET", "/v1/applicants/nobody"+p, nil)
	}
	in.expect(404, "DELETE", "/v1/applicants/nobody", nil)
}

func TestEraseApplicant(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("er", "Green")
	in.createApplicant("keep", "Green")
	shared := verifyBody(t, 70)
	in.expect(200, "POST", "/v1/applicants/er/verify", shared)
	in.expect(200, "POST", "/v1/applicants/keep/verify", shared)
	in.expect(204, "DELETE", "/v1/applicants/er", nil)
	a := in.expect(200, "GET", "/v1/applicants/er", nil).m(t)
	if a["info"].(map[string]any)["lastName"] != nil || len(a["documents"].([]any)) != 0 || len(a["lockedFields"].([]any)) != 0 {
		t.Fatalf("after erase %v", a)
	}
	if h := in.historyTypes("er"); len(h) != 3 {
		t.Fatalf("history after erase %v", h)
	}
	in.expect(204, "DELETE", "/v1/applicants/er", nil)
	in.expect(409, "POST", "/v1/applicants/er/verify", shared)
	// Only reads remain: every action answers 409 applicant_erased and
	// records nothing.
	for _, c := range []struct{ method, path string }{
		{"POST", "deactivate"}, {"POST", "activate"}, {"POST", "blocklist"}, {"DELETE", "blocklist"},
		{"POST", "monitoring"}, {"DELETE", "monitoring"}, {"POST", "reset"}, {"POST", "review"}, {"POST", "levels/full-kyc-level"},
	} {
		if code, _ := errField(t, in.expect(409, c.method, "/v1/applicants/er/"+c.path, nil)); code != "applicant_erased" {
			t.Errorf("%s %s on an erased applicant: code %q, want applicant_erased", c.method, c.path, code)
		}
	}
	if h := in.historyTypes("er"); len(h) != 3 {
		t.Fatalf("history after the refused actions %v", h)
	}
	// The other applicant's copy of the same images stays.
	if docs := in.expect(200, "GET", "/v1/applicants/keep", nil).m(t)["documents"].([]any); len(docs) != 2 {
		t.Fatalf("keep documents %v", docs)
	}
}

// TestInactiveApplicantKeepsItsData: data calls on a deactivated or
// blocklisted applicant are 409 applicant_inactive (OpenAPI, Verification),
// PATCHes and company rows as much as uploads: nothing is stored, no
// history entry or callback is made; once active again they go through.
func TestInactiveApplicantKeepsItsData(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.kycReceiver()
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "ina1", "firstName": "Ann", "lastName": "Doe"})
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "inc1", "type": "company",
		"companyInfo": map[string]any{"companyName": "Acme", "country": "DEU"}})
	in.expect(200, "POST", "/v1/applicants/ina1/deactivate", nil)
	in.expect(200, "POST", "/v1/applicants/inc1/blocklist", nil)
	callbacks := func() int {
		t.Helper()
		return len(in.expect(200, "GET", "/webhooks/deliveries?destination=kyc&limit=200", nil).m(t)["items"].([]any))
	}
	before, sent := len(in.historyTypes("ina1"))+len(in.historyTypes("inc1")), callbacks()
	for _, c := range []struct{ method, path string }{
		{"PATCH", "/v1/applicants/ina1"},
		{"PATCH", "/v1/applicants/inc1/company-info"},
		{"PATCH", "/v1/applicants/inc1/company-structure"},
		{"POST", "/v1/applicants/inc1/ubos"},
	} {
		body := map[string]any{"firstName": "Zed"}
		switch {
		case strings.HasSuffix(c.path, "company-info"):
			body = map[string]any{"companyName": "Other"}
		case strings.HasSuffix(c.path, "company-structure"):
			body = map[string]any{"hasNoUbos": true}
		case strings.HasSuffix(c.path, "ubos"):
			body = map[string]any{"fullName": "Eve Roe", "roles": []string{"ubo"}, "ownershipPercent": 30}
		}
		if code, _ := errField(t, in.expect(409, c.method, c.path, body)); code != "applicant_inactive" {
			t.Errorf("%s %s: %s, want applicant_inactive", c.method, c.path, code)
		}
	}
	if a := in.expect(200, "GET", "/v1/applicants/ina1", nil).m(t); a["info"].(map[string]any)["firstName"] != "Ann" {
		t.Errorf("firstName %v after a refused PATCH", a["info"])
	}
	if n := len(in.expect(200, "GET", "/v1/applicants/inc1/ubos", nil).m(t)["items"].([]any)); n != 0 {
		t.Errorf("%d rows after a refused POST", n)
	}
	if after := len(in.historyTypes("ina1")) + len(in.historyTypes("inc1")); after != before {
		t.Errorf("history grew from %d to %d entries", before, after)
	}
	if n := callbacks(); n != sent {
		t.Errorf("%d callbacks made, want %d", n, sent)
	}
	in.expect(200, "POST", "/v1/applicants/ina1/activate", nil)
	in.expect(200, "PATCH", "/v1/applicants/ina1", map[string]any{"firstName": "Zed"})
}

func TestListApplicants(t *testing.T) {
	t.Parallel()
	in := start(t)
	for _, id := range []string{"l1", "l2", "l3"} {
		in.createApplicant(id, "Green")
	}
	in.expect(200, "POST", "/v1/applicants/l2/verify", verifyBody(t, 80))
	in.expect(200, "POST", "/v1/applicants/l3/deactivate", nil)
	ids := func(q string) []string {
		var l struct {
			Items      []struct{ ExternalUserID string }
			NextCursor *string
		}
		in.expect(200, "GET", "/v1/applicants"+q, nil).json(t, &l)
		var out []string
		for _, it := range l.Items {
			out = append(out, it.ExternalUserID)
		}
		if l.NextCursor != nil {
			out = append(out, "next:"+*l.NextCursor)
		}
		return out
	}
	if got := ids(""); !slices.Equal(got, []string{"l3", "l2", "l1"}) {
		t.Errorf("list %v", got)
	}
	if got := ids("?reviewStatus=completed"); !slices.Equal(got, []string{"l2"}) {
		t.Errorf("completed %v", got)
	}
	if got := ids("?status=deactivated"); !slices.Equal(got, []string{"l3"}) {
		t.Errorf("deactivated %v", got)
	}
	first := ids("?limit=2")
	if len(first) != 3 || first[0] != "l3" {
		t.Fatalf("page 1 %v", first)
	}
	if got := ids("?limit=2&cursor=" + first[2][5:]); !slices.Equal(got, []string{"l1"}) {
		t.Errorf("page 2 %v", got)
	}
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "c1", "type": "company", "companyName": "Co"})
	if got := ids("?type=company"); !slices.Equal(got, []string{"c1"}) {
		t.Errorf("companies %v", got)
	}
	if got := ids("?type=individual&status=active"); !slices.Equal(got, []string{"l2", "l1"}) {
		t.Errorf("active individuals %v", got)
	}
	if _, f := errField(t, in.expect(400, "GET", "/v1/applicants?type=person", nil)); f != "type" {
		t.Errorf("type=person: field %q", f)
	}
	in.expect(400, "GET", "/v1/applicants?status=sleeping", nil)
	in.expect(400, "GET", "/v1/applicants?reviewStatus=done", nil)
	in.expect(400, "GET", "/v1/applicants?limit=500", nil)
}

func TestKYCCatalog(t *testing.T) {
	t.Parallel()
	in := start(t)
	var c struct {
		EventTypes []struct{ Name, EntityType, Description string }
	}
	in.expect(200, "GET", "/v1/webhooks/events/catalog", nil).json(t, &c)
	if len(c.EventTypes) != 9 || c.EventTypes[3].Name != "applicantReviewed" || c.EventTypes[3].EntityType != "applicant" {
		t.Fatalf("catalog %+v", c)
	}
}

// TestEraseDuringReview: erasing an applicant under review voids the
// review; its steps wait for data again instead of staying in_review.
func TestEraseDuringReview(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("er2", "Green")
	in.expect(201, "POST", "/v1/applicants/er2/documents", map[string]any{"kind": "identity_doc", "image": b64(pngImage(t, 220, 220, 71))})
	in.expect(201, "POST", "/v1/applicants/er2/documents", map[string]any{"kind": "selfie", "image": b64(pngImage(t, 220, 220, 72))})
	in.expect(200, "POST", "/v1/applicants/er2/review", nil)
	wantStatus(t, in.status("er2"), "in_review", nil, nil, 1)
	in.expect(204, "DELETE", "/v1/applicants/er2", nil)
	wantSteps(t, in.stepStatuses("er2"), map[string]string{"identity_doc": "pending", "selfie": "pending"})
	wantStatus(t, in.status("er2"), "pending", nil, nil, 1)
	in.advance(3 * time.Second)
	wantStatus(t, in.status("er2"), "pending", nil, nil, 1)
}

func TestReviewHistory(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("h1", "Green")
	// 3 partner-visible entries per round trip of monitoring; make 250 in all.
	for i := 0; i < 62; i++ {
		in.advance(time.Second)
		in.expect(200, "POST", "/v1/applicants/h1/monitoring", nil)
		in.expect(200, "DELETE", "/v1/applicants/h1/monitoring", nil)
		in.expect(200, "POST", "/v1/applicants/h1/deactivate", nil)
		in.expect(200, "POST", "/v1/applicants/h1/activate", nil)
	}
	// Internal entries never show: a level edit and a document upload.
	in.expect(201, "POST", "/v1/applicants/h1/documents", map[string]any{"kind": "selfie", "image": b64(pngImage(t, 200, 200, 1))})

	type page struct {
		Items []struct {
			ID, AtUtc, EventType, ActorType string
			Details                         map[string]any
		}
		TotalItems int
	}
	get := func(q string) page {
		var p page
		in.expect(200, "GET", "/v1/applicants/h1/review-history"+q, nil).json(t, &p)
		return p
	}
	t.Run("Default", func(t *testing.T) {
		p := get("")
		if len(p.Items) != 50 || p.TotalItems != 249 {
			t.Fatalf("%d items, total %d", len(p.Items), p.TotalItems)
		}
		if p.Items[0].EventType != "applicant.activated" || p.Items[0].ActorType != "partner" || p.Items[0].ID == "" || p.Items[0].Details == nil {
			t.Errorf("newest %+v", p.Items[0])
		}
		for i := 1; i < len(p.Items); i++ {
			if p.Items[i].AtUtc > p.Items[i-1].AtUtc {
				t.Fatalf("not newest first at %d", i)
			}
		}
	})
	t.Run("AtMost200", func(t *testing.T) {
		p := get("?limit=200")
		if len(p.Items) != 200 || p.TotalItems != 249 {
			t.Fatalf("%d items, total %d", len(p.Items), p.TotalItems)
		}
		if p = get("?limit=1"); len(p.Items) != 1 {
			t.Fatalf("limit=1: %d", len(p.Items))
		}
	})
	t.Run("EventType", func(t *testing.T) {
		p := get("?eventType=applicant.monitoring_enabled&limit=200")
		if len(p.Items) != 62 || p.TotalItems != 62 {
			t.Fatalf("%d items, total %d", len(p.Items), p.TotalItems)
		}
		if p = get("?eventType=applicant.created"); p.TotalItems != 1 || p.Items[0].EventType != "applicant.created" {
			t.Fatalf("created: %+v", p)
		}
		if p = get("?eventType=aml.run"); p.TotalItems != 0 || p.Items == nil {
			t.Fatalf("aml.run: %+v", p)
		}
	})
	t.Run("Since", func(t *testing.T) {
		since := testStart.Add(60 * time.Second).Format("2006-01-02T15:04:05.000Z")
		p := get("?since=" + url.QueryEscape(since))
		// Rounds 60, 61 and 62 happened at or after since: 12 entries.
		if p.TotalItems != 12 {
			t.Fatalf("since %s: total %d", since, p.TotalItems)
		}
		if p = get("?since=" + url.QueryEscape("2026-11-21T05:01:00+00:00")); p.TotalItems != 12 {
			t.Fatalf("offset form: total %d", p.TotalItems)
		}
		// An unencoded "+" arrives as a space; a timestamp without an offset
		// is UTC; a calendar date is its midnight UTC.
		for q, want := range map[string]int{
			"2026-11-21T05:01:00+00:00": 12, "2026-11-21T06:01:00+01:00": 12, "2026-11-21T05:01:00": 12,
			"2026-11-21": 249, "2026-11-22": 0,
			// RFC 3339 §5.6: "t" and "z" in lower case, a space for the "T".
			"2026-11-21t05:01:00.000z": 12, "2026-11-21%2005:01:00Z": 12,
		} {
			if p = get("?since=" + q); p.TotalItems != want {
				t.Errorf("since=%s: total %d, want %d", q, p.TotalItems, want)
			}
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for q, field := range map[string]string{
			"?limit=0": "limit", "?limit=201": "limit", "?limit=abc": "limit", "?limit=-1": "limit",
			"?since=yesterday": "since", "?since=2026-13-01T00:00:00Z": "since", "?since=": "since",
			"?eventType=level.updated": "eventType", "?eventType=applicantReviewed": "eventType", "?eventType=document.added": "eventType",
		} {
			r := in.expect(400, "GET", "/v1/applicants/h1/review-history"+q, nil)
			if _, f := errField(t, r); f != field {
				t.Errorf("%s: field %q, want %q", q, f, field)
			}
		}
		in.expect(404, "GET", "/v1/applicants/nobody/review-history", nil)
	})
	t.Run("NoInternal", func(t *testing.T) {
		in.expect(200, "PATCH", "/v1/levels/basic-kyc-level", map[string]any{"personalInfoFields": []string{"firstName", "lastName"}})
		for _, it := range get("?limit=200").Items {
			switch it.EventType {
			case "level.updated", "document.added", "review.check":
				t.Fatalf("internal entry %s returned", it.EventType)
			}
		}
		if p := get("?limit=200"); p.TotalItems != 249 {
			t.Fatalf("total %d", p.TotalItems)
		}
	})
}

// TestReviewStatusPath walks SPEC 3.3's path pending → submitted →
// in_review → completed and checks that each state is observable on the
// steps, the status, the applicant and the list filter.
func TestReviewStatusPath(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	in.createApplicant("path", "Green")
	listed := func(reviewStatus string) bool {
		var l struct {
			Items []struct{ ExternalUserID string }
		}
		in.expect(200, "GET", "/v1/applicants?reviewStatus="+reviewStatus, nil).json(t, &l)
		for _, it := range l.Items {
			if it.ExternalUserID == "path" {
				return true
			}
		}
		return false
	}
	review := func() string {
		return in.expect(200, "GET", "/v1/applicants/path", nil).m(t)["review"].(map[string]any)["reviewStatus"].(string)
	}
	wantSteps(t, in.stepStatuses("path"), map[string]string{"identity_doc": "pending", "selfie": "pending"})

	// Data for one step: that step is submitted, the applicant still waits.
	in.expect(201, "POST", "/v1/applicants/path/documents", map[string]any{"kind": "identity_doc", "image": b64(pngImage(t, 220, 220, 31))})
	wantSteps(t, in.stepStatuses("path"), map[string]string{"identity_doc": "submitted", "selfie": "pending"})
	wantStatus(t, in.status("path"), "pending", nil, nil, 0)

	// Every required step has data: submitted, not yet sent to review.
	in.expect(201, "POST", "/v1/applicants/path/documents", map[string]any{"kind": "selfie", "image": b64(jpegImage(t, 220, 220, 32))})
	wantSteps(t, in.stepStatuses("path"), map[string]string{"identity_doc": "submitted", "selfie": "submitted"})
	wantStatus(t, in.status("path"), "submitted", nil, nil, 0)
	if review() != "submitted" || !listed("submitted") {
		t.Fatalf("applicant not submitted")
	}

	// Sent to review: in_review until review_delay (2s) passes.
	in.expect(200, "POST", "/v1/applicants/path/review", nil)
	pending := rc.nextOfType(t, "applicantPending")
	if pending.Header.Get("X-Webhook-Event-Type") != "applicantPending" {
		t.Fatalf("applicantPending headers %v", pending.Header)
	}
	wantSteps(t, in.stepStatuses("path"), map[string]string{"identity_doc": "in_review", "selfie": "in_review"})
	wantStatus(t, in.status("path"), "in_review", nil, nil, 1)
	in.advance(time.Second)
	wantStatus(t, in.status("path"), "in_review", nil, nil, 1)
	if review() != "in_review" || !listed("in_review") || listed("submitted") {
		t.Fatalf("applicant not in_review")
	}
	// Data cannot change under review.
	in.expect(409, "POST", "/v1/applicants/path/documents", map[string]any{"kind": "selfie", "image": b64(jpegImage(t, 220, 220, 33))})

	in.advance(time.Second)
	if d := rc.reviewed(t, secret); d["reviewStatus"] != "completed" {
		t.Fatalf("applicantReviewed %v", d)
	}
	wantSteps(t, in.stepStatuses("path"), map[string]string{"identity_doc": "completed/GREEN", "selfie": "completed/GREEN"})
	wantStatus(t, in.status("path"), "completed", "GREEN", nil, 1)
	if review() != "completed" || !listed("completed") || listed("in_review") {
		t.Fatalf("applicant not completed")
	}
}

// TestEmptyLevelNameIsDefault: an empty verificationLevelName means the
// type's default level, like an absent one.
func TestEmptyLevelNameIsDefault(t *testing.T) {
	t.Parallel()
	in := start(t)
	a := in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "e1", "verificationLevelName": ""}).m(t)
	if a["verificationLevelName"] != "basic-kyc-level" {
		t.Fatalf("level %v", a["verificationLevelName"])
	}
	c := in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "e2", "type": "company", "verificationLevelName": nil}).m(t)
	if c["verificationLevelName"] != "kyb-level" {
		t.Fatalf("level %v", c["verificationLevelName"])
	}
}

// TestSubmittedIsInFlight follows SPEC §2's definition: an applicant whose
// reviewStatus is submitted (every required step holds data), in_review or
// awaitingOperatorReview is in flight, and its level cannot change (§3.2);
// one still pending can, keeping the data it holds.
func TestSubmittedIsInFlight(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("nf", "Green")
	in.expect(201, "POST", "/v1/applicants/nf/documents", map[string]any{"kind": "identity_doc", "image": b64(pngImage(t, 220, 220, 41))})
	wantStatus(t, in.status("nf"), "pending", nil, nil, 0)
	in.expect(200, "POST", "/v1/applicants/nf/levels/full-kyc-level", nil)
	// The rebuilt steps show the data the applicant already holds.
	wantSteps(t, in.stepStatuses("nf"), map[string]string{"identity_doc": "submitted", "selfie": "pending", "liveness": "pending",
		"poa": "pending", "questionnaire": "pending", "aml": "pending", "adverse_media": "pending"})
	in.expect(200, "POST", "/v1/applicants/nf/levels/basic-kyc-level", nil)
	in.expect(201, "POST", "/v1/applicants/nf/documents", map[string]any{"kind": "selfie", "image": b64(pngImage(t, 220, 220, 42))})
	wantStatus(t, in.status("nf"), "submitted", nil, nil, 0)
	if code, _ := errField(t, in.expect(409, "POST", "/v1/applicants/nf/levels/full-kyc-level", nil)); code != "review_in_progress" {
		t.Fatalf("level change while submitted: code %q, want review_in_progress", code)
	}
	in.expect(200, "POST", "/v1/applicants/nf/review", nil)
	in.expect(409, "POST", "/v1/applicants/nf/levels/full-kyc-level", nil)
	// A reset clears the review: the level is free again.
	in.expect(200, "POST", "/v1/applicants/nf/reset", nil)
	in.expect(200, "POST", "/v1/applicants/nf/levels/full-kyc-level", nil)
}

// TestFinalHoldsAgainstLevelChange: rebuilding the steps for another level
// would undo a RED FINAL verdict, which holds until reset (SPEC §3.3).
func TestFinalHoldsAgainstLevelChange(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("fin", "Reject")
	wantStatus(t, in.expect(200, "POST", "/v1/applicants/fin/verify", verifyBody(t, 44)).m(t), "completed", "RED", "FINAL", 1)
	if code, _ := errField(t, in.expect(409, "POST", "/v1/applicants/fin/levels/full-kyc-level", nil)); code != "review_final" {
		t.Fatalf("level change after RED FINAL: code %q, want review_final", code)
	}
	in.expect(200, "POST", "/v1/applicants/fin/levels/basic-kyc-level", nil) // its own level: nothing to change
	wantStatus(t, in.status("fin"), "completed", "RED", "FINAL", 1)
	in.expect(200, "POST", "/v1/applicants/fin/reset", nil)
	in.expect(200, "POST", "/v1/applicants/fin/levels/full-kyc-level", nil)
}

// TestCreatedApplicantAnswersItsView: a new applicant is answered with
// exactly the bytes GET /v1/applicants/{id} answers for it (the view its
// write stored); creating it again answers the same applicant with 200.
func TestCreatedApplicantAnswersItsView(t *testing.T) {
	t.Parallel()
	in := start(t)
	for _, body := range []map[string]any{
		{"externalUserId": "view-1", "firstName": "Ada <&>", "lastName": "Lovelace", "email": "ada@example.com"},
		{"externalUserId": "view-2", "type": "company", "companyName": "Acme & \"Sons\""},
	} {
		id := body["externalUserId"].(string)
		created := in.expect(201, "POST", "/v1/applicants", body)
		got := in.expect(200, "GET", "/v1/applicants/"+id, nil)
		if !bytes.Equal(created.Body, got.Body) {
			t.Errorf("%s: POST answered\n%s\nGET answers\n%s", id, created.Body, got.Body)
		}
		if n := created.Header.Get("Content-Length"); n != strconv.Itoa(len(created.Body)) {
			t.Errorf("%s: Content-Length %s for a body of %d bytes", id, n, len(created.Body))
		}
		again := in.expect(200, "POST", "/v1/applicants", body)
		if a, b := again.m(t), got.m(t); a["id"] != b["id"] || a["createdAtUtc"] != b["createdAtUtc"] {
			t.Errorf("%s: creating it again answered %v, want the applicant %v", id, a, b)
		}
	}
}

// TestReviewHistoryReturnsAtMost200: an applicant with 211 partner-visible
// events: review-history returns its 200 newest, all pages together (the
// seed: at most 200 events per applicant), and totalItems counts all 211.
func TestReviewHistoryReturnsAtMost200(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("busy", "Busy")
	for range 105 {
		in.expect(200, "POST", "/v1/applicants/busy/monitoring", nil)
		in.expect(200, "DELETE", "/v1/applicants/busy/monitoring", nil)
	}
	type page struct {
		Items      []struct{ ID, EventType string }
		TotalItems int
		NextCursor *string
	}
	var first, second page
	in.expect(200, "GET", "/v1/applicants/busy/review-history?limit=200", nil).json(t, &first)
	if len(first.Items) != 200 || first.TotalItems != 211 || first.NextCursor != nil {
		t.Fatalf("limit=200: %d items, totalItems %d, nextCursor %v; want 200, 211, none", len(first.Items), first.TotalItems, first.NextCursor)
	}
	// Paged by 150: the same 200 newest, then no cursor.
	in.expect(200, "GET", "/v1/applicants/busy/review-history?limit=150", nil).json(t, &first)
	if first.NextCursor == nil {
		t.Fatal("limit=150: no nextCursor")
	}
	in.expect(200, "GET", "/v1/applicants/busy/review-history?limit=150&cursor="+*first.NextCursor, nil).json(t, &second)
	if len(first.Items)+len(second.Items) != 200 || second.NextCursor != nil || second.TotalItems != 211 {
		t.Fatalf("pages of 150: %d + %d items, last cursor %v; want 200 in all", len(first.Items), len(second.Items), second.NextCursor)
	}
	if first.Items[0].EventType != "applicant.monitoring_disabled" {
		t.Errorf("newest first: %v", first.Items[0])
	}
	// Events added during a walk do not push the walk's own 200 out: its
	// pages end with the oldest of the 200 newest when it began.
	var mid, rest page
	in.expect(200, "GET", "/v1/applicants/busy/review-history?limit=150", nil).json(t, &mid)
	in.expect(200, "POST", "/v1/applicants/busy/monitoring", nil)
	in.expect(200, "DELETE", "/v1/applicants/busy/monitoring", nil)
	in.expect(200, "GET", "/v1/applicants/busy/review-history?limit=150&cursor="+*mid.NextCursor, nil).json(t, &rest)
	walk := append(mid.Items, rest.Items...)
	if len(walk) != 200 || walk[199] != second.Items[len(second.Items)-1] || rest.NextCursor != nil || rest.TotalItems != 213 {
		t.Errorf("a walk with 2 events added between its pages: %d items ending %v, last cursor %v, totalItems %d; want the 200 it began with, ending %v, and 213",
			len(walk), walk[len(walk)-1], rest.NextCursor, rest.TotalItems, second.Items[len(second.Items)-1])
	}
	// A cursor of the release before names only its position, and one
	// may name a newest entry that is not there: either walks on to the
	// 200th newest and no further.
	var all page
	in.expect(200, "GET", "/v1/applicants/busy/review-history?limit=200", nil).json(t, &all)
	for _, c := range []string{all.Items[149].ID, all.Items[149].ID + ",not-an-entry", all.Items[149].ID + "," + all.Items[180].ID} {
		n := 0
		cursor := base64.RawURLEncoding.EncodeToString([]byte("history:" + c))
		for pages := 0; cursor != "" && pages < 40; pages++ {
			var p page
			in.expect(200, "GET", "/v1/applicants/busy/review-history?limit=10&cursor="+cursor, nil).json(t, &p)
			n += len(p.Items)
			cursor = ""
			if p.NextCursor != nil {
				cursor = *p.NextCursor
			}
		}
		if n != 50 {
			t.Errorf("a walk from the 150th newest with cursor %q returned %d, want the 50 older ones of the 200 newest", c, n)
		}
	}
}

// TestLivenessFramesOneByOne: frames added one at a time through
// POST …/documents stay within the 20 an upload of frames may hold: the
// newest are kept (they piled up without bound).
func TestLivenessFramesOneByOne(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "frames", "lastName": "Green", "verificationLevelName": "full-kyc-level"})
	var shas []string
	for i := range 22 {
		var d struct{ Sha256 string }
		in.expect(201, "POST", "/v1/applicants/frames/documents", map[string]any{"kind": "liveness", "image": b64(jpegImage(t, 210, 210, uint64(100+i)))}).json(t, &d)
		shas = append(shas, d.Sha256)
	}
	var a struct {
		Documents []struct{ Kind, Sha256 string }
	}
	in.expect(200, "GET", "/v1/applicants/frames", nil).json(t, &a)
	var kept []string
	for _, d := range a.Documents {
		if d.Kind == "liveness" {
			kept = append(kept, d.Sha256)
		}
	}
	if !slices.Equal(kept, shas[2:]) {
		t.Errorf("liveness frames kept: %d, want the 20 newest of 22", len(kept))
	}
}

// TestApplicantMemberNamesAreExact: the applicant and row bodies are kept
// raw (fields the level does not enable are dropped), yet a member that
// names one of their fields only when case is ignored, or one given twice,
// is a 400 naming it, as for every other body; nothing is written.
// (Before, the last of two won and "LASTNAME" was dropped unnoticed.)
func TestApplicantMemberNamesAreExact(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("exact", "Lovelace")
	in.createCompany("exact-co", "Exact GmbH", map[string]any{"fullName": "Ada Lovelace", "roles": []string{"director"}})
	for _, c := range []struct{ method, path, body, field, want string }{
		{"POST", "/v1/applicants", `{"externalUserId":"dup1","externalUserId":"dup2"}`, "externalUserId", "given twice"},
		{"POST", "/v1/applicants", `{"externalUserId":"dup3","lastName":"a","lastName":"b"}`, "lastName", "given twice"},
		{"POST", "/v1/applicants", `{"externalUserId":"cs1","LASTNAME":"x"}`, "LASTNAME", "case-sensitive (lastName)"},
		{"POST", "/v1/applicants", `{"externalUserId":"co9","type":"company","companyName":"C","ubos":[{"fullName":"A","roles":["director"]},{"fullName":"B","fullName":"C","roles":["director"]}]}`,
			"ubos[1].fullName", "given twice"},
		{"POST", "/v1/applicants", `{"externalUserId":"co9","type":"company","companyName":"C","ubos":[{"FullName":"A","roles":["director"]}]}`,
			"ubos[0].FullName", "case-sensitive (fullName)"},
		{"PATCH", "/v1/applicants/exact", `{"firstName":"x","firstName":"y"}`, "firstName", "given twice"},
		{"PATCH", "/v1/applicants/exact", `{"MIDDLENAME":"x"}`, "MIDDLENAME", "case-sensitive (middleName)"},
		{"PATCH", "/v1/applicants/exact-co/company-info", `{"registeredAddress":"a","registeredAddress":"b"}`, "registeredAddress", "given twice"},
		{"PATCH", "/v1/applicants/exact-co/company-info", `{"EMAIL":"x@y.example"}`, "EMAIL", "case-sensitive (email)"},
		{"POST", "/v1/applicants/exact-co/ubos", `{"fullName":"A","fullName":"B","roles":["director"]}`, "fullName", "given twice"},
		{"POST", "/v1/applicants/exact-co/ubos", `{"FULLNAME":"A","fullName":"B","roles":["director"]}`, "FULLNAME", "case-sensitive (fullName)"},
		{"PATCH", "/v1/applicants/exact-co/ubos/0", `{"ownershipPercent":10,"ownershipPercent":20}`, "ownershipPercent", "given twice"},
	} {
		r := in.expect(400, c.method, c.path, c.body)
		if code, f := errField(t, r); code != "validation_failed" || f != c.field || !strings.Contains(string(r.Body), c.want) {
			t.Errorf("%s %s %s: %s naming %q (%s), want validation_failed naming %q with %q", c.method, c.path, c.body, code, f, r.Body, c.field, c.want)
		}
	}
	for _, id := range []string{"dup1", "dup2", "dup3", "cs1", "co9"} {
		in.expect(404, "GET", "/v1/applicants/"+id, nil)
	}
	a := in.expect(200, "GET", "/v1/applicants/exact", nil).m(t)
	if info := a["info"].(map[string]any); info["firstName"] != "Ada" || info["middleName"] != nil || info["lastName"] != "Lovelace" {
		t.Errorf("refused patches changed the applicant: %v", info)
	}
	var rows struct{ Items []map[string]any }
	in.expect(200, "GET", "/v1/applicants/exact-co/ubos", nil).json(t, &rows)
	if len(rows.Items) != 1 || rows.Items[0]["ownershipPercent"] != 0.0 || rows.Items[0]["fullName"] != "Ada Lovelace" {
		t.Errorf("refused row bodies changed the rows: %v", rows.Items)
	}
	// Members that name no field stay ignored, repeated or in any case.
	in.expect(201, "POST", "/v1/applicants", `{"externalUserId":"extra","lastName":"L","bogus":1,"bogus":2,"BOGUS":3}`)
}

// TestUnblocklistRestoresStatus: removing a blocklisting gives back the
// status the applicant had before it; a deactivated applicant is not
// activated unseen (no applicantActivated would tell the partner).
func TestUnblocklistRestoresStatus(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, _ := in.kycReceiver()
	in.createApplicant("held", "Green")
	rc.nextOfType(t, "applicantCreated")
	in.expect(200, "POST", "/v1/applicants/held/deactivate", nil)
	rc.nextOfType(t, "applicantDeactivated")
	in.expect(200, "POST", "/v1/applicants/held/blocklist", nil)
	if s := in.expect(200, "DELETE", "/v1/applicants/held/blocklist", nil).m(t)["status"]; s != "deactivated" {
		t.Fatalf("status after the blocklisting of a deactivated applicant was removed: %v", s)
	}
	in.expect(409, "POST", "/v1/applicants/held/verify", verifyBody(t, 70))
	rc.none(t, 50*time.Millisecond)
	in.expect(200, "POST", "/v1/applicants/held/activate", nil)
	rc.nextOfType(t, "applicantActivated")
	in.expect(200, "POST", "/v1/applicants/held/blocklist", nil)
	if s := in.expect(200, "DELETE", "/v1/applicants/held/blocklist", nil).m(t)["status"]; s != "active" {
		t.Fatalf("status after the blocklisting of an active applicant was removed: %v", s)
	}
}

// TestCreatedHistoryListsLockedFields: the applicant.created entry lists
// the locked fields as the record does, [] when none is locked.
func TestCreatedHistoryListsLockedFields(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "nolocks"})
	var h struct {
		Items []struct {
			EventType string
			Details   map[string]any
		}
	}
	in.expect(200, "GET", "/v1/applicants/nolocks/review-history?eventType=applicant.created", nil).json(t, &h)
	if len(h.Items) != 1 {
		t.Fatalf("history %+v", h)
	}
	if l, ok := h.Items[0].Details["lockedFields"].([]any); !ok || len(l) != 0 {
		t.Errorf("applicant.created lockedFields %#v, want []", h.Items[0].Details["lockedFields"])
	}
}

// TestFieldLimitsCountCharacters: the personal and company fields are at
// most 200 characters (the addresses 500), counted in characters as the
// hosted UI's maxlength counts them, not in bytes.
func TestFieldLimitsCountCharacters(t *testing.T) {
	t.Parallel()
	in := start(t)
	for i, c := range []struct {
		typ, level, field string
		max               int
	}{
		{"individual", "full-kyc-level", "firstName", 200},
		{"individual", "full-kyc-level", "lastName", 200},
		{"individual", "full-kyc-level", "address", 500},
		{"company", "kyb-level", "companyName", 200},
		{"company", "kyb-level", "registeredAddress", 500},
	} {
		for _, letter := range []string{"Ж", "é", "漢"} {
			body := func(id string, n int) map[string]any {
				return map[string]any{"externalUserId": id, "type": c.typ, "verificationLevelName": c.level,
					c.field: strings.Repeat(letter, n)}
			}
			id := fmt.Sprintf("chars-%d-%x", i, letter)
			a := in.expect(201, "POST", "/v1/applicants", body(id, c.max)).m(t)
			info := a["info"]
			if c.typ == "company" {
				info = a["companyInfo"]
			}
			if got := info.(map[string]any)[c.field]; got != strings.Repeat(letter, c.max) {
				t.Errorf("%s of %d × %s: stored %v", c.field, c.max, letter, got)
			}
			r := in.expect(400, "POST", "/v1/applicants", body(id+"-over", c.max+1))
			if _, f := errField(t, r); f != c.field {
				t.Errorf("%s of %d × %s: field %q", c.field, c.max+1, letter, f)
			}
		}
	}
}

// TestActionsRefuseMalformedBodies: the verification actions take no
// body, yet a malformed one is a client's bug, not consent: 400
// malformed_json and nothing changes (SPEC §2), as on the custody side's
// actions. An empty body and any JSON object are accepted.
func TestActionsRefuseMalformedBodies(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("mal", "Green")
	before := in.historyTypes("mal")
	for _, path := range []string{"/reset", "/deactivate", "/activate", "/blocklist", "/monitoring", "/review", "/levels/full-kyc-level"} {
		for _, body := range []string{`{"x":`, `[1,2]`, `"reset"`, `{} {}`} {
			if r := in.do("POST", "/v1/applicants/mal"+path, body); r.Status != 400 || !strings.Contains(string(r.Body), `"code":"malformed_json"`) {
				t.Errorf("POST %s with %s: %d %s, want 400 malformed_json", path, body, r.Status, r.Body)
			}
		}
	}
	for _, path := range []string{"/blocklist", "/monitoring", ""} { // "": DELETE /v1/applicants/{id} erases
		if r := in.do("DELETE", "/v1/applicants/mal"+path, `{"x":`); r.Status != 400 || !strings.Contains(string(r.Body), `"code":"malformed_json"`) {
			t.Errorf("DELETE %s with a malformed body: %d %s", path, r.Status, r.Body)
		}
	}
	a := in.expect(200, "GET", "/v1/applicants/mal", nil).m(t)
	if a["status"] != "active" || a["monitoring"] != false || a["verificationLevelName"] != "basic-kyc-level" || a["info"].(map[string]any)["lastName"] != "Green" {
		t.Fatalf("a refused action changed the applicant: %v", a)
	}
	if h := in.historyTypes("mal"); !slices.Equal(h, before) {
		t.Fatalf("history %v, want %v", h, before)
	}
	in.expect(200, "POST", "/v1/applicants/mal/deactivate", "")
	in.expect(200, "POST", "/v1/applicants/mal/activate", `{"reason":"ignored"}`)
	in.expect(200, "POST", "/v1/applicants/mal/levels/full-kyc-level", "{}")
}
