package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// createCompany creates a company on kyb-level with the given rows.
func (in *instance) createCompany(extID, companyName string, ubos ...map[string]any) map[string]any {
	in.t.Helper()
	body := map[string]any{"externalUserId": extID, "type": "company", "companyName": companyName,
		"registrationNumber": "HRB 1", "country": "DEU"}
	if ubos != nil {
		body["ubos"] = ubos
	}
	return in.expect(201, "POST", "/v1/applicants", body).m(in.t)
}

// submitCompany uploads the company's documents and sends it to review; the
// sandbox reviewer runs after the 2s review delay, which this advances.
func (in *instance) submitCompany(extID string, seed uint64) {
	in.t.Helper()
	in.sendCompanyToReview(extID, seed)
	in.advance(2 * time.Second)
}

// sendCompanyToReview uploads the company's two required documents and
// sends it to review; the sandbox reviewer judges it once the review delay
// has passed on the test's clock.
func (in *instance) sendCompanyToReview(extID string, seed uint64) {
	in.t.Helper()
	for i, dt := range []string{"certificate_of_incorporation", "register_of_shareholders"} {
		in.expect(201, "POST", "/v1/applicants/"+extID+"/documents", map[string]any{"kind": "company_docs", "docType": dt,
			"image": b64(pngImage(in.t, 210, 210, seed+uint64(i)))})
	}
	in.expect(200, "POST", "/v1/applicants/"+extID+"/review", nil)
}

// waitReviewStatus polls /status until reviewStatus is want, failing after 10s.
func (in *instance) waitReviewStatus(extID, want string) map[string]any {
	in.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := in.status(extID)
		if st["reviewStatus"] == want {
			return st
		}
		if time.Now().After(deadline) {
			in.t.Fatalf("%s is %v, want %s", extID, st["reviewStatus"], want)
		}
		runtimeYield()
	}
}

// structure reads the company structure.
func (in *instance) structure(extID string) map[string]any {
	in.t.Helper()
	return in.expect(200, "GET", "/v1/applicants/"+extID+"/company-structure", nil).m(in.t)
}

// wantCounts checks the structure's counts, given in the order total,
// ubos, directors, shareholders, representatives, spawned, completed,
// rejected, pending, and allChildrenComplete.
func wantCounts(t *testing.T, s map[string]any, all bool, counts ...int) {
	t.Helper()
	names := []string{"total", "ubos", "directors", "shareholders", "representatives", "spawned", "completed", "rejected", "pending"}
	c := s["counts"].(map[string]any)
	for i, n := range names {
		if c[n] != float64(counts[i]) {
			t.Fatalf("counts %v; want %s = %d", c, n, counts[i])
		}
	}
	if s["allChildrenComplete"] != all {
		t.Fatalf("allChildrenComplete %v, want %v", s["allChildrenComplete"], all)
	}
}

// spawnResult is the body of spawn-kyc and regenerate-link.
type spawnResult struct {
	UboIndex            *int
	ChildApplicantID    string
	ChildExternalUserID string
	AlreadyLinked       *bool
	SDKLink             struct{ URL, ShortCode, ShortURL, ExpiresAtUtc, Token string }
	Row                 map[string]any
}

func (in *instance) spawn(want int, extID string, index int, body any) spawnResult {
	in.t.Helper()
	var out spawnResult
	in.expect(want, "POST", fmt.Sprintf("/v1/applicants/%s/ubos/%d/spawn-kyc", extID, index), body).json(in.t, &out)
	if out.UboIndex == nil || *out.UboIndex != index || out.AlreadyLinked == nil || out.ChildApplicantID == "" ||
		out.SDKLink.URL != "http://127.0.0.1:8080/sdk/"+out.SDKLink.Token || out.SDKLink.ShortCode == "" ||
		len(out.SDKLink.Token) < 22 {
		in.t.Fatalf("spawn answer %+v", out)
	}
	if *out.AlreadyLinked != (want == 200) {
		in.t.Fatalf("alreadyLinked %v with status %d", *out.AlreadyLinked, want)
	}
	return out
}

// reviewedSet waits for n applicantReviewed webhooks and returns their data
// by externalUserId (delivery order across applicants is not fixed).
func (rc *receiver) reviewedSet(t *testing.T, secret string, n int) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for range n {
		d := rc.reviewed(t, secret)
		id := d["externalUserId"].(string)
		if _, dup := out[id]; dup {
			t.Fatalf("two applicantReviewed for %s", id)
		}
		out[id] = d
	}
	return out
}

func wantReviewed(t *testing.T, d map[string]any, parent any, answer, rejectType any, labels ...string) {
	t.Helper()
	rr := d["reviewResult"].(map[string]any)
	got := []string{}
	for _, l := range rr["rejectLabels"].([]any) {
		got = append(got, l.(string))
	}
	if d["parentExternalUserId"] != parent || d["reviewStatus"] != "completed" || rr["reviewAnswer"] != answer ||
		rr["reviewRejectType"] != rejectType || !slices.Equal(got, append([]string{}, labels...)) {
		t.Fatalf("applicantReviewed %v; want parent %v, %v %v %v", d, parent, answer, rejectType, labels)
	}
}

func rowOf(t *testing.T, a map[string]any, i int) map[string]any {
	t.Helper()
	rows, ok := a["ubos"].([]any)
	if !ok || i >= len(rows) {
		t.Fatalf("no row %d in %v", i, a["ubos"])
	}
	return rows[i].(map[string]any)
}

