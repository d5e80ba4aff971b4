package server_test

import (
	"testing"
)

// TestIDDocumentCountry: an identity document's type must be one its
// issuing country issues (store.IDDocTypesFor), on every way in: POST
// …/verify (country required), POST …/documents (when a country is
// given) and the hosted UI's page API; a refusal is a 400 naming the
// field and stores nothing. The country is kept on the document.
func TestIDDocumentCountry(t *testing.T) {
	t.Parallel()
	in := start(t)
	docs := func(extID string) []any {
		t.Helper()
		return in.expect(200, "GET", "/v1/applicants/"+extID, nil).m(t)["documents"].([]any)
	}
	refused := func(r *response, field string) {
		t.Helper()
		if r.Status != 400 {
			t.Fatalf("status %d, want 400: %s", r.Status, r.Body)
		}
		if _, f := errField(t, r); f != field {
			t.Errorf("error names %q, want %q: %s", f, field, r.Body)
		}
	}

	t.Run("Verify", func(t *testing.T) {
		in.createApplicant("dc-verify", "Country")
		body := verifyBody(t, 501)
		body["idDocType"], body["country"] = "ID_CARD", "GBR"
		refused(in.do("POST", "/v1/applicants/dc-verify/verify", body), "idDocType")
		body["idDocType"], body["country"] = "RESIDENCE_PERMIT", "BRA"
		refused(in.do("POST", "/v1/applicants/dc-verify/verify", body), "idDocType")
		if d := docs("dc-verify"); len(d) != 0 {
			t.Fatalf("a refused verify stored %v", d)
		}
		body["idDocType"], body["country"] = "ID_CARD", "DEU"
		in.expect(200, "POST", "/v1/applicants/dc-verify/verify", body)
		for _, d := range docs("dc-verify") {
			d := d.(map[string]any)
			want := any(nil)
			if d["kind"] == "identity_doc" {
				want = "DEU"
			}
			if d["country"] != want {
				t.Errorf("%v: country %v, want %v", d["kind"], d["country"], want)
			}
		}
	})

	t.Run("Documents", func(t *testing.T) {
		in.createApplicant("dc-docs", "Country")
		img := b64(pngImage(t, 240, 220, 502))
		refused(in.do("POST", "/v1/applicants/dc-docs/documents", map[string]any{"kind": "identity_doc", "docType": "ID_CARD", "country": "GBR", "image": img}), "docType")
		refused(in.do("POST", "/v1/applicants/dc-docs/documents", map[string]any{"kind": "identity_doc", "docType": "PASSPORT", "country": "deu", "image": img}), "country")
		refused(in.do("POST", "/v1/applicants/dc-docs/documents", map[string]any{"kind": "identity_doc", "docType": "PASSPORT", "country": "XYZ", "image": img}), "country")
		refused(in.do("POST", "/v1/applicants/dc-docs/documents", map[string]any{"kind": "selfie", "country": "DEU", "image": b64(jpegImage(t, 220, 240, 503))}), "country")
		if d := docs("dc-docs"); len(d) != 0 {
			t.Fatalf("refused documents stored %v", d)
		}
		d := in.expect(201, "POST", "/v1/applicants/dc-docs/documents", map[string]any{"kind": "identity_doc", "docType": "DRIVERS", "country": "USA", "image": img}).m(t)
		if d["country"] != "USA" || d["docType"] != "DRIVERS" {
			t.Errorf("document %v", d)
		}
		// Without a country, as before: any type, country null.
		d = in.expect(201, "POST", "/v1/applicants/dc-docs/documents", map[string]any{"kind": "identity_doc", "side": "back", "docType": "ID_CARD", "image": img}).m(t)
		if d["country"] != nil {
			t.Errorf("document without a country: %v", d)
		}
	})

	// idDocType, the name /verify and Sumsub give docType, was ignored on
	// POST …/documents: the document stored no type and the country's
	// check was skipped. It is docType by another name now.
	t.Run("DocumentsByIDDocType", func(t *testing.T) {
		in.createApplicant("dc-alias", "Country")
		img := b64(pngImage(t, 240, 220, 505))
		refused(in.do("POST", "/v1/applicants/dc-alias/documents", map[string]any{"kind": "identity_doc", "idDocType": "ID_CARD", "country": "GBR", "image": img}), "idDocType")
		refused(in.do("POST", "/v1/applicants/dc-alias/documents", map[string]any{"kind": "identity_doc", "idDocType": "PASSPORT", "docType": "DRIVERS", "image": img}), "idDocType")
		if d := docs("dc-alias"); len(d) != 0 {
			t.Fatalf("refused documents stored %v", d)
		}
		for _, body := range []map[string]any{
			{"kind": "identity_doc", "idDocType": "PASSPORT", "country": "GBR", "image": img},
			{"kind": "identity_doc", "idDocType": "PASSPORT", "docType": "PASSPORT", "country": "GBR", "image": img},
		} {
			if d := in.expect(201, "POST", "/v1/applicants/dc-alias/documents", body).m(t); d["docType"] != "PASSPORT" || d["country"] != "GBR" {
				t.Errorf("document sent with idDocType: %v", d)
			}
		}
	})

	t.Run("PageAPI", func(t *testing.T) {
		in.createApplicant("dc-sdk", "Country")
		token := in.sdkNewSession("dc-sdk", nil)
		r := in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "identity_doc"}, part{name: "docType", value: "ID_CARD"},
			part{name: "country", value: "NZL"}, part{name: "front", data: pngImage(t, 240, 220, 504)})
		refused(r, "docType")
		r = in.sdkUpload("/api/v1/sdk/documents", token, part{name: "kind", value: "identity_doc"}, part{name: "docType", value: "ID_CARD"},
			part{name: "country", value: "CHE"}, part{name: "front", data: pngImage(t, 240, 220, 504)})
		wantStatusCode(t, r, 201, "ID_CARD of CHE")
		if d := docs("dc-sdk"); len(d) != 1 || d[0].(map[string]any)["country"] != "CHE" {
			t.Errorf("documents %v", d)
		}
	})
}
