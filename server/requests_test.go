package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/complybox/complybox/store"
)

// logged is an entry of GET /v1/requests.
type logged struct {
	RequestID             string
	At                    string
	Method                string
	Path                  string
	Query                 string
	Status                int
	DurationMs            float64
	CredentialKey         string
	RequestBody           *string
	RequestBodyBytes      int64
	RequestBodyTruncated  bool
	ResponseBody          *string
	ResponseBodyBytes     int64
	ResponseBodyTruncated bool
}

// requests reads GET /v1/requests?query with the instance's credential.
func (in *instance) requests(query string, headers ...string) ([]logged, *string, string) {
	in.t.Helper()
	r := in.expect(200, "GET", "/v1/requests"+query, nil, headers...)
	var out struct {
		Items      []logged
		NextCursor *string
	}
	r.json(in.t, &out)
	return out.Items, out.NextCursor, string(r.Body)
}

// TestRequestLog: a partner finds a failed call by the requestId of its
// error body, with both bodies; secrets and images never show; each
// environment sees only its own calls; calls without a valid credential and
// reads of the log are not logged.
func TestRequestLog(t *testing.T) {
	t.Parallel()
	in := start(t)

	// A failed call: its error body names the request id that finds it.
	bad := in.expect(400, "POST", "/v1/applicants", map[string]any{"externalUserId": "bad id!", "firstName": "Ada"})
	var eb struct {
		Error struct{ Code, Field, RequestID string }
	}
	bad.json(t, &eb)
	if eb.Error.RequestID == "" || eb.Error.RequestID != bad.Header.Get("X-Request-Id") {
		t.Fatalf("error body requestId %q, header %q", eb.Error.RequestID, bad.Header.Get("X-Request-Id"))
	}
	items, _, _ := in.requests("?requestId=" + eb.Error.RequestID)
	if len(items) != 1 {
		t.Fatalf("requestId filter: %d items", len(items))
	}
	e := items[0]
	if e.Method != "POST" || e.Path != "/v1/applicants" || e.Status != 400 || e.CredentialKey != in.Key || e.At != "2026-11-21T05:00:00.000Z" || e.DurationMs <= 0 {
		t.Fatalf("entry %+v", e)
	}
	if e.RequestBody == nil || !strings.Contains(*e.RequestBody, `"externalUserId":"bad id!"`) {
		t.Fatalf("request body %v", e.RequestBody)
	}
	if e.ResponseBody == nil || !strings.Contains(*e.ResponseBody, `"requestId":"`+eb.Error.RequestID+`"`) || !strings.Contains(*e.ResponseBody, `"field":"externalUserId"`) {
		t.Fatalf("response body %v", e.ResponseBody)
	}
	var one logged
	in.expect(200, "GET", "/v1/requests/"+eb.Error.RequestID, nil).json(t, &one)
	if one.RequestID != e.RequestID || one.Status != 400 {
		t.Fatalf("GET /v1/requests/{id}: %+v", one)
	}
	in.expect(404, "GET", "/v1/requests/no-such-request", nil)

	// Secrets: a signing secret in an answer, the API secret of every call.
	rc := newReceiver(t, in.Clock, nil)
	secret := in.configureWebhook(rc)
	// Images: base64 and data: URLs in a verification body.
	in.createApplicant("img-1", "Lovelace")
	body := verifyBody(t, 1)
	in.expect(200, "POST", "/v1/applicants/img-1/verify", body)
	// A session's link carries its hosted-UI token.
	sess := in.expect(201, "POST", "/v1/applicants/img-1/verification-sessions", nil).m(t)

	items, _, raw := in.requests("?limit=200")
	for _, leak := range []string{secret, in.Secret, body["documentFront"].(string)[:64], "iVBOR", "/9j/", "data:image"} {
		if strings.Contains(raw, leak) {
			t.Errorf("the request log shows %.40q", leak)
		}
	}
	for k, v := range sess {
		// The token and the short code each open the session (SPEC §3.4).
		if s, ok := v.(string); ok && (strings.Contains(k, "oken") || k == "shortCode") && strings.Contains(raw, s) {
			t.Errorf("the request log shows the session %s", k)
		}
	}
	put, _, _ := in.requests("?path=/webhooks/outbound&method=PUT")
	if len(put) != 1 || put[0].ResponseBody == nil || !strings.Contains(*put[0].ResponseBody, `"signingSecret":"[redacted]"`) {
		t.Fatalf("PUT /webhooks/outbound entry: %+v", put)
	}
	// Each image is a note of its size, so the fields after the first
	// one are in the log too (the first image used to fill the 4 KiB).
	verify, _, _ := in.requests("?path=/v1/applicants/img-1/verify")
	if len(verify) != 1 || !verify[0].RequestBodyTruncated || verify[0].RequestBody == nil {
		t.Fatalf("verify entry: %+v", verify)
	}
	logged := *verify[0].RequestBody
	for _, want := range []string{`"idDocType":"PASSPORT"`, `"country":"DEU"`,
		fmt.Sprintf(`"documentFront":"[%d bytes, not kept]"`, len(body["documentFront"].(string))),
		fmt.Sprintf(`"selfie":"[%d bytes, not kept]"`, len(body["selfie"].(string)))} {
		if !strings.Contains(logged, want) {
			t.Errorf("the verify entry lacks %s: %s", want, logged)
		}
	}

	// Filters and paging, newest first.
	if bad, _, _ := in.requests("?status=4xx"); len(bad) != 1 || bad[0].Status != 400 {
		t.Fatalf("status=4xx: %+v", bad)
	}
	first, next, _ := in.requests("?limit=2")
	if len(first) != 2 || next == nil || first[0].Path != "/v1/applicants/img-1/verification-sessions" {
		t.Fatalf("first page %+v next %v", first, next)
	}
	rest, _, _ := in.requests("?limit=200&cursor=" + *next)
	if len(rest) != len(items)-2 || rest[0].RequestID == first[1].RequestID {
		t.Fatalf("second page has %d of %d", len(rest), len(items))
	}
	r := in.expect(400, "GET", "/v1/requests?status=4x", nil)
	if r.m(t)["error"].(map[string]any)["field"] != "status" {
		t.Fatalf("bad status filter: %s", r.Body)
	}

	// Not logged: unauthenticated calls and reads of the log itself.
	in.expect(401, "GET", "/v1/applicants", nil, "X-Api-Secret", "wrong")
	for _, x := range items {
		if strings.HasPrefix(x.Path, "/v1/requests") || x.Status == 401 {
			t.Errorf("logged: %s %s %d", x.Method, x.Path, x.Status)
		}
	}
	if again, _, _ := in.requests("?status=401"); len(again) != 0 {
		t.Errorf("a 401 was logged: %+v", again)
	}

	// Environments: production sees its own calls only, sandbox none of them.
	pk, ps := in.credential(store.Production, store.RolePartner)
	in.expect(201, "POST", "/vaults", map[string]any{"name": "prod"}, "X-Api-Key", pk, "X-Api-Secret", ps)
	prod, _, _ := in.requests("", "X-Api-Key", pk, "X-Api-Secret", ps)
	if len(prod) != 1 || prod[0].Path != "/vaults" || prod[0].CredentialKey != pk {
		t.Fatalf("production log: %+v", prod)
	}
	in.expect(404, "GET", "/v1/requests/"+eb.Error.RequestID, nil, "X-Api-Key", pk, "X-Api-Secret", ps)
	if sb, _, _ := in.requests("?path=/vaults"); len(sb) != 0 {
		t.Fatalf("sandbox sees production calls: %+v", sb)
	}

	// The console's Requests page lists the failed call and shows it.
	op := in.operator()
	// On a phone the table scrolls inside its box, not the page (WCAG
	// 1.4.10, as every console table); the current section and filter are
	// marked for assistive technology, not by underline alone.
	op.page("/console/requests?status=4xx", eb.Error.RequestID, "/v1/applicants", `<div class="scroll" tabindex="0" role="region" aria-label="Requests"><table>`,
		`href="/console/requests" class="on" aria-current="page">Requests`, `class="on" aria-current="page">4xx`)
	page := op.page("/console/requests/"+eb.Error.RequestID, "Request body", `"field": "externalUserId"`, eb.Error.RequestID)
	if strings.Contains(page, in.Secret) {
		t.Fatal("the console shows the API secret")
	}
}

