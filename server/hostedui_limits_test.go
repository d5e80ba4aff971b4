package server_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/complybox/complybox/store"
)

// TestSDKAPIBodyLimit: the page API checks its token before the body
// limit (SPEC §3.8: an unknown token is 401), and a call refused for its
// size is an sdk call like any other refused one (sdk.call_refused).
func TestSDKAPIBodyLimit(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("lim1", "Green")
	token := in.sdkSession("lim1", nil)
	big := `{"email":"` + strings.Repeat("a", 2<<20) + `@example.com"}`

	r := in.sdkAPI("POST", "/api/v1/sdk/personal-info", "nope", big)
	if code, _ := errField(t, r); r.Status != 401 || code != "invalid_token" {
		t.Errorf("unknown token, 2 MiB: %d %s, want 401 invalid_token", r.Status, code)
	}
	r = in.sdkAPI("POST", "/api/v1/sdk/personal-info", token, big)
	if code, _ := errField(t, r); r.Status != 413 || code != "body_too_large" {
		t.Fatalf("2 MiB personal info: %d %s, want 413 body_too_large", r.Status, code)
	}
	// Chunked, with no Content-Length: the same, and submit (which reads
	// no body) does not run.
	req, err := http.NewRequest("POST", in.URL+"/api/v1/sdk/submit", io.MultiReader(bytes.NewReader(bytes.Repeat([]byte("a"), 2<<20))))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer nope")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("chunked 2 MiB, unknown token: %d, want 401", resp.StatusCode)
	}
	req, _ = http.NewRequest("POST", in.URL+"/api/v1/sdk/submit", io.MultiReader(bytes.NewReader(bytes.Repeat([]byte("a"), 2<<20))))
	req.Header.Set("Authorization", "Bearer "+token)
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Errorf("chunked 2 MiB submit: %d, want 413", resp.StatusCode)
	}
	// An upload past its 25 MiB, with a Content-Length.
	r = in.sdkUpload("/api/v1/sdk/documents", "nope", part{name: "kind", value: "selfie"}, part{name: "file", data: make([]byte, 26<<20)})
	wantStatusCode(t, r, 401, "26 MiB upload, unknown token")
	r = in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "selfie"}, part{name: "file", data: make([]byte, 26<<20)})
	wantStatusCode(t, r, 413, "26 MiB upload")

	all, err := in.Store.ApplicantHistory(store.Sandbox, "lim1")
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for _, h := range all {
		if h.EventType == "sdk.call_refused" {
			if !h.Internal || h.ActorType != "sdk" || h.Details["code"] != "body_too_large" {
				t.Errorf("refused entry %+v", h)
			}
			calls = append(calls, fmt.Sprint(h.Details["call"]))
		}
	}
	want := map[string]bool{"POST /api/v1/sdk/personal-info": true, "POST /api/v1/sdk/submit": true, "POST /api/v1/sdk/documents": true}
	if len(calls) != 3 {
		t.Fatalf("refused calls %v, want personal-info, submit and documents", calls)
	}
	for _, c := range calls {
		if !want[c] {
			t.Errorf("refused call %q", c)
		}
	}
	if st := in.status("lim1"); st["reviewStatus"] != "pending" {
		t.Errorf("an oversize submit changed the applicant: %v", st["reviewStatus"])
	}
}

// TestSDKCompanyDocsFormNoType: the company documents form posted without
// a document type says to choose one, in the page's language, not that
// the country does not issue it.
func TestSDKCompanyDocsFormNoType(t *testing.T) {
	t.Parallel()
	in := start(t)
	for _, c := range []struct{ lang, want, not string }{
		{"en", `Please choose the type of document\.`, `not issued`},
		{"de", `Bitte wählen Sie die Dokumentart\.`, `nicht ausgestellt`},
	} {
		id := "notype-" + c.lang
		in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": id, "type": "company", "companyName": "Acme GmbH", "country": "DEU"})
		token := in.sdkSession(id, map[string]any{"lang": c.lang})
		r := in.sdkUpload("/sdk/"+token+"/documents", "", part{name: "kind", value: "company_docs"}, part{name: "file", data: pngImage(t, 300, 420, 61)})
		wantStatusCode(t, r, 400, c.lang+": company document without a type")
		wantHTML(t, r, c.want)
		noHTML(t, r, c.not)
	}
}

// TestSDKUploadOverTenMiB: a file over 10 MiB in the page API's multipart
// upload is reported with its real size, not the size at which reading
// stopped; the form says it in words.
func TestSDKUploadOverTenMiB(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("ten1", "Green")
	token := in.sdkSession("ten1", nil)
	huge := make([]byte, 11<<20)
	r := in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "selfie"}, part{name: "file", data: huge})
	wantStatusCode(t, r, 400, "11 MiB selfie")
	e := r.m(t)["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if e["field"] != "file" || !strings.Contains(msg, fmt.Sprint(11<<20)) || strings.Contains(msg, "10485761") {
		t.Errorf("11 MiB selfie: %v", e)
	}
	r = in.sdkUpload("/sdk/"+token+"/documents", "", part{name: "kind", value: "selfie"}, part{name: "file", data: huge})
	wantStatusCode(t, r, 400, "11 MiB selfie form")
	wantHTML(t, r, `The file is too large\.`)
}

// TestSDKUploadTooManyPixels: a picture over 40 megapixels may be a small
// file, so the form names the pixels, not the file's size (SPEC §3.4
// sets the two limits apart), in the session's language.
func TestSDKUploadTooManyPixels(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("px1", "Green")
	header := pngHeader(10000, 10000) // 100 megapixels in 33 bytes
	for _, c := range []struct{ lang, want, not string }{
		{"en", `The picture has too many pixels \(at most 40 megapixels\)`, `The file is too large`},
		{"de", `Das Bild hat zu viele Pixel \(höchstens 40 Megapixel\)`, `Die Datei ist zu groß`},
	} {
		token := in.sdkSession("px1", map[string]any{"lang": c.lang})
		r := in.sdkUpload("/sdk/"+token+"/documents", "", part{name: "kind", value: "selfie"}, part{name: "file", data: header})
		wantStatusCode(t, r, 400, "100 MP selfie form, "+c.lang)
		wantHTML(t, r, c.want)
		noHTML(t, r, c.not)
	}
}

// pngHeader is the signature and IHDR chunk of a w×h 8-bit RGB PNG, all
// that is read before the pixel limits refuse it.
func pngHeader(w, h uint32) []byte {
	ihdr := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32([]byte("IHDR"), w), h)
	ihdr = append(ihdr, 8, 2, 0, 0, 0)
	b := append([]byte("\x89PNG\r\n\x1a\n"), binary.BigEndian.AppendUint32(nil, uint32(len(ihdr)-4))...)
	b = append(b, ihdr...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(ihdr))
}
