package server_test

import (
	"bytes"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLevels(t *testing.T) {
	t.Parallel()
	in := start(t)
	var list struct{ Items []map[string]any }
	in.expect(200, "GET", "/v1/levels", nil).json(t, &list)
	if len(list.Items) != 3 {
		t.Fatalf("%d built-in levels", len(list.Items))
	}
	kyb := in.expect(200, "GET", "/v1/levels/kyb-level", nil).m(t)
	for _, k := range []string{"id", "name", "applicantType", "steps", "personalInfoFields", "companyDataFields", "companyRequiredFields", "companyRequiredDocuments", "questionnaire", "createdAtUtc"} {
		if _, ok := kyb[k]; !ok {
			t.Errorf("level has no %s", k)
		}
	}
	if kyb["applicantType"] != "company" || len(kyb["companyRequiredDocuments"].([]any)) != 2 || len(kyb["companyDataFields"].([]any)) != 8 {
		t.Errorf("kyb-level %v", kyb)
	}
	full := in.expect(200, "GET", "/v1/levels/full-kyc-level", nil).m(t)
	steps := full["steps"].([]any)
	if len(steps) != 7 || steps[6].(map[string]any)["optional"] != true || steps[6].(map[string]any)["kind"] != "adverse_media" {
		t.Errorf("full-kyc-level steps %v", steps)
	}
	if again := in.expect(200, "GET", "/v1/levels/kyb-level", nil).m(t); again["id"] != kyb["id"] {
		t.Errorf("level id changed between reads")
	}
	if c, _ := errField(t, in.expect(404, "GET", "/v1/levels/nope", nil)); c != "level_not_found" {
		t.Errorf("code %s", c)
	}

	lvl := map[string]any{
		"name": "survey-level", "applicantType": "individual",
		"steps":              []map[string]any{{"kind": "identity_doc"}, {"kind": "selfie"}, {"kind": "questionnaire"}},
		"personalInfoFields": []string{"firstName", "lastName"},
		"questionnaire": []map[string]any{
			{"id": "pep", "text": "Are you a PEP?", "type": "boolean", "required": true},
			{"id": "source", "text": "Source of funds", "type": "choice", "options": []string{"salary", "savings"}, "required": true},
			{"id": "note", "text": "Anything else?", "type": "text"},
		},
	}
	created := in.expect(201, "POST", "/v1/levels", lvl).m(t)
	if created["name"] != "survey-level" || created["id"] == "" {
		t.Fatalf("created %v", created)
	}
	in.expect(409, "POST", "/v1/levels", lvl)
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"name": "x y", "applicantType": "individual", "steps": []map[string]any{{"kind": "selfie"}}}, "name"},
		{map[string]any{"name": "a", "applicantType": "robot", "steps": []map[string]any{{"kind": "selfie"}}}, "applicantType"},
		{map[string]any{"name": "b", "applicantType": "individual", "steps": []map[string]any{{"kind": "dance"}}}, "steps[0].kind"},
		{map[string]any{"name": "c", "applicantType": "individual"}, "steps"},
		{map[string]any{"name": "d", "applicantType": "individual", "steps": []map[string]any{{"kind": "selfie"}}, "personalInfoFields": []string{"shoeSize"}}, "personalInfoFields[0]"},
		{map[string]any{"name": "e", "applicantType": "individual", "steps": []map[string]any{{"kind": "questionnaire"}}, "questionnaire": []map[string]any{{"id": "q", "text": "?", "type": "choice"}}}, "questionnaire[0].options"},
		{map[string]any{"name": "f", "applicantType": "individual", "steps": []map[string]any{{"kind": "questionnaire"}}, "questionnaire": []map[string]any{{"id": "q", "text": "?", "type": "essay"}}}, "questionnaire[0].type"},
		{map[string]any{"name": "g", "applicantType": "individual", "steps": "selfie"}, "steps"},
		// A question's id, text and options are text; options are picked
		// from, so each is a non-blank string given once (a null in the
		// list is no option).
		{map[string]any{"name": "q1", "steps": []map[string]any{{"kind": "questionnaire"}}, "questionnaire": []map[string]any{{"id": "q\x00", "text": "?", "type": "text"}}}, "questionnaire[0].id"},
		{map[string]any{"name": "q2", "steps": []map[string]any{{"kind": "questionnaire"}}, "questionnaire": []map[string]any{{"id": "q 1", "text": "?", "type": "text"}}}, "questionnaire[0].id"},
		{map[string]any{"name": "q3", "steps": []map[string]any{{"kind": "questionnaire"}}, "questionnaire": []map[string]any{{"id": "q", "text": "Q\x01", "type": "text"}}}, "questionnaire[0].text"},
		{map[string]any{"name": "q4", "steps": []map[string]any{{"kind": "questionnaire"}}, "questionnaire": []map[string]any{{"id": "q", "text": "?", "type": "choice", "options": []any{"a", nil}}}}, "questionnaire[0].options[1]"},
		{map[string]any{"name": "q5", "steps": []map[string]any{{"kind": "questionnaire"}}, "questionnaire": []map[string]any{{"id": "q", "text": "?", "type": "choice", "options": []any{"a", "  "}}}}, "questionnaire[0].options[1]"},
		{map[string]any{"name": "q6", "steps": []map[string]any{{"kind": "questionnaire"}}, "questionnaire": []map[string]any{{"id": "q", "text": "?", "type": "choice", "options": []any{"a", "b", "a"}}}}, "questionnaire[0].options[2]"},
		{map[string]any{"name": "q7", "steps": []map[string]any{{"kind": "questionnaire"}}, "questionnaire": []map[string]any{{"id": "q", "text": "?", "type": "choice", "options": []any{"a\tb"}}}}, "questionnaire[0].options[0]"},
		// Company data on an individual level is named by the list sent.
		{map[string]any{"name": "h", "applicantType": "individual", "steps": []map[string]any{{"kind": "selfie"}}, "companyRequiredDocuments": []string{"certificate_of_incorporation"}}, "companyRequiredDocuments"},
		{map[string]any{"name": "i", "applicantType": "individual", "steps": []map[string]any{{"kind": "selfie"}}, "companyRequiredFields": []string{"companyName"}}, "companyRequiredFields"},
		{map[string]any{"name": "j", "applicantType": "company", "steps": []map[string]any{{"kind": "company_docs"}}, "companyRequiredFields": []string{"companyName"}}, "companyRequiredFields[0]"},
	} {
		r := in.expect(400, "POST", "/v1/levels", c.body)
		if _, f := errField(t, r); f != c.field {
			t.Errorf("%v: field %q, want %q (%s)", c.body, f, c.field, r.Body)
		}
	}

	// applicantType may be left out (the OpenAPI's default): individual.
	if typ := in.expect(201, "POST", "/v1/levels", map[string]any{"name": "no-type", "steps": []map[string]any{{"kind": "selfie"}}}).m(t)["applicantType"]; typ != "individual" {
		t.Errorf("a level without applicantType is %v", typ)
	}
	// A required company field that the level does not collect says how
	// to mend it.
	bad := in.expect(400, "POST", "/v1/levels", map[string]any{"name": "k", "applicantType": "company", "steps": []map[string]any{{"kind": "company_docs"}},
		"companyDataFields": []string{"country"}, "companyRequiredFields": []string{"country", "companyName"}})
	if _, f := errField(t, bad); f != "companyRequiredFields[1]" || !strings.Contains(string(bad.Body), "list it in companyDataFields too") {
		t.Errorf("required but not collected: %s", bad.Body)
	}

	// Questionnaire answers are checked against the level's questions.
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "q1", "verificationLevelName": "survey-level", "lastName": "Green", "dateOfBirth": "1990-01-01"})
	body := verifyBody(t, 50)
	for answers, field := range map[string]string{
		`{"source":"salary"}`:                       "questionnaire.pep",
		`{"pep":"no","source":"salary"}`:            "questionnaire.pep",
		`{"pep":false,"source":"lottery"}`:          "questionnaire.source",
		`{"pep":false,"source":"salary","extra":1}`: "questionnaire.extra",
		`{"pep":false,"source":"salary","note":3}`:  "questionnaire.note",
		`"yes"`: "questionnaire",
	} {
		body["questionnaire"] = rawJSON(answers)
		if _, f := errField(t, in.expect(400, "POST", "/v1/applicants/q1/verify", body)); f != field {
			t.Errorf("%s: field %q, want %q", answers, f, field)
		}
	}
	// Without answers the questionnaire step stays pending and the applicant
	// is not sent to review; the steps with data are submitted.
	delete(body, "questionnaire")
	wantStatus(t, in.expect(200, "POST", "/v1/applicants/q1/verify", body).m(t), "pending", nil, nil, 0)
	wantSteps(t, in.stepStatuses("q1"), map[string]string{"identity_doc": "submitted", "selfie": "submitted", "questionnaire": "pending"})
	body["questionnaire"] = map[string]any{"pep": false, "source": "savings"}
	wantStatus(t, in.expect(200, "POST", "/v1/applicants/q1/verify", body).m(t), "completed", "GREEN", nil, 1)

	// Rename: allowed while unused, 409 level_in_use once used.
	in.expect(201, "POST", "/v1/levels", map[string]any{"name": "spare", "applicantType": "individual", "steps": []map[string]any{{"kind": "selfie"}}})
	renamed := in.expect(200, "PATCH", "/v1/levels/spare", map[string]any{"name": "spare-2"}).m(t)
	if renamed["name"] != "spare-2" {
		t.Fatalf("renamed %v", renamed)
	}
	in.expect(404, "GET", "/v1/levels/spare", nil)
	r := in.expect(409, "PATCH", "/v1/levels/survey-level", map[string]any{"name": "other"})
	if c, _ := errField(t, r); c != "level_in_use" {
		t.Errorf("code %s", c)
	}
	in.createApplicant("q0", "Green")
	r = in.expect(409, "PATCH", "/v1/levels/basic-kyc-level", map[string]any{"name": "basic"})
	if c, _ := errField(t, r); c != "level_in_use" {
		t.Errorf("code %s", c)
	}
	edited := in.expect(200, "PATCH", "/v1/levels/survey-level", map[string]any{"personalInfoFields": []string{"firstName", "lastName", "email"}}).m(t)
	if len(edited["personalInfoFields"].([]any)) != 3 || edited["id"] != created["id"] {
		t.Errorf("edited %v", edited)
	}
	in.expect(400, "PATCH", "/v1/levels/survey-level", map[string]any{"applicantType": "robot"})
	in.expect(404, "PATCH", "/v1/levels/nope", map[string]any{"name": "x"})
}