// TestRequestLogHasACallBeforeItsAnswerEnds: a call is in the request log
// before the last byte of its answer leaves, so a partner that looks it up
// as soon as it has the answer finds it. (It was recorded after the
// answer: a 20 KB list page sent in one write was 404 at
// GET /v1/requests/{id} in about one lookup in 35.) The test looks the
// call up from the writer its answer goes through, at the write that
// completes its Content-Length.
func TestRequestLogHasACallBeforeItsAnswerEnds(t *testing.T) {
	t.Parallel()
	var lookups []int
	var mu sync.Mutex
	var in *instance
	in = boot(t, func(o *bootOptions) {
		o.wrap = func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != "GET" || r.URL.Path != "/v1/applicants" {
					h.ServeHTTP(w, r)
					return
				}
				h.ServeHTTP(&lastWrite{ResponseWriter: w, last: func() {
					look := httptest.NewRequest("GET", "/v1/requests/"+w.Header().Get("X-Request-Id"), nil)
					look.Header.Set("X-Api-Key", in.Key)
					look.Header.Set("X-Api-Secret", in.Secret)
					got := httptest.NewRecorder()
					h.ServeHTTP(got, look)
					mu.Lock()
					lookups = append(lookups, got.Code)
					mu.Unlock()
				}}, r)
			})
		}
	}).instance
	for i := range 30 {
		in.createApplicant(fmt.Sprintf("page-%02d", i), "Green")
	}
	// Plain answers: a gzip answer's last bytes leave when the gzip
	// stream closes, after the handler's.
	in.expect(200, "GET", "/v1/applicants?limit=200", nil, "Accept-Encoding", "identity")
	in.expect(400, "GET", "/v1/applicants?limit=201", nil, "Accept-Encoding", "identity")
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(lookups, []int{200, 200}) {
		t.Errorf("GET /v1/requests/{id} when the last byte of the answer was written: %v, want 200 for the page and the error", lookups)
	}
}

