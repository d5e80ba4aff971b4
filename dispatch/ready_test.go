package dispatch

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// backlogStore is a schedule of due delivery jobs in memory: Due hands out
// those not claimed, in key order, and counts its calls; RecordAttempt
// removes a job.
type backlogStore struct {
	loopbackStore
	mu        sync.Mutex
	scheduled map[string]store.Job // by key
	scans     int
	sent      map[string]int // delivery id -> attempts recorded
	done      chan struct{}  // closed when every job is recorded
}

func (s *backlogStore) Due(now time.Time, limit int, skip func([]byte) bool) ([]store.Job, time.Time, error) {
	s.mu.Lock()
	s.scans++
	keys := make([]string, 0, len(s.scheduled))
	for k := range s.scheduled {
		keys = append(keys, k)
	}
	jobs := s.scheduled
	s.mu.Unlock()
	sort.Strings(keys)
	var out []store.Job
	for _, k := range keys {
		if len(out) == limit {
			break
		}
		j := jobs[k]
		if !skip([]byte(j.Claim())) {
			out = append(out, j)
		}
	}
	return out, time.Time{}, nil
}

func (s *backlogStore) RecordAttempt(j store.Job, r store.AttemptResult) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	scheduled := make(map[string]store.Job, len(s.scheduled))
	for k, v := range s.scheduled {
		if k != string(j.Key) {
			scheduled[k] = v
		}
	}
	s.scheduled = scheduled
	s.sent[j.ID]++
	if len(s.scheduled) == 0 {
		close(s.done)
	}
	return store.DeliveryDelivered, nil
}

// TestBacklogReadOncePerBatch: with more due deliveries than concurrency
// slots, a slot freed by an attempt goes to a job claimed by an earlier
// scan, so the schedule is read about once per Concurrency jobs, not once
// per attempt; every delivery is still sent exactly once, with at most
// Concurrency attempts at a time.
func TestBacklogReadOncePerBatch(t *testing.T) {
	const jobs, concurrency = 400, 4
	var (
		mu            sync.Mutex
		running, peak int
	)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		running++
		peak = max(peak, running)
		mu.Unlock()
		time.Sleep(100 * time.Microsecond)
		mu.Lock()
		running--
		mu.Unlock()
	}))
	defer rc.Close()
	st := &backlogStore{scheduled: map[string]store.Job{}, sent: map[string]int{}, done: make(chan struct{})}
	for i := range jobs {
		id := fmt.Sprintf("d%04d", i)
		st.scheduled[fmt.Sprintf("k%04d", i)] = store.Job{Key: []byte(fmt.Sprintf("k%04d", i)), Kind: store.JobDelivery, Env: store.Sandbox, ID: id,
			Delivery: &store.DeliveryTask{DeliveryID: id, URL: rc.URL, Payload: []byte("{}"), Attempt: 1, RoundAttempt: 1}}
	}
	// The poll interval is far away: only the loop's own wake-ups drive it.
	// So is ReadyMaxAge: a ready job that outwaits it on a busy machine
	// goes back to the schedule, which costs a scan (TestStaleReadyJobGoesBack).
	cfg := Config{PollInterval: time.Hour, Concurrency: concurrency, ReadyMaxAge: time.Hour}
	d := New(st, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { d.Run(ctx); close(stopped) }()
	select {
	case <-st.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%d of %d deliveries still scheduled", len(st.scheduled), jobs)
	}
	cancel()
	<-stopped
	st.mu.Lock()
	defer st.mu.Unlock()
	for id, n := range st.sent {
		if n != 1 {
			t.Errorf("delivery %s recorded %d times, want once", id, n)
		}
	}
	if len(st.sent) != jobs {
		t.Errorf("%d deliveries recorded, want %d", len(st.sent), jobs)
	}
	if peak > concurrency {
		t.Errorf("%d attempts at a time, want at most %d", peak, concurrency)
	}
	// Each scan claims up to the free slots plus Concurrency more.
	if max := jobs/concurrency + 20; st.scans > max {
		t.Errorf("the schedule was read %d times for %d jobs, want at most %d", st.scans, jobs, max)
	}
	t.Logf("%d scans for %d jobs", st.scans, jobs)
}

