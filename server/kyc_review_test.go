package server_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/complybox/complybox/dispatch"
)

// statusOf reads /status.
func (in *instance) status(extID string) map[string]any {
	in.t.Helper()
	return in.expect(200, "GET", "/v1/applicants/"+extID+"/status", nil).m(in.t)
}

// stepStatuses reads /steps as kind → "reviewStatus/answer/rejectType".
func (in *instance) stepStatuses(extID string) map[string]string {
	in.t.Helper()
	var s struct {
		ExternalUserID, LevelID, LevelName string
		Steps                              []struct {
			Kind, ReviewStatus             string
			ReviewAnswer, ReviewRejectType *string
			RejectLabels                   []string
		}
	}
	in.expect(200, "GET", "/v1/applicants/"+extID+"/steps", nil).json(in.t, &s)
	if s.LevelID == "" || s.LevelName == "" || s.ExternalUserID != extID {
		in.t.Fatalf("steps header: %+v", s)
	}
	out := map[string]string{}
	for _, st := range s.Steps {
		v := st.ReviewStatus
		if st.ReviewAnswer != nil {
			v += "/" + *st.ReviewAnswer
		}
		if st.ReviewRejectType != nil {
			v += "/" + *st.ReviewRejectType
		}
		if st.RejectLabels == nil {
			in.t.Fatalf("step %s: rejectLabels missing", st.Kind)
		}
		out[st.Kind] = v
	}
	return out
}

func wantStatus(t *testing.T, got map[string]any, reviewStatus string, answer, rejectType any, attempt float64) {
	t.Helper()
	if got["reviewStatus"] != reviewStatus || got["reviewAnswer"] != answer || got["reviewRejectType"] != rejectType || got["attempt"] != attempt {
		t.Fatalf("status %v; want %s %v %v attempt %v", got, reviewStatus, answer, rejectType, attempt)
	}
}

func wantSteps(t *testing.T, got map[string]string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("steps %v; want %v", got, want)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("steps %v; want %v", got, want)
	}
}

func TestKYCGreenViaVerify(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	a := in.createApplicant("user-green", "Lovelace")
	if a["verificationLevelName"] != "basic-kyc-level" || a["status"] != "active" || a["riskLevel"] != "unknown" {
		t.Fatalf("created %v", a)
	}
	wantStatus(t, in.status("user-green"), "pending", nil, nil, 0)
	wantSteps(t, in.stepStatuses("user-green"), map[string]string{"identity_doc": "pending", "selfie": "pending"})

	st := in.expect(200, "POST", "/v1/applicants/user-green/verify", verifyBody(t, 1)).m(t)
	wantStatus(t, st, "completed", "GREEN", nil, 1)
	wantStatus(t, in.status("user-green"), "completed", "GREEN", nil, 1)
	wantSteps(t, in.stepStatuses("user-green"), map[string]string{"identity_doc": "completed/GREEN", "selfie": "completed/GREEN"})

	data := rc.reviewed(t, secret)
	if data["externalUserId"] != "user-green" || data["applicantId"] != a["id"] || data["levelName"] != "basic-kyc-level" ||
		data["reviewStatus"] != "completed" || data["environment"] != "sandbox" || data["_entityId"] != "user-green" {
		t.Fatalf("applicantReviewed data %v", data)
	}
	if _, ok := data["parentExternalUserId"]; ok {
		t.Errorf("parentExternalUserId on a top-level applicant")
	}
	rr := data["reviewResult"].(map[string]any)
	if rr["reviewAnswer"] != "GREEN" || rr["reviewRejectType"] != nil || len(rr["rejectLabels"].([]any)) != 0 {
		t.Fatalf("reviewResult %v", rr)
	}
	got := in.expect(200, "GET", "/v1/applicants/user-green", nil).m(t)
	if got["riskLevel"] != "low" || len(got["documents"].([]any)) != 2 {
		t.Fatalf("applicant %v", got)
	}
	want := []string{"applicant.approved:system", "enrollment.submitted:partner", "applicant.created:partner"}
	if h := in.historyTypes("user-green"); !slices.Equal(h, want) {
		t.Fatalf("history %v, want %v", h, want)
	}
}

