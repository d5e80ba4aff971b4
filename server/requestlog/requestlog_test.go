package requestlog_test

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/complybox/complybox/server/requestlog"
	"github.com/complybox/complybox/store"
)

// image is a base64 string as an image upload carries it.
var image = strings.Repeat("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", 5)

// tinyPNG is a 1×1 PNG, 68 bytes, in base64: 92 characters.
const tinyPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR42mNk+A8AAQUBAScY42YAAAAASUVORK5CYII="

// TestRedact: secrets, base64 blobs, data: URLs, file parts, binary bodies
// and hosted-UI tokens never survive; everything else does, also in a body
// cut short inside a value.
func TestRedact(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, contentType, body string
		keep                    []string
		gone                    []string
	}{
		{"JSONSecrets", "application/json",
			`{"url":"https://r.example/h","signingSecret":"c2VjcmV0LXNpZ25pbmctc2VjcmV0LWJ5dGVzLTMyYnl0ZXM=","nested":{"callbackSecret":"cb-secret-1","token":"tok-1"},"list":[{"X-Api-Secret":"hdr"}],"name":"ok"}`,
			[]string{`"url":"https://r.example/h"`, `"name":"ok"`, `"signingSecret":"[redacted]"`},
			[]string{"c2VjcmV0", "cb-secret-1", "tok-1", "hdr"}},
		{"JSONImages", "application/json",
			`{"idDocFront":"` + image + `","selfie":"data:image/png;base64,iVBORw0KGgo=","firstName":"Ada"}`,
			[]string{`"firstName":"Ada"`, "[redacted base64, ", "[redacted data URL, "},
			[]string{"iVBOR"}},
		// Text that only looks like base64 is not an image: it is kept.
		{"JSONLongText", "application/json",
			`{"x":"` + strings.Repeat("Ab", 100) + `","externalId":"` + strings.Repeat("user0123456789", 12) + `"}`,
			[]string{`"x":"` + strings.Repeat("Ab", 100) + `"`, `"externalId":"` + strings.Repeat("user0123456789", 12) + `"`},
			[]string{"redacted"}},
		{"PlainLongText", "text/plain", "id " + strings.Repeat("Ab", 100) + " end",
			[]string{strings.Repeat("Ab", 100)}, []string{"redacted"}},
		// Image members are redacted by name, however short; an image in
		// another member is redacted by what it is, a tiny PNG too.
		{"JSONSmallImages", "application/json",
			`{"idDocType":"PASSPORT","documentFront":"` + tinyPNG + `","documentBack":"` + tinyPNG + `","selfie":"` + tinyPNG +
				`","proofOfAddress":"` + tinyPNG + `","livenessFrames":["` + tinyPNG + `","` + tinyPNG + `"],"image":"` + tinyPNG +
				`","country":"DEU","note":"` + tinyPNG + `"}`,
			[]string{`"idDocType":"PASSPORT"`, `"country":"DEU"`, `"documentFront":"[redacted image, 92 chars]"`,
				`"livenessFrames":["[redacted image, 92 chars]","[redacted image, 92 chars]"]`, `"image":"[redacted image, 92 chars]"`,
				`"note":"[redacted base64, 92 chars]"`},
			[]string{"iVBOR"}},
		{"JSONImageNote", "application/json", // Head's note of a long image says only its size
			`{"selfie":"[200000 bytes, not kept]","documentFront":"","image":"ab`,
			[]string{`"selfie":"[200000 bytes, not kept]"`, `"documentFront":""`, `"image":"[redacted image, 2 chars]"`},
			[]string{`"ab`}},
		{"JSONCutInsideImage", "application/json",
			`{"firstName":"Ada","idDocFront":"` + image[:300],
			[]string{`"firstName":"Ada"`, "[redacted base64, 300 chars]"},
			[]string{"iVBOR"}},
		{"JSONCutInsideSecret", "application/json",
			`{"signingSecret":"abcdefgh`,
			[]string{`"signingSecret":"[redacted]"`},
			[]string{"abcdefgh"}},
		{"Links", "application/json",
			`{"url":"http://127.0.0.1:8080/sdk/sess-token-1?lang=en","shortUrl":"http://127.0.0.1:8080/l/code123","verificationLinkUrl":"https://x/l/abc"}`,
			[]string{"/sdk/[redacted]?lang=en", "/l/[redacted]"},
			[]string{"sess-token-1", "code123", "/l/abc"}},
		// A short code opens its session (SPEC §3.4): a secret wherever it
		// stands, also nested in a spawn-kyc or regenerate-link answer.
		{"ShortCode", "application/json",
			`{"shortCode":"mRUkSTiLvHBWfg0AclNl7X","sdkLink":{"shortCode":"XSQalUJ9EYZgxcAGNr7T2j","ttlDays":7}}`,
			[]string{`"shortCode":"[redacted]"`, `"ttlDays":7`},
			[]string{"mRUkSTiLvHBWfg0AclNl7X", "XSQalUJ9EYZgxcAGNr7T2j"}},
		{"Multipart", "multipart/form-data; boundary=XyZ",
			"--XyZ\r\nContent-Disposition: form-data; name=\"kind\"\r\n\r\nidentity_doc\r\n--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\nbinary\r\n--XyZ\r\nContent-Disposition: form-data; name=\"sessionToken\"\r\n\r\nsecret-tok\r\n--XyZ\r\nContent-Disposition: form-data; name=\"selfie\"\r\n\r\n" + tinyPNG + "\r\n--XyZ--\r\n",
			[]string{"identity_doc", "[file redacted, ", `filename="a.png"`, "[redacted image, 92 chars]"},
			[]string{"PNG", "binary", "secret-tok", "iVBOR"}},
		{"Binary", "image/jpeg", "\xff\xd8\xff\xe0JFIFpixels", []string{"[binary body redacted]"}, []string{"JFIF"}},
		{"Form", "application/x-www-form-urlencoded", "a=1&password=hunter2&csrf=x", []string{"a=1"}, []string{"hunter2", "csrf=x"}},
		// An image in a body that is not a JSON object: a JSON string, a
		// text body, a BOM before the object, a form's encoded base64.
		{"JSONString", "application/json", `"` + image + `"`, []string{"[redacted base64, "}, []string{"iVBOR"}},
		{"PlainText", "text/plain", "see " + image + " here", []string{"see ", " here", "[redacted base64, "}, []string{"iVBOR"}},
		{"BOM", "application/json", "\xef\xbb\xbf" + `{"kind":"selfie","image":"data:image/png;base64,` + image + `"}`,
			[]string{`"kind":"selfie"`}, []string{"iVBOR"}},
		{"FormEncoded", "application/x-www-form-urlencoded", "kind=selfie&photo=" + url.QueryEscape(image) + "&doc=" + url.QueryEscape("data:image/png;base64,"+tinyPNG),
			[]string{"kind=selfie"}, []string{"iVBOR"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := requestlog.Redact(c.contentType, []byte(c.body))
			for _, k := range c.keep {
				if !strings.Contains(got, k) {
					t.Errorf("%q lost %q", got, k)
				}
			}
			for _, g := range c.gone {
				if strings.Contains(got, g) {
					t.Errorf("%q still holds %q", got, g)
				}
			}
		})
	}
	if got := requestlog.RedactQuery("status=4xx&token=abc&blob=" + image + "&image=" + url.QueryEscape(tinyPNG)); strings.Contains(got, "abc") || strings.Contains(got, "iVBOR") || !strings.Contains(got, "status=4xx") {
		t.Errorf("RedactQuery: %q", got)
	}
}