// TestStaleReadyJobGoesBack: a job that waited for a slot longer than
// Config.ReadyMaxAge is not sent with what it was read with (the webhook's
// URL and secret may have changed since): its claim is released and the
// loop reads the schedule again.
func TestStaleReadyJobGoesBack(t *testing.T) {
	st := &backlogStore{scheduled: map[string]store.Job{}, sent: map[string]int{}, done: make(chan struct{})}
	d := New(st, Config{PollInterval: time.Hour}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	j := store.Job{Key: []byte("k1"), Kind: store.JobDelivery, Env: store.Sandbox, ID: "d1",
		Delivery: &store.DeliveryTask{DeliveryID: "d1", URL: "http://127.0.0.1:1/old", Payload: []byte("{}"), Attempt: 1, RoundAttempt: 1}}
	d.mu.Lock()
	defer d.mu.Unlock()
	stale := &lease{until: time.Now().Add(time.Minute)}
	d.inflight[j.Claim()] = stale
	d.ready = append(d.ready, claimedJob{j, stale, time.Now().Add(-2 * d.cfg.ReadyMaxAge)})
	if n := d.startReady(1); n != 0 {
		t.Fatalf("started %d jobs, want none: the only ready job is stale", n)
	}
	if _, held := d.inflight[j.Claim()]; held {
		t.Error("the stale job's claim is still held: no scan could claim it again")
	}
	if !d.backlog {
		t.Error("the loop does not know to read the schedule again")
	}
	if len(d.ready) != 0 {
		t.Errorf("%d jobs still ready", len(d.ready))
	}
}

// gatedStore is a backlogStore whose records wait for gate, so that the
// claims of ended attempts stay pending; wake is what the store calls
// when a commit enqueues work (OnWork).
type gatedStore struct {
	backlogStore
	gate     chan struct{}
	recorded chan string
	wake     func()
}

func (s *gatedStore) OnWork(fn func()) { s.wake = fn }

func (s *gatedStore) RecordAttempt(j store.Job, r store.AttemptResult) (string, error) {
	s.recorded <- j.ID
	<-s.gate
	return s.backlogStore.RecordAttempt(j, r)
}

func (s *gatedStore) schedule(id, url string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scheduled["k"+id] = store.Job{Key: []byte("k" + id), Kind: store.JobDelivery, Env: store.Sandbox, ID: id,
		Delivery: &store.DeliveryTask{DeliveryID: id, URL: url, Payload: []byte("{}"), Attempt: 1, RoundAttempt: 1}}
}

// TestRecordsLetTheLoopLookAgain: when the loop finds no room because the
// claims of ended attempts wait for their records (the bound on claims,
// 4 × Concurrency), the records' ends wake it to look again; nothing else
// would (no slot frees, the poll interval is an hour away). The loop's
// passes are driven by hand here, so what wakes it is seen.
func TestRecordsLetTheLoopLookAgain(t *testing.T) {
	const concurrency = 1
	rc := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer rc.Close()
	st := &gatedStore{backlogStore: backlogStore{scheduled: map[string]store.Job{}, sent: map[string]int{}, done: make(chan struct{})},
		gate: make(chan struct{}), recorded: make(chan string, 8)}
	for i := range 4 * concurrency {
		st.schedule(fmt.Sprintf("d%d", i), rc.URL)
	}
	d := New(st, Config{PollInterval: time.Hour, Concurrency: concurrency}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	record := sync.OnceFunc(func() { close(st.gate) })
	defer func() {
		record()
		d.wg.Wait()
	}()
	for pending := 0; pending < 4*concurrency; { // every claim the bound allows waits for its record
		d.claim()
		select {
		case <-st.recorded:
			pending++
		case <-time.After(10 * time.Second):
			t.Fatalf("%d attempts ended, want %d", pending, 4*concurrency)
		}
	}
	st.schedule("late", rc.URL)
	scans := st.scans
	d.claim() // as the late job's commit would wake it: no room
	d.mu.Lock()
	backlog := d.backlog
	d.mu.Unlock()
	if st.scans != scans || !backlog {
		t.Fatalf("the loop read the schedule (%d scans, backlog %v) with every claim pending", st.scans-scans, backlog)
	}
	select {
	case <-d.wake:
	default:
	}
	record()
	d.wg.Wait() // every record done, its claim's end handled
	select {
	case <-d.wake:
	default:
		t.Fatal("the records made room under the bound on claims, but nothing woke the loop to look again")
	}
}
