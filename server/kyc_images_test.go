package server_test

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestBadImages(t *testing.T) {
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