// TestLogRing: the log keeps the last entries of each environment apart,
// newest first, pages them with a cursor and filters them.
func TestLogRing(t *testing.T) {
	t.Parallel()
	l := requestlog.New(5)
	at := time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)
	for i := range 8 {
		status := 200
		if i%2 == 1 {
			status = 404
		}
		l.Record(store.Sandbox, requestlog.Entry{RequestID: fmt.Sprint("s", i), At: at, Method: "GET", Path: fmt.Sprint("/v1/applicants/", i), Status: status})
	}
	l.Record(store.Production, requestlog.Entry{RequestID: "p0", Method: "POST", Path: "/vaults", Status: 201})

	ids := func(vs []requestlog.View) string {
		var out []string
		for _, v := range vs {
			out = append(out, v.RequestID)
		}
		return strings.Join(out, ",")
	}
	all, next, err := l.List(store.Sandbox, requestlog.Filter{}, store.Page{Limit: 2})
	if err != nil || ids(all) != "s7,s6" || next == nil {
		t.Fatalf("first page %s next %v err %v", ids(all), next, err)
	}
	rest, next, err := l.List(store.Sandbox, requestlog.Filter{}, store.Page{Limit: 10, Cursor: *next})
	if err != nil || ids(rest) != "s5,s4,s3" || next != nil {
		t.Fatalf("second page %s next %v err %v (the ring keeps 5)", ids(rest), next, err)
	}
	bad, _, err := l.List(store.Sandbox, requestlog.Filter{Status: "4xx"}, store.Page{Limit: 10})
	if err != nil || ids(bad) != "s7,s5,s3" {
		t.Fatalf("4xx: %s %v", ids(bad), err)
	}
	if p, _, _ := l.List(store.Production, requestlog.Filter{}, store.Page{Limit: 10}); ids(p) != "p0" {
		t.Fatalf("production sees %s", ids(p))
	}
	if _, err := l.Get(store.Production, "s7"); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("production reads a sandbox entry: %v", err)
	}
	if _, _, err := l.List(store.Sandbox, requestlog.Filter{Status: "4x"}, store.Page{}); store.AsError(err).Field != "status" {
		t.Fatalf("bad status filter: %v", err)
	}
	if _, _, err := l.List(store.Sandbox, requestlog.Filter{}, store.Page{Cursor: "nope"}); store.AsError(err).Field != "cursor" {
		t.Fatalf("bad cursor: %v", err)
	}
}