func TestUboChildrenCloseCompanyGreen(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	a := in.createCompany("acme", "Acme",
		map[string]any{"fullName": "Ada King Lovelace", "dateOfBirth": "1985-12-10", "ownershipPercent": 60, "roles": []string{"ubo", "director"}, "nationality": "GBR"},
		map[string]any{"fullName": "Charles Babbage", "dateOfBirth": "1971-12-26", "ownershipPercent": 33.3333, "roles": []string{"ubo"}})
	r0 := rowOf(t, a, 0)
	if r0["uboIndex"] != 0.0 || r0["fullName"] != "Ada King Lovelace" || r0["ownershipPercent"] != 60.0 || r0["source"] != "api" ||
		r0["enrollmentStatus"] != "none" || r0["linkedApplicantId"] != nil || r0["verificationLinkUrl"] != nil || r0["spawnedAtUtc"] != nil {
		t.Fatalf("row 0 %v", r0)
	}
	if r1 := rowOf(t, a, 1); r1["ownershipPercent"] != 33.3333 || r1["email"] != nil || r1["nationality"] != nil {
		t.Fatalf("row 1 %v", r1)
	}
	wantCounts(t, in.structure("acme"), false, 2, 2, 1, 0, 0, 0, 0, 0, 0)

	// The company's own steps pass, but it waits for its beneficial owners.
	in.submitCompany("acme", 10)
	in.waitReviewStatus("acme", "in_review")

	first := in.spawn(201, "acme", 0, nil)
	if first.ChildExternalUserID != "acme.ubo.1" || first.SDKLink.ExpiresAtUtc != "2026-11-28T05:00:02.000Z" {
		t.Fatalf("spawn %+v", first)
	}
	again := in.spawn(200, "acme", 0, map[string]any{"ttlDays": 2})
	if again.ChildApplicantID != first.ChildApplicantID || again.SDKLink.Token == first.SDKLink.Token ||
		again.SDKLink.ExpiresAtUtc != "2026-11-23T05:00:02.000Z" || again.Row["verificationLinkUrl"] != again.SDKLink.URL {
		t.Fatalf("second spawn %+v", again)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(in.URL + "/l/" + again.SDKLink.ShortCode)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != again.SDKLink.URL {
		t.Fatalf("short link %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	second := in.spawn(201, "acme", 1, map[string]any{"ttlDays": 30, "lang": "de", "theme": "dark", "returnUrl": "https://example.com/done", "levelName": "basic-kyc-level"})
	if second.ChildExternalUserID != "acme.ubo.2" {
		t.Fatalf("spawn %+v", second)
	}

	// Children are prefilled and locked individuals.
	c := in.expect(200, "GET", "/v1/applicants/acme.ubo.1", nil).m(t)
	info := c["info"].(map[string]any)
	if c["type"] != "individual" || c["verificationLevelName"] != "basic-kyc-level" || c["id"] != first.ChildApplicantID ||
		info["firstName"] != "Ada King" || info["lastName"] != "Lovelace" || info["dateOfBirth"] != "1985-12-10" ||
		fmt.Sprint(c["lockedFields"]) != "[firstName lastName dateOfBirth]" || c["ubos"] != nil {
		t.Fatalf("child %v", c)
	}
	row := rowOf(t, in.expect(200, "GET", "/v1/applicants/acme", nil).m(t), 0)
	if row["linkedApplicantId"] != first.ChildApplicantID || row["childExternalUserId"] != "acme.ubo.1" || row["enrollmentStatus"] != "pending" ||
		row["spawnedAtUtc"] != "2026-11-21T05:00:02.000Z" || row["verificationLinkUrl"] != again.SDKLink.URL ||
		row["verificationLinkExpiresAtUtc"] != again.SDKLink.ExpiresAtUtc || row["completedAtUtc"] != nil {
		t.Fatalf("row after spawn %v", row)
	}
	wantCounts(t, in.structure("acme"), false, 2, 2, 1, 0, 0, 2, 0, 0, 2)

	in.advance(time.Minute)
	in.expect(200, "POST", "/v1/applicants/acme.ubo.1/verify", verifyBody(t, 20))
	s := in.structure("acme")
	wantCounts(t, s, false, 2, 2, 1, 0, 0, 2, 1, 0, 1)
	if s["lastChildCompletedAtUtc"] != "2026-11-21T05:01:02.000Z" {
		t.Fatalf("structure %v", s)
	}
	wantStatus(t, in.status("acme"), "in_review", nil, nil, 1)

	in.advance(time.Minute)
	in.expect(200, "POST", "/v1/applicants/acme.ubo.2/verify", verifyBody(t, 30))
	s = in.structure("acme")
	wantCounts(t, s, true, 2, 2, 1, 0, 0, 2, 2, 0, 0)
	if s["lastChildCompletedAtUtc"] != "2026-11-21T05:02:02.000Z" {
		t.Fatalf("structure %v", s)
	}
	st := in.status("acme")
	wantStatus(t, st, "completed", "GREEN", nil, 1)
	if st["reviewedAtUtc"] != "2026-11-21T05:02:02.000Z" {
		t.Fatalf("status %v", st)
	}

	got := rc.reviewedSet(t, secret, 3)
	wantReviewed(t, got["acme.ubo.1"], "acme", "GREEN", nil)
	wantReviewed(t, got["acme.ubo.2"], "acme", "GREEN", nil)
	wantReviewed(t, got["acme"], nil, "GREEN", nil)
	if _, has := got["acme"]["parentExternalUserId"]; has {
		t.Fatalf("a company has no parent: %v", got["acme"])
	}
	rc.none(t, 50*time.Millisecond)

	var list struct {
		Items      []map[string]any
		NextCursor *string
	}
	in.expect(200, "GET", "/v1/applicants/acme/ubos", nil).json(t, &list)
	if len(list.Items) != 2 || list.NextCursor != nil || list.Items[1]["uboIndex"] != 1.0 || list.Items[1]["enrollmentStatus"] != "completed" ||
		list.Items[1]["completedAtUtc"] != "2026-11-21T05:02:02.000Z" || list.Items[0]["enrollmentStatus"] != "completed" {
		t.Fatalf("ubos %v", list)
	}
	want := []string{"enrollment.completed:system", "applicant.approved:system", "enrollment.submitted:partner",
		"enrollment.created:partner", "enrollment.created:partner", "applicant.created:partner"}
	if h := in.historyTypes("acme.ubo.1"); !slices.Equal(h, want) {
		t.Fatalf("child history %v, want %v", h, want)
	}
	want = []string{"applicant.approved:system", "applicant.updated:partner", "applicant.updated:partner", "aml.run:system",
		"applicant.sent_to_review:partner", "applicant.created:partner"}
	if h := in.historyTypes("acme"); !slices.Equal(h, want) {
		t.Fatalf("company history %v, want %v", h, want)
	}
}

func TestUboRejectedChildClosesCompanyRed(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	in.createCompany("red", "Red Ltd", map[string]any{"fullName": "Rex Reject", "dateOfBirth": "1980-01-01", "ownershipPercent": 100, "roles": []string{"ubo"}})
	in.spawn(201, "red", 0, nil)

	// The child is rejected before the company's own steps are done.
	in.expect(200, "POST", "/v1/applicants/red.ubo.1/verify", verifyBody(t, 40))
	wantReviewed(t, rc.reviewed(t, secret), "red", "RED", "FINAL", "FORGERY")
	wantCounts(t, in.structure("red"), true, 1, 1, 0, 0, 0, 1, 0, 1, 0)
	if row := rowOf(t, in.expect(200, "GET", "/v1/applicants/red", nil).m(t), 0); row["enrollmentStatus"] != "rejected" || row["completedAtUtc"] == nil {
		t.Fatalf("row %v", row)
	}
	wantStatus(t, in.status("red"), "pending", nil, nil, 0)

	// The company's own steps pass; with a RED child it closes RED FINAL.
	in.submitCompany("red", 50)
	wantReviewed(t, rc.reviewed(t, secret), nil, "RED", "FINAL", "COMPANY_NOT_VALIDATED_BENEFICIARIES")
	st := in.status("red")
	wantStatus(t, st, "completed", "RED", "FINAL", 1)
	if fmt.Sprint(st["rejectLabels"]) != "[COMPANY_NOT_VALIDATED_BENEFICIARIES]" {
		t.Fatalf("status %v", st)
	}
	// Its own steps stay GREEN.
	wantSteps(t, in.stepStatuses("red"), map[string]string{"company_docs": "completed/GREEN", "questionnaire": "completed/GREEN", "aml": "completed/GREEN"})

	// regenerate-link clears the rejection: the child is reset and the
	// company waits for it again.
	var regen spawnResult
	in.expect(200, "POST", "/v1/applicants/red/ubos/0/regenerate-link", map[string]any{"ttlDays": 1, "returnUrl": "https://example.com/r"}).json(t, &regen)
	if regen.Row["enrollmentStatus"] != "pending" || regen.Row["completedAtUtc"] != nil || regen.ChildExternalUserID != "red.ubo.1" ||
		regen.SDKLink.ExpiresAtUtc != "2026-11-22T05:00:02.000Z" {
		t.Fatalf("regenerate %+v", regen)
	}
	wantStatus(t, in.status("red.ubo.1"), "pending", nil, nil, 1)
	wantStatus(t, in.status("red"), "in_review", nil, nil, 1)
	wantCounts(t, in.structure("red"), false, 1, 1, 0, 0, 0, 1, 0, 0, 1)
	// The child is reset, and the company's RED is withdrawn until it
	// closes again; the two entities' events come in either order.
	got := map[string]string{}
	for range 2 {
		r := rc.next(t)
		var env struct{ EventType, EntityID string }
		if err := json.Unmarshal(r.Body, &env); err != nil {
			t.Fatal(err)
		}
		got[env.EntityID] = env.EventType
	}
	if got["red.ubo.1"] != "applicantReset" || got["red"] != "applicantPending" {
		t.Fatalf("after regenerate-link: %v", got)
	}
	rc.none(t, 50*time.Millisecond)
}

func TestUboRetryChildIsFailedUntilRegenerated(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	in.createCompany("soft", "Soft", map[string]any{"fullName": "Rita Retry", "roles": []string{"director"}})
	in.spawn(201, "soft", 0, nil)
	in.expect(200, "POST", "/v1/applicants/soft.ubo.1/verify", verifyBody(t, 60))
	wantReviewed(t, rc.reviewed(t, secret), "soft", "RED", "RETRY", "UNSATISFACTORY_PHOTOS")
	row := rowOf(t, in.expect(200, "GET", "/v1/applicants/soft", nil).m(t), 0)
	if row["enrollmentStatus"] != "failed" || row["completedAtUtc"] != nil {
		t.Fatalf("row %v", row)
	}
	wantCounts(t, in.structure("soft"), false, 1, 0, 1, 0, 0, 1, 0, 0, 1)
	var regen spawnResult
	in.expect(200, "POST", "/v1/applicants/soft/ubos/0/regenerate-link", nil).json(t, &regen)
	if regen.Row["enrollmentStatus"] != "pending" {
		t.Fatalf("regenerate %+v", regen)
	}
}

// TestUboErasedChildClosesCompanyRed: erasing a linked child that has no
// verdict (the owner's erasure request) leaves it nothing to be verified
// with, so its row counts as rejected and the company closes RED FINAL
// with COMPANY_NOT_VALIDATED_BENEFICIARIES and its applicantReviewed,
// instead of waiting in in_review for a child that can never finish.
// A child erased after its GREEN keeps its row completed.
func TestUboErasedChildClosesCompanyRed(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	in.createCompany("gone", "Gone Ltd",
		map[string]any{"fullName": "Vera Verified", "dateOfBirth": "1980-01-01", "ownershipPercent": 50, "roles": []string{"ubo"}},
		map[string]any{"fullName": "Eric Erased", "dateOfBirth": "1981-02-02", "ownershipPercent": 50, "roles": []string{"ubo"}})
	in.submitCompany("gone", 60)
	in.waitReviewStatus("gone", "in_review")
	in.spawn(201, "gone", 0, nil)
	in.spawn(201, "gone", 1, nil)
	in.expect(200, "POST", "/v1/applicants/gone.ubo.1/verify", verifyBody(t, 61))
	wantReviewed(t, rc.reviewed(t, secret), "gone", "GREEN", nil)

	in.expect(204, "DELETE", "/v1/applicants/gone.ubo.1", nil) // after its GREEN: the row stays completed
	in.expect(204, "DELETE", "/v1/applicants/gone.ubo.2", nil) // before any verdict
	ubos := in.expect(200, "GET", "/v1/applicants/gone", nil).m(t)
	if r := rowOf(t, ubos, 0); r["enrollmentStatus"] != "completed" {
		t.Fatalf("row 0 after its child's erasure: %v", r)
	}
	if r := rowOf(t, ubos, 1); r["enrollmentStatus"] != "rejected" || r["completedAtUtc"] == nil {
		t.Fatalf("row 1 after its child's erasure: %v", r)
	}
	wantCounts(t, in.structure("gone"), true, 2, 2, 0, 0, 0, 2, 1, 1, 0)
	st := in.status("gone")
	wantStatus(t, st, "completed", "RED", "FINAL", 1)
	if fmt.Sprint(st["rejectLabels"]) != "[COMPANY_NOT_VALIDATED_BENEFICIARIES]" {
		t.Fatalf("status %v", st)
	}
	wantReviewed(t, rc.reviewed(t, secret), nil, "RED", "FINAL", "COMPANY_NOT_VALIDATED_BENEFICIARIES")
	rc.none(t, 50*time.Millisecond)
}

// TestUboCompanyFinalHoldsUntilReset: a company closes RED FINAL over its
// children even when its own step was rejected with RETRY (SPEC §3.6), and
// FINAL holds until reset (§3.3): new documents and a new review answer
// 409 review_final, as they do for an individual; after a reset both go.
func TestUboCompanyFinalHoldsUntilReset(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	// companyName retry: the sandbox reviewer rejects its documents with RETRY.
	in.createCompany("fin", "retry", map[string]any{"fullName": "Gil Green", "dateOfBirth": "1980-01-01", "ownershipPercent": 100, "roles": []string{"ubo"}})
	in.spawn(201, "fin", 0, nil)
	in.expect(200, "POST", "/v1/applicants/fin.ubo.1/sandbox/review", map[string]any{"reviewAnswer": "GREEN"})
	wantReviewed(t, rc.reviewed(t, secret), "fin", "GREEN", nil)
	in.submitCompany("fin", 70)
	wantReviewed(t, rc.reviewed(t, secret), nil, "RED", "FINAL", "UNSATISFACTORY_PHOTOS")
	wantStatus(t, in.status("fin"), "completed", "RED", "FINAL", 1)
	// Its own document step is RETRY: only the company's FINAL stops it.
	wantSteps(t, in.stepStatuses("fin"), map[string]string{"company_docs": "completed/RED/RETRY", "questionnaire": "completed/GREEN", "aml": "completed/GREEN"})
	doc := map[string]any{"kind": "company_docs", "docType": "certificate_of_incorporation", "image": b64(pngImage(t, 210, 210, 80))}
	if code, _ := errField(t, in.expect(409, "POST", "/v1/applicants/fin/documents", doc)); code != "review_final" {
		t.Fatalf("upload to a company closed RED FINAL: code %q, want review_final", code)
	}
	if code, _ := errField(t, in.expect(409, "POST", "/v1/applicants/fin/review", nil)); code != "review_final" {
		t.Fatalf("review of a company closed RED FINAL: code %q, want review_final", code)
	}
	wantStatus(t, in.status("fin"), "completed", "RED", "FINAL", 1)
	in.expect(200, "POST", "/v1/applicants/fin/reset", nil)
	in.expect(201, "POST", "/v1/applicants/fin/documents", doc)

	// A company without rows has nothing to close over: it keeps its own
	// steps' verdict, RED RETRY here as the sandbox reviewer gives it
	// (SPEC §3.5), and takes new documents.
	in.createCompany("fin0", "retry")
	in.submitCompany("fin0", 90)
	wantReviewed(t, rc.reviewed(t, secret), nil, "RED", "RETRY", "UNSATISFACTORY_PHOTOS")
	wantStatus(t, in.status("fin0"), "completed", "RED", "RETRY", 1)
	in.expect(201, "POST", "/v1/applicants/fin0/documents", doc)
}

// TestUboClosedCompanyReportsAChangedVerdict: a closed company whose
// terminal child's verdict changes (GREEN, then RED FINAL, then GREEN
// again) closes again with the new verdict, and each closing sends
// applicantReviewed and records its history entry (SPEC §3.6): the
// partner's last event says what the status says.
func TestUboClosedCompanyReportsAChangedVerdict(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	in.createCompany("flip", "Flip", map[string]any{"fullName": "Gil Green", "dateOfBirth": "1980-01-01", "ownershipPercent": 100, "roles": []string{"ubo"}})
	in.spawn(201, "flip", 0, nil)
	in.submitCompany("flip", 90)
	wantStatus(t, in.status("flip"), "in_review", nil, nil, 1)
	for _, step := range []struct {
		force              map[string]any
		answer, rejectType any
		labels             []string
	}{
		{map[string]any{"reviewAnswer": "GREEN"}, "GREEN", nil, nil},
		{map[string]any{"reviewAnswer": "RED", "reviewRejectType": "FINAL", "rejectLabels": []string{"FORGERY"}}, "RED", "FINAL", []string{"COMPANY_NOT_VALIDATED_BENEFICIARIES"}},
		{map[string]any{"reviewAnswer": "GREEN"}, "GREEN", nil, nil},
	} {
		in.expect(200, "POST", "/v1/applicants/flip.ubo.1/sandbox/review", step.force)
		// The child's and the company's events, in either order (SPEC §5
		// orders events per entity only).
		got := map[any]map[string]any{}
		for range 2 {
			d := rc.reviewed(t, secret)
			got[d["externalUserId"]] = d
		}
		childLabels, _ := step.force["rejectLabels"].([]string)
		wantReviewed(t, got["flip.ubo.1"], "flip", step.force["reviewAnswer"], step.force["reviewRejectType"], childLabels...)
		wantReviewed(t, got["flip"], nil, step.answer, step.rejectType, step.labels...)
		wantStatus(t, in.status("flip"), "completed", step.answer, step.rejectType, 1)
		// The risk follows the verdict that closed: RED FINAL is high.
		risk := map[any]string{"GREEN": "low", "RED": "high"}[step.answer]
		if got := in.expect(200, "GET", "/v1/applicants/flip", nil).m(t)["riskLevel"]; got != risk {
			t.Errorf("company closed %v %v: riskLevel %v, want %s", step.answer, step.rejectType, got, risk)
		}
	}
	want := []string{"applicant.approved:system", "applicant.rejected:system", "applicant.approved:system"}
	if h := in.historyTypes("flip"); !slices.Equal(h[:3], want) {
		t.Errorf("company history %v, want it to begin with %v", h, want)
	}
	// A child reset withdraws the company's verdict: the review history
	// says so too, not only applicantPending, so its newest verdict entry
	// no longer stands unanswered.
	in.expect(200, "POST", "/v1/applicants/flip.ubo.1/reset", nil)
	wantStatus(t, in.status("flip"), "in_review", nil, nil, 1)
	var page struct {
		Items []struct {
			EventType string
			Details   map[string]any
		}
	}
	in.expect(200, "GET", "/v1/applicants/flip/review-history?limit=1", nil).json(t, &page)
	if len(page.Items) != 1 || page.Items[0].EventType != "applicant.updated" || page.Items[0].Details["action"] != "review.reopened" ||
		page.Items[0].Details["previousReviewAnswer"] != "GREEN" {
		t.Errorf("newest company history entry after the child's reset: %+v, want applicant.updated review.reopened", page.Items)
	}
}

func TestUboLinkExpiry(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("late", "Late", map[string]any{"fullName": "Lou Late", "roles": []string{"ubo"}, "ownershipPercent": 10})
	in.spawn(201, "late", 0, map[string]any{"ttlDays": 1})
	in.advance(24 * time.Hour)
	deadline := time.Now().Add(10 * time.Second)
	for rowOf(t, in.expect(200, "GET", "/v1/applicants/late", nil).m(t), 0)["enrollmentStatus"] != "expired" {
		if time.Now().After(deadline) {
			t.Fatal("the row never showed the expired link")
		}
		runtimeYield()
	}
	var regen spawnResult
	in.expect(200, "POST", "/v1/applicants/late/ubos/0/regenerate-link", map[string]any{"ttlDays": 3}).json(t, &regen)
	if regen.Row["enrollmentStatus"] != "pending" {
		t.Fatalf("regenerate %+v", regen)
	}
	wantSteps(t, in.stepStatuses("late.ubo.1"), map[string]string{"identity_doc": "pending", "selfie": "pending"})
}

func TestUboConcurrentSpawnMakesOneChild(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("race", "Race", map[string]any{"fullName": "Rae Race", "roles": []string{"ubo"}, "ownershipPercent": 50})
	const n = 12
	var wg sync.WaitGroup
	statuses := make([]int, n)
	ids := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := doRequest(t, "POST", in.URL+"/v1/applicants/race/ubos/0/spawn-kyc", nil, "X-Api-Key", in.Key, "X-Api-Secret", in.Secret)
			statuses[i] = r.Status
			var out spawnResult
			r.json(t, &out)
			ids[i] = out.ChildApplicantID
		}()
	}
	wg.Wait()
	created := 0
	for i, st := range statuses {
		switch st {
		case 201:
			created++
		case 200:
		default:
			t.Fatalf("status %d", st)
		}
		if ids[i] != ids[0] {
			t.Fatalf("two children: %v", ids)
		}
	}
	if created != 1 {
		t.Fatalf("%d calls created a child", created)
	}
	var list struct{ Items []map[string]any }
	in.expect(200, "GET", "/v1/applicants", nil).json(t, &list)
	if len(list.Items) != 2 {
		t.Fatalf("%d applicants", len(list.Items))
	}
	wantCounts(t, in.structure("race"), false, 1, 1, 0, 0, 0, 1, 0, 0, 1)
}

func TestUboRegenerateLinkCap(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("cap", "Cap",
		map[string]any{"fullName": "Cy Cap", "roles": []string{"representative"}},
		map[string]any{"fullName": "Di Cap", "roles": []string{"shareholder"}})
	r := in.expect(409, "POST", "/v1/applicants/cap/ubos/0/regenerate-link", nil)
	if code, _ := errField(t, r); code != "not_spawned" {
		t.Fatalf("code %s", code)
	}
	in.spawn(201, "cap", 0, nil)
	in.spawn(201, "cap", 1, nil)
	for range 5 {
		in.expect(200, "POST", "/v1/applicants/cap/ubos/0/regenerate-link", nil)
		in.advance(time.Hour)
	}
	// Calls at 0h..4h; at 5h the first leaves the window at 24h.
	r = in.expect(429, "POST", "/v1/applicants/cap/ubos/0/regenerate-link", nil)
	if code, _ := errField(t, r); code != "rate_limited" || r.Header.Get("Retry-After") != "68400" {
		t.Fatalf("429 %s, Retry-After %q", r.Body, r.Header.Get("Retry-After"))
	}
	// Another row has its own cap.
	in.expect(200, "POST", "/v1/applicants/cap/ubos/1/regenerate-link", nil)
	in.advance(19*time.Hour - time.Second)
	r = in.expect(429, "POST", "/v1/applicants/cap/ubos/0/regenerate-link", nil)
	if r.Header.Get("Retry-After") != "1" {
		t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	in.advance(time.Second)
	in.expect(200, "POST", "/v1/applicants/cap/ubos/0/regenerate-link", nil)
	in.expect(429, "POST", "/v1/applicants/cap/ubos/0/regenerate-link", nil)
}

func TestUboSpawnRateLimitSurvivesRestart(t *testing.T) {
	t.Parallel()
	limit := func(o *options) { o.settings.SpawnRateLimitPerHour = 3 }
	a := boot(t, func(o *bootOptions) { limit(&o.options) })
	a.createCompany("rl", "Rate", map[string]any{"fullName": "Ra Te", "roles": []string{"ubo"}},
		map[string]any{"fullName": "Li Mit", "roles": []string{"director"}})
	a.spawn(201, "rl", 0, nil)
	a.advance(10 * time.Minute)
	a.spawn(200, "rl", 0, nil) // a repeat counts too
	a.advance(10 * time.Minute)
	// Calls that fail do not count.
	a.expect(404, "POST", "/v1/applicants/rl/ubos/7/spawn-kyc", nil)
	a.expect(400, "POST", "/v1/applicants/rl/ubos/1/spawn-kyc", map[string]any{"ttlDays": 0})
	a.spawn(201, "rl", 1, nil)
	a.advance(10 * time.Minute)
	r := a.expect(429, "POST", "/v1/applicants/rl/ubos/1/spawn-kyc", nil)
	if code, _ := errField(t, r); code != "rate_limited" || r.Header.Get("Retry-After") != "1800" {
		t.Fatalf("429 %s, Retry-After %q", r.Body, r.Header.Get("Retry-After"))
	}
	// Another credential has its own window.
	key, secret := a.credential(store.Sandbox, store.RolePartner)
	a.expect(200, "POST", "/v1/applicants/rl/ubos/1/spawn-kyc", nil, "X-Api-Key", key, "X-Api-Secret", secret)

	// The next process on the same db remembers the window.
	a.stop()
	b := boot(t, func(o *bootOptions) { limit(&o.options); o.path, o.clock = a.Path, a.Clock })
	b.Key, b.Secret = a.Key, a.Secret
	r = b.expect(429, "POST", "/v1/applicants/rl/ubos/1/spawn-kyc", nil)
	if r.Header.Get("Retry-After") != "1800" {
		t.Fatalf("Retry-After after restart %q", r.Header.Get("Retry-After"))
	}
	b.advance(30 * time.Minute)
	b.spawn(200, "rl", 1, nil)
	r = b.expect(429, "POST", "/v1/applicants/rl/ubos/0/spawn-kyc", nil)
	if r.Header.Get("Retry-After") != "600" {
		t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
	}
}

func TestUboValidation(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("v", "Valid", map[string]any{"fullName": "Vi Val", "roles": []string{"ubo"}, "ownershipPercent": 60},
		map[string]any{"fullName": "Di Rector", "roles": []string{"director"}, "ownershipPercent": 50})
	in.createApplicant("person", "Person")

	t.Run("UboIndex", func(t *testing.T) {
		for _, idx := range []string{"2", "x", "-1", "1.0", "+1", "99999999999999999999", "%20"} {
			for _, call := range [][2]string{{"PATCH", "/v1/applicants/v/ubos/" + idx}, {"POST", "/v1/applicants/v/ubos/" + idx + "/spawn-kyc"},
				{"POST", "/v1/applicants/v/ubos/" + idx + "/regenerate-link"}} {
				r := in.expect(404, call[0], call[1], map[string]any{})
				if code, _ := errField(t, r); code != "ubo_not_found" {
					t.Errorf("%s %s: code %s", call[0], call[1], code)
				}
			}
		}
		r := in.expect(404, "POST", "/v1/applicants/nobody/ubos/0/spawn-kyc", nil)
		if code, _ := errField(t, r); code != "applicant_not_found" {
			t.Errorf("code %s", code)
		}
	})
	t.Run("OwnershipSum", func(t *testing.T) {
		r := in.expect(400, "POST", "/v1/applicants", map[string]any{"externalUserId": "over", "type": "company", "companyName": "Over",
			"ubos": []map[string]any{{"fullName": "A B", "roles": []string{"ubo"}, "ownershipPercent": 60}, {"fullName": "C D", "roles": []string{"ubo", "director"}, "ownershipPercent": 40.0001}}})
		if _, f := errField(t, r); f != "ubos[1].ownershipPercent" {
			t.Errorf("field %q", f)
		}
		in.expect(404, "GET", "/v1/applicants/over", nil)
		r = in.expect(400, "POST", "/v1/applicants/v/ubos", map[string]any{"fullName": "E F", "roles": []string{"ubo"}, "ownershipPercent": 40.5})
		if _, f := errField(t, r); f != "ownershipPercent" {
			t.Errorf("field %q", f)
		}
		r = in.expect(400, "PATCH", "/v1/applicants/v/ubos/1", map[string]any{"roles": []string{"director", "ubo"}})
		if _, f := errField(t, r); f != "roles" {
			t.Errorf("field %q", f)
		}
		// Exactly 100 is fine.
		in.expect(201, "POST", "/v1/applicants/v/ubos", map[string]any{"fullName": "G H", "roles": []string{"ubo"}, "ownershipPercent": 40})
		if n := len(in.expect(200, "GET", "/v1/applicants/v", nil).m(t)["ubos"].([]any)); n != 3 {
			t.Errorf("%d rows", n)
		}
	})
	t.Run("Rows", func(t *testing.T) {
		for body, field := range map[string]string{
			`{"roles":["ubo"]}`:                                                  "fullName",
			`{"fullName":"  ","roles":["ubo"]}`:                                  "fullName",
			`{"fullName":"A B"}`:                                                 "roles",
			`{"fullName":"A B","roles":[]}`:                                      "roles",
			`{"fullName":"A B","roles":"ubo"}`:                                   "roles",
			`{"fullName":"A B","roles":["owner"]}`:                               "roles[0]",
			`{"fullName":"A B","roles":["director",1]}`:                          "roles[1]",
			`{"fullName":"A B","roles":["director",{"r":"ubo"}]}`:                "roles[1]",
			`{"fullName":"A B","roles":["director"],"ownershipPercent":101}`:     "ownershipPercent",
			`{"fullName":"A B","roles":["director"],"ownershipPercent":-1}`:      "ownershipPercent",
			`{"fullName":"A B","roles":["director"],"ownershipPercent":"5"}`:     "ownershipPercent",
			`{"fullName":"A B","roles":["director"],"ownershipPercent":1.23456}`: "ownershipPercent",
			`{"fullName":"A B","roles":["director"],"nationality":"DE"}`:         "nationality",
			`{"fullName":"A B","roles":["director"],"dateOfBirth":"1990-02-30"}`: "dateOfBirth",
			`{"fullName":"A B","roles":["director"],"email":"nope"}`:             "email",
			`{"fullName":7,"roles":["director"]}`:                                "fullName",
		} {
			r := in.expect(400, "POST", "/v1/applicants/v/ubos", rawJSON(body))
			if _, f := errField(t, r); f != field {
				t.Errorf("%s: field %q, want %s", body, f, field)
			}
		}
		r := in.expect(400, "POST", "/v1/applicants", map[string]any{"externalUserId": "bad-rows", "type": "company", "companyName": "B", "ubos": "none"})
		if _, f := errField(t, r); f != "ubos" {
			t.Errorf("field %q", f)
		}
		added := in.expect(201, "POST", "/v1/applicants/v/ubos", map[string]any{"fullName": " Sam  Smith ", "roles": []string{"shareholder", "shareholder"},
			"ownershipPercent": 1e1, "email": "sam@example.com", "linkedApplicantId": "x", "source": "sdk"}).m(t)
		row := added["row"].(map[string]any)
		if added["uboIndex"] != 3.0 || row["fullName"] != "Sam  Smith" || fmt.Sprint(row["roles"]) != "[shareholder]" || row["ownershipPercent"] != 10.0 ||
			row["source"] != "api" || row["linkedApplicantId"] != nil || row["enrollmentStatus"] != "none" {
			t.Errorf("added %v", added)
		}
	})
	t.Run("Individual", func(t *testing.T) {
		for _, call := range [][2]string{{"GET", "/ubos"}, {"POST", "/ubos"}, {"GET", "/company-structure"}, {"PATCH", "/company-structure"},
			{"POST", "/ubos/0/spawn-kyc"}, {"PATCH", "/ubos/0"}} {
			r := in.expect(400, call[0], "/v1/applicants/person"+call[1], map[string]any{"fullName": "A B", "roles": []string{"ubo"}})
			if code, _ := errField(t, r); code != "not_a_company" {
				t.Errorf("%s %s: code %s", call[0], call[1], code)
			}
		}
		// ubos[] on an individual is dropped like any field it does not collect.
		p := in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "p2", "ubos": []map[string]any{{"fullName": "A"}}},
			beyondContract, droppedField).m(t)
		if _, has := p["ubos"]; has {
			t.Errorf("individual with rows: %v", p)
		}
	})
	t.Run("SpawnBody", func(t *testing.T) {
		for body, field := range map[string]string{
			`{"ttlDays":0}`: "ttlDays", `{"ttlDays":31}`: "ttlDays", `{"ttlDays":"7"}`: "ttlDays", `{"ttlDays":1.5}`: "ttlDays",
			`{"lang":"eng"}`: "lang", `{"theme":"blue"}`: "theme", `{"returnUrl":"/relative"}`: "returnUrl",
			`{"levelName":"kyb-level"}`: "levelName", `{"levelName":""}`: "levelName",
		} {
			r := in.expect(400, "POST", "/v1/applicants/v/ubos/0/spawn-kyc", rawJSON(body))
			if _, f := errField(t, r); f != field {
				t.Errorf("%s: field %q, want %s", body, f, field)
			}
		}
		r := in.expect(404, "POST", "/v1/applicants/v/ubos/0/spawn-kyc", map[string]any{"levelName": "no-such-level"})
		if code, _ := errField(t, r); code != "level_not_found" {
			t.Errorf("code %s", code)
		}
		in.expect(400, "POST", "/v1/applicants/v/ubos/0/regenerate-link", map[string]any{"ttlDays": 40})
		// Nothing was spawned by the refused calls.
		if row := rowOf(t, in.expect(200, "GET", "/v1/applicants/v", nil).m(t), 0); row["enrollmentStatus"] != "none" {
			t.Errorf("row %v", row)
		}
		in.expect(404, "GET", "/v1/applicants/v.ubo.1", nil)
	})
}

