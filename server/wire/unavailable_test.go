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

// TestUnavailableRetryAfter: a 503 (the image decoder is busy, or the
// server is shutting down) tells the caller when to come back.
func TestUnavailableRetryAfter(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, c := range []struct {
		after time.Duration
		want  string
	}{{time.Second, "1"}, {0, "1"}, {2500 * time.Millisecond, "3"}} {
		w := httptest.NewRecorder()
		Error(w, httptest.NewRequest("POST", "/", nil), log, &store.Error{Code: store.EUNAVAILABLE, Reason: "decoder_busy", Message: "busy", RetryAfter: c.after})
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != c.want {
			t.Errorf("RetryAfter %s: %d Retry-After %q, want 503 %q", c.after, w.Code, w.Header().Get("Retry-After"), c.want)
		}
	}
}
