package server_test

import (
	"net/url"
	"testing"
	"time"
)

func TestReviewHistory(t *testing.T) {
	in := start(t)
	in.createApplicant("h1", "Green")
	// 3 partner-visible entries per round trip of monitoring; make 250 in all.
	for i := 0; i < 62; i++ {
		in.advance(time.Second)
		in.expect(200, "POST", "/v1/applicants/h1/monitoring", nil)
		in.expect(200, "DELETE", "/v1/applicants/h1/monitoring", nil)
		in.expect(200, "POST", "/v1/applicants/h1/deactivate", nil)
		in.expect(200, "POST", "/v1/applicants/h1/activate", nil)
	}
	// Internal entries never show: a level edit and a document upload.
	in.expect(201, "POST", "/v1/applicants/h1/documents", map[string]any{"kind": "selfie", "image": b64(pngImage(t, 200, 200, 1))})

	type page struct {
		Items []struct {
			ID, AtUtc, EventType, ActorType string
			Details                         map[string]any
		}
		TotalItems int
	}
	get := func(q string) page {
		var p page
		in.expect(200, "GET", "/v1/applicants/h1/review-history"+q, nil).json(t, &p)
		return p
	}
	t.Run("Default", func(t *testing.T) {
		p := get("")
		if len(p.Items) != 50 || p.TotalItems != 249 {
			t.Fatalf("%d items, total %d", len(p.Items), p.TotalItems)
		}
		if p.Items[0].EventType != "applicant.activated" || p.Items[0].ActorType != "partner" || p.Items[0].ID == "" || p.Items[0].Details == nil {
			t.Errorf("newest %+v", p.Items[0])
		}
		for i := 1; i < len(p.Items); i++ {
			if p.Items[i].AtUtc > p.Items[i-1].AtUtc {
				t.Fatalf("not newest first at %d", i)
			}
		}
	})
	t.Run("AtMost200", func(t *testing.T) {
		p := get("?limit=200")
		if len(p.Items) != 200 || p.TotalItems != 249 {
			t.Fatalf("%d items, total %d", len(p.Items), p.TotalItems)
		}
		if p = get("?limit=1"); len(p.Items) != 1 {
			t.Fatalf("limit=1: %d", len(p.Items))
		}
	})
	t.Run("EventType", func(t *testing.T) {
		p := get("?eventType=applicant.monitoring_enabled&limit=200")
		if len(p.Items) != 62 || p.TotalItems != 62 {
			t.Fatalf("%d items, total %d", len(p.Items), p.TotalItems)
		}
		if p = get("?eventType=applicant.created"); p.TotalItems != 1 || p.Items[0].EventType != "applicant.created" {
			t.Fatalf("created: %+v", p)
		}
		if p = get("?eventType=aml.run"); p.TotalItems != 0 || p.Items == nil {
			t.Fatalf("aml.run: %+v", p)
		}
	})
	t.Run("Since", func(t *testing.T) {
		since := testStart.Add(60 * time.Second).Format("2006-01-02T15:04:05.000Z")
		p := get("?since=" + url.QueryEscape(since))
		// Rounds 60, 61 and 62 happened at or after since: 12 entries.
		if p.TotalItems != 12 {
			t.Fatalf("since %s: total %d", since, p.TotalItems)
		}
		if p = get("?since=" + url.QueryEscape("2026-11-21T05:01:00+00:00")); p.TotalItems != 12 {
			t.Fatalf("offset form: total %d", p.TotalItems)
		}
		// An unencoded "+" arrives as a space; a timestamp without an offset
		// is UTC; a calendar date is its midnight UTC.
		for q, want := range map[string]int{
			"2026-11-21T05:01:00+00:00": 12, "2026-11-21T06:01:00+01:00": 12, "2026-11-21T05:01:00": 12,
			"2026-11-21": 249, "2026-11-22": 0,
		} {
			if p = get("?since=" + q); p.TotalItems != want {
				t.Errorf("since=%s: total %d, want %d", q, p.TotalItems, want)
			}
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for q, field := range map[string]string{
			"?limit=0": "limit", "?limit=201": "limit", "?limit=abc": "limit", "?limit=-1": "limit",
			"?since=yesterday": "since", "?since=2026-13-01T00:00:00Z": "since", "?since=": "since",
			"?eventType=level.updated": "eventType", "?eventType=applicantReviewed": "eventType", "?eventType=document.added": "eventType",
		} {
			r := in.expect(400, "GET", "/v1/applicants/h1/review-history"+q, nil)
			if _, f := errField(t, r); f != field {
				t.Errorf("%s: field %q, want %q", q, f, field)
			}
		}
		in.expect(404, "GET", "/v1/applicants/nobody/review-history", nil)
	})
	t.Run("NoInternal", func(t *testing.T) {
		in.expect(200, "PATCH", "/v1/levels/basic-kyc-level", map[string]any{"personalInfoFields": []string{"firstName", "lastName"}})
		for _, it := range get("?limit=200").Items {
			switch it.EventType {
			case "level.updated", "document.added", "review.check":
				t.Fatalf("internal entry %s returned", it.EventType)
			}
		}
		if p := get("?limit=200"); p.TotalItems != 249 {
			t.Fatalf("total %d", p.TotalItems)
		}
	})
}
