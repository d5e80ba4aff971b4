package server_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestProductionReview(t *testing.T) {
	list := filepath.Join(t.TempDir(), "sanctions.txt")
	if err := os.WriteFile(list, []byte("# test list\nIvan Sanctionov\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	in := start(t, func(o *options) { o.settings.KYC.SanctionsFile = list })
	rc, secret := in.kycReceiver()
	pk, ps := in.credential("production", "partner")
	ak, as := in.credential("production", "admin")
	prod := func(want int, method, path string, body any) *response {
		t.Helper()
		return in.expect(want, method, path, body, "X-Api-Key", pk, "X-Api-Secret", ps, "X-Environment", "production")
	}
	prod(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "p1", "firstName": "Ada", "lastName": "Reject", "dateOfBirth": "2015-01-01"})
	// The same externalUserId in sandbox is another applicant.
	in.expect(404, "GET", "/v1/applicants/p1", nil)
	in.expect(403, "GET", "/v1/applicants/p1", nil, "X-Environment", "production")
	in.expect(400, "GET", "/v1/applicants/p1", nil, "X-Environment", "staging")

	// Magic names do nothing in production; the forced review is sandbox only.
	r := prod(403, "POST", "/v1/applicants/p1/sandbox/review", map[string]any{"reviewAnswer": "GREEN"})
	if c, _ := errField(t, r); c != "sandbox_only" {
		t.Errorf("code %s", c)
	}
	st := prod(200, "POST", "/v1/applicants/p1/verify", verifyBody(t, 30)).m(t)
	wantStatus(t, st, "awaitingOperatorReview", nil, nil, 1)
	on := rc.nextOfType(t, "applicantOnHold")
	if !strings.Contains(string(on.Body), `"entityId":"p1"`) || !strings.Contains(string(on.Body), `"reviewStatus":"awaitingOperatorReview"`) {
		t.Fatalf("event %s", on.Body)
	}
	// Another production applicant reusing the same selfie is flagged.
	prod(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "p2", "lastName": "Other"})
	body := verifyBody(t, 31)
	body["selfie"] = verifyBody(t, 30)["selfie"]
	prod(200, "POST", "/v1/applicants/p2/verify", body)

	hist, err := in.Store.ApplicantHistory("production", "p1")
	if err != nil {
		t.Fatal(err)
	}
	findings := map[string]string{}
	for _, h := range hist {
		if h.EventType == "review.check" {
			findings[h.Details["check"].(string)] = h.Details["result"].(string)
		}
	}
	if findings["age"] != "under_18" || findings["duplicate"] != "none" || findings["images"] != "valid" || findings["sanctions"] != "clear" {
		t.Errorf("p1 findings %v", findings)
	}
	hist, _ = in.Store.ApplicantHistory("production", "p2")
	dup := false
	for _, h := range hist {
		dup = dup || (h.EventType == "review.check" && h.Details["check"] == "duplicate" && h.Details["result"] == "match")
	}
	if !dup {
		t.Errorf("p2: duplicate selfie not found")
	}
	prod(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "p3", "firstName": "Ivan", "middleName": "Petrovich", "lastName": "Sanctionov", "dateOfBirth": "1970-01-01"})
	prod(200, "POST", "/v1/applicants/p3/verify", verifyBody(t, 32))
	hist, _ = in.Store.ApplicantHistory("production", "p3")
	findings = map[string]string{}
	for _, h := range hist {
		if h.EventType == "review.check" {
			findings[h.Details["check"].(string)] = h.Details["result"].(string)
		}
	}
	if findings["sanctions"] != "match" || findings["age"] != "ok" {
		t.Errorf("p3 findings %v", findings)
	}
	// Findings are internal: not in the partner's history.
	var h struct{ Items []struct{ EventType string } }
	prod(200, "GET", "/v1/applicants/p1/review-history", nil).json(t, &h)
	for _, it := range h.Items {
		if it.EventType == "review.check" {
			t.Fatal("internal finding returned")
		}
	}

	decide := func(want int, id string, body any, key, secret string) *response {
		t.Helper()
		return in.expect(want, "POST", "/v1/admin/applicants/"+id+"/decision", body, "X-Api-Key", key, "X-Api-Secret", secret)
	}
	// A sandbox admin does not see production applicants.
	sk, ss := in.credential("sandbox", "admin")
	decide(404, "p1", map[string]any{"reviewAnswer": "GREEN"}, sk, ss)
	decide(400, "p1", map[string]any{"reviewAnswer": "GREEN", "reviewRejectType": "FINAL"}, ak, as)
	decide(400, "p1", map[string]any{"reviewAnswer": "RED", "reviewRejectType": "FINAL", "rejectLabels": []string{"TOO_YOUNG"}}, ak, as)
	decide(404, "nobody", map[string]any{"reviewAnswer": "GREEN"}, ak, as)
	st = decide(200, "p1", map[string]any{"reviewAnswer": "RED", "reviewRejectType": "FINAL", "rejectLabels": []string{"AGE_REQUIREMENT_MISMATCH"}}, ak, as).m(t)
	wantStatus(t, st, "completed", "RED", "FINAL", 1)
	data := rc.reviewed(t, secret)
	if data["environment"] != "production" || data["externalUserId"] != "p1" {
		t.Fatalf("data %v", data)
	}
	decide(200, "p2", map[string]any{"reviewAnswer": "GREEN"}, ak, as)
	if d := rc.reviewed(t, secret); d["externalUserId"] != "p2" || d["reviewResult"].(map[string]any)["reviewAnswer"] != "GREEN" {
		t.Fatalf("p2 data %v", d)
	}
	decide(409, "p2", map[string]any{"reviewAnswer": "GREEN"}, ak, as)
}