// TestLevelEditKeepsApplicantsSteps: an applicant keeps the steps its level
// had when assigned. After the level's steps are edited it can still give
// data for each of its steps (it was stuck: uploads were checked against
// the edited level, submission against its own steps), takes none for a
// step it does not have, and assigning the same level again rebuilds its
// steps to the edited ones, with applicantLevelChanged.
func TestLevelEditKeepsApplicantsSteps(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/levels", map[string]any{"name": "lv-edit", "applicantType": "individual",
		"steps": []map[string]any{{"kind": "identity_doc"}, {"kind": "selfie"}}, "personalInfoFields": []string{"lastName"}})
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "kept", "verificationLevelName": "lv-edit", "lastName": "Kept"})
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "moved", "verificationLevelName": "lv-edit", "lastName": "Moved"})
	in.expect(200, "PATCH", "/v1/levels/lv-edit", map[string]any{"steps": []map[string]any{{"kind": "identity_doc"}, {"kind": "poa"}}})

	// kept still has identity_doc and selfie: both take data, poa does not.
	wantSteps(t, in.stepStatuses("kept"), map[string]string{"identity_doc": "pending", "selfie": "pending"})
	in.expect(201, "POST", "/v1/applicants/kept/documents", map[string]any{"kind": "selfie", "image": b64(jpegImage(t, 220, 240, 1))})
	r := in.expect(400, "POST", "/v1/applicants/kept/documents", map[string]any{"kind": "poa", "image": b64(pngImage(t, 210, 210, 2))})
	if _, f := errField(t, r); f != "kind" {
		t.Errorf("poa upload: field %q, want kind", f)
	}
	in.expect(201, "POST", "/v1/applicants/kept/documents", map[string]any{"kind": "identity_doc", "country": "DEU", "image": b64(pngImage(t, 240, 220, 3))})
	in.expect(200, "POST", "/v1/applicants/kept/review", nil)
	in.advance(2 * time.Second)
	in.waitReviewStatus("kept", "completed")
	wantSteps(t, in.stepStatuses("kept"), map[string]string{"identity_doc": "completed/GREEN", "selfie": "completed/GREEN"})

	// moved is given the edited steps by assigning its level again.
	a := in.expect(200, "POST", "/v1/applicants/moved/levels/lv-edit", nil).m(t)
	if a["verificationLevelName"] != "lv-edit" {
		t.Errorf("level %v", a["verificationLevelName"])
	}
	wantSteps(t, in.stepStatuses("moved"), map[string]string{"identity_doc": "pending", "poa": "pending"})
	in.expect(400, "POST", "/v1/applicants/moved/documents", map[string]any{"kind": "selfie", "image": b64(jpegImage(t, 220, 240, 4))})
	in.expect(201, "POST", "/v1/applicants/moved/documents", map[string]any{"kind": "poa", "image": b64(pngImage(t, 210, 210, 5))})
	if h := in.historyTypes("moved"); len(h) == 0 || h[0] != "applicant.updated:partner" {
		t.Errorf("history after the level was assigned again: %v", h)
	}
	// Its steps are the level's now: assigning it once more changes nothing.
	before := in.historyTypes("moved")
	in.expect(200, "POST", "/v1/applicants/moved/levels/lv-edit", nil)
	if after := in.historyTypes("moved"); len(after) != len(before) {
		t.Errorf("a repeated assignment of an unchanged level recorded %v", after[:len(after)-len(before)])
	}
}

