package server_test

import (
	"net/url"
	"testing"
)

// TestUboRowsFromHostedUI: a company's hosted-UI session adds rows, through
// the page API and the no-JS form, and they carry source "sdk" (SPEC 3.8).
func TestUboRowsFromHostedUI(t *testing.T) {
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
