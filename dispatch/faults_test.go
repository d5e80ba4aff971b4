package dispatch

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// faultKinds are the receiver's answers, chosen per (delivery, attempt).
var faultKinds = []struct {
	name    string
	percent int
	ok      bool // a 2xx: the attempt succeeds
}{
	{"ok", 40, true}, {"500", 8, false}, {"429-absurd", 4, false}, {"503-absurd", 4, false}, {"503-1s", 4, false},
	{"redirect-private", 5, false}, {"reset", 6, false}, {"timeout", 2, false}, {"huge-500", 4, false},
	{"slow-body-200", 3, true}, {"ok", 20, true},
}

func faultFor(id, attempt string) (string, bool) {
	sum := sha256.Sum256([]byte(id + "/" + attempt))
	n := int(binary.BigEndian.Uint32(sum[:4]) % 100)
	for _, k := range faultKinds {
		if n < k.percent {
			return k.name, k.ok
		}
		n -= k.percent
	}
	return "ok", true
}

// countFDs returns the number of open file descriptors, or -1 where
// /proc is missing.
func countFDs() int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(fds)
}

// TestFaultyReceiver drives a few thousand deliveries through a receiver
// that times out, resets connections, answers 5xx, 429/503 with Retry-After
// (absurd values included, capped at an hour), redirects to a private
// address, sends huge and slow bodies. With fast retries (and a clock that
// runs 1000 times faster, so the one-hour cap passes in 3.6 s), every
// delivery ends delivered or dead, its attempt records match what the
// receiver did, and no goroutine or file descriptor is left behind.
// COMPLYBOX_FAULT_DELIVERIES raises the count (default 2000).
func TestFaultyReceiver(t *testing.T) {
	if testing.Short() {
		t.Skip("a few thousand deliveries")
	}
	n := 2000
	if v, err := strconv.Atoi(os.Getenv("COMPLYBOX_FAULT_DELIVERIES")); err == nil && v > 0 {
		n = v
	}
	const maxAttempts = 4
	goroutines, fds := runtime.NumGoroutine(), countFDs()

	start, base := time.Now(), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return base.Add(time.Since(start) * 1000) }
	st, err := store.Open(filepath.Join(t.TempDir(), "faults.db"), store.Options{Now: clock,
		Logger: slog.New(slog.DiscardHandler), Settings: store.Settings{AllowHTTP: "loopback"}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	var mu sync.Mutex
	got := map[string][]string{} // delivery id -> answers, in attempt order
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, attempt := r.Header.Get("X-Webhook-Id"), r.Header.Get("X-Webhook-Attempt")
		io.Copy(io.Discard, r.Body)
		kind, _ := faultFor(id, attempt)
		mu.Lock()
		got[id] = append(got[id], attempt+":"+kind)
		mu.Unlock()
		switch kind {
		case "ok":
		case "500":
			w.WriteHeader(500)
		case "429-absurd":
			w.Header().Set("Retry-After", "18446744074")
			w.WriteHeader(429)
		case "503-absurd":
			w.Header().Set("Retry-After", "9223372037")
			w.WriteHeader(503)
		case "503-1s":
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(503)
		case "redirect-private":
			http.Redirect(w, r, "http://10.0.0.1/hook", http.StatusFound)
		case "reset":
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		case "timeout":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		case "huge-500":
			w.WriteHeader(500)
			chunk := []byte(strings.Repeat("x", 64<<10))
			for range 32 { // 2 MiB
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case "slow-body-200":
			w.WriteHeader(200)
			for range 60 { // 1.5 s: longer than the attempt timeout
				if _, err := w.Write([]byte("x")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(25 * time.Millisecond):
				}
			}
		}
	}))
	if _, err := st.SetWebhook(context.Background(), store.Sandbox, rc.URL+"/hook", nil); err != nil {
		t.Fatal(err)
	}

	d := New(st, Config{PollInterval: 20 * time.Millisecond, AttemptTimeout: time.Second,
		RetryDelays: []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond},
		MaxAttempts: maxAttempts, Concurrency: 16, Now: clock}, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { d.Run(ctx); close(stopped) }()

	ids := make([]string, n)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				id, err := st.SendTestEvent(store.Sandbox)
				if err != nil {
					t.Error(err)
					return
				}
				ids[i] = id
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		cancel()
		<-stopped
		return
	}

	// Wait until nothing is pending or failed (a retry due); 3.6 s of real
	// time is an hour of the clock, the longest Retry-After.
	deadline := time.Now().Add(90 * time.Second)
	for {
		open := 0
		for _, status := range []string{store.DeliveryPending, store.DeliveryFailed} {
			items, _, err := st.Deliveries(store.Sandbox, store.DeliveryFilter{Status: status}, store.Page{Limit: 200})
			if err != nil {
				t.Fatal(err)
			}
			open += len(items)
		}
		if open == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries still open after 90 s", open)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	<-stopped

	// Every delivery's attempt records agree with what the receiver did.
	delivered, dead := 0, 0
	mu.Lock()
	for _, id := range ids {
		dl, err := st.Delivery(store.Sandbox, id)
		if err != nil {
			t.Fatal(err)
		}
		answers := got[id]
		if len(dl.Attempts) != dl.AttemptCount || dl.AttemptCount > maxAttempts || dl.AttemptCount == 0 {
			t.Errorf("%s: %d attempts recorded, attemptCount %d", id, len(dl.Attempts), dl.AttemptCount)
			continue
		}
		for i, a := range dl.Attempts {
			kind, ok := faultFor(id, strconv.Itoa(i+1))
			// A 2xx answer that came too late on a loaded machine is a
			// timed-out attempt; nothing else may differ.
			late := ok && !a.Success && a.ErrorMessage != nil && strings.Contains(*a.ErrorMessage, "timed out")
			if a.AttemptNumber != i+1 || (a.Success != ok && !late) {
				t.Errorf("%s attempt %d (%s): number %d success %v", id, i+1, kind, a.AttemptNumber, a.Success)
			}
			if !a.Success && (a.ErrorMessage == nil || *a.ErrorMessage == "") {
				t.Errorf("%s attempt %d (%s): no error recorded", id, i+1, kind)
			}
			if a.ResponseBody != nil && len(*a.ResponseBody) > 4<<10 {
				t.Errorf("%s attempt %d: %d bytes of body kept", id, i+1, len(*a.ResponseBody))
			}
			if i < len(answers) && answers[i] != fmt.Sprintf("%d:%s", i+1, kind) {
				t.Errorf("%s attempt %d: the receiver saw %q", id, i+1, answers[i])
			}
		}
		if len(answers) < dl.AttemptCount {
			t.Errorf("%s: %d attempts recorded, the receiver saw %d", id, dl.AttemptCount, len(answers))
		}
		last := dl.Attempts[len(dl.Attempts)-1]
		switch dl.Status {
		case store.DeliveryDelivered:
			delivered++
			if !last.Success {
				t.Errorf("%s delivered after a failed attempt", id)
			}
		case store.DeliveryDead:
			dead++
			if dl.AttemptCount != maxAttempts || last.Success {
				t.Errorf("%s dead after %d attempts", id, dl.AttemptCount)
			}
		default:
			t.Errorf("%s ended %s", id, dl.Status)
		}
	}
	mu.Unlock()
	t.Logf("%d deliveries: %d delivered, %d dead", n, delivered, dead)
	if dead == 0 || delivered == 0 {
		t.Errorf("the faults did not produce both outcomes")
	}

	rc.Close()
	d.sender.conns.closeIdle()
	st.Close()
	// Let goroutines of closed connections exit, then compare.
	var g, f int
	for range 200 {
		g, f = runtime.NumGoroutine(), countFDs()
		if g <= goroutines+5 && f <= fds+5 {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if g > goroutines+5 {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines: %d before, %d after\n%s", goroutines, g, buf[:runtime.Stack(buf, true)])
	}
	if fds >= 0 && f > fds+5 {
		t.Errorf("file descriptors: %d before, %d after", fds, f)
	}
}