// TestCursorOfItsLogAndRun: a cursor pages only the log that returned it.
// The other environment's log refuses it, and so does the log of a later
// start (the log is in memory and starts afresh, so the entry it points at
// is gone): 400 naming cursor, saying to start from the first page, never a
// page from wherever the number falls.
func TestCursorOfItsLogAndRun(t *testing.T) {
	t.Parallel()
	first, second := requestlog.New(5), requestlog.New(5)
	for _, l := range []*requestlog.Log{first, second} {
		for _, env := range store.Envs() {
			for i := range 4 {
				l.Record(env, requestlog.Entry{RequestID: fmt.Sprint(env, i), Method: "GET", Path: "/vaults", Status: 200})
			}
		}
	}
	_, next, err := first.List(store.Sandbox, requestlog.Filter{}, store.Page{Limit: 1})
	if err != nil || next == nil {
		t.Fatalf("first page: next %v err %v", next, err)
	}
	if items, _, err := first.List(store.Sandbox, requestlog.Filter{}, store.Page{Limit: 1, Cursor: *next}); err != nil || len(items) != 1 || items[0].RequestID != "sandbox2" {
		t.Fatalf("second page: %v %v", items, err)
	}
	for _, c := range []struct {
		name string
		log  *requestlog.Log
		env  store.Env
		want string
	}{
		{"the other environment", first, store.Production, "other environment"},
		{"a later start", second, store.Sandbox, "first page"},
	} {
		items, _, err := c.log.List(c.env, requestlog.Filter{}, store.Page{Limit: 1, Cursor: *next})
		if e := store.AsError(err); err == nil || e.Field != "cursor" || !strings.Contains(e.Message, c.want) {
			t.Errorf("%s: %v %v, want a 400 naming cursor that says %q", c.name, items, err, c.want)
		}
	}
	// The form of releases before (an entry number alone) came from an
	// earlier start too.
	legacy := base64.RawURLEncoding.EncodeToString([]byte("requests:2"))
	if _, _, err := first.List(store.Sandbox, requestlog.Filter{}, store.Page{Cursor: legacy}); err == nil || !strings.Contains(store.AsError(err).Message, "first page") {
		t.Errorf("an earlier release's cursor: %v", err)
	}
}

// TestShownBodiesKeep4KiB: what the log shows of a body stays within 4 KiB
// (SPEC §7) and valid UTF-8 after redaction, which can lengthen it: a body
// cut inside a string gets its closing quote, short secrets become
// "[redacted]", invalid bytes U+FFFD.
func TestShownBodiesKeep4KiB(t *testing.T) {
	t.Parallel()
	l := requestlog.New(5)
	cut := []byte(`{"name":"` + strings.Repeat("é", requestlog.MaxBody))[:requestlog.MaxBody]
	secrets := []byte(`{` + strings.Repeat(`"token":"a",`, requestlog.MaxBody/12))
	// Invalid UTF-8 (a body that is not text) is shown valid, as JSON
	// would encode it, for the console's UTF-8 page too.
	invalid := []byte(`{"name":"` + strings.Repeat("\xff\xfe", requestlog.MaxBody/2))[:requestlog.MaxBody]
	for i, body := range [][]byte{cut, secrets[:min(len(secrets), requestlog.MaxBody)], invalid} {
		l.Record(store.Sandbox, requestlog.Entry{RequestID: fmt.Sprint("r", i), Method: "POST", Path: "/vaults", Status: 400,
			RequestContentType: "application/json", RequestBody: body, RequestBodySize: int64(len(body)) + 100,
			ResponseContentType: "application/json", ResponseBody: body, ResponseBodySize: int64(len(body))})
		v, err := l.Get(store.Sandbox, fmt.Sprint("r", i))
		if err != nil {
			t.Fatal(err)
		}
		for _, shown := range []*string{v.RequestBody, v.ResponseBody} {
			if shown == nil || len(*shown) > requestlog.MaxBody || !utf8.ValidString(*shown) {
				t.Fatalf("body %d shown as %d bytes (valid UTF-8: %v), want at most %d", i, len(*shown), utf8.ValidString(*shown), requestlog.MaxBody)
			}
		}
		if strings.Contains(*v.RequestBody, `"a"`) {
			t.Fatalf("body %d: a secret survived", i)
		}
	}
}