// TestDefaultLevelsKeepTheirName: a level the configuration names as a
// default (kyc.default_individual_level, default_company_level, ubo_level)
// is in use even before an applicant uses it: renamed, or turned into the
// other applicant type, new applicants would find no level of theirs.
func TestDefaultLevelsKeepTheirName(t *testing.T) {
	t.Parallel()
	in := start(t)
	for _, c := range []struct{ level, patch, key string }{
		{"kyb-level", `{"name":"kyb-2"}`, "default_company_level"},
		{"basic-kyc-level", `{"name":"basic-2"}`, "default_individual_level"},
	} {
		r := in.expect(409, "PATCH", "/v1/levels/"+c.level, c.patch)
		if code, _ := errField(t, r); code != "level_in_use" || !strings.Contains(string(r.Body), c.key) {
			t.Errorf("PATCH %s %s: %s, want level_in_use naming %s", c.level, c.patch, r.Body, c.key)
		}
	}
	// full-kyc-level is no default: unused, it can be renamed.
	in.expect(200, "PATCH", "/v1/levels/full-kyc-level", `{"name":"full-2"}`)
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "co", "type": "company", "companyName": "Acme"})

	// A default level of one's own keeps its applicant type too.
	in2 := start(t, func(o *options) { o.settings.KYC.DefaultIndividualLevel = "q-level" })
	in2.expect(201, "POST", "/v1/levels", map[string]any{"name": "q-level", "applicantType": "individual",
		"steps": []map[string]any{{"kind": "questionnaire", "optional": false}}})
	r := in2.expect(409, "PATCH", "/v1/levels/q-level", `{"applicantType":"company"}`)
	if code, _ := errField(t, r); code != "level_in_use" || !strings.Contains(string(r.Body), "default_individual_level") {
		t.Errorf("applicantType of the default level: %s", r.Body)
	}
}

