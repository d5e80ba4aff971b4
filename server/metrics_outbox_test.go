package server_test

import (
	"net/http"
	"testing"
	"time"
)

// TestMetricsOutbox: after real deliveries — one that dies through its
// retries, one delivered — /metrics shows the outbox depth by status and
// destination, attempts and deliveries by outcome, the attempt latency
// histogram and the group commit's size, latency and pages written.
func TestMetricsOutbox(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc := newReceiver(t, in.Clock, func(n int) int {
		if n <= 5 {
			return 500
		}
		return 200
	})
	in.configureWebhook(rc)
	in.expect(202, "POST", "/webhooks/outbound/test", nil)
	in.moveClock(map[string]any{"advanceBy": "1h"}) // through its retries: dead
	in.expect(202, "POST", "/webhooks/outbound/test", nil)
	in.moveClock(map[string]any{"advanceBy": "0s"}) // its one attempt is recorded, by the loop or the move

	m := in.scrape()
	for series, want := range map[string]float64{
		`complybox_outbox_deliveries{destination="custody",env="sandbox",status="dead"}`:              1,
		`complybox_outbox_deliveries{destination="custody",env="sandbox",status="delivered"}`:         1,
		`complybox_outbox_deliveries{destination="custody",env="sandbox",status="pending"}`:           0,
		`complybox_webhook_attempts_total{destination="custody",env="sandbox",outcome="http_error"}`:  5,
		`complybox_webhook_attempts_total{destination="custody",env="sandbox",outcome="success"}`:     1,
		`complybox_webhook_deliveries_total{destination="custody",env="sandbox",outcome="retrying"}`:  4,
		`complybox_webhook_deliveries_total{destination="custody",env="sandbox",outcome="dead"}`:      1,
		`complybox_webhook_deliveries_total{destination="custody",env="sandbox",outcome="delivered"}`: 1,
		`complybox_webhook_attempt_duration_seconds_count{destination="custody"}`:                     6,
		`complybox_webhook_attempt_duration_seconds_bucket{destination="custody",le="+Inf"}`:          6,
	} {
		if got, ok := m[series]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
	n := m[`complybox_store_commit_group_size_count`]
	if n < 10 || m[`complybox_store_commit_duration_seconds_count`] != n || m[`complybox_store_commit_group_size_sum`] < n {
		t.Errorf("commits: %v counted, %v timed, %v operations", n, m[`complybox_store_commit_duration_seconds_count`],
			m[`complybox_store_commit_group_size_sum`])
	}
	if m[`complybox_store_commit_group_size_bucket{le="256"}`] != n {
		t.Errorf("a commit carried more than 256 operations")
	}
	// Every commit writes its meta page at least.
	if pages := m[`complybox_store_commit_pages_sum`]; m[`complybox_store_commit_pages_count`] != n || pages < n {
		t.Errorf("commit pages: %v commits, %v pages, want %v commits of a page or more", m[`complybox_store_commit_pages_count`], pages, n)
	}
	// A write the store refuses (404, 409) rolls back: no commit. (The
	// index fold may commit once meanwhile, in the background.)
	for range 5 {
		in.expect(404, "POST", "/v1/applicants/nobody/deactivate", nil)
	}
	after := in.scrape()
	for _, series := range []string{`complybox_store_commit_pages_count`, `complybox_store_commit_duration_seconds_count`, `complybox_store_commit_group_size_count`} {
		if n := after[series] - m[series]; n >= 5 {
			t.Errorf("five refused writes: %s grew by %v, want no commit of theirs", series, n)
		}
	}
}

// TestMetricsRetriedDuringLastAttempt: a manual retry that re-queues a
// delivery while its round's last attempt is in flight leaves it pending
// for a fresh round, so that attempt counts as retrying, not dead: the
// deliveries counter follows what the attempt's record committed.
func TestMetricsRetriedDuringLastAttempt(t *testing.T) {
	t.Parallel()
	in := start(t, func(o *options) {
		o.dispatch.MaxAttempts = 2
		o.dispatch.AttemptTimeout = 30 * time.Second
	})
	release := make(chan struct{})
	rc := handlerReceiver(t, in.Clock, func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 1:
			w.WriteHeader(500)
		case 2:
			<-release // the round's last attempt hangs until the retry is in
			w.WriteHeader(500)
		default:
			w.WriteHeader(200)
		}
	})
	in.configureWebhook(rc)
	id := in.testEvent()
	rc.next(t)
	in.waitDelivery(id, "failed", 1)
	in.advance(10 * time.Second)
	rc.next(t) // attempt 2, the last of the round, hangs
	in.expect(200, "POST", "/webhooks/deliveries/"+id+"/retry", nil)
	close(release)
	rc.next(t) // attempt 3, of the fresh round
	in.waitDelivery(id, "delivered", 3)
	in.moveClock(map[string]any{"advanceBy": "0s"}) // waits for the attempt in flight to be recorded

	m := in.scrape()
	for series, want := range map[string]float64{
		`complybox_webhook_attempts_total{destination="custody",env="sandbox",outcome="http_error"}`:  2,
		`complybox_webhook_attempts_total{destination="custody",env="sandbox",outcome="success"}`:     1,
		`complybox_webhook_deliveries_total{destination="custody",env="sandbox",outcome="retrying"}`:  2,
		`complybox_webhook_deliveries_total{destination="custody",env="sandbox",outcome="dead"}`:      0,
		`complybox_webhook_deliveries_total{destination="custody",env="sandbox",outcome="delivered"}`: 1,
	} {
		if got := m[series]; got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
}