func TestKYCRejectFinalViaReview(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	in.createApplicant("user-red", "reject")
	body := verifyBody(t, 2)
	// Only the document: that step is submitted (it has its data), the
	// selfie step stays pending, and the applicant is not sent to review.
	delete(body, "selfie")
	in.expect(400, "POST", "/v1/applicants/user-red/verify", body)
	in.expect(201, "POST", "/v1/applicants/user-red/documents", map[string]any{"kind": "identity_doc", "side": "front", "docType": "PASSPORT", "image": body["documentFront"]})
	wantSteps(t, in.stepStatuses("user-red"), map[string]string{"identity_doc": "submitted", "selfie": "pending"})
	wantStatus(t, in.status("user-red"), "pending", nil, nil, 0)
	r := in.expect(409, "POST", "/v1/applicants/user-red/review", nil)
	if r.m(t)["error"].(map[string]any)["code"] != "missing_step_data" {
		t.Fatalf("review without selfie: %s", r.Body)
	}
	in.expect(201, "POST", "/v1/applicants/user-red/documents", map[string]any{"kind": "selfie", "image": b64(pngImage(t, 200, 200, 9))})
	wantStatus(t, in.status("user-red"), "submitted", nil, nil, 0)
	in.expect(200, "POST", "/v1/applicants/user-red/review", nil)
	// Sent to review: the reviewer has every step until review_delay passes.
	wantStatus(t, in.status("user-red"), "in_review", nil, nil, 1)
	wantSteps(t, in.stepStatuses("user-red"), map[string]string{"identity_doc": "in_review", "selfie": "in_review"})
	in.expect(409, "POST", "/v1/applicants/user-red/review", nil)
	in.expect(409, "POST", "/v1/applicants/user-red/levels/full-kyc-level", nil)

	in.advance(2 * time.Second)
	data := rc.reviewed(t, secret)
	rr := data["reviewResult"].(map[string]any)
	if rr["reviewAnswer"] != "RED" || rr["reviewRejectType"] != "FINAL" || !slices.Equal(rr["rejectLabels"].([]any), []any{"FORGERY"}) {
		t.Fatalf("reviewResult %v", rr)
	}
	st := in.status("user-red")
	wantStatus(t, st, "completed", "RED", "FINAL", 1)
	if st["reviewedAtUtc"] != "2026-11-21T05:00:02.000Z" {
		t.Errorf("reviewedAtUtc %v", st["reviewedAtUtc"])
	}
	wantSteps(t, in.stepStatuses("user-red"), map[string]string{"identity_doc": "completed/RED/FINAL", "selfie": "completed/RED/FINAL"})
	// FINAL holds: no new data, no new review.
	in.expect(409, "POST", "/v1/applicants/user-red/verify", verifyBody(t, 3))
	in.expect(409, "POST", "/v1/applicants/user-red/review", nil)
	want := []string{"applicant.rejected:system", "applicant.sent_to_review:partner", "applicant.created:partner"}
	if h := in.historyTypes("user-red"); !slices.Equal(h, want) {
		t.Fatalf("history %v, want %v", h, want)
	}
	// Until reset.
	in.expect(200, "POST", "/v1/applicants/user-red/reset", nil)
	wantStatus(t, in.status("user-red"), "pending", nil, nil, 1)
}

func TestKYCRetryThenGreen(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	in.createApplicant("user-retry", "Retry")
	wantStatus(t, in.expect(200, "POST", "/v1/applicants/user-retry/verify", verifyBody(t, 4)).m(t), "completed", "RED", "RETRY", 1)
	rr := rc.reviewed(t, secret)["reviewResult"].(map[string]any)
	if rr["reviewRejectType"] != "RETRY" || !slices.Equal(rr["rejectLabels"].([]any), []any{"UNSATISFACTORY_PHOTOS"}) {
		t.Fatalf("reviewResult %v", rr)
	}
	wantSteps(t, in.stepStatuses("user-retry"), map[string]string{"identity_doc": "completed/RED/RETRY", "selfie": "completed/RED/RETRY"})
	if in.expect(200, "GET", "/v1/applicants/user-retry", nil).m(t)["riskLevel"] != "medium" {
		t.Errorf("riskLevel after RETRY")
	}

	// New data: the step goes back to submitted.
	in.expect(200, "PATCH", "/v1/applicants/user-retry", map[string]any{"lastName": "Fixed"})
	in.expect(201, "POST", "/v1/applicants/user-retry/documents", map[string]any{"kind": "selfie", "image": b64(pngImage(t, 300, 300, 5))})
	wantSteps(t, in.stepStatuses("user-retry"), map[string]string{"identity_doc": "completed/RED/RETRY", "selfie": "submitted"})
	wantStatus(t, in.expect(200, "POST", "/v1/applicants/user-retry/verify", verifyBody(t, 6)).m(t), "completed", "GREEN", nil, 2)
	rr = rc.reviewed(t, secret)["reviewResult"].(map[string]any)
	if rr["reviewAnswer"] != "GREEN" {
		t.Fatalf("second verdict %v", rr)
	}
	wantSteps(t, in.stepStatuses("user-retry"), map[string]string{"identity_doc": "completed/GREEN", "selfie": "completed/GREEN"})
	want := []string{"applicant.approved:system", "enrollment.submitted:partner", "applicant.updated:partner",
		"applicant.rejected:system", "enrollment.submitted:partner", "applicant.created:partner"}
	if h := in.historyTypes("user-retry"); !slices.Equal(h, want) {
		t.Fatalf("history %v, want %v", h, want)
	}
}