func TestUboPatch(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("pt", "Patch", map[string]any{"fullName": "Pat Old", "dateOfBirth": "1970-01-01", "roles": []string{"ubo"}, "ownershipPercent": 25, "email": "pat@example.com"})
	patch := func(body any) map[string]any {
		t.Helper()
		return in.expect(200, "PATCH", "/v1/applicants/pt/ubos/0", body).m(t)
	}
	r := patch(map[string]any{"fullName": "Pat Before", "ownershipPercent": 30})
	if r["identityChangedAfterSpawn"] != false || r["uboIndex"] != 0.0 || r["fullName"] != "Pat Before" || r["ownershipPercent"] != 30.0 {
		t.Fatalf("patch before spawn %v", r)
	}
	sp := in.spawn(201, "pt", 0, nil)
	r = patch(map[string]any{"ownershipPercent": 35, "roles": []string{"ubo", "director"}, "email": nil,
		"linkedApplicantId": "00000000-0000-4000-8000-000000000000", "source": "sdk", "verificationLinkUrl": "https://evil.example", "verificationLinkExpiresAtUtc": "2030-01-01T00:00:00.000Z"})
	if r["identityChangedAfterSpawn"] != false || r["ownershipPercent"] != 35.0 || r["email"] != nil || r["linkedApplicantId"] != sp.ChildApplicantID ||
		r["source"] != "api" || r["verificationLinkUrl"] != sp.SDKLink.URL || r["verificationLinkExpiresAtUtc"] != sp.SDKLink.ExpiresAtUtc {
		t.Fatalf("patch of other fields %v", r)
	}
	if r := patch(map[string]any{"fullName": "Pat Before", "dateOfBirth": "1970-01-01"}); r["identityChangedAfterSpawn"] != false {
		t.Fatalf("unchanged identity %v", r)
	}
	if r := patch(map[string]any{"fullName": "Pat New"}); r["identityChangedAfterSpawn"] != true || r["fullName"] != "Pat New" {
		t.Fatalf("name change %v", r)
	}
	if r := patch(map[string]any{"dateOfBirth": "1971-01-01"}); r["identityChangedAfterSpawn"] != true || r["dateOfBirth"] != "1971-01-01" {
		t.Fatalf("birth date change %v", r)
	}
	// The child keeps the identity it was spawned with.
	info := in.expect(200, "GET", "/v1/applicants/pt.ubo.1", nil).m(t)["info"].(map[string]any)
	if info["lastName"] != "Before" || info["dateOfBirth"] != "1970-01-01" {
		t.Fatalf("child %v", info)
	}
	r2 := in.expect(400, "PATCH", "/v1/applicants/pt/ubos/0", map[string]any{"fullName": nil})
	if _, f := errField(t, r2); f != "fullName" {
		t.Fatalf("field %s", f)
	}
	if row := rowOf(t, in.expect(200, "GET", "/v1/applicants/pt", nil).m(t), 0); row["fullName"] != "Pat New" || row["dateOfBirth"] != "1971-01-01" {
		t.Fatalf("row %v", row)
	}
	if row := in.expect(200, "GET", "/v1/applicants/pt/ubos/0", nil).m(t); row["fullName"] != "Pat New" || row["uboIndex"] != 0.0 {
		t.Fatalf("GET row %v", row)
	}
	in.expect(404, "GET", "/v1/applicants/pt/ubos/1", nil)
	in.expect(405, "DELETE", "/v1/applicants/pt/ubos/0", nil)
}

