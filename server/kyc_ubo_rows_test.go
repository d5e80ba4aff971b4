package server_test

import (
	"testing"
	"time"
)

// TestUboFailedRowPendingOnNewData: a soft-rejected (RETRY) child that sends
// new data for its steps is no longer failed; its row is pending again, and
// the company keeps waiting for it.
func TestUboFailedRowPendingOnNewData(t *testing.T) {
	in := start(t)
	rc, secret := in.kycReceiver()
	in.createCompany("again", "Again", map[string]any{"fullName": "Rita Retry", "roles": []string{"director"}})
	in.spawn(201, "again", 0, nil)
	in.expect(200, "POST", "/v1/applicants/again.ubo.1/verify", verifyBody(t, 90))
	wantReviewed(t, rc.reviewed(t, secret), "again", "RED", "RETRY", "UNSATISFACTORY_PHOTOS")
	if row := rowOf(t, in.expect(200, "GET", "/v1/applicants/again", nil).m(t), 0); row["enrollmentStatus"] != "failed" {
		t.Fatalf("row after RETRY %v", row)
	}
	in.expect(201, "POST", "/v1/applicants/again.ubo.1/documents", map[string]any{"kind": "identity_doc", "image": b64(pngImage(t, 220, 220, 91))})
	in.expect(201, "POST", "/v1/applicants/again.ubo.1/documents", map[string]any{"kind": "selfie", "image": b64(pngImage(t, 220, 220, 92))})
	wantStatus(t, in.status("again.ubo.1"), "submitted", nil, nil, 1)
	if row := rowOf(t, in.expect(200, "GET", "/v1/applicants/again", nil).m(t), 0); row["enrollmentStatus"] != "pending" || row["completedAtUtc"] != nil {
		t.Fatalf("row after new data %v", row)
	}
	wantCounts(t, in.structure("again"), false, 1, 0, 1, 0, 0, 1, 0, 0, 1)
	rc.none(t, 50*time.Millisecond)
}

// TestUboCompanyClosedByChildCompletesEnrollment: a company enrolled through
// a hosted-UI session and closed by its last child records
// enrollment.completed, as one closed by its own steps does.
func TestUboCompanyClosedByChildCompletesEnrollment(t *testing.T) {
	in := start(t)
	rc, secret := in.kycReceiver()
	in.createCompany("enrolled", "Enrolled", map[string]any{"fullName": "Eve Owner", "roles": []string{"ubo"}, "ownershipPercent": 75})
	in.sdkSession("enrolled", nil)
	in.submitCompany("enrolled", 93)
	in.waitReviewStatus("enrolled", "in_review")
	in.spawn(201, "enrolled", 0, nil)
	in.expect(200, "POST", "/v1/applicants/enrolled.ubo.1/verify", verifyBody(t, 94))
	got := rc.reviewedSet(t, secret, 2)
	wantReviewed(t, got["enrolled"], nil, "GREEN", nil)
	h := in.historyTypes("enrolled")
	if len(h) < 2 || h[0] != "enrollment.completed:system" || h[1] != "applicant.approved:system" {
		t.Fatalf("company history %v", h)
	}
}
