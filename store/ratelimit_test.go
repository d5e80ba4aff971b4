package store

import (
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"
)

func openAt(t *testing.T, path string, clock *ManualClock) *Store {
	t.Helper()
	s, err := Open(path, Options{Now: clock.Now, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// takeOnce counts one call against key (3 per minute) in its own operation.
func takeOnce(s *Store, key string) error {
	return s.update(func(t *txn) error { return t.take(Sandbox, key, "test", 3, time.Minute) })
}

func wantRetryAfter(t *testing.T, err error, want time.Duration) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != ERATELIMIT || e.RetryAfter != want {
		t.Fatalf("got %v (retry after %v), want ERATELIMIT after %v", err, retryAfter(err), want)
	}
}

func retryAfter(err error) time.Duration {
	var e *Error
	if errors.As(err, &e) {
		return e.RetryAfter
	}
	return 0
}

func TestSlidingWindow(t *testing.T) {
	clock := NewManualClock(time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC))
	path := filepath.Join(t.TempDir(), "rl.db")
	s := openAt(t, path, clock)

	// Three calls at 0s, 10s and 20s fill the window.
	for i := range 3 {
		if err := takeOnce(s, "k"); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		clock.Advance(10 * time.Second)
	}
	// At 30s the oldest (0s) leaves at 60s: 30s to wait. A refused call
	// counts nothing, so the wait shrinks as the clock moves.
	wantRetryAfter(t, takeOnce(s, "k"), 30*time.Second)
	clock.Advance(29500 * time.Millisecond)
	wantRetryAfter(t, takeOnce(s, "k"), 500*time.Millisecond)

	// Another key has its own window.
	if err := takeOnce(s, "other"); err != nil {
		t.Fatal(err)
	}

	// The window survives a restart.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path, clock)
	defer s.Close()
	wantRetryAfter(t, takeOnce(s, "k"), 500*time.Millisecond)

	// At exactly 60s the first call has left: one more fits, then the wait
	// is until the 10s call leaves at 70s.
	clock.Advance(500 * time.Millisecond)
	if err := takeOnce(s, "k"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
	wantRetryAfter(t, takeOnce(s, "k"), 10*time.Second)

	// A call whose operation fails later is not counted.
	clock.Advance(10 * time.Second)
	boom := errors.New("boom")
	err := s.update(func(t *txn) error {
		if err := t.take(Sandbox, "k", "test", 3, time.Minute); err != nil {
			return err
		}
		return boom
	})
	if err != boom {
		t.Fatalf("got %v", err)
	}
	if err := takeOnce(s, "k"); err != nil {
		t.Fatalf("the failed operation was counted: %v", err)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestSlidingWindowLoweredLimit(t *testing.T) {
	clock := NewManualClock(time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC))
	s := openAt(t, filepath.Join(t.TempDir(), "rl.db"), clock)
	defer s.Close()
	for range 5 {
		if err := s.update(func(t *txn) error { return t.take(Sandbox, "k", "test", 10, time.Minute) }); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
	}
	// Five calls at 0..4s; a limit lowered to 2 waits until only one
	// counted call is left: the call at 3s leaves at 63s.
	err := s.update(func(t *txn) error { return t.take(Sandbox, "k", "test", 2, time.Minute) })
	wantRetryAfter(t, err, 58*time.Second)
}