func TestForcedSandboxReview(t *testing.T) {
	in := start(t)
	rc, secret := in.kycReceiver()
	in.createApplicant("f1", "Anything")
	in.expect(400, "POST", "/v1/applicants/f1/sandbox/review", map[string]any{"reviewAnswer": "MAYBE"})
	in.expect(400, "POST", "/v1/applicants/f1/sandbox/review", map[string]any{"reviewAnswer": "RED", "rejectLabels": []string{"NOPE"}})
	in.expect(404, "POST", "/v1/applicants/nobody/sandbox/review", map[string]any{"reviewAnswer": "GREEN"})
	st := in.expect(200, "POST", "/v1/applicants/f1/sandbox/review", map[string]any{"reviewAnswer": "RED", "rejectLabels": []string{"PEP", "SANCTIONS"}}).m(t)
	wantStatus(t, st, "completed", "RED", "FINAL", 0)
	if !slices.Equal(st["rejectLabels"].([]any), []any{"PEP", "SANCTIONS"}) {
		t.Errorf("labels %v", st["rejectLabels"])
	}
	if d := rc.reviewed(t, secret); d["reviewResult"].(map[string]any)["reviewRejectType"] != "FINAL" {
		t.Fatalf("data %v", d)
	}
}

func TestSanctionedMagicName(t *testing.T) {
	in := start(t)
	rc, secret := in.kycReceiver()
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "sx", "lastName": "Sanctioned", "verificationLevelName": "full-kyc-level"})
	body := verifyBody(t, 40)
	body["proofOfAddress"] = b64(pngImage(t, 200, 300, 41))
	body["livenessFrames"] = []string{b64(pngImage(t, 200, 200, 42)), b64(pngImage(t, 200, 200, 43))}
	if _, f := errField(t, in.expect(400, "POST", "/v1/applicants/sx/verify", body)); f != "livenessFrames" {
		t.Fatalf("two liveness frames: field %q", f)
	}
	body["livenessFrames"] = append(body["livenessFrames"].([]string), b64(pngImage(t, 200, 200, 44)))
	body["questionnaire"] = map[string]any{"purpose": "savings"}
	wantStatus(t, in.expect(200, "POST", "/v1/applicants/sx/verify", body).m(t), "completed", "RED", "FINAL", 1)
	wantSteps(t, in.stepStatuses("sx"), map[string]string{
		"identity_doc": "completed/GREEN", "selfie": "completed/GREEN", "liveness": "completed/GREEN", "poa": "completed/GREEN",
		"questionnaire": "completed/GREEN", "aml": "completed/RED/FINAL", "adverse_media": "completed/GREEN",
	})
	d := rc.reviewed(t, secret)
	if !slices.Equal(d["reviewResult"].(map[string]any)["rejectLabels"].([]any), []any{"SANCTIONS"}) {
		t.Fatalf("data %v", d)
	}
	if in.expect(200, "GET", "/v1/applicants/sx", nil).m(t)["riskLevel"] != "high" {
		t.Errorf("riskLevel")
	}
	want := []string{"applicant.rejected:system", "adverse_media.run:system", "aml.run:system", "enrollment.submitted:partner", "applicant.created:partner"}
	if h := in.historyTypes("sx"); !slices.Equal(h, want) {
		t.Fatalf("history %v, want %v", h, want)
	}
}
