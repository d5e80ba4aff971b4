package store_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/complybox/complybox/dispatch"
	"github.com/complybox/complybox/store"
)

// arrivals is a webhook receiver that counts deliveries and closes all
// once it has seen want of them.
type arrivals struct {
	mu   sync.Mutex
	n    int
	want int
	all  chan struct{}
}

func newArrivals(want int) *arrivals { return &arrivals{want: want, all: make(chan struct{})} }

func (a *arrivals) ServeHTTP(http.ResponseWriter, *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n++; a.n == a.want {
		close(a.all)
	}
}

// wait waits for every delivery to arrive and then for s to record it as
// delivered: the dispatcher asks for an entity's next first attempt
// between the two.
func (a *arrivals) wait(t *testing.T, s *store.Store) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	select {
	case <-a.all:
	case <-deadline:
		a.mu.Lock()
		defer a.mu.Unlock()
		t.Fatalf("after 20s: %d of %d deliveries arrived", a.n, a.want)
	}
	for {
		page, _, err := s.Deliveries(store.Sandbox, store.DeliveryFilter{Status: store.DeliveryPending}, store.Page{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			return
		}
		select {
		case <-deadline:
			t.Fatalf("after 20s: delivery %s is still pending", page[0].ID)
		case <-time.After(time.Millisecond):
		}
	}
}