// TestForgetCallsInFlight: an erasure's Forget drops the bodies of the
// calls it names already logged, and of those in flight when it ran,
// which are logged when they end (a list that read the applicant just
// before the erasure leaked it in 37 of 40 runs of the review's race);
// other calls keep theirs, and so do calls that began after it.
func TestForgetCallsInFlight(t *testing.T) {
	t.Parallel()
	l := requestlog.New(10)
	env := store.Sandbox
	entry := func(id, body string) requestlog.Entry {
		return requestlog.Entry{RequestID: id, Method: "GET", Path: "/v1/applicants", ResponseContentType: "application/json",
			ResponseBody: []byte(body), ResponseBodySize: int64(len(body))}
	}
	names := func(e *requestlog.Entry) bool { return strings.Contains(string(e.ResponseBody), `"gone"`) }
	l.Record(env, entry("before", `{"externalUserId":"gone","lastName":"Secret"}`))
	// A call that began just before the erasure and is recorded after it
	// (its Duration measured before it waited for the log's lock): when it
	// began decides, not when it was recorded.
	waited := entry("waited", `{"externalUserId":"gone","lastName":"Secret"}`)
	waited.Began = time.Now()
	if n := l.Forget(env, names); n != 1 {
		t.Fatalf("Forget changed %d entries, want 1", n)
	}
	l.Record(env, waited)
	inFlight := entry("in-flight", `[{"externalUserId":"gone","lastName":"Secret"}]`)
	inFlight.Duration = time.Minute // began before the Forget
	l.Record(env, inFlight)
	l.Record(env, entry("other", `{"externalUserId":"kept","lastName":"Shown"}`))
	// A call that began after the erasure cannot have read the applicant:
	// it keeps its body whatever it holds.
	l.Record(env, entry("after", `{"name":"gone"}`))
	items, _, err := l.List(env, requestlog.Filter{}, store.Page{Limit: 10})
	if err != nil || len(items) != 5 {
		t.Fatalf("list: %+v %v", items, err)
	}
	for _, v := range items {
		forgotten := v.ResponseBody == nil && !v.ResponseBodyTruncated && v.ResponseBodyBytes > 0
		if want := v.RequestID == "before" || v.RequestID == "in-flight" || v.RequestID == "waited"; forgotten != want {
			t.Errorf("%s: body %v, forgotten %v; want forgotten %v", v.RequestID, v.ResponseBody, forgotten, want)
		}
	}
}

// TestRecordDoesNotAllocate: recording is a lock and a copy into the ring,
// on every logged call. Applying the erasures' rules to the entry by its
// address once moved every entry to the heap (a read's cost grew by an
// allocation of the entry's size).
func TestRecordDoesNotAllocate(t *testing.T) {
	l := requestlog.New(8)
	e := requestlog.Entry{RequestID: "r", Method: "GET", Path: "/vaults/v", ResponseBody: []byte(`{}`), ResponseBodySize: 2, Began: time.Now()}
	if n := testing.AllocsPerRun(100, func() { l.Record(store.Sandbox, e) }); n != 0 {
		t.Errorf("Record allocates %.0f times per call, want none", n)
	}
	l.Forget(store.Sandbox, func(*requestlog.Entry) bool { return false })
	if n := testing.AllocsPerRun(100, func() { l.Record(store.Sandbox, e) }); n != 0 {
		t.Errorf("Record allocates %.0f times per call after an erasure, want none", n)
	}
}
