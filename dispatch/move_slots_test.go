package dispatch

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// TestClockMoveSharesTheSlots: a clock move sends the sandbox's backlog
// in the loop's slots, so the move's attempts and the loop's (production
// carries on meanwhile) together never exceed Concurrency (SPEC §5: "due
// deliveries run concurrently up to concurrency"). The review saw 16 of
// each at once with concurrency 16.
func TestClockMoveSharesTheSlots(t *testing.T) {
	const concurrency, each = 4, 12
	st, err := store.Open(filepath.Join(t.TempDir(), "slots.db"), store.Options{
		Logger: slog.New(slog.DiscardHandler), Settings: store.Settings{AllowHTTP: "loopback"}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var (
		mu         sync.Mutex
		busy, peak int
		seen       = map[string]int{}
	)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		busy++
		peak = max(peak, busy)
		seen[r.URL.Path]++
		mu.Unlock()
		time.Sleep(20 * time.Millisecond) // long enough for attempts to overlap
		mu.Lock()
		busy--
		mu.Unlock()
	}))
	defer rc.Close()
	for _, env := range []store.Env{store.Production, store.Sandbox} {
		if _, err := st.SetWebhook(context.Background(), env, rc.URL+"/"+string(env), nil); err != nil {
			t.Fatal(err)
		}
		for range each {
			if _, err := st.SendTestEvent(env); err != nil {
				t.Fatal(err)
			}
		}
	}
	d := New(st, Config{PollInterval: 10 * time.Millisecond, Concurrency: concurrency}, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { d.Run(ctx); close(stopped) }()
	defer func() { cancel(); <-stopped }()
	if _, err := d.Advance(context.Background(), store.Sandbox, store.ClockTarget{By: time.Second}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		done := seen["/production"] >= each && seen["/sandbox"] >= each
		mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("attempts seen: %v, want %d of each", seen, each)
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if peak > concurrency {
		t.Errorf("%d attempts at once, want at most %d", peak, concurrency)
	}
}
