package server_test

import (
	"fmt"
	"slices"
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
	in := start(t)
	t.Run("OK", func(t *testing.T) {
		r := in.expect(201, "POST", "/v1/applicants", map[string]any{
			"externalUserId": "a.b_c:d@e-1", "firstName": "Ada", "lastName": "Lovelace", "dateOfBirth": "1990-02-28",
			"nationality": "GBR", "email": "ada@example.com", "phone": "+44 20 7946 0958",
			"gender": 42, "address": map[string]any{"nested": true}, "companyName": []int{1}, "bogus": "x",
		})
		if r.Header.Get("Location") != "/v1/applicants/a.b_c:d@e-1" {
			t.Errorf("Location %q", r.Header.Get("Location"))
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
		again := in.expect(200, "POST", "/v1/applicants", map[string]any{"externalUserId": "dup", "lastName": "Two", "nationality": "nope"}).m(t)
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
			{map[string]any{"externalUserId": "v7", "phone": "call me"}, "phone"},
			{map[string]any{"externalUserId": "v8", "firstName": 7}, "firstName"},
			{map[string]any{"externalUserId": "v9", "verificationLevelName": "full-kyc-level", "gender": "robot"}, "gender"},
			{map[string]any{"externalUserId": "v10", "verificationLevelName": "kyb-level"}, "verificationLevelName"},
			{map[string]any{"externalUserId": "v11", "type": "company", "legalForm": "corporation"}, "legalForm"},
			{map[string]any{"externalUserId": "v12", "type": "company", "country": "DE"}, "country"},
			{map[string]any{"externalUserId": "v13", "type": "company", "incorporationDate": "2021-13-01"}, "incorporationDate"},
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
	a = in.expect(200, "PATCH", "/v1/applicants/lk", map[string]any{"gender": 5, "address": "x", "companyName": false}).m(t)
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
	in.expect(404, "PATCH", "/v1/applicants/nobody", map[string]any{"firstName": "x"})
	want := []string{"applicant.updated:partner", "applicant.updated:partner", "applicant.created:partner"}
	if h := in.historyTypes("lk"); !slices.Equal(h, want) {
		t.Fatalf("history %v, want %v", h, want)
	}
}

func TestCompanyCountryLockedInFlight(t *testing.T) {
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
