package server_test

import (
	"testing"
	"time"
)

// TestUboProduction: in production the company and its child each wait for
// an operator; the company's own GREEN decision still waits for the child,
// and the child's decision closes the company.
func TestUboProduction(t *testing.T) {
	in := start(t)
	rc, secret := in.kycReceiver()
	pk, ps := in.credential("production", "partner")
	ak, as := in.credential("production", "admin")
	prod := func(want int, method, path string, body any) *response {
		t.Helper()
		return in.expect(want, method, path, body, "X-Api-Key", pk, "X-Api-Secret", ps, "X-Environment", "production")
	}
	decide := func(id, answer string) {
		t.Helper()
		in.expect(200, "POST", "/v1/admin/applicants/"+id+"/decision", map[string]any{"reviewAnswer": answer}, "X-Api-Key", ak, "X-Api-Secret", as)
	}
	status := func(id string) map[string]any {
		t.Helper()
		return prod(200, "GET", "/v1/applicants/"+id+"/status", nil).m(t)
	}
	prod(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "pco", "type": "company", "companyName": "Prod Co",
		"registrationNumber": "HRB 9", "country": "DEU",
		"ubos": []map[string]any{{"fullName": "Pia Prod", "dateOfBirth": "1980-03-04", "ownershipPercent": 100, "roles": []string{"ubo"}}}})
	for i, dt := range []string{"certificate_of_incorporation", "register_of_shareholders"} {
		prod(201, "POST", "/v1/applicants/pco/documents", map[string]any{"kind": "company_docs", "docType": dt,
			"image": b64(pngImage(t, 210, 210, 300+uint64(i)))})
	}
	prod(200, "POST", "/v1/applicants/pco/review", nil)
	wantStatus(t, status("pco"), "awaitingOperatorReview", nil, nil, 1)
	decide("pco", "GREEN")
	wantStatus(t, status("pco"), "in_review", nil, nil, 1)

	var sp spawnResult
	prod(201, "POST", "/v1/applicants/pco/ubos/0/spawn-kyc", nil).json(t, &sp)
	if sp.ChildExternalUserID != "pco.ubo.1" {
		t.Fatalf("spawn %+v", sp)
	}
	prod(200, "POST", "/v1/applicants/pco.ubo.1/verify", verifyBody(t, 310))
	wantStatus(t, status("pco.ubo.1"), "awaitingOperatorReview", nil, nil, 1)
	in.advance(time.Second)
	decide("pco.ubo.1", "GREEN")
	got := rc.reviewedSet(t, secret, 2)
	wantReviewed(t, got["pco.ubo.1"], "pco", "GREEN", nil)
	wantReviewed(t, got["pco"], nil, "GREEN", nil)
	if got["pco"]["environment"] != "production" {
		t.Fatalf("company event %v", got["pco"])
	}
	wantStatus(t, status("pco"), "completed", "GREEN", nil, 1)
	s := prod(200, "GET", "/v1/applicants/pco/company-structure", nil).m(t)
	wantCounts(t, s, true, 1, 1, 0, 0, 0, 1, 1, 0, 0)
}
