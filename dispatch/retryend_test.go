package dispatch

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// TestRetryCountsFromFailure: after attempt n fails, the next is due
// retry_delays[n-1] (or a larger Retry-After) after the failure, not after
// the attempt began (SPEC §5). The receiver moves the clock on while it
// holds the attempt: a timeout ends the attempt 5 s after it began, a 429
// arrives 4 s after. The attempts run through the sandbox test clock, whose
// time the attempt's length moves too.
func TestRetryCountsFromFailure(t *testing.T) {
	for _, c := range []struct {
		name    string
		handle  func(w http.ResponseWriter, r *http.Request, clock *store.ManualClock, done <-chan struct{})
		elapsed time.Duration // of the clock, while the receiver held the attempt
		delay   time.Duration // after the failure
	}{
		{"Timeout", func(w http.ResponseWriter, r *http.Request, clock *store.ManualClock, done <-chan struct{}) {
			clock.Advance(5 * time.Second)
			<-done
		}, 5 * time.Second, 10 * time.Second},
		{"RetryAfter", func(w http.ResponseWriter, r *http.Request, clock *store.ManualClock, _ <-chan struct{}) {
			clock.Advance(4 * time.Second)
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusTooManyRequests)
		}, 4 * time.Second, 120 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := store.NewManualClock(time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC))
			st, err := store.Open(filepath.Join(t.TempDir(), "retry.db"), store.Options{Now: clock.Now,
				Logger: slog.New(slog.DiscardHandler), Settings: store.Settings{AllowHTTP: "loopback"}})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			done := make(chan struct{})
			rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { c.handle(w, r, clock, done) }))
			defer rc.Close()
			defer close(done) // before Close, which waits for the handler
			if _, err := st.SetWebhook(context.Background(), store.Sandbox, rc.URL+"/hook", nil); err != nil {
				t.Fatal(err)
			}
			d := New(st, Config{AttemptTimeout: 300 * time.Millisecond, Now: clock.Now,
				Jitter: func() float64 { return 0 }}, slog.New(slog.DiscardHandler))
			defer d.sender.conns.closeIdle()
			id, err := st.SendTestEvent(store.Sandbox)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := d.Advance(context.Background(), store.Sandbox, store.ClockTarget{By: time.Second}); err != nil {
				t.Fatal(err)
			}
			dl, err := st.Delivery(store.Sandbox, id)
			if err != nil {
				t.Fatal(err)
			}
			if dl.Status != store.DeliveryFailed || len(dl.Attempts) != 1 {
				t.Fatalf("status %s after %d attempts", dl.Status, len(dl.Attempts))
			}
			began := dl.Attempts[0].AttemptedAt.Time
			if !began.Equal(dl.CreatedAt.Time) {
				t.Errorf("attemptedAt %v, want the attempt's start %v", began, dl.CreatedAt.Time)
			}
			if got, want := dl.NextAttemptAt.Sub(began), c.elapsed+c.delay; got != want {
				t.Errorf("next attempt %s after the attempt began, want %s (%s after its failure)", got, want, c.delay)
			}
		})
	}
}