// lastWrite is a ResponseWriter that calls last before the write that
// completes the answer's Content-Length.
type lastWrite struct {
	http.ResponseWriter
	n    int64
	last func()
}

func (w *lastWrite) Write(b []byte) (int, error) {
	size, err := strconv.ParseInt(w.Header().Get("Content-Length"), 10, 64)
	if err == nil && w.n < size && w.n+int64(len(b)) >= size {
		w.last()
	}
	w.n += int64(len(b))
	return w.ResponseWriter.Write(b)
}

// TestRequestLogKeepsShortBodies: a body that fits in 4 KiB is logged
// whole (SPEC §7 cuts bodies at 4 KiB), its long strings and text made of
// base64 characters too; only images and secrets are redacted.
func TestRequestLogKeepsShortBodies(t *testing.T) {
	t.Parallel()
	in := start(t)
	memo, ref := strings.Repeat("lorem ipsum ", 125), strings.Repeat("Ab", 100)
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "short-body", "memo": memo, "ref": ref})
	got, _, _ := in.requests("?path=/v1/applicants&method=POST")
	if len(got) != 1 || got[0].RequestBody == nil || got[0].RequestBodyTruncated {
		t.Fatalf("entry: %+v", got)
	}
	for _, want := range []string{`"memo":"` + memo + `"`, `"ref":"` + ref + `"`} {
		if !strings.Contains(*got[0].RequestBody, want) {
			t.Errorf("the entry lacks %.40s…: %.200s", want, *got[0].RequestBody)
		}
	}
}

