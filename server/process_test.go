package server_test

import (
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// TestRestartDeliversEverything: events committed (202 answered) while the
// dispatcher is parked, while an attempt is in flight, or while the receiver
// is failing all reach the receiver after the process dies without draining
// and a new one opens the same db file.
func TestRestartDeliversEverything(t *testing.T) {
	t.Parallel()
	clock := store.NewManualClock(testStart)
	path := filepath.Join(t.TempDir(), "complybox.db")
	const (
		hang = iota
		fail
		ok
	)
	var phase atomic.Int32
	release := make(chan struct{})
	// The receiver reports an arrival (rc.next) before it reads the phase,
	// so the test waits for hung too before it moves the phase on: under
	// -race on a busy machine the fourth attempt once read the next
	// phase, failed, and was not due again when the third process started.
	hung := make(chan struct{}, 8)
	rc := handlerReceiver(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		switch phase.Load() {
		case hang:
			hung <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case fail:
			w.WriteHeader(503)
		}
	})
	var closeRelease sync.Once
	t.Cleanup(func() { closeRelease.Do(func() { close(release) }) }) // before rc closes

	// The dispatcher never runs: three events wait in the outbox.
	a := boot(t, func(o *bootOptions) { o.path, o.clock, o.parked = path, clock, true })
	if r := doRequest(t, "GET", a.URL+"/healthz", nil); r.Status != 503 {
		t.Errorf("healthz without a running dispatcher: %d %s", r.Status, r.Body)
	}
	a.configureWebhook(rc)
	want := map[string]bool{}
	for range 3 {
		want[a.testEvent()] = true
	}
	rc.none(t, 50*time.Millisecond)
	a.kill()

	// The next process sends them, but the receiver hangs; a fourth event
	// joins them in flight, and a fifth fails while the receiver answers 503.
	b := boot(t, func(o *bootOptions) {
		o.path, o.clock = path, clock
		o.dispatch.AttemptTimeout = time.Minute
	})
	for range 3 {
		if id := rc.next(t).Header.Get("X-Webhook-Id"); !want[id] {
			t.Fatalf("unexpected delivery %s", id)
		}
	}
	want[b.testEvent()] = true
	rc.next(t)
	for i := range 4 {
		select {
		case <-hung:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of 4 attempts hang at the receiver after 10s", i)
		}
	}
	phase.Store(fail)
	fifth := b.testEvent()
	want[fifth] = true
	rc.next(t)
	b.waitDelivery(fifth, "failed", 1)
	b.kill()

	// The third process delivers every one: the four whose attempts were cut
	// short at once, the failed one when its retry falls due.
	phase.Store(ok)
	c := boot(t, func(o *bootOptions) { o.path, o.clock = path, clock })
	got := map[string]bool{}
	for range 4 {
		got[rc.next(t).Header.Get("X-Webhook-Id")] = true
	}
	rc.none(t, 50*time.Millisecond)
	c.advance(10 * time.Second)
	last := rc.next(t)
	got[last.Header.Get("X-Webhook-Id")] = true
	if last.Header.Get("X-Webhook-Attempt") != "2" || last.Header.Get("X-Webhook-Id") != fifth {
		t.Errorf("last delivery %s attempt %s, want %s attempt 2", last.Header.Get("X-Webhook-Id"), last.Header.Get("X-Webhook-Attempt"), fifth)
	}
	if len(got) != 5 {
		t.Fatalf("delivered %d distinct deliveries, want 5", len(got))
	}
	for id := range want {
		if !got[id] {
			t.Errorf("delivery %s never arrived after the restart", id)
		}
		c.waitDelivery(id, "delivered", 1)
	}
}