func TestKYCManualThenDecision(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	key, sec := in.credential("sandbox", "admin")
	in.createApplicant("user-manual", "manual")
	wantStatus(t, in.expect(200, "POST", "/v1/applicants/user-manual/verify", verifyBody(t, 7)).m(t), "awaitingOperatorReview", nil, nil, 1)
	rc.nextOfType(t, "applicantOnHold")
	wantSteps(t, in.stepStatuses("user-manual"), map[string]string{"identity_doc": "awaitingOperatorReview", "selfie": "awaitingOperatorReview"})
	decision := map[string]any{"reviewAnswer": "RED", "reviewRejectType": "RETRY", "rejectLabels": []string{"SELFIE_MISMATCH"}, "moderationComment": "Selfie does not match"}
	// A partner credential cannot decide.
	in.expect(403, "POST", "/v1/admin/applicants/user-manual/decision", decision)
	in.expect(400, "POST", "/v1/admin/applicants/user-manual/decision", map[string]any{"reviewAnswer": "RED", "reviewRejectType": "SOMETIMES"}, "X-Api-Key", key, "X-Api-Secret", sec)
	st := in.expect(200, "POST", "/v1/admin/applicants/user-manual/decision", decision, "X-Api-Key", key, "X-Api-Secret", sec).m(t)
	wantStatus(t, st, "completed", "RED", "RETRY", 1)
	if st["moderationComment"] != "Selfie does not match" {
		t.Errorf("moderationComment %v", st["moderationComment"])
	}
	data := rc.reviewed(t, secret)
	rr := data["reviewResult"].(map[string]any)
	if rr["reviewAnswer"] != "RED" || rr["moderationComment"] != "Selfie does not match" {
		t.Fatalf("reviewResult %v", rr)
	}
	in.expect(409, "POST", "/v1/admin/applicants/user-manual/decision", decision, "X-Api-Key", key, "X-Api-Secret", sec)
	want := []string{"applicant.rejected:operator", "managed_compliance.decided:operator", "enrollment.submitted:partner", "applicant.created:partner"}
	if h := in.historyTypes("user-manual"); !slices.Equal(h, want) {
		t.Fatalf("history %v, want %v", h, want)
	}
}

func TestKYBRejectMagicName(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "kyb-r", "type": "company", "companyName": "Reject", "registrationNumber": "HRB 9", "country": "DEU", "legalForm": "LTD"})
	for i, dt := range []string{"certificate_of_incorporation", "register_of_shareholders"} {
		in.expect(201, "POST", "/v1/applicants/kyb-r/documents", map[string]any{"kind": "company_docs", "docType": dt, "image": b64(jpegImage(t, 300, 400, uint64(90+i)))})
	}
	in.expect(200, "POST", "/v1/applicants/kyb-r/review", nil)
	wantStatus(t, in.status("kyb-r"), "in_review", nil, nil, 1)
	in.advance(2 * time.Second)
	d := rc.reviewed(t, secret)
	if d["externalUserId"] != "kyb-r" || d["levelName"] != "kyb-level" {
		t.Fatalf("data %v", d)
	}
	wantStatus(t, in.status("kyb-r"), "completed", "RED", "FINAL", 1)
	wantSteps(t, in.stepStatuses("kyb-r"), map[string]string{"company_docs": "completed/RED/FINAL", "questionnaire": "completed/GREEN", "aml": "completed/GREEN"})
}

func TestApplicantEventOrder(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	in.createApplicant("ord", "Green")
	in.expect(200, "POST", "/v1/applicants/ord/verify", verifyBody(t, 95))
	in.expect(200, "POST", "/v1/applicants/ord/reset", nil)
	in.expect(200, "PATCH", "/v1/applicants/ord", map[string]any{"email": "ord@example.com"})
	in.expect(200, "POST", "/v1/applicants/ord/levels/full-kyc-level", nil)
	in.expect(200, "POST", "/v1/applicants/ord/deactivate", nil)
	in.expect(200, "POST", "/v1/applicants/ord/activate", nil)
	var got []string
	for _, want := range []string{"applicantCreated", "applicantPending", "applicantReviewed", "applicantReset",
		"applicantPersonalInfoChanged", "applicantLevelChanged", "applicantDeactivated", "applicantActivated"} {
		r := rc.next(t)
		if !dispatch.Verify(secret, r.Body, r.Header.Get("X-Webhook-Signature")) {
			t.Fatalf("%s: bad signature", want)
		}
		var env struct{ EventType, EntityType, EntityID string }
		if err := json.Unmarshal(r.Body, &env); err != nil {
			t.Fatal(err)
		}
		if env.EntityType != "applicant" || env.EntityID != "ord" || r.Header.Get("X-Webhook-Event-Type") != env.EventType {
			t.Fatalf("envelope %s", r.Body)
		}
		got = append(got, env.EventType)
		if env.EventType != want {
			t.Fatalf("events %v, want %s next", got, want)
		}
	}
	rc.none(t, 50*time.Millisecond)
}

func TestProductionReview(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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

// TestVerifyRefusesCompanies: direct verification is for individuals; a
// company's images would have no step to go to, so /verify answers 400
// not_an_individual instead of 200 with the images dropped, and stores
// nothing.
func TestVerifyRefusesCompanies(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "co-v", "type": "company", "companyName": "Acme"})
	r := in.expect(400, "POST", "/v1/applicants/co-v/verify", verifyBody(t, 9))
	if code, field := errField(t, r); code != "not_an_individual" || field != "externalUserId" {
		t.Fatalf("company /verify: code %q field %q, want not_an_individual externalUserId", code, field)
	}
	a := in.expect(200, "GET", "/v1/applicants/co-v", nil).m(t)
	if docs, _ := a["documents"].([]any); len(docs) != 0 {
		t.Fatalf("documents stored: %v", docs)
	}
	wantStatus(t, in.status("co-v"), "pending", nil, nil, 0)
}