// TestRequestLogOverLimit: a call refused for its body's size (413,
// before any handler runs) is in the request log like any other refused
// call when its credential is valid, so the requestId of its error finds
// it; with a bad credential it is not logged.
func TestRequestLogOverLimit(t *testing.T) {
	t.Parallel()
	// Unchecked: it posts to paths the document does not have, on purpose.
	in := boot(t, func(o *bootOptions) { o.unchecked = true }).instance
	big := `{"externalUserId":"big","firstName":"` + strings.Repeat("a", 2<<20) + `"}`
	var eb struct {
		Error struct{ Code, RequestID string }
	}
	in.expect(413, "POST", "/v1/applicants", big).json(t, &eb)
	if eb.Error.Code != "body_too_large" || eb.Error.RequestID == "" {
		t.Fatalf("413 body: %+v", eb)
	}
	var e logged
	in.expect(200, "GET", "/v1/requests/"+eb.Error.RequestID, nil).json(t, &e)
	if e.Method != "POST" || e.Path != "/v1/applicants" || e.Status != 413 || e.CredentialKey != in.Key ||
		e.RequestBodyBytes != int64(len(big)) || !e.RequestBodyTruncated {
		t.Fatalf("entry %+v", e)
	}
	if e.ResponseBody == nil || !strings.Contains(*e.ResponseBody, `"body_too_large"`) {
		t.Fatalf("response body %v", e.ResponseBody)
	}
	var anon struct{ Error struct{ RequestID string } }
	doRequest(t, "POST", in.URL+"/v1/applicants", big, "X-Api-Key", in.Key, "X-Api-Secret", "wrong").json(t, &anon)
	in.expect(404, "GET", "/v1/requests/"+anon.Error.RequestID, nil)
	// Never the hosted UI's or the console's paths: a short link's or a
	// hosted page's path holds its bearer code or token.
	for _, path := range []string{"/l/abcdefghijklmnopqrstuvwx", "//sdk/some-session-token", "/sdk/x/../../sdk/tok", "/console/x"} {
		r := in.do("POST", path, big)
		if r.Status != 413 {
			t.Fatalf("POST %s over the limit: %d", path, r.Status)
		}
		in.expect(404, "GET", "/v1/requests/"+r.Header.Get("X-Request-Id"), nil)
	}
}

// TestRequestLogUnrouted: a call no route takes, a wrong path or a wrong
// method (the commonest mistakes of an integration), is in the request log
// too when its credential is valid: the requestId of its error finds it
// (SPEC §7, the README's promise for any error body).
func TestRequestLogUnrouted(t *testing.T) {
	t.Parallel()
	// Unchecked: it calls paths and methods the document does not have.
	in := boot(t, func(o *bootOptions) { o.unchecked = true }).instance
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"DELETE", "/vaults", 405},
		{"GET", "/v1/applicant", 404},
		{"POST", "/v1/applicants/a%2Fb/reset", 404},
		{"PUT", "/transactions/x", 405},
	} {
		var e struct {
			Error struct{ Code, RequestID string }
		}
		in.expect(c.status, c.method, c.path, nil).json(t, &e)
		var got logged
		in.expect(200, "GET", "/v1/requests/"+e.Error.RequestID, nil).json(t, &got)
		if got.Method != c.method || got.Status != c.status || got.CredentialKey != in.Key {
			t.Errorf("%s %s: logged %+v", c.method, c.path, got)
		}
	}
	var anon struct{ Error struct{ RequestID string } }
	doRequest(t, "DELETE", in.URL+"/vaults", nil, "X-Api-Key", in.Key, "X-Api-Secret", "wrong").json(t, &anon)
	in.expect(404, "GET", "/v1/requests/"+anon.Error.RequestID, nil)
	for _, path := range []string{"/l/abcdefghijklmnopqrstuvwx/x", "/sdk/some-session-token/nope", "/api/v1/sdk/nope", "/console/nope",
		"/SDK/abcdefghijklmnopqrstuvwx", "/L/abcdefghijklmnopqrstuvwx", "/kyc/sdk/abcdefghijklmnopqrstuvwx", "/Console/x"} {
		r := in.do("PATCH", path, nil)
		if r.Status < 400 || r.Header.Get("X-Request-Id") == "" {
			t.Fatalf("PATCH %s: %d, request id %q", path, r.Status, r.Header.Get("X-Request-Id"))
		}
		in.expect(404, "GET", "/v1/requests/"+r.Header.Get("X-Request-Id"), nil)
	}
}