// TestQuestionIDCountsCharacters: a question id is 1-64 characters, not
// bytes.
func TestQuestionIDCountsCharacters(t *testing.T) {
	t.Parallel()
	in := start(t)
	level := func(name, id string) map[string]any {
		return map[string]any{"name": name, "applicantType": "individual", "steps": []map[string]any{{"kind": "questionnaire"}},
			"questionnaire": []map[string]any{{"id": id, "text": "?", "type": "text"}}}
	}
	in.expect(201, "POST", "/v1/levels", level("ids-at", strings.Repeat("é", 64)))
	r := in.expect(400, "POST", "/v1/levels", level("ids-over", strings.Repeat("é", 65)))
	if _, f := errField(t, r); f != "questionnaire[0].id" {
		t.Errorf("65-character id: field %q", f)
	}
}

// TestLevelCursorOfAnOlderRelease: releases before layout 8 listed levels
// by name and handed out cursors that named a level ("level:NAME"). The list
// is newest first now, so such a cursor cannot go on where it was: it gets
// a 400 that says why and what to do, not "not one this service returned".
func TestLevelCursorOfAnOlderRelease(t *testing.T) {
	t.Parallel()
	in := start(t)
	old := base64.RawURLEncoding.EncodeToString([]byte("level:kyb-level"))
	r := in.expect(400, "GET", "/v1/levels?limit=3&cursor="+old, nil)
	code, field := errField(t, r)
	msg, _ := r.m(t)["error"].(map[string]any)["message"].(string)
	if code != "validation_failed" || field != "cursor" || !strings.Contains(msg, "earlier release") || !strings.Contains(msg, "first page") {
		t.Errorf("old level cursor: %s", r.Body)
	}
	var page struct{ NextCursor *string }
	in.expect(200, "GET", "/v1/levels?limit=1", nil).json(t, &page)
	if page.NextCursor == nil {
		t.Fatal("no next cursor")
	}
	in.expect(200, "GET", "/v1/levels?limit=1&cursor="+*page.NextCursor, nil)

	// The cursors of the release just before ("levels:" and the index key,
	// without the environment) go on as the cursor of today, for one
	// upgrade.
	b, err := base64.RawURLEncoding.DecodeString(*page.NextCursor)
	key, ok := bytes.CutPrefix(b, []byte("levels.s:"))
	if err != nil || !ok {
		t.Fatalf("a sandbox level cursor is %q", b)
	}
	legacy := base64.RawURLEncoding.EncodeToString(append([]byte("levels:"), key...))
	if got, want := in.pages("/v1/levels?cursor="+legacy, "name"), in.pages("/v1/levels?cursor="+*page.NextCursor, "name"); len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("levels after the previous release's cursor: %v, want %v", got, want)
	}
}
