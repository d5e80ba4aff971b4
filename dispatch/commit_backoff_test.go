package dispatch

import (
	"errors"
	"io"
	"log/slog"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
	"github.com/complybox/complybox/store/urlpolicy"
)

// failingStore has one simulator job that stays scheduled; RunJob fails
// while fail is set, as on a full disk.
type failingStore struct {
	job  store.Job
	mu   sync.Mutex
	fail bool
	runs int
	done bool
}

func (s *failingStore) Due(now time.Time, limit int, skip func([]byte) bool) ([]store.Job, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || skip([]byte(s.job.Claim())) {
		return nil, time.Time{}, nil
	}
	return []store.Job{s.job}, time.Time{}, nil
}

func (s *failingStore) RunJob(store.Job) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs++
	if s.fail {
		return &errnoErr{syscall.ENOSPC}
	}
	s.done = true
	return nil
}

type errnoErr struct{ errno syscall.Errno }

func (e *errnoErr) Error() string { return "commit: " + e.errno.Error() }
func (e *errnoErr) Unwrap() error { return e.errno }

func (s *failingStore) RecordAttempt(store.Job, store.AttemptResult) (string, error) {
	return "", errors.New("unused")
}
func (s *failingStore) OnWork(func())               {}
func (s *failingStore) URLPolicy() urlpolicy.Policy { return urlpolicy.Policy{} }

func (s *failingStore) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs
}

// TestFailedJobBacksOff: a job whose run cannot commit is held for a
// back-off that grows (1s, 2s, … capped at a minute) instead of being run
// again at every scan, and runs again once its back-off ran out; when it
// finally succeeds its claim is released. No timing: the test moves the
// lease by hand.
func TestFailedJobBacksOff(t *testing.T) {
	st := &failingStore{fail: true, job: store.Job{Key: []byte("k"), Kind: store.JobChainStep, Env: store.Sandbox, ID: "tx1"}}
	d := New(st, Config{PollInterval: time.Hour}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	claim := st.job.Claim()
	scan := func() time.Duration {
		w := d.claim()
		d.wg.Wait()
		return w
	}
	scan()
	for range 5 {
		if w := scan(); w > time.Second || w <= 0 {
			t.Errorf("wait %s with a job held for 1s", w)
		}
	}
	if n := st.count(); n != 1 {
		t.Fatalf("the failing job ran %d times during its back-off, want once", n)
	}
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second} {
		d.mu.Lock()
		l := d.inflight[claim]
		if l == nil || !l.held || l.failures != i+1 {
			d.mu.Unlock()
			t.Fatalf("after %d failures: lease %+v", i+1, l)
		}
		if left := time.Until(l.until); left > want || left < want-time.Second/2 {
			t.Errorf("after %d failures: held for %s, want %s", i+1, left, want)
		}
		l.until = time.Now().Add(-time.Millisecond) // the back-off ran out
		d.mu.Unlock()
		scan()
		if n := st.count(); n != i+2 {
			t.Fatalf("after the back-off: %d runs, want %d", n, i+2)
		}
	}
	if commitBackoff(30) != time.Minute || commitBackoff(1000) != time.Minute {
		t.Errorf("back-off not capped at a minute: %s %s", commitBackoff(30), commitBackoff(1000))
	}
	st.mu.Lock()
	st.fail = false
	st.mu.Unlock()
	d.mu.Lock()
	d.inflight[claim].until = time.Now().Add(-time.Millisecond)
	d.mu.Unlock()
	scan()
	scan() // releases the finished claim
	d.mu.Lock()
	defer d.mu.Unlock()
	if n := st.count(); n != 6 || len(d.inflight) != 0 {
		t.Errorf("%d runs, %d claims left; want 6 and none", n, len(d.inflight))
	}
}
