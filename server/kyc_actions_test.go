package server_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"
)

func TestApplicantActions(t *testing.T) {
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
	// The other applicant's copy of the same images stays.
	if docs := in.expect(200, "GET", "/v1/applicants/keep", nil).m(t)["documents"].([]any); len(docs) != 2 {
		t.Fatalf("keep documents %v", docs)
	}
}

func TestListApplicants(t *testing.T) {
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
	in.expect(400, "GET", "/v1/applicants?status=sleeping", nil)
	in.expect(400, "GET", "/v1/applicants?reviewStatus=done", nil)
	in.expect(400, "GET", "/v1/applicants?limit=500", nil)
}

func TestKYCCatalog(t *testing.T) {
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