// TestMagicNamesWithOptionalDocuments: the sandbox rules make the
// verdict, not only the steps they mark. With the document steps
// optional, a REJECT, RETRY or SANCTIONED name still ends RED (on the
// required step), never GREEN with a high risk level; a level with no
// required step, which could never reach a verdict, is refused.
func TestMagicNamesWithOptionalDocuments(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/levels", map[string]any{"name": "optional-docs", "applicantType": "individual",
		"steps":              []map[string]any{{"kind": "identity_doc", "optional": true}, {"kind": "selfie", "optional": true}, {"kind": "questionnaire"}},
		"personalInfoFields": []string{"lastName"}})
	for i, c := range []struct {
		lastName, answer string
		rejectType       any
		labels           []string
		risk             string
	}{
		{"Reject", "RED", "FINAL", []string{"FORGERY"}, "high"},
		{"retry", "RED", "RETRY", []string{"UNSATISFACTORY_PHOTOS"}, "medium"},
		{"SANCTIONED", "RED", "FINAL", []string{"SANCTIONS"}, "high"},
		{"Plain", "GREEN", nil, []string{}, "low"},
	} {
		id := "opt-" + strings.ToLower(c.lastName)
		in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": id, "lastName": c.lastName, "verificationLevelName": "optional-docs"})
		body := verifyBody(t, uint64(60+i))
		body["questionnaire"] = map[string]any{}
		st := in.expect(200, "POST", "/v1/applicants/"+id+"/verify", body).m(t)
		wantStatus(t, st, "completed", c.answer, c.rejectType, 1)
		var labels []string
		for _, l := range st["rejectLabels"].([]any) {
			labels = append(labels, l.(string))
		}
		if !slices.Equal(labels, c.labels) && !(len(labels) == 0 && len(c.labels) == 0) {
			t.Errorf("%s: rejectLabels %v, want %v", c.lastName, labels, c.labels)
		}
		if got := in.expect(200, "GET", "/v1/applicants/"+id, nil).m(t)["riskLevel"]; got != c.risk {
			t.Errorf("%s: riskLevel %v, want %s", c.lastName, got, c.risk)
		}
	}

	r := in.do("POST", "/v1/levels", map[string]any{"name": "all-optional", "applicantType": "individual",
		"steps": []map[string]any{{"kind": "selfie", "optional": true}}})
	if _, f := errField(t, r); r.Status != 400 || f != "steps" {
		t.Errorf("a level with no required step: %d %s", r.Status, r.Body)
	}
	r = in.do("PATCH", "/v1/levels/optional-docs", map[string]any{"steps": []map[string]any{{"kind": "questionnaire", "optional": true}}})
	if _, f := errField(t, r); r.Status != 400 || f != "steps" {
		t.Errorf("PATCH to no required step: %d %s", r.Status, r.Body)
	}
}

// fullVerifyBody is a direct-verification body that gives every step of
// full-kyc-level its data (the screening steps run by themselves).
func fullVerifyBody(t testing.TB, seed uint64) map[string]any {
	b := verifyBody(t, seed)
	b["proofOfAddress"] = b64(pngImage(t, 260, 240, seed+1))
	b["livenessFrames"] = []string{b64(jpegImage(t, 220, 240, seed+2)), b64(jpegImage(t, 220, 240, seed+3)), b64(jpegImage(t, 220, 240, seed+4))}
	b["questionnaire"] = map[string]any{"sourceOfFunds": "salary"}
	return b
}

