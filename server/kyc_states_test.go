package server_test

import (
	"testing"
	"time"
)

// TestReviewStatusPath walks SPEC 3.3's path pending → submitted →
// in_review → completed and checks that each state is observable on the
// steps, the status, the applicant and the list filter.
func TestReviewStatusPath(t *testing.T) {
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

// TestDataIsNotInFlight: steps that hold data but were not sent to review
// leave the level free to change; once sent, level changes answer 409.
func TestDataIsNotInFlight(t *testing.T) {
	in := start(t)
	in.createApplicant("nf", "Green")
	in.expect(201, "POST", "/v1/applicants/nf/documents", map[string]any{"kind": "identity_doc", "image": b64(pngImage(t, 220, 220, 41))})
	in.expect(201, "POST", "/v1/applicants/nf/documents", map[string]any{"kind": "selfie", "image": b64(pngImage(t, 220, 220, 42))})
	wantStatus(t, in.status("nf"), "submitted", nil, nil, 0)
	in.expect(200, "POST", "/v1/applicants/nf/levels/full-kyc-level", nil)
	// The rebuilt steps show the data the applicant already holds.
	wantSteps(t, in.stepStatuses("nf"), map[string]string{"identity_doc": "submitted", "selfie": "submitted", "liveness": "pending",
		"poa": "pending", "questionnaire": "pending", "aml": "pending", "adverse_media": "pending"})
	in.expect(200, "POST", "/v1/applicants/nf/levels/basic-kyc-level", nil)
	wantStatus(t, in.status("nf"), "submitted", nil, nil, 0)
	in.expect(200, "POST", "/v1/applicants/nf/review", nil)
	in.expect(409, "POST", "/v1/applicants/nf/levels/full-kyc-level", nil)
}
