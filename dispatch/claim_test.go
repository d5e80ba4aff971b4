package dispatch

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
	"github.com/complybox/complybox/store/urlpolicy"
)

// staleStore has one delivery job. Each Due after the first takes its
// snapshot (is the job still scheduled?) and then, like a long scan, waits
// until every attempt in flight has been recorded before it asks skip.
type staleStore struct {
	loopbackStore
	d         *Dispatcher
	job       store.Job
	mu        sync.Mutex
	scheduled bool
	calls     int
	sends     atomic.Int32
	snapshot  chan struct{} // closed once the second scan has its snapshot
	third     chan struct{} // closed when the third scan starts
}

func (s *staleStore) Due(now time.Time, limit int, skip func([]byte) bool) ([]store.Job, time.Time, error) {
	s.mu.Lock()
	s.calls++
	call, snapshot := s.calls, s.scheduled
	s.mu.Unlock()
	switch call {
	case 2:
		close(s.snapshot)
	case 3:
		close(s.third)
	}
	if !snapshot {
		return nil, time.Time{}, nil
	}
	if call == 2 {
		s.d.wg.Wait() // the attempt is recorded while this scan still sees the job
	}
	if skip([]byte(s.job.Claim())) {
		return nil, time.Time{}, nil
	}
	return []store.Job{s.job}, time.Time{}, nil
}

func (s *staleStore) RecordAttempt(j store.Job, r store.AttemptResult) (string, error) {
	s.mu.Lock()
	s.scheduled = false
	s.mu.Unlock()
	return store.DeliveryDelivered, nil
}

// loopbackStore is the rest of a test store whose only jobs are deliveries
// to a loopback receiver.
type loopbackStore struct{}

func (loopbackStore) RunJob(store.Job) error { return nil }
func (loopbackStore) OnWork(func())          {}

// URLPolicy allows every address, the loopback receiver included.
func (loopbackStore) URLPolicy() urlpolicy.Policy {
	return urlpolicy.Policy{AllowHTTP: "always", AllowPrivateNetworks: true}
}

// TestClaimOutlivesStaleScan: a scan whose snapshot predates a job's
// recorded attempt must not claim the job again.
func TestClaimOutlivesStaleScan(t *testing.T) {
	st := &staleStore{scheduled: true, snapshot: make(chan struct{}), third: make(chan struct{})}
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st.sends.Add(1)
		<-st.snapshot // the attempt ends after the second scan took its snapshot
	}))
	defer rc.Close()
	st.job = store.Job{Key: []byte("k"), Kind: store.JobDelivery, Env: store.Sandbox, ID: "d1",
		Delivery: &store.DeliveryTask{DeliveryID: "d1", URL: rc.URL, Payload: []byte("{}"), Attempt: 1, RoundAttempt: 1}}
	st.d = New(st, Config{PollInterval: 10 * time.Millisecond}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { st.d.Run(ctx); close(done) }()
	select {
	case <-st.third:
	case <-time.After(5 * time.Second):
		t.Fatal("the loop stopped scanning")
	}
	cancel()
	<-done
	if n := st.sends.Load(); n != 1 {
		t.Errorf("the job was sent %d times, want once", n)
	}
}