// TestNextFirstReadsOnlyFollowedQueues: when a first attempt ends, the
// dispatcher asks for the next one of its entity (NextFirst). An entity
// with nothing queued behind its head — every transaction's
// transaction.created — costs no read; a busy wallet's backlog is read
// once per first attempt, and goes out through that chain.
func TestNextFirstReadsOnlyFollowedQueues(t *testing.T) {
	const n = 100
	rc := newArrivals(2 * n)
	s, _, _ := running(t, dispatch.Config{Concurrency: 8, PollInterval: time.Hour}, rc.ServeHTTP)
	for i := range n {
		if err := s.EnqueueN(store.Sandbox, store.DestCustody, "transaction.created", "transaction", fmt.Sprintf("T%d", i), 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.EnqueueN(store.Sandbox, store.DestCustody, "balance.updated", "wallet", "W", n); err != nil {
		t.Fatal(err)
	}
	rc.wait(t, s)
	// W's head was scheduled; each of its n first attempts asks for the
	// next, the last finding none. The transactions' never read.
	if got := s.QueueReads(); got != n {
		t.Errorf("NextFirst read %d entity queues, want %d (one per first attempt of W)", got, n)
	}
}

// TestChainResumesAfterRestart: a backlog queued before a restart still
// goes out through the chain once its head's record is written, though
// nothing in memory knew of it.
func TestChainResumesAfterRestart(t *testing.T) {
	const n = 50
	path := filepath.Join(t.TempDir(), "test.db")
	opts := store.Options{Now: time.Now}
	s, _ := mustOpen(t, path, opts)
	rc := newArrivals(n)
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	if _, err := s.SetWebhook(context.Background(), store.Sandbox, srv.URL, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.EnqueueN(store.Sandbox, store.DestCustody, "balance.updated", "wallet", "W", n); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, _ = mustOpen(t, path, opts)
	dispatching(t, s, dispatch.Config{Concurrency: 8, PollInterval: time.Hour})
	rc.wait(t, s)
	// The head's end finds no mark; its record schedules the second and
	// marks the queue, so the second to the last each read it.
	if got := s.QueueReads(); got != n-1 {
		t.Errorf("NextFirst read %d entity queues, want %d", got, n-1)
	}
}

// TestFreshJobsSkipTheSchedule: a commit hands the first attempts it made
// due to the dispatcher (OnFresh), which sends them without reading the
// schedule for them or their deliveries for what to send.
func TestFreshJobsSkipTheSchedule(t *testing.T) {
	const n = 200
	rc := newArrivals(n)
	s, _, _ := running(t, dispatch.Config{Concurrency: 8, PollInterval: time.Hour}, rc.ServeHTTP)
	before := s.ScheduleReads()
	for i := range n {
		if err := s.EnqueueN(store.Sandbox, store.DestCustody, "transaction.created", "transaction", fmt.Sprintf("T%d", i), 1); err != nil {
			t.Fatal(err)
		}
	}
	rc.wait(t, s)
	// A few reads are left (2-6: a scan woken by a record that scheduled
	// other work). Finding each delivery in the schedule read about 400.
	if got := s.ScheduleReads() - before; got > n/2 {
		t.Errorf("the dispatcher read %d schedule entries for %d fresh deliveries, want at most %d", got, n, n/2)
	}
}

// TestFreshJobsWaitForBusySlots: while every slot runs a slow attempt,
// the first attempts that commits hand over wait in memory for a slot, up
// to the dispatcher's bound on claims, instead of being left for a scan of
// the schedule once a slot frees. Their wait is bounded by ReadyMaxAge,
// which is an hour here: at the default 100 ms, the sixteen commits under
// -race on a busy 2-core CI machine outlasted it, and the jobs that had
// waited longest went back to the schedule (11 reads).
func TestFreshJobsWaitForBusySlots(t *testing.T) {
	const slots, n = 4, 16 // every claim the dispatcher may hold: 4 × slots
	gate := make(chan struct{})
	var mu sync.Mutex
	arrived := 0
	first, all := make(chan struct{}), make(chan struct{})
	cfg := dispatch.Config{Concurrency: slots, PollInterval: time.Hour, ReadyMaxAge: time.Hour}
	s, _, _ := running(t, cfg, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrived++
		switch arrived {
		case 1: // the warm-up: the loop runs
			close(first)
			mu.Unlock()
			return
		case n + 1:
			close(all)
		}
		mu.Unlock()
		<-gate
	})
	if err := s.EnqueueN(store.Sandbox, store.DestCustody, "transaction.created", "transaction", "warm-up", 1); err != nil {
		t.Fatal(err)
	}
	<-first
	before := s.ScheduleReads()
	for i := range n {
		if err := s.EnqueueN(store.Sandbox, store.DestCustody, "transaction.created", "transaction", fmt.Sprintf("T%d", i), 1); err != nil {
			t.Fatal(err)
		}
	}
	close(gate)
	select {
	case <-all:
	case <-time.After(20 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("after 20s: %d of %d deliveries arrived", arrived-1, n)
	}
	// Each delivery left to a scan costs a read of its entry, and every
	// scan reads those in flight too: 27-38 reads here when the hand-over
	// stopped at one ready job per slot. What is left (2-3 reads) is one
	// scan, woken by the warm-up's record.
	if got := s.ScheduleReads() - before; got > n/4 {
		t.Errorf("the dispatcher read %d schedule entries for %d fresh deliveries, want at most %d", got, n, n/4)
	}
}

// TestChainNeedsNoScan: a busy entity's backlog goes out through the chain
// (NextFirst), and recording each attempt, which schedules the entity's
// next first attempt, does not send the dispatcher to the schedule for the
// one it already runs; nor do the claims of delivered attempts, which the
// dispatcher releases itself.
func TestChainNeedsNoScan(t *testing.T) {
	const n = 200
	rc := newArrivals(n)
	s, _, _ := running(t, dispatch.Config{Concurrency: 8, PollInterval: time.Hour}, rc.ServeHTTP)
	before := s.ScheduleReads()
	if err := s.EnqueueN(store.Sandbox, store.DestCustody, "balance.updated", "wallet", "W", n); err != nil {
		t.Fatal(err)
	}
	rc.wait(t, s)
	got := s.ScheduleReads() - before
	// When every record woke the loop, the dispatcher read about n/2;
	// when it woke the loop to release the claims of every Concurrency
	// delivered attempts, 15-50 (0-3 now).
	if got > n/25 {
		t.Errorf("the dispatcher read %d schedule entries for a chain of %d, want at most %d", got, n, n/25)
	}
}
