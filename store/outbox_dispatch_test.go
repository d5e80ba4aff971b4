package store_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/complybox/complybox/dispatch"
	"github.com/complybox/complybox/store"
)

// running opens a store on the real clock with a webhook pointing at h and
// runs a dispatcher over it; stop cancels the loop and returns when Run
// has returned.
func running(t *testing.T, cfg dispatch.Config, h http.HandlerFunc) (s *store.Store, rc *httptest.Server, stop func()) {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	s, _ = mustOpen(t, "", store.Options{Now: time.Now, Logger: logger})
	rc = httptest.NewServer(h)
	t.Cleanup(rc.Close)
	if _, err := s.SetWebhook(context.Background(), store.Sandbox, rc.URL, nil); err != nil {
		t.Fatal(err)
	}
	return s, rc, dispatching(t, s, cfg)
}

// dispatching runs a dispatcher over s until the returned stop is called
// or the test ends.
func dispatching(t *testing.T, s *store.Store, cfg dispatch.Config) (stop func()) {
	t.Helper()
	cfg.Jitter = func() float64 { return 0 }
	d := dispatch.New(s, cfg, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	for !d.Running() { // commits hand their work over from now on
		time.Sleep(time.Millisecond)
	}
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	return stop
}

func within(t *testing.T, ch <-chan time.Time, d time.Duration) time.Time {
	t.Helper()
	select {
	case at := <-ch:
		return at
	case <-time.After(d):
		t.Fatalf("nothing within %s", d)
		return time.Time{}
	}
}

// TestWakeWithoutPolling: with an hour's poll interval, a new event, a due
// retry and a manual retry each go out at once.
func TestWakeWithoutPolling(t *testing.T) {
	arrived := make(chan time.Time, 10)
	var n atomic.Int32
	s, _, _ := running(t, dispatch.Config{PollInterval: time.Hour, RetryDelays: []time.Duration{50 * time.Millisecond}, MaxAttempts: 2},
		func(w http.ResponseWriter, r *http.Request) {
			arrived <- time.Now()
			if n.Add(1) <= 2 {
				w.WriteHeader(500)
			}
		})
	start := time.Now()
	id, err := s.SendTestEvent(store.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	first := within(t, arrived, 5*time.Second)
	second := within(t, arrived, 5*time.Second)
	if gap := second.Sub(start); gap < 50*time.Millisecond {
		t.Errorf("retry %s after the enqueue, before its 50ms delay", gap)
	}
	t.Logf("first attempt %s after enqueue; retry %s later", first.Sub(start), second.Sub(first))
	for {
		d, err := s.Delivery(store.Sandbox, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status == store.DeliveryDead {
			break
		}
		select {
		case <-arrived:
			t.Fatal("a third automatic attempt")
		case <-time.After(time.Millisecond):
		}
	}
	if _, err := s.RetryDelivery(store.Sandbox, id); err != nil {
		t.Fatal(err)
	}
	within(t, arrived, 5*time.Second)
}

// TestConcurrencyLimit: no more than Concurrency attempts at once.
func TestConcurrencyLimit(t *testing.T) {
	arrived := make(chan time.Time, 20)
	release := make(chan struct{})
	s, _, _ := running(t, dispatch.Config{Concurrency: 3, AttemptTimeout: 10 * time.Second},
		func(w http.ResponseWriter, r *http.Request) {
			arrived <- time.Now()
			<-release
		})
	for range 8 {
		if _, err := s.SendTestEvent(store.Sandbox); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		within(t, arrived, 5*time.Second)
	}
	select {
	case <-arrived:
		t.Fatal("a fourth attempt while three are in flight")
	case <-time.After(100 * time.Millisecond):
	}
	release <- struct{}{}
	within(t, arrived, 5*time.Second)
	close(release)
	for range 4 {
		within(t, arrived, 5*time.Second)
	}
}

// TestShutdownFinishesAttempts: stopping waits for the attempt in flight
// and records it.
func TestShutdownFinishesAttempts(t *testing.T) {
	arrived := make(chan time.Time, 1)
	release := make(chan struct{})
	s, _, stop := running(t, dispatch.Config{}, func(w http.ResponseWriter, r *http.Request) {
		arrived <- time.Now()
		<-release // a slow receiver
	})
	id, err := s.SendTestEvent(store.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	within(t, arrived, 5*time.Second)
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("shutdown did not wait for the attempt in flight")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-stopped
	d, err := s.Delivery(store.Sandbox, id)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != store.DeliveryDelivered || d.AttemptCount != 1 {
		t.Errorf("after shutdown: %s with %d attempts", d.Status, d.AttemptCount)
	}
}

// TestShutdownIsBounded: a receiver that never answers holds shutdown for
// no longer than the attempt timeout and a little more.
func TestShutdownIsBounded(t *testing.T) {
	arrived := make(chan time.Time, 1)
	release := make(chan struct{})
	s, _, stop := running(t, dispatch.Config{AttemptTimeout: 300 * time.Millisecond}, func(w http.ResponseWriter, r *http.Request) {
		arrived <- time.Now()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	if _, err := s.SendTestEvent(store.Sandbox); err != nil {
		t.Fatal(err)
	}
	within(t, arrived, 5*time.Second)
	start := time.Now()
	stop()
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("shutdown took %s", took)
	}
}
