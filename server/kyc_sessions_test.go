package server_test

import (
	"encoding/base64"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// noRedirect fetches url without following redirects.
func noRedirect(t *testing.T, url string) *http.Response {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestVerificationSessions(t *testing.T) {
	in := start(t)
	in.createApplicant("s1", "Green")
	var link struct{ URL, ExpiresAt, Token, ShortCode, ShortURL string }
	r := in.expect(201, "POST", "/v1/applicants/s1/verification-sessions", map[string]any{})
	r.json(t, &link)
	if raw, err := base64.RawURLEncoding.DecodeString(link.Token); err != nil || len(raw) < 16 {
		t.Errorf("token %q carries fewer than 128 random bits", link.Token)
	}
	if link.URL != "http://127.0.0.1:8080/sdk/"+link.Token || link.ShortURL != "http://127.0.0.1:8080/l/"+link.ShortCode {
		t.Errorf("link %+v", link)
	}
	if link.ExpiresAt != "2026-11-21T06:00:00.000Z" {
		t.Errorf("expiresAt %s, want the default hour", link.ExpiresAt)
	}
	resp := noRedirect(t, in.URL+"/l/"+link.ShortCode)
	if resp.StatusCode != 302 || resp.Header.Get("Location") != link.URL {
		t.Errorf("short link: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp := noRedirect(t, in.URL+"/l/nope"); resp.StatusCode != 404 {
		t.Errorf("unknown short link: %d", resp.StatusCode)
	}
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, c := range []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{"ttlSecs": 59}, "ttlSecs"},
			{map[string]any{"ttlSecs": 604801}, "ttlSecs"},
			{map[string]any{"ttlSecs": "60"}, "ttlSecs"},
			{map[string]any{"lang": "eng"}, "lang"},
			{map[string]any{"theme": "blue"}, "theme"},
			{map[string]any{"returnUrl": "/relative"}, "returnUrl"},
			{map[string]any{"returnUrl": "ftp://x.example/"}, "returnUrl"},
		} {
			r := in.expect(400, "POST", "/v1/applicants/s1/verification-sessions", c.body)
			if _, f := errField(t, r); f != c.field {
				t.Errorf("%v: field %q", c.body, f)
			}
		}
		in.expect(404, "POST", "/v1/applicants/nobody/verification-sessions", nil)
	})

	// A short session expires unused: pending steps become expired, the
	// link answers 410.
	in.createApplicant("s2", "Green")
	var short struct{ ShortCode string }
	in.expect(201, "POST", "/v1/applicants/s2/verification-sessions", map[string]any{"ttlSecs": 60, "lang": "de", "theme": "dark", "returnUrl": "https://partner.example/done"}).json(t, &short)
	in.advance(61 * time.Second)
	deadline := time.After(10 * time.Second)
	for {
		if in.stepStatuses("s2")["selfie"] == "expired/RED/EXPIRED" {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("steps never expired: %v", in.stepStatuses("s2"))
		case <-time.After(time.Millisecond):
		}
	}
	wantStatus(t, in.status("s2"), "expired", "RED", "EXPIRED", 0)
	resp = noRedirect(t, in.URL+"/l/"+short.ShortCode)
	if resp.StatusCode != 410 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("expired link: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	want := []string{"enrollment.expired:system", "enrollment.created:partner", "applicant.created:partner"}
	if h := in.historyTypes("s2"); !slices.Equal(h, want) {
		t.Fatalf("history %v, want %v", h, want)
	}
	// Expired steps come back with a new session, and a submission works.
	in.expect(201, "POST", "/v1/applicants/s2/verification-sessions", nil)
	wantStatus(t, in.status("s2"), "pending", nil, nil, 0)
	wantStatus(t, in.expect(200, "POST", "/v1/applicants/s2/verify", verifyBody(t, 11)).m(t), "completed", "GREEN", nil, 1)
	want = append([]string{"enrollment.completed:system", "applicant.approved:system", "enrollment.submitted:partner", "enrollment.created:partner"}, want...)
	if h := in.historyTypes("s2"); !slices.Equal(h, want) {
		t.Fatalf("history %v, want %v", h, want)
	}
}
