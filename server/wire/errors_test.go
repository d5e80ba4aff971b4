package wire

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// TestRateLimitRetryAfter: every 429 carries Retry-After in whole seconds,
// rounded up, and at least 1.
func TestRateLimitRetryAfter(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, c := range []struct {
		after time.Duration
		want  string
	}{{0, "1"}, {200 * time.Millisecond, "1"}, {1200 * time.Millisecond, "2"}, {time.Hour, "3600"}} {
		w := httptest.NewRecorder()
		Error(w, httptest.NewRequest("POST", "/", nil), log, &store.Error{Code: store.ERATELIMIT, Reason: "rate_limited", Message: "slow down", RetryAfter: c.after})
		if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != c.want {
			t.Errorf("RetryAfter %s: %d Retry-After %q, want 429 %q", c.after, w.Code, w.Header().Get("Retry-After"), c.want)
		}
	}
}

// TestRedactPath: hosted-UI paths are logged without their session token.
func TestRedactPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/sdk/abc": "/sdk/{token}", "/sdk/abc/documents": "/sdk/{token}/documents", "/sdk-assets/app.js": "/sdk-assets/app.js",
		"/v1/applicants/x": "/v1/applicants/x", "/sdk/": "/sdk/{token}",
		// A dot or blank segment before the credential does not expose it.
		"/sdk/./TF5dYEwZaaaaaaaaaaaaaaaaaaYtc":                         "/sdk/{token}/{token}",
		"/l/ /t3yTwXRqbbbbbbbbbbbbbb":                                  "/l/{code}/{code}",
		"/sdk/TF5dYEwZaaaaaaaaaaaaaaaaaaYtc/../TF5dYEwZaaaaaaaaaaaaaa": "/sdk/{token}/../{token}",
		"/base/sdk/./TF5dYEwZaaaaaaaaaaaaaaaaaaYtc/documents":          "/base/sdk/./{token}/documents",
		"/api/v1/sdk/state":                                            "/api/v1/sdk/state",
	} {
		if got := RedactPath(in); got != want {
			t.Errorf("RedactPath(%q) = %q, want %q", in, got, want)
		}
	}
}
