package wire

import "testing"

// TestRedactShortLink: a short code is a bearer credential like the session
// token, so /l/{code} is redacted as /sdk/{token} is (SPEC §3.4: neither
// ever appears in a log line).
func TestRedactShortLink(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/l/AbCdEfGhIjKlMnOpQrStUv": "/l/{code}", "/l/abc/extra": "/l/{code}/extra", "/l/": "/l/{code}",
		"/login": "/login", "/lx/abc": "/lx/abc", "/sdk/t/l/abc": "/sdk/{token}/l/abc",
	} {
		if got := RedactPath(in); got != want {
			t.Errorf("RedactPath(%q) = %q, want %q", in, got, want)
		}
	}
}
