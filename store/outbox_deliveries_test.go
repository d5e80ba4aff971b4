package store_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/complybox/complybox/dispatch"
	"github.com/complybox/complybox/store"
)

func TestDeliveriesCursor(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{})
	if _, err := s.SetWebhook(context.Background(), store.Sandbox, "http://127.0.0.1:9/hook", nil); err != nil {
		t.Fatal(err)
	}
	for i := range 25 {
		typ := "wallet.created"
		if i%3 == 0 {
			typ = "balance.updated"
		}
		if err := s.Enqueue(store.Sandbox, store.DestCustody, typ, "wallet", string(rune('a'+i)), map[string]int{"n": i}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		filter store.DeliveryFilter
		limit  int
		want   string
	}{
		{store.DeliveryFilter{}, 7, "yxwvutsrqponmlkjihgfedcba"},
		{store.DeliveryFilter{}, 25, "yxwvutsrqponmlkjihgfedcba"},
		{store.DeliveryFilter{}, 200, "yxwvutsrqponmlkjihgfedcba"},
		{store.DeliveryFilter{EventType: "balance.updated"}, 2, "yvspmjgda"},
		{store.DeliveryFilter{EntityID: "c"}, 1, "c"},
		{store.DeliveryFilter{Status: store.DeliveryDead}, 3, ""},
	} {
		var got string
		var pages int
		p := store.Page{Limit: c.limit}
		for {
			items, next, err := s.Deliveries(store.Sandbox, c.filter, p)
			if err != nil {
				t.Fatal(err)
			}
			if len(items) > c.limit {
				t.Fatalf("%d items on a page of %d", len(items), c.limit)
			}
			pages++
			for _, d := range items {
				got += d.EntityID
			}
			if next == nil {
				break
			}
			p.Cursor = *next
		}
		if got != c.want {
			t.Errorf("%+v limit %d: %q, want %q", c.filter, c.limit, got, c.want)
		}
		if max := (len(c.want)+c.limit-1)/c.limit + 1; pages > max {
			t.Errorf("%+v limit %d: %d pages", c.filter, c.limit, pages)
		}
	}
	if _, _, err := s.Deliveries(store.Sandbox, store.DeliveryFilter{}, store.Page{Cursor: "bogus"}); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("bad cursor: %v", err)
	}
}

// TestEntityOrder runs the real dispatcher: first attempts of one entity go
// out in event order, one at a time; other entities are not held back; a
// failing delivery does not hold back later ones.
func TestEntityOrder(t *testing.T) {
	s, clock := mustOpen(t, "", store.Options{})
	type hit struct {
		entity string
		n      int
	}
	got := make(chan hit, 100)
	release := make(chan int, 100) // status to answer the hanging request with
	var mu sync.Mutex
	inflight := map[string]int{}
	hung := false // under mu
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var env struct {
			EntityID string
			Data     struct{ N int }
		}
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &env)
		mu.Lock()
		inflight[env.EntityID]++
		if inflight[env.EntityID] > 1 {
			t.Errorf("two first attempts of %s at once", env.EntityID)
		}
		hang := env.EntityID == "X" && env.Data.N == 0 && !hung
		hung = hung || hang
		mu.Unlock()
		got <- hit{env.EntityID, env.Data.N}
		status := 200
		if hang {
			status = <-release
		}
		mu.Lock()
		inflight[env.EntityID]--
		mu.Unlock()
		w.WriteHeader(status)
	}))
	defer rc.Close()
	if _, err := s.SetWebhook(context.Background(), store.Sandbox, rc.URL, nil); err != nil {
		t.Fatal(err)
	}
	d := dispatch.New(s, dispatch.Config{Now: clock.Now, Concurrency: 4, AttemptTimeout: 10 * time.Second, Jitter: func() float64 { return 0 }},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	enqueue := func(entity string, n int) {
		t.Helper()
		if err := s.Enqueue(store.Sandbox, store.DestCustody, "transaction.status.updated", "transaction", entity, map[string]int{"n": n}); err != nil {
			t.Fatal(err)
		}
	}
	next := func() hit {
		t.Helper()
		select {
		case h := <-got:
			return h
		case <-time.After(10 * time.Second):
			t.Fatal("no delivery within 10s")
			return hit{}
		}
	}
	none := func() {
		t.Helper()
		select {
		case h := <-got:
			t.Fatalf("unexpected delivery %+v", h)
		case <-time.After(50 * time.Millisecond):
		}
	}
	// X0 hangs; X1..X9 queue behind it (more than the concurrency, so they
	// would fill every slot if they counted); Y0 goes out anyway.
	enqueue("X", 0)
	if h := next(); h != (hit{"X", 0}) {
		t.Fatalf("first: %+v", h)
	}
	for n := 1; n < 10; n++ {
		enqueue("X", n)
	}
	enqueue("Y", 0)
	if h := next(); h != (hit{"Y", 0}) {
		t.Fatalf("with X0 in flight got %+v, want Y0", h)
	}
	none()
	// X0 fails: its retry is scheduled and X1..X9 follow, in order.
	release <- 500
	for n := 1; n < 10; n++ {
		if h := next(); h != (hit{"X", n}) {
			t.Fatalf("got %+v, want X%d", h, n)
		}
	}
	none()
	clock.Advance(10 * time.Second)
	d.Wake()
	if h := next(); h != (hit{"X", 0}) {
		t.Fatalf("retry: %+v", h)
	}
}
