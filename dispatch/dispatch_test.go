package dispatch

import (
	"net/http"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// TestSignStandardVector checks the Standard Webhooks reference vector.
func TestSignStandardVector(t *testing.T) {
	got := SignStandard("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestSignVerify(t *testing.T) {
	// HMAC-SHA256("key", "The quick brown fox jumps over the lazy dog").
	const want = "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
	body := []byte("The quick brown fox jumps over the lazy dog")
	if got := Sign("key", body); got != want {
		t.Errorf("Sign: %s", got)
	}
	if !Verify("key", body, want) || !Verify("key", body, " "+want+"\n") {
		t.Error("Verify rejects the right signature")
	}
	for _, bad := range []string{"", "zz", want[:62], want[:63] + "9"} {
		if Verify("key", body, bad) {
			t.Errorf("Verify accepts %q", bad)
		}
	}
	if Verify("key", append(body, ' '), want) {
		t.Error("Verify accepts a changed body")
	}
}

func TestRetryAt(t *testing.T) {
	at := time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)
	jitter := 0.0
	d := &Dispatcher{cfg: Config{MaxAttempts: 5, Jitter: func() float64 { return jitter }}.withDefaults()}
	for _, c := range []struct {
		n          int
		jitter     float64
		retryAfter time.Duration
		want       time.Duration // 0: dead
	}{
		{1, 0, 0, 10 * time.Second},
		{2, 0, 0, 30 * time.Second},
		{4, 0, 0, 5 * time.Minute},
		{5, 0, 0, 0},
		{1, 0.1, 0, 11 * time.Second},
		{1, -0.1, 0, 9 * time.Second},
		{1, 0, 2 * time.Minute, 2 * time.Minute},
		{3, 0, 5 * time.Second, time.Minute},
		{1, 0, 24 * time.Hour, time.Hour},
	} {
		jitter = c.jitter
		got := d.retryAt(c.n, result{retryAfter: c.retryAfter, AttemptResult: storeResult(at)})
		if (c.want == 0 && !got.IsZero()) || (c.want != 0 && got.Sub(at) != c.want) {
			t.Errorf("n=%d jitter=%v retryAfter=%s: %v, want +%s", c.n, c.jitter, c.retryAfter, got, c.want)
		}
	}
	// More attempts than delays: the last delay repeats.
	d.cfg.MaxAttempts = 8
	jitter = 0
	if got := d.retryAt(7, result{AttemptResult: storeResult(at)}); got.Sub(at) != 15*time.Minute {
		t.Errorf("attempt 7: +%s", got.Sub(at))
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":     0,
		"0":    0,
		"-5":   0,
		"soon": 0,
		"120":  2 * time.Minute,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
	} {
		if got := parseRetryAfter(v, now); got != want {
			t.Errorf("%q: %s, want %s", v, got, want)
		}
	}
}

func storeResult(at time.Time) store.AttemptResult { return store.AttemptResult{At: at, End: at} }