// TestRetryRerunsScreening: a RED RETRY that reached the steps the
// applicant supplies no data for (aml, adverse_media, a questionnaire
// without required questions) does not hold the applicant: new data for
// the rest sends it to review again and the screening runs again (SPEC
// §3.3 "A RETRY step goes back to submitted when new data arrives", §3.4
// "aml and adverse_media run by themselves at submission"), in sandbox
// through /verify and /review, in production after an operator's RETRY.
func TestRetryRerunsScreening(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "full-r", "lastName": "Doe", "verificationLevelName": "full-kyc-level"})
	wantStatus(t, in.expect(200, "POST", "/v1/applicants/full-r/verify", fullVerifyBody(t, 10)).m(t), "completed", "GREEN", nil, 1)
	rc.reviewed(t, secret)
	in.expect(200, "POST", "/v1/applicants/full-r/sandbox/review", map[string]any{"reviewAnswer": "RED", "reviewRejectType": "RETRY", "rejectLabels": []string{"OTHER"}})
	wantReviewed(t, rc.reviewed(t, secret), nil, "RED", "RETRY", "OTHER")

	wantStatus(t, in.expect(200, "POST", "/v1/applicants/full-r/verify", fullVerifyBody(t, 20)).m(t), "completed", "GREEN", nil, 2)
	wantReviewed(t, rc.reviewed(t, secret), nil, "GREEN", nil)
	for kind, st := range in.stepStatuses("full-r") {
		if kind != "adverse_media" && st != "completed/GREEN" {
			t.Errorf("step %s %s after the second verification", kind, st)
		}
	}
	runs := 0
	for _, h := range in.historyTypes("full-r") {
		if h == "aml.run:system" {
			runs++
		}
	}
	if runs != 2 {
		t.Errorf("aml ran %d times, want once per submission (2)", runs)
	}

	// A company on kyb-level (its questionnaire has no questions): one new
	// document after the RETRY, then /review.
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "co-r", "type": "company", "companyName": "Acme", "registrationNumber": "1", "country": "GBR"})
	for i, dt := range []string{"certificate_of_incorporation", "register_of_shareholders"} {
		in.expect(201, "POST", "/v1/applicants/co-r/documents", map[string]any{"kind": "company_docs", "docType": dt, "image": b64(jpegImage(t, 300, 400, uint64(60+i)))})
	}
	in.expect(200, "POST", "/v1/applicants/co-r/review", nil)
	in.expect(200, "POST", "/v1/applicants/co-r/sandbox/review", map[string]any{"reviewAnswer": "RED", "reviewRejectType": "RETRY", "rejectLabels": []string{"OTHER"}})
	wantReviewed(t, rc.reviewed(t, secret), nil, "RED", "RETRY", "OTHER")
	in.expect(409, "POST", "/v1/applicants/co-r/review", nil) // nothing new yet
	in.expect(201, "POST", "/v1/applicants/co-r/documents", map[string]any{"kind": "company_docs", "docType": "certificate_of_incorporation", "image": b64(jpegImage(t, 300, 400, 70))})
	in.expect(200, "POST", "/v1/applicants/co-r/review", nil)
	in.advance(2 * time.Second)
	wantReviewed(t, rc.reviewed(t, secret), nil, "GREEN", nil)
	wantStatus(t, in.status("co-r"), "completed", "GREEN", nil, 2)

	// Production: the operator's RETRY on every step, then new data.
	pk, ps := in.credential("production", "partner")
	ak, as := in.credential("production", "admin")
	prod := func(want int, method, path string, body any) *response {
		t.Helper()
		return in.expect(want, method, path, body, "X-Api-Key", pk, "X-Api-Secret", ps, "X-Environment", "production")
	}
	prod(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "p-r", "firstName": "Ada", "lastName": "Doe", "dateOfBirth": "1990-01-01", "verificationLevelName": "full-kyc-level"})
	wantStatus(t, prod(200, "POST", "/v1/applicants/p-r/verify", fullVerifyBody(t, 30)).m(t), "awaitingOperatorReview", nil, nil, 1)
	decision := map[string]any{"reviewAnswer": "RED", "reviewRejectType": "RETRY", "rejectLabels": []string{"LOW_QUALITY"}}
	in.expect(200, "POST", "/v1/admin/applicants/p-r/decision", decision, "X-Api-Key", ak, "X-Api-Secret", as, "X-Environment", "production")
	wantStatus(t, prod(200, "POST", "/v1/applicants/p-r/verify", fullVerifyBody(t, 40)).m(t), "awaitingOperatorReview", nil, nil, 2)
}

// TestRetryOnAScreeningOnlyLevel: a RETRY on a level whose required steps
// all take nothing from the applicant (screening only) is answered by the
// next submission, which screens again (SPEC §3.3: a RETRY step goes back
// to submitted, FINAL holds until reset); it never needs a reset, as FINAL
// does.
func TestRetryOnAScreeningOnlyLevel(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	in.expect(201, "POST", "/v1/levels", map[string]any{"name": "screening-only", "steps": []map[string]any{{"kind": "aml"}}, "personalInfoFields": []string{"firstName", "lastName"}})
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "so-1", "firstName": "Sam", "lastName": "Plain", "verificationLevelName": "screening-only"})
	in.expect(200, "POST", "/v1/applicants/so-1/review", nil)
	in.expect(200, "POST", "/v1/applicants/so-1/sandbox/review", map[string]any{"reviewAnswer": "RED", "reviewRejectType": "RETRY", "rejectLabels": []string{"INCONSISTENT_PROFILE"}})
	wantReviewed(t, rc.reviewed(t, secret), nil, "RED", "RETRY", "INCONSISTENT_PROFILE")
	in.expect(200, "PATCH", "/v1/applicants/so-1", map[string]any{"lastName": "Fixed"})
	in.expect(200, "POST", "/v1/applicants/so-1/review", nil)
	in.advance(2 * time.Second)
	wantReviewed(t, rc.reviewed(t, secret), nil, "GREEN", nil)
	wantStatus(t, in.status("so-1"), "completed", "GREEN", nil, 2)
}

// TestMissingStepDataNamesStep: 409 missing_step_data names the step (or
// company field) that holds the review back in error.field, as the
// document says.
func TestMissingStepDataNamesStep(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("msd1", "Doe")
	if code, field := errField(t, in.expect(409, "POST", "/v1/applicants/msd1/review", nil)); code != "missing_step_data" || field != "identity_doc" {
		t.Errorf("no data: %s/%s, want missing_step_data naming identity_doc", code, field)
	}
	in.expect(201, "POST", "/v1/applicants/msd1/documents", map[string]any{"kind": "identity_doc", "image": b64(pngImage(t, 240, 220, 1))})
	if code, field := errField(t, in.expect(409, "POST", "/v1/applicants/msd1/review", nil)); code != "missing_step_data" || field != "selfie" {
		t.Errorf("no selfie: %s/%s, want missing_step_data naming selfie", code, field)
	}
	in.createApplicant("msd2", "Retry")
	in.expect(200, "POST", "/v1/applicants/msd2/verify", verifyBody(t, 4))
	in.expect(201, "POST", "/v1/applicants/msd2/documents", map[string]any{"kind": "selfie", "image": b64(pngImage(t, 300, 300, 5))})
	if code, field := errField(t, in.expect(409, "POST", "/v1/applicants/msd2/review", nil)); code != "missing_step_data" || field != "identity_doc" {
		t.Errorf("RETRY without new data: %s/%s, want missing_step_data naming identity_doc", code, field)
	}
}

