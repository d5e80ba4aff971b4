package store_test

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/complybox/complybox/dispatch"
	"github.com/complybox/complybox/store"
)

// TestEntityBacklogInOrder: 300 events of one entity (a busy wallet's
// balance.updated) all arrive, their first attempts in event order and never
// two at once (a retry is not a first attempt and may overlap), and one that fails does not hold back the rest: it comes back
// later as its retry.
func TestEntityBacklogInOrder(t *testing.T) {
	const n = 300
	var mu sync.Mutex
	var firsts []int
	inside, overlap := 0, false
	failed, retried, closed := false, false, false
	done := make(chan struct{})
	s, _, _ := running(t, dispatch.Config{Concurrency: 8, PollInterval: time.Hour, RetryDelays: []time.Duration{50 * time.Millisecond}},
		func(w http.ResponseWriter, r *http.Request) {
			var env struct{ Data struct{ N int } }
			body, _ := io.ReadAll(r.Body)
			json.Unmarshal(body, &env)
			first := r.Header.Get("X-Webhook-Attempt") == "1"
			mu.Lock()
			if first {
				inside++
				overlap = overlap || inside > 1
				firsts = append(firsts, env.Data.N)
			}
			fail := first && env.Data.N == 7 && !failed
			failed = failed || fail
			mu.Unlock()
			time.Sleep(100 * time.Microsecond) // widen the window for an overlap
			mu.Lock()
			if first {
				inside--
			}
			retried = retried || (!first && env.Data.N == 7)
			if retried && len(firsts) == n && !closed {
				closed = true
				close(done)
			}
			mu.Unlock()
			if fail {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		})
	if err := s.EnqueueN(store.Sandbox, store.DestCustody, "balance.updated", "wallet", "W", n); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("after 20s: %d of %d first attempts, retry arrived %v", len(firsts), n, retried)
	}
	mu.Lock()
	defer mu.Unlock()
	if overlap {
		t.Error("two first attempts of one entity were in flight at once")
	}
	if len(firsts) != n {
		t.Fatalf("%d first attempts arrived, want %d", len(firsts), n)
	}
	for i, got := range firsts {
		if got != i {
			t.Fatalf("first attempt %d carried event %d: out of order", i, got)
		}
	}
}
