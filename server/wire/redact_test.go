package wire

import "testing"

// TestRedactShortLink: a short code is a bearer credential like the session
// token, so /l/{code} is redacted as /sdk/{token} is (SPEC §3.4: neither
// ever appears in a log line), also in paths that only look like the
// routes (a doubled slash, another case, a prefix), which answer 404.
func TestRedactShortLink(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/l/AbCdEfGhIjKlMnOpQrStUv": "/l/{code}", "/l/abc/extra": "/l/{code}/extra", "/l/": "/l/{code}",
		"/login": "/login", "/lx/abc": "/lx/abc", "/sdk/t/l/abc": "/sdk/{token}/l/abc",
		// Paths that only look like the routes (404s) keep nothing either.
		"//sdk/T": "//sdk/{token}", "/sdk//T": "/sdk//{token}", "/SDK/T/consent": "/SDK/{token}/consent",
		"/L/S": "/L/{code}", "/l//S": "/l//{code}", "//l/S": "//l/{code}",
		"/prefix/sdk/Mta3bo-FCX41NFTOAjPhCUfrqyLmWUqV37Hq1ApFDcw/consent": "/prefix/sdk/{token}/consent",
		"/prefix/l/ZZZLEgGHzdufMu52PkkEuu":                                "/prefix/l/{code}",
		"/sdk/":                                                           "/sdk/{token}", "/sdk": "/sdk", "/sdk-assets/app.js": "/sdk-assets/app.js",
		"/api/v1/sdk/state": "/api/v1/sdk/state", "/api/v1/sdk/personal-info": "/api/v1/sdk/personal-info",
		"/v1/applicants": "/v1/applicants",
	} {
		if got := RedactPath(in); got != want {
			t.Errorf("RedactPath(%q) = %q, want %q", in, got, want)
		}
	}
}