// TestRequestLogSmallImages: an image is redacted by the member that
// carries it, however small (SPEC §7): a tiny PNG, shorter than the rule
// for base64 blobs, sent to /verify or /documents, never shows.
func TestRequestLogSmallImages(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("tiny-1", "Lovelace")
	tiny := b64(pngImage(t, 1, 1, 1))
	in.do("POST", "/v1/applicants/tiny-1/verify", map[string]any{"idDocType": "PASSPORT", "country": "DEU",
		"documentFront": tiny, "documentBack": tiny, "selfie": tiny, "proofOfAddress": tiny, "livenessFrames": []string{tiny, tiny, tiny}})
	in.do("POST", "/v1/applicants/tiny-1/documents", map[string]any{"kind": "selfie", "image": tiny})
	items, _, raw := in.requests("?limit=200")
	if strings.Contains(raw, tiny[:24]) {
		t.Errorf("the request log shows a %d-character image: %s", len(tiny), raw)
	}
	n := 0
	for _, e := range items {
		if e.RequestBody != nil {
			n += strings.Count(*e.RequestBody, fmt.Sprintf("[redacted image, %d chars]", len(tiny)))
		}
	}
	if n != 8 {
		t.Errorf("%d images noted as redacted, want 8", n)
	}
}

// TestRequestLogForgetsAnErasedApplicant: DELETE /v1/applicants/{id}
// erases personal data (SPEC §3.2), and the request log still served the
// create call's body, the reads that showed the applicant and a list
// that held it. Their bodies go with the erasure; the calls stay listed,
// and another applicant's calls keep theirs.
func TestRequestLogForgetsAnErasedApplicant(t *testing.T) {
	t.Parallel()
	in := start(t)
	// A refused call that named it with escapes, which the API decodes:
	// its answer does not repeat the id, its body holds the person's data.
	in.expect(400, "POST", "/v1/applicants", `{"externalUserI\u0064" : "gon\u0065","firstName":"Augusta","email":"augusta@"}`)
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "gone", "firstName": "Augusta", "lastName": "Lovelace",
		"dateOfBirth": "1990-04-01", "email": "augusta@example.com"})
	in.createApplicant("kept", "Babbage")
	in.expect(200, "GET", "/v1/applicants/gone", nil)
	in.expect(200, "PATCH", "/v1/applicants/gone", map[string]any{"middleName": "Ada"})
	in.expect(200, "GET", "/v1/applicants?limit=10", nil)
	// A call whose body holds the id as another member's value is not the
	// applicant's (a vault named like it).
	in.expect(201, "POST", "/vaults", map[string]any{"name": "gone"})
	in.expect(204, "DELETE", "/v1/applicants/gone", nil)

	items, _, body := in.requests("?limit=50")
	for _, pd := range []string{"Augusta", "Lovelace", "augusta@example.com", `"middleName":"Ada"`} {
		if strings.Contains(body, pd) {
			t.Errorf("the request log still holds %q after the erasure:\n%s", pd, body)
		}
	}
	forgotten, keptBody, vault := 0, false, false
	for _, e := range items {
		switch {
		case e.Path == "/vaults":
			vault = e.RequestBody != nil && e.ResponseBody != nil
		case e.Method == "POST" && e.Path == "/v1/applicants" && e.RequestBody != nil && strings.Contains(*e.RequestBody, "Babbage"):
			keptBody = true
		case e.RequestBody == nil && e.ResponseBody == nil && e.ResponseBodyBytes > 0:
			// Sizes still say what went over the wire; nothing reads as
			// cut short.
			if e.RequestBodyTruncated || e.ResponseBodyTruncated {
				t.Errorf("a forgotten call reads as truncated: %+v", e)
			}
			forgotten++
		}
	}
	if !keptBody || !vault {
		t.Errorf("the other applicant's create call (%v) or a vault named like the erased id (%v) lost its body", keptBody, vault)
	}
	if forgotten != 5 { // the create, the read, the PATCH, the list and the refused create
		t.Errorf("%d calls lost their bodies, want 5:\n%s", forgotten, body)
	}
}
