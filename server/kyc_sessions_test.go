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
	t.Parallel()
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
	// A slash added to either link (a mail client's) leads to the link.
	for _, link := range []string{"/l/" + link.ShortCode, "/sdk/" + link.Token} {
		if resp := noRedirect(t, in.URL+link+"/"); resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != link {
			t.Errorf("%s/: %d %q, want 301 to the link", link, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	if resp := noRedirect(t, in.URL+"/l/nope"); resp.StatusCode != http.StatusGone {
		t.Errorf("unknown short link: %d, want the 410 page of a link not found", resp.StatusCode)
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
	// JSON Schema's integer is any number with a zero fraction: a client
	// that computes 3600.0 seconds (Python's total_seconds) gets its link.
	t.Run("IntegerWrittenAsFraction", func(t *testing.T) {
		for body, want := range map[string]string{
			`{"ttlSecs":3600.0}`:  "2026-11-21T06:00:00.000Z",
			`{"ttlSecs":3.6e3}`:   "2026-11-21T06:00:00.000Z",
			`{"ttlSecs":6000E-1}`: "2026-11-21T05:10:00.000Z",
		} {
			var got struct{ ExpiresAt string }
			in.expect(201, "POST", "/v1/applicants/s1/verification-sessions", body).json(t, &got)
			if got.ExpiresAt != want {
				t.Errorf("%s: expiresAt %s, want %s", body, got.ExpiresAt, want)
			}
		}
		for _, body := range []string{`{"ttlSecs":3600.5}`, `{"ttlSecs":3.6001e3}`, `{"ttlSecs":1e401}`} {
			r := in.expect(400, "POST", "/v1/applicants/s1/verification-sessions", body)
			if _, f := errField(t, r); f != "ttlSecs" {
				t.Errorf("%s: field %q", body, f)
			}
		}
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
	// The history names the expired session by its expiry, never by its
	// short code, a bearer credential (SPEC §3.4).
	if h := string(in.expect(200, "GET", "/v1/applicants/s2/review-history", nil).Body); strings.Contains(h, short.ShortCode) || !strings.Contains(h, `"expiresAt":"2026-11-21T05:01:00.000Z"`) {
		t.Errorf("history of the expired session: %s", h)
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

func TestBadImages(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("img", "Green")
	good := pngImage(t, 240, 240, 3)
	for name, c := range map[string]struct {
		field, value string
	}{
		"TruncatedPNG": {"documentFront", b64(good[:len(good)/2])},
		"Tiny":         {"documentFront", b64(pngImage(t, 10, 10, 4))},
		"NarrowSelfie": {"selfie", b64(pngImage(t, 199, 300, 4))},
		"WrongBase64":  {"documentFront", "this is *not* base64!"},
		"TextAsJPEG":   {"selfie", "data:image/jpeg;base64," + b64([]byte("just some text pretending to be a JPEG"))},
		"PDFSelfie":    {"selfie", b64([]byte("%PDF-1.4\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n"))},
		"Empty":        {"selfie", ""},
	} {
		t.Run(name, func(t *testing.T) {
			body := verifyBody(t, 20)
			body[c.field] = c.value
			r := in.expect(400, "POST", "/v1/applicants/img/verify", body)
			if _, f := errField(t, r); f != c.field {
				t.Errorf("field %q, want %q: %s", f, c.field, r.Body)
			}
		})
	}
	t.Run("NumberAsImage", func(t *testing.T) {
		body := verifyBody(t, 20)
		body["documentFront"] = 12
		if _, f := errField(t, in.expect(400, "POST", "/v1/applicants/img/verify", body)); f != "documentFront" {
			t.Errorf("field %q", f)
		}
	})
	t.Run("DocumentsEndpoint", func(t *testing.T) {
		for _, b := range []map[string]any{
			{"kind": "selfie", "image": b64(pngImage(t, 10, 10, 5))},
			{"kind": "passport", "image": b64(good)},
			{"kind": "identity_doc", "side": "middle", "image": b64(good)},
			{"kind": "identity_doc", "docType": "LIBRARY_CARD", "image": b64(good)},
			{"kind": "selfie"},
		} {
			in.expect(400, "POST", "/v1/applicants/img/documents", b)
		}
	})
	// Nothing was half-written.
	a := in.expect(200, "GET", "/v1/applicants/img", nil).m(t)
	if len(a["documents"].([]any)) != 0 {
		t.Fatalf("documents after bad uploads: %v", a["documents"])
	}
	wantStatus(t, in.status("img"), "pending", nil, nil, 0)
	// Every accepted base64 variant: URL-safe without padding, data: prefix.
	body := verifyBody(t, 21)
	body["documentFront"] = strings.TrimRight(base64.URLEncoding.EncodeToString(good), "=")
	wantStatus(t, in.expect(200, "POST", "/v1/applicants/img/verify", body).m(t), "completed", "GREEN", nil, 1)
	docs := in.expect(200, "GET", "/v1/applicants/img", nil).m(t)["documents"].([]any)
	if len(docs) != 2 || docs[1].(map[string]any)["contentType"] != "image/jpeg" {
		t.Fatalf("documents %v", docs)
	}
}

func TestImageLimits(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("big", "Green")
	huge := make([]byte, 11<<20)
	for i := range huge {
		huge[i] = byte(i * 7)
	}
	body := verifyBody(t, 22)
	body["selfie"] = b64(huge)
	if _, f := errField(t, in.expect(400, "POST", "/v1/applicants/big/verify", body)); f != "selfie" {
		t.Errorf("11 MiB selfie: field %q", f)
	}
	over := `{"selfie":"` + strings.Repeat("A", 26<<20) + `"}`
	in.expect(413, "POST", "/v1/applicants/big/verify", over)
	in.expect(413, "POST", "/v1/applicants/big/documents", over)
	in.expect(413, "PATCH", "/v1/applicants/big", `{"lastName":"`+strings.Repeat("A", 2<<20)+`"}`)
}

// TestLinkExpiryLeavesADecidedApplicant: a link that expires after the
// applicant was approved changes nothing: steps expire only "before
// submission" (SPEC §3.3), and a decided applicant has nothing left to
// submit; an optional step without data stays pending, and the history
// ends on the approval.
func TestLinkExpiryLeavesADecidedApplicant(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/levels", map[string]any{"name": "poa-optional", "steps": []map[string]any{{"kind": "identity_doc"}, {"kind": "selfie"}, {"kind": "poa", "optional": true}},
		"personalInfoFields": []string{"firstName", "lastName"}})
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "ex-green", "lastName": "Green", "verificationLevelName": "poa-optional"})
	wantStatus(t, in.expect(200, "POST", "/v1/applicants/ex-green/verify", verifyBody(t, 31)).m(t), "completed", "GREEN", nil, 1)
	in.advance(time.Minute) // the session is opened after the approval
	in.expect(201, "POST", "/v1/applicants/ex-green/verification-sessions", map[string]any{"ttlSecs": 60})
	before := in.historyTypes("ex-green")
	// The test clock runs every job due on the way before it answers
	// (SPEC §7), the link's expiry included.
	var move struct{ Ran map[string]int }
	in.expect(200, "POST", "/v1/sandbox/clock", map[string]any{"advanceBy": "2m"}).json(t, &move)
	if move.Ran["expiry"] != 1 {
		t.Fatalf("the move ran %v, want the link's expiry", move.Ran)
	}
	if st := in.stepStatuses("ex-green")["poa"]; st != "pending" && !strings.HasPrefix(st, "pending/") {
		t.Errorf("optional poa %q after the link expired, want it pending as the approval left it", st)
	}
	if h := in.historyTypes("ex-green"); slices.Contains(h, "enrollment.expired:system") {
		t.Errorf("history %v (before the expiry %v): an approved applicant's enrollment does not expire", h, before)
	}
	wantStatus(t, in.status("ex-green"), "completed", "GREEN", nil, 1)
}