// TestModerationCommentCountsCharacters: moderationComment is at most 2000
// characters, not bytes, of text (line breaks but no other control
// character), in the operator's decision and the forced verdict.
func TestModerationCommentCountsCharacters(t *testing.T) {
	t.Parallel()
	in := start(t)
	at, over := strings.Repeat("é", 2000), strings.Repeat("é", 2001)
	in.createApplicant("mc-sbx", "Comment")
	r := in.expect(400, "POST", "/v1/applicants/mc-sbx/sandbox/review", map[string]any{"reviewAnswer": "GREEN", "moderationComment": over})
	if _, f := errField(t, r); f != "moderationComment" {
		t.Errorf("forced verdict with 2001 characters: field %q", f)
	}
	st := in.expect(200, "POST", "/v1/applicants/mc-sbx/sandbox/review", map[string]any{"reviewAnswer": "GREEN", "moderationComment": at}).m(t)
	if st["moderationComment"] != at {
		t.Errorf("forced verdict's comment %.40v", st["moderationComment"])
	}

	key, sec := in.credential("sandbox", "admin")
	in.createApplicant("mc-op", "manual")
	in.expect(200, "POST", "/v1/applicants/mc-op/verify", verifyBody(t, 7))
	r = in.expect(400, "POST", "/v1/admin/applicants/mc-op/decision", map[string]any{"reviewAnswer": "GREEN", "moderationComment": over}, "X-Api-Key", key, "X-Api-Secret", sec)
	if _, f := errField(t, r); f != "moderationComment" {
		t.Errorf("decision with 2001 characters: field %q", f)
	}
	// The comment is text: control characters are refused (it reaches
	// the status, applicantReviewed and the hosted page), line breaks kept.
	for _, bad := range []string{"a\x00b", "bell\a", "del\x7f", "c1\u0085x"} {
		r = in.expect(400, "POST", "/v1/applicants/mc-sbx/sandbox/review", map[string]any{"reviewAnswer": "RED", "reviewRejectType": "RETRY", "rejectLabels": []string{"FORGERY"}, "moderationComment": bad})
		if _, f := errField(t, r); f != "moderationComment" {
			t.Errorf("forced verdict's comment %q: field %q", bad, f)
		}
		r = in.expect(400, "POST", "/v1/admin/applicants/mc-op/decision", map[string]any{"reviewAnswer": "GREEN", "moderationComment": bad}, "X-Api-Key", key, "X-Api-Secret", sec)
		if _, f := errField(t, r); f != "moderationComment" {
			t.Errorf("decision's comment %q: field %q", bad, f)
		}
	}
	lines := strings.Repeat("é", 1990) + "\r\na\tb\ncdef" // 2000 characters, a tab among them
	st = in.expect(200, "POST", "/v1/admin/applicants/mc-op/decision", map[string]any{"reviewAnswer": "GREEN", "moderationComment": lines}, "X-Api-Key", key, "X-Api-Secret", sec).m(t)
	if st["moderationComment"] != lines {
		t.Errorf("decision's comment of 2000 characters on three lines: %.40q", st["moderationComment"])
	}
}