func TestCompanyStructureFlags(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("cs", "Struct")
	s := in.structure("cs")
	if s["externalUserId"] != "cs" || s["hasNoUbos"] != false || s["hasNoRepresentatives"] != false || s["lastChildCompletedAtUtc"] != nil {
		t.Fatalf("structure %v", s)
	}
	wantCounts(t, s, false, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	s = in.expect(200, "PATCH", "/v1/applicants/cs/company-structure", map[string]any{"hasNoUbos": true, "hasNoShareholders": true}).m(t)
	if s["hasNoUbos"] != true || s["hasNoShareholders"] != true || s["hasNoDirectors"] != false || s["hasNoRepresentatives"] != false {
		t.Fatalf("structure after the first PATCH %v", s)
	}
	s = in.expect(200, "PATCH", "/v1/applicants/cs/company-structure", map[string]any{"hasNoShareholders": false, "hasNoDirectors": true}).m(t)
	if s["hasNoUbos"] != true || s["hasNoShareholders"] != false || s["hasNoDirectors"] != true || s["hasNoRepresentatives"] != false {
		t.Fatalf("structure %v", s)
	}
	if again := in.structure("cs"); fmt.Sprint(again) != fmt.Sprint(s) {
		t.Fatalf("GET %v, PATCH %v", again, s)
	}
	r := in.expect(400, "PATCH", "/v1/applicants/cs/company-structure", map[string]any{"hasNoUbos": "yes"})
	if _, f := errField(t, r); f != "hasNoUbos" {
		t.Fatalf("field %q", f)
	}
	for _, roles := range [][]string{{"ubo", "director"}, {"shareholder", "representative", "ubo"}, {"director"}} {
		in.expect(201, "POST", "/v1/applicants/cs/ubos", map[string]any{"fullName": "A " + strings.Join(roles, " "), "roles": roles, "ownershipPercent": 20})
	}
	wantCounts(t, in.structure("cs"), false, 3, 2, 2, 1, 1, 0, 0, 0, 0)
	want := []string{"applicant.updated:partner", "applicant.updated:partner", "applicant.updated:partner", "applicant.updated:partner",
		"applicant.updated:partner", "applicant.created:partner"}
	if h := in.historyTypes("cs"); !slices.Equal(h, want) {
		t.Fatalf("history %v, want %v", h, want)
	}
}

func TestUboRowAfterVerdictReopensCompany(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	in.createCompany("late-row", "Late Row")
	in.submitCompany("late-row", 70)
	wantReviewed(t, rc.reviewed(t, secret), nil, "GREEN", nil)

	// A beneficial owner declared after the verdict must be verified too;
	// applicantPending withdraws the GREEN the partner holds.
	in.expect(201, "POST", "/v1/applicants/late-row/ubos", map[string]any{"fullName": "Nia New", "roles": []string{"ubo"}, "ownershipPercent": 51})
	wantStatus(t, in.status("late-row"), "in_review", nil, nil, 1)
	if got := rc.next(t); got.Header.Get("X-Webhook-Event-Type") != "applicantPending" ||
		!strings.Contains(string(got.Body), `"entityId":"late-row"`) || !strings.Contains(string(got.Body), `"reviewStatus":"in_review"`) {
		t.Fatalf("after the row: %s %s", got.Header.Get("X-Webhook-Event-Type"), got.Body)
	}
	in.spawn(201, "late-row", 0, nil)
	in.expect(200, "POST", "/v1/applicants/late-row.ubo.1/verify", verifyBody(t, 80))
	got := rc.reviewedSet(t, secret, 2)
	wantReviewed(t, got["late-row.ubo.1"], "late-row", "GREEN", nil)
	wantReviewed(t, got["late-row"], nil, "GREEN", nil)
	wantStatus(t, in.status("late-row"), "completed", "GREEN", nil, 1)
	rc.none(t, 50*time.Millisecond)
}

// TestUboCompanyWaitsForEveryRow is the compliance rule of SPEC 3.6: a row
// never spawned is not complete, so a company whose own steps passed stays
// in_review until every row has a terminal child, and its applicantReviewed
// fires once, when it closes.
func TestUboCompanyWaitsForEveryRow(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	row := func(name string, pct int) map[string]any {
		return map[string]any{"fullName": name, "dateOfBirth": "1980-01-01", "ownershipPercent": pct, "roles": []string{"ubo"}}
	}
	in.createCompany("three", "Three Owners", row("Ann One", 40), row("Ben Two", 30), row("Cy Three", 30))
	in.submitCompany("three", 90)
	in.waitReviewStatus("three", "in_review")

	for i := range 3 {
		in.spawn(201, "three", i, nil)
		in.expect(200, "POST", fmt.Sprintf("/v1/applicants/three.ubo.%d/verify", i+1), verifyBody(t, uint64(91+i)))
		s := in.structure("three")
		if i < 2 {
			wantReviewed(t, rc.reviewed(t, secret), "three", "GREEN", nil)
			// Rows i+1.. are never spawned: not complete.
			wantCounts(t, s, false, 3, 3, 0, 0, 0, i+1, i+1, 0, 0)
			wantStatus(t, in.status("three"), "in_review", nil, nil, 1)
			rc.none(t, 50*time.Millisecond)
			continue
		}
		wantCounts(t, s, true, 3, 3, 0, 0, 0, 3, 3, 0, 0)
		wantStatus(t, in.status("three"), "completed", "GREEN", nil, 1)
	}
	// The last child and the company close together; their order across
	// entities is not fixed.
	got := rc.reviewedSet(t, secret, 2)
	wantReviewed(t, got["three.ubo.3"], "three", "GREEN", nil)
	wantReviewed(t, got["three"], nil, "GREEN", nil)
	rc.none(t, 50*time.Millisecond)
	want := []string{"applicant.approved:system"}
	if h := in.historyTypes("three"); !slices.Equal(h[:1], want) || slices.Index(h[1:], "applicant.approved:system") >= 0 {
		t.Fatalf("company history %v: want one applicant.approved, newest", h)
	}
}

// TestUboFailedRowPendingOnNewData: a soft-rejected (RETRY) child that sends
// new data for its steps is no longer failed; its row is pending again, and
// the company keeps waiting for it.
func TestUboFailedRowPendingOnNewData(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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

// TestUboProduction: in production the company and its child each wait for
// an operator; the company's own GREEN decision still waits for the child,
// and the child's decision closes the company.
func TestUboProduction(t *testing.T) {
	t.Parallel()
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

// TestUboErasedCompanyStaysOpen: erasing a company voids its review; a
// child verified afterwards does not close it GREEN, record a verdict or
// send the company's applicantReviewed.
func TestUboErasedCompanyStaysOpen(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	in.createCompany("gone", "Gone GmbH", map[string]any{"fullName": "Ola Owner", "dateOfBirth": "1980-01-01", "ownershipPercent": 60, "roles": []string{"ubo"}})
	in.submitCompany("gone", 95)
	in.waitReviewStatus("gone", "in_review")
	in.spawn(201, "gone", 0, nil)
	wantStatusCode(t, in.do("DELETE", "/v1/applicants/gone", nil), 204, "erase the company")
	before := in.historyTypes("gone")

	in.expect(200, "POST", "/v1/applicants/gone.ubo.1/verify", verifyBody(t, 96))
	wantReviewed(t, rc.reviewed(t, secret), "gone", "GREEN", nil)
	rc.none(t, 100*time.Millisecond)
	if st := in.status("gone"); st["reviewAnswer"] != nil || st["reviewStatus"] == "completed" {
		t.Errorf("erased company after its child's GREEN: %v", st)
	}
	if h := in.historyTypes("gone"); !slices.Equal(h, before) {
		t.Errorf("erased company's history grew: %v, was %v", h, before)
	}
}

// TestUboCompanyKeepsOperatorComment: an operator's decision on a company
// whose children are still open closes with the children; its
// moderationComment is part of that verdict (status and applicantReviewed,
// SPEC §3.7), as when the children finished first.
func TestUboCompanyKeepsOperatorComment(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	ak, as := in.credential("sandbox", "admin")
	in.createCompany("mc2", "Manual", map[string]any{"fullName": "Kim Good", "dateOfBirth": "1980-01-01", "ownershipPercent": 100, "roles": []string{"ubo"}})
	in.spawn(201, "mc2", 0, map[string]any{})
	in.submitCompany("mc2", 40)
	in.waitReviewStatus("mc2", "awaitingOperatorReview")
	decision := map[string]any{"reviewAnswer": "RED", "reviewRejectType": "FINAL", "rejectLabels": []string{"INCONSISTENT_PROFILE"},
		"moderationComment": "directors do not match the register"}
	in.expect(200, "POST", "/v1/admin/applicants/mc2/decision", decision, "X-Api-Key", ak, "X-Api-Secret", as)
	wantStatus(t, in.status("mc2"), "in_review", nil, nil, 1)
	in.expect(200, "POST", "/v1/applicants/mc2.ubo.1/verify", verifyBody(t, 41))
	got := rc.reviewedSet(t, secret, 2)["mc2"]
	wantReviewed(t, got, nil, "RED", "FINAL", "INCONSISTENT_PROFILE")
	if c := got["reviewResult"].(map[string]any)["moderationComment"]; c != "directors do not match the register" {
		t.Errorf("applicantReviewed moderationComment %v", c)
	}
	if c := in.status("mc2")["moderationComment"]; c != "directors do not match the register" {
		t.Errorf("status moderationComment %v", c)
	}
}

// TestUboCompanyOwnDataHeldForOwners: a company whose own steps were
// reviewed and that waits for its beneficial owners takes no new data of
// its own — from its session or the partner — which would close it over
// data nobody reviewed; rows can still be added (SPEC §3.6).
func TestUboCompanyOwnDataHeldForOwners(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("cr1", "Acme", map[string]any{"fullName": "Ann Owner", "dateOfBirth": "1980-01-01", "ownershipPercent": 60, "roles": []string{"ubo"}})
	token := in.sdkSession("cr1", nil)
	in.submitCompany("cr1", 50)
	// The reviewer's verdict on its own steps (the company stays in review).
	deadline := time.Now().Add(10 * time.Second)
	for in.stepStatuses("cr1")["company_docs"] != "completed/GREEN" {
		if time.Now().After(deadline) {
			t.Fatalf("steps %v, want the own steps reviewed", in.stepStatuses("cr1"))
		}
		runtimeYield()
	}
	wantSteps(t, in.stepStatuses("cr1"), map[string]string{"company_docs": "completed/GREEN", "questionnaire": "completed/GREEN", "aml": "completed/GREEN"})
	wantStatus(t, in.status("cr1"), "in_review", nil, nil, 1)
	r := in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "company_docs"}, part{name: "docType", value: "certificate_of_incorporation"},
		part{name: "file", data: pngImage(t, 300, 400, 55)})
	wantStatusCode(t, r, 409, "session upload while the owners are pending")
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/personal-info", token, `{"legalForm":"ag"}`), 409, "session data while the owners are pending")
	r = in.expect(409, "POST", "/v1/applicants/cr1/documents", map[string]any{"kind": "company_docs", "docType": "certificate_of_incorporation", "image": b64(pngImage(t, 300, 400, 56))})
	if code, _ := errField(t, r); code != "review_in_progress" {
		t.Errorf("partner upload: %s, want review_in_progress", code)
	}
	// Nor the partner's PATCH of what its own steps reviewed: a company
	// renamed REJECT here would close GREEN on its owners' verdicts.
	for _, path := range []string{"/v1/applicants/cr1", "/v1/applicants/cr1/company-info"} {
		if code, _ := errField(t, in.expect(409, "PATCH", path, map[string]any{"companyName": "REJECT"})); code != "review_in_progress" {
			t.Errorf("PATCH %s while the owners are pending: %s, want review_in_progress", path, code)
		}
	}
	if info := in.expect(200, "GET", "/v1/applicants/cr1/company-info", nil).m(t); info["companyName"] != "Acme" {
		t.Errorf("companyName %v after a refused PATCH", info["companyName"])
	}
	// Rows stay open, from the session too.
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/ubos", token, `{"fullName":"Extra Director","dateOfBirth":"1975-05-05","roles":["director"]}`), 201, "a row")
}

// TestUboFinalCompanyHoldsUntilReset: a company closed RED FINAL (its own
// steps RETRY, its child GREEN) that a new row puts back in review takes no
// data of its own and cannot close GREEN over it: FINAL holds until reset
// (SPEC §3.3). A reset lets it start again.
func TestUboFinalCompanyHoldsUntilReset(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	in.createCompany("rf2", "Acme", map[string]any{"fullName": "Ann Bee", "dateOfBirth": "1980-01-01", "ownershipPercent": 5, "roles": []string{"ubo"}})
	in.spawn(201, "rf2", 0, map[string]any{})
	in.submitCompany("rf2", 60)
	in.expect(200, "POST", "/v1/applicants/rf2/sandbox/review", map[string]any{"reviewAnswer": "RED", "reviewRejectType": "RETRY", "rejectLabels": []string{"LOW_QUALITY"}})
	in.expect(200, "POST", "/v1/applicants/rf2.ubo.1/sandbox/review", map[string]any{"reviewAnswer": "GREEN"})
	wantReviewed(t, rc.reviewedSet(t, secret, 2)["rf2"], nil, "RED", "FINAL", "LOW_QUALITY")
	doc := map[string]any{"kind": "company_docs", "docType": "certificate_of_incorporation", "image": b64(pngImage(t, 300, 400, 61))}
	in.expect(409, "POST", "/v1/applicants/rf2/documents", doc)

	in.expect(201, "POST", "/v1/applicants/rf2/ubos", map[string]any{"fullName": "Late Comer", "dateOfBirth": "1981-01-01", "ownershipPercent": 5, "roles": []string{"ubo"}})
	if code, _ := errField(t, in.expect(409, "POST", "/v1/applicants/rf2/documents", doc)); code != "review_final" {
		t.Errorf("own data after a row reopened the FINAL company: %s, want review_final", code)
	}
	in.expect(409, "POST", "/v1/applicants/rf2/review", nil)
	in.spawn(201, "rf2", 1, map[string]any{})
	in.expect(200, "POST", "/v1/applicants/rf2.ubo.2/sandbox/review", map[string]any{"reviewAnswer": "GREEN"})
	in.waitReviewStatus("rf2", "completed")
	wantStatus(t, in.status("rf2"), "completed", "RED", "FINAL", 1)

	in.expect(200, "POST", "/v1/applicants/rf2/reset", nil)
	in.expect(201, "POST", "/v1/applicants/rf2/documents", doc)
}

// TestUboFullNameCountsCharacters: fullName is 1–200 characters, not bytes,
// on create (ubos[] and POST …/ubos), PATCH and the hosted UI's rows; a
// row at the limit spawns its child.
func TestUboFullNameCountsCharacters(t *testing.T) {
	t.Parallel()
	in := start(t)
	at, over := strings.Repeat("é", 200), strings.Repeat("é", 201)
	in.createCompany("chars", "Chars", map[string]any{"fullName": at, "roles": []string{"director"}})
	r := in.expect(400, "POST", "/v1/applicants", map[string]any{"externalUserId": "chars-over", "type": "company", "companyName": "Over",
		"ubos": []map[string]any{{"fullName": over, "roles": []string{"director"}}}})
	if _, f := errField(t, r); f != "ubos[0].fullName" {
		t.Errorf("create with a 201-character name: field %q", f)
	}
	in.expect(201, "POST", "/v1/applicants/chars/ubos", map[string]any{"fullName": "Ж " + strings.Repeat("Ж", 198), "roles": []string{"director"}})
	r = in.expect(400, "POST", "/v1/applicants/chars/ubos", map[string]any{"fullName": over, "roles": []string{"director"}})
	if _, f := errField(t, r); f != "fullName" {
		t.Errorf("POST …/ubos with a 201-character name: field %q", f)
	}
	in.expect(200, "PATCH", "/v1/applicants/chars/ubos/1", map[string]any{"fullName": at})
	r = in.expect(400, "PATCH", "/v1/applicants/chars/ubos/1", map[string]any{"fullName": over})
	if _, f := errField(t, r); f != "fullName" {
		t.Errorf("PATCH with a 201-character name: field %q", f)
	}
	token := in.sdkSession("chars", nil)
	wantStatusCode(t, in.sdkAPI("POST", "/api/v1/sdk/ubos", token, `{"fullName":"`+strings.Repeat("ü", 200)+`","roles":["director"]}`), 201, "sdk row at the limit")
	r = in.sdkAPI("POST", "/api/v1/sdk/ubos", token, `{"fullName":"`+strings.Repeat("ü", 201)+`","roles":["director"]}`)
	if _, f := errField(t, r); r.Status != 400 || f != "fullName" {
		t.Errorf("sdk row over the limit: %d %q", r.Status, f)
	}
	in.spawn(201, "chars", 0, nil)
	if info := in.expect(200, "GET", "/v1/applicants/chars.ubo.1", nil).m(t)["info"].(map[string]any); info["lastName"] != at {
		t.Errorf("child of a 200-character name: %v", info)
	}
}

// TestUboFullNameControlCharacters: a row's fullName is refused with a
// control character, as firstName and lastName are, naming fullName,
// instead of being taken and then refused by spawn-kyc as firstName.
func TestUboFullNameControlCharacters(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("ctl", "Control", map[string]any{"fullName": "Ann Smith", "roles": []string{"director"}})
	token := in.sdkSession("ctl", nil)
	for _, name := range []string{"An\u0007n Smith", "a\u0000b c", "Ann\tSmith", "Ann\u007fSmith", "Ann\nSmith"} {
		r := in.expect(400, "POST", "/v1/applicants", map[string]any{"externalUserId": "ctl-new", "type": "company", "companyName": "New",
			"ubos": []map[string]any{{"fullName": name, "roles": []string{"director"}}}})
		if _, f := errField(t, r); f != "ubos[0].fullName" {
			t.Errorf("create %q: field %q", name, f)
		}
		row := map[string]any{"fullName": name, "roles": []string{"director"}}
		r = in.expect(400, "POST", "/v1/applicants/ctl/ubos", row)
		if _, f := errField(t, r); f != "fullName" {
			t.Errorf("POST …/ubos %q: field %q", name, f)
		}
		r = in.expect(400, "PATCH", "/v1/applicants/ctl/ubos/0", map[string]any{"fullName": name})
		if _, f := errField(t, r); f != "fullName" {
			t.Errorf("PATCH %q: field %q", name, f)
		}
		body, _ := json.Marshal(row)
		r = in.sdkAPI("POST", "/api/v1/sdk/ubos", token, string(body))
		if _, f := errField(t, r); r.Status != 400 || f != "fullName" {
			t.Errorf("sdk row %q: %d %q", name, r.Status, f)
		}
	}
	if rows := in.uboRows("ctl"); len(rows) != 1 || rows[0]["fullName"] != "Ann Smith" {
		t.Errorf("rows %v", rows)
	}
	in.spawn(201, "ctl", 0, nil)
}

// TestChildOfALongParentID: a child's externalUserId is {parent}.ubo.{n}
// (SPEC §3.6), so a parent id of 100 characters gives a child id over the
// 100 that a new applicant may have. POST /v1/applicants with that child's
// id still answers 200 with the stored child (SPEC §3.2: an existing
// externalUserId gets the applicant, unchanged); a new applicant with an
// id of that length is still 400.
func TestChildOfALongParentID(t *testing.T) {
	t.Parallel()
	in := start(t)
	parent := strings.Repeat("P", 100)
	in.createCompany(parent, "Long", map[string]any{"fullName": "Ann Owner", "roles": []string{"ubo"}, "ownershipPercent": 100})
	child := in.spawn(201, parent, 0, nil).ChildExternalUserID
	if child != parent+".ubo.1" {
		t.Fatalf("child id %q", child)
	}
	var got struct{ ID, ExternalUserID string }
	in.expect(200, "POST", "/v1/applicants", map[string]any{"externalUserId": child}).json(t, &got)
	if got.ExternalUserID != child {
		t.Errorf("POST with the child's id answered %+v", got)
	}
	r := in.do("POST", "/v1/applicants", map[string]any{"externalUserId": parent + ".ubo.2"})
	if code, field := errField(t, r); r.Status != 400 || code != "validation_failed" || field != "externalUserId" {
		t.Errorf("a new 106-character id: %d %s", r.Status, r.Body)
	}
}

// TestUboSessionCannotReopenAnApprovedCompany: once a company is approved,
// its hosted page takes nothing, a beneficial-owner row included, as its
// state's acceptsData says: whoever still holds the link cannot withdraw
// the approval. The partner's own POST …/ubos still reopens it (SPEC §3.6).
func TestUboSessionCannotReopenAnApprovedCompany(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("ok1", "Acme")
	token := in.sdkSession("ok1", nil)
	in.submitCompany("ok1", 70)
	in.waitReviewStatus("ok1", "completed")
	wantStatus(t, in.status("ok1"), "completed", "GREEN", nil, 1)
	r := in.sdkAPI("POST", "/api/v1/sdk/ubos", token, `{"fullName":"Late Owner","dateOfBirth":"1970-01-01","ownershipPercent":100,"roles":["ubo"]}`)
	wantStatusCode(t, r, 409, "a row from the page of an approved company")
	if code, _ := errField(t, r); code != "review_completed" {
		t.Errorf("code %s, want review_completed", code)
	}
	wantStatus(t, in.status("ok1"), "completed", "GREEN", nil, 1)
	in.expect(201, "POST", "/v1/applicants/ok1/ubos", map[string]any{"fullName": "Late Owner", "dateOfBirth": "1970-01-01", "ownershipPercent": 100, "roles": []string{"ubo"}})
	wantStatus(t, in.status("ok1"), "in_review", nil, nil, 1)
	// The history tells it in order: the row, then the withdrawn verdict.
	var page struct {
		Items []struct {
			EventType string
			Details   map[string]any
		}
	}
	in.expect(200, "GET", "/v1/applicants/ok1/review-history?limit=2", nil).json(t, &page)
	if len(page.Items) != 2 || page.Items[0].Details["action"] != "review.reopened" || page.Items[1].Details["action"] != "ubo.added" {
		t.Errorf("newest history %+v, want review.reopened after ubo.added", page.Items)
	}
}

// TestUboNewLinkKeepsItsSettings: a regenerated or repeated link of a row
// keeps the language, theme and returnUrl the partner set for the row's
// last link, unless the call sets them anew: the German owner is not sent
// an English page, and still goes back to the partner's page.
func TestUboNewLinkKeepsItsSettings(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("keep", "Keep", map[string]any{"fullName": "Ed Owner", "dateOfBirth": "1970-01-01", "ownershipPercent": 50, "roles": []string{"ubo"}})
	in.spawn(201, "keep", 0, map[string]any{"lang": "de", "theme": "dark", "returnUrl": "https://partner.example/child"})
	state := func(token string) map[string]any {
		t.Helper()
		var m map[string]any
		r := in.sdkAPI("GET", "/api/v1/sdk/state", token, "")
		wantStatusCode(t, r, 200, "state")
		r.json(t, &m)
		return m
	}
	var regen struct{ SDKLink struct{ Token string } }
	in.expect(200, "POST", "/v1/applicants/keep/ubos/0/regenerate-link", map[string]any{}).json(t, &regen)
	if s := state(regen.SDKLink.Token); s["lang"] != "de" || s["theme"] != "dark" || s["returnUrl"] != "https://partner.example/child" {
		t.Errorf("regenerated link: lang %v theme %v returnUrl %v, want those of the spawn", s["lang"], s["theme"], s["returnUrl"])
	}
	again := in.spawn(200, "keep", 0, map[string]any{"theme": "light"})
	if s := state(again.SDKLink.Token); s["lang"] != "de" || s["theme"] != "light" || s["returnUrl"] != "https://partner.example/child" {
		t.Errorf("repeated spawn with theme light: lang %v theme %v returnUrl %v", s["lang"], s["theme"], s["returnUrl"])
	}
}

// TestUboRiskWhenTheCompanyClosesLast: a company whose owner was rejected
// before its own review finished closes RED FINAL, and its riskLevel is
// high, as in the other order (the risk follows the verdict that closed).
func TestUboRiskWhenTheCompanyClosesLast(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("last", "Acme", map[string]any{"fullName": "Jane REJECT", "dateOfBirth": "1980-01-01", "ownershipPercent": 50, "roles": []string{"ubo"}})
	in.spawn(201, "last", 0, nil)
	in.expect(200, "POST", "/v1/applicants/last.ubo.1/verify", verifyBody(t, 41))
	wantStatus(t, in.status("last.ubo.1"), "completed", "RED", "FINAL", 1)
	in.submitCompany("last", 80)
	in.waitReviewStatus("last", "completed")
	wantStatus(t, in.status("last"), "completed", "RED", "FINAL", 1)
	if risk := in.expect(200, "GET", "/v1/applicants/last", nil).m(t)["riskLevel"]; risk != "high" {
		t.Errorf("company closed RED FINAL over a rejected owner: riskLevel %v, want high", risk)
	}
}