// TestProductionChecksFollowPatches: data changed while an applicant waits
// for the operator is checked again, so the findings the operator decides
// on are those of the data as it is (SPEC §3.5 production).
func TestProductionChecksFollowPatches(t *testing.T) {
	t.Parallel()
	list := filepath.Join(t.TempDir(), "sanctions.txt")
	if err := os.WriteFile(list, []byte("Vladimir Sanctionov\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	in := start(t, func(o *options) { o.settings.KYC.SanctionsFile = list })
	pk, ps := in.credential("production", "partner")
	prod := func(want int, method, path string, body any) *response {
		t.Helper()
		return in.expect(want, method, path, body, "X-Api-Key", pk, "X-Api-Secret", ps, "X-Environment", "production")
	}
	latest := func() map[string]string {
		t.Helper()
		hist, err := in.Store.ApplicantHistory("production", "f1")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, h := range hist { // newest first: the latest run wins
			if c, ok := h.Details["check"].(string); ok && h.EventType == "review.check" && out[c] == "" {
				out[c] = h.Details["result"].(string)
			}
		}
		return out
	}
	prod(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "f1", "firstName": "Clean", "lastName": "Adult", "dateOfBirth": "1970-01-01"})
	wantStatus(t, prod(200, "POST", "/v1/applicants/f1/verify", verifyBody(t, 90)).m(t), "awaitingOperatorReview", nil, nil, 1)
	if f := latest(); f["sanctions"] != "clear" || f["age"] != "ok" {
		t.Fatalf("findings at submission %v", f)
	}
	in.advance(time.Second)
	prod(200, "PATCH", "/v1/applicants/f1", map[string]any{"firstName": "Vladimir", "lastName": "Sanctionov", "dateOfBirth": "2015-01-01"})
	if f := latest(); f["sanctions"] != "match" || f["age"] != "under_18" {
		t.Errorf("findings after the PATCH %v, want the sanctions match and the age", f)
	}
}

// TestProductionScreeningSaysWhatRan: the partner's aml.run reports the
// sanctions screening as it ran in production: not_screened, with the
// reason, when no list is configured or the list cannot be read (never
// clear for a screening that did not run), clear or match against a list,
// and again after a PATCH while the applicant waits. Adverse media has no
// source in production and says so.
func TestProductionScreeningSaysWhatRan(t *testing.T) {
	t.Parallel()
	list := filepath.Join(t.TempDir(), "sanctions.txt")
	for _, tc := range []struct {
		name, sanctionsFile, want, reason string
	}{
		{"no list", "", "not_screened", "no sanctions list is configured"},
		{"list unreadable", filepath.Join(t.TempDir(), "missing.txt"), "not_screened", "could not be read"},
		{"list", list, "clear", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(list, []byte("Vladimir Sanctionov\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			in := start(t, func(o *options) { o.settings.KYC.SanctionsFile = tc.sanctionsFile })
			pk, ps := in.credential("production", "partner")
			prod := func(want int, method, path string, body any) *response {
				t.Helper()
				return in.expect(want, method, path, body, "X-Api-Key", pk, "X-Api-Secret", ps, "X-Environment", "production")
			}
			runs := func(eventType string) []map[string]any {
				t.Helper()
				var h struct {
					Items []struct {
						EventType string
						Details   map[string]any
					}
				}
				prod(200, "GET", "/v1/applicants/s1/review-history?limit=200", nil).json(t, &h)
				var out []map[string]any
				for _, it := range h.Items {
					if it.EventType == eventType {
						out = append(out, it.Details)
					}
				}
				return out
			}
			prod(201, "POST", "/v1/levels", map[string]any{"name": "screened", "applicantType": "individual",
				"steps":              []map[string]any{{"kind": "identity_doc"}, {"kind": "selfie"}, {"kind": "aml"}, {"kind": "adverse_media"}},
				"personalInfoFields": []string{"firstName", "lastName", "dateOfBirth"}})
			prod(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "s1", "verificationLevelName": "screened",
				"firstName": "Clean", "lastName": "Adult", "dateOfBirth": "1970-01-01"})
			wantStatus(t, prod(200, "POST", "/v1/applicants/s1/verify", verifyBody(t, 95)).m(t), "awaitingOperatorReview", nil, nil, 1)
			aml := runs("aml.run")
			if len(aml) != 1 || aml[0]["result"] != tc.want || !strings.Contains(fmt.Sprint(aml[0]["reason"]), tc.reason) {
				t.Fatalf("aml.run %v, want result %s with reason %q", aml, tc.want, tc.reason)
			}
			if media := runs("adverse_media.run"); len(media) != 1 || media[0]["result"] != "not_screened" {
				t.Errorf("adverse_media.run %v, want not_screened", media)
			}
			in.advance(time.Second)
			prod(200, "PATCH", "/v1/applicants/s1", map[string]any{"firstName": "Vladimir", "lastName": "Sanctionov"})
			after := "match"
			if tc.want == "not_screened" {
				after = "not_screened"
			}
			if aml := runs("aml.run"); len(aml) != 2 || aml[0]["result"] != after {
				t.Errorf("aml.run after the PATCH %v, want %s first (newest)", aml, after)
			}
		})
	}
}

// TestReviewAfterGreenRefused: an approved applicant is terminal (SPEC
// §3.5): the partner's API, like the hosted UI, takes no new step data
// afterwards — neither a replacement of an approved document, which would
// leave GREEN over images nobody reviewed, nor data for an optional step
// (409 review_completed, the documents unchanged); a review without new
// data is nothing_to_review; a reset starts over.
func TestReviewAfterGreenRefused(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/levels", map[string]any{"name": "opt-lvl", "applicantType": "individual",
		"steps": []map[string]any{{"kind": "identity_doc", "optional": false}, {"kind": "selfie", "optional": false}, {"kind": "poa", "optional": true}}})
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "o2", "lastName": "Doe", "verificationLevelName": "opt-lvl"})
	wantStatus(t, in.expect(200, "POST", "/v1/applicants/o2/verify", verifyBody(t, 95)).m(t), "completed", "GREEN", nil, 1)
	docs := func() string {
		t.Helper()
		var a struct {
			Documents []struct{ Kind, Side, Sha256 string }
		}
		in.expect(200, "GET", "/v1/applicants/o2", nil).json(t, &a)
		return fmt.Sprint(a.Documents)
	}
	approved := docs()
	for _, up := range []map[string]any{
		{"kind": "poa", "image": b64(pngImage(t, 300, 300, 96))},
		{"kind": "selfie", "image": b64(pngImage(t, 300, 300, 97))},
		{"kind": "identity_doc", "side": "front", "docType": "ID_CARD", "country": "FRA", "image": b64(pngImage(t, 300, 300, 98))},
	} {
		if code, _ := errField(t, in.expect(409, "POST", "/v1/applicants/o2/documents", up)); code != "review_completed" {
			t.Errorf("%s after GREEN: %s, want review_completed", up["kind"], code)
		}
	}
	if code, _ := errField(t, in.expect(409, "POST", "/v1/applicants/o2/verify", verifyBody(t, 99))); code != "review_completed" {
		t.Errorf("verify after GREEN: %s, want review_completed", code)
	}
	if got := docs(); got != approved {
		t.Errorf("documents after GREEN changed:\n%s\nwant\n%s", got, approved)
	}
	if code, _ := errField(t, in.expect(409, "POST", "/v1/applicants/o2/review", nil)); code != "nothing_to_review" {
		t.Errorf("review after GREEN: %s, want nothing_to_review", code)
	}
	wantStatus(t, in.status("o2"), "completed", "GREEN", nil, 1)
	in.expect(200, "POST", "/v1/applicants/o2/reset", nil)
	in.expect(201, "POST", "/v1/applicants/o2/documents", map[string]any{"kind": "poa", "image": b64(pngImage(t, 300, 300, 96))})
	in.expect(200, "POST", "/v1/applicants/o2/review", nil)
}

// TestIdentityDocumentReplacedWhole: an identity document of another type
// or issuing country replaces the previous one, both sides: a US
// passport's front never goes to review with a German ID card's back.
func TestIdentityDocumentReplacedWhole(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("mix1", "Doe")
	up := func(side, docType, country string, seed uint64) {
		t.Helper()
		in.expect(201, "POST", "/v1/applicants/mix1/documents", map[string]any{"kind": "identity_doc", "side": side, "docType": docType, "country": country,
			"image": b64(pngImage(t, 240, 220, seed))})
	}
	docs := func() []string {
		t.Helper()
		var a struct {
			Documents []struct{ Kind, Side, DocType, Country string }
		}
		in.expect(200, "GET", "/v1/applicants/mix1", nil).json(t, &a)
		var out []string
		for _, d := range a.Documents {
			out = append(out, d.Side+" "+d.DocType+" "+d.Country)
		}
		return out
	}
	up("front", "ID_CARD", "DEU", 1)
	up("back", "ID_CARD", "DEU", 2)
	up("front", "ID_CARD", "DEU", 3) // the same card again: its front only
	if got := docs(); !slices.Equal(got, []string{"back ID_CARD DEU", "front ID_CARD DEU"}) {
		t.Fatalf("documents %v", got)
	}
	up("front", "PASSPORT", "USA", 4)
	if got := docs(); !slices.Equal(got, []string{"front PASSPORT USA"}) {
		t.Errorf("documents after another document %v, want the passport alone", got)
	}
}

// TestResubmissionScreensAgain: aml and adverse_media run at every
// submission (SPEC §3.4), also when they were GREEN before: an applicant
// asked for its documents again (RED RETRY) may come back under another
// name, and the sanctions hit of that name lands on the aml step (SPEC
// §3.5), not on a document step beside a GREEN screening of the old name.
func TestResubmissionScreensAgain(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/levels", map[string]any{"name": "screened", "personalInfoFields": []string{"firstName", "lastName", "dateOfBirth"}, "steps": []map[string]any{
		{"kind": "identity_doc"}, {"kind": "selfie"}, {"kind": "aml"}, {"kind": "adverse_media", "optional": true}}})
	steps := func(extID string) map[string]string {
		var v struct {
			Steps []struct {
				Kind, ReviewAnswer, ReviewRejectType string
				RejectLabels                         []string
			}
		}
		in.expect(200, "GET", "/v1/applicants/"+extID+"/steps", nil).json(t, &v)
		out := map[string]string{}
		for _, st := range v.Steps {
			out[st.Kind] = strings.TrimSpace(st.ReviewAnswer + " " + st.ReviewRejectType + " " + strings.Join(st.RejectLabels, ","))
		}
		return out
	}
	runs := func(extID string) (aml, media int) {
		for _, h := range in.historyTypes(extID) {
			switch h {
			case "aml.run:system":
				aml++
			case "adverse_media.run:system":
				media++
			}
		}
		return aml, media
	}
	for _, c := range []struct {
		extID, newName string
		status         map[string]string
	}{
		{"rs-sanctioned", "Sanctioned", map[string]string{"identity_doc": "GREEN", "selfie": "GREEN", "aml": "RED FINAL SANCTIONS", "adverse_media": "GREEN"}},
		{"rs-clear", "Doe", map[string]string{"identity_doc": "GREEN", "selfie": "GREEN", "aml": "GREEN", "adverse_media": "GREEN"}},
	} {
		in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": c.extID, "verificationLevelName": "screened",
			"firstName": "Ada", "lastName": "Retry", "dateOfBirth": "1990-04-01"})
		in.expect(200, "POST", "/v1/applicants/"+c.extID+"/verify", verifyBody(t, 11))
		if got := steps(c.extID); got["identity_doc"] != "RED RETRY UNSATISFACTORY_PHOTOS" || got["aml"] != "GREEN" {
			t.Fatalf("%s first verdict: %v", c.extID, got)
		}
		in.expect(200, "PATCH", "/v1/applicants/"+c.extID, map[string]any{"lastName": c.newName})
		in.expect(200, "POST", "/v1/applicants/"+c.extID+"/verify", verifyBody(t, 12))
		if got := steps(c.extID); !maps.Equal(got, c.status) {
			t.Errorf("%s after the resubmission as %s: steps %v, want %v", c.extID, c.newName, got, c.status)
		}
		if aml, media := runs(c.extID); aml != 2 || media != 2 {
			t.Errorf("%s: %d aml.run and %d adverse_media.run over two submissions, want 2 each", c.extID, aml, media)
		}
	}
}
