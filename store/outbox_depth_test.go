package store_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/complybox/complybox/store"
)

// depth returns the store's outbox counters as "env/destination/status" →
// count, leaving out zeros.
func depth(t *testing.T, s *store.Store) map[string]int64 {
	t.Helper()
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, d := range st.Outbox {
		if d.Count != 0 {
			out[string(d.Env)+"/"+d.Destination+"/"+d.Status] = d.Count
		}
	}
	return out
}

func sameDepth(t *testing.T, what string, got, want map[string]int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: outbox depth %v, want %v", what, got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Fatalf("%s: outbox depth %v, want %v", what, got, want)
		}
	}
}

// TestOutboxDepth: the counters follow every delivery through its
// statuses, a manual retry and retention, and a file written without them
// gets them counted at Open.
func TestOutboxDepth(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "depth.db")
	s, clock := mustOpen(t, path, store.Options{})
	for _, env := range store.Envs() {
		if _, err := s.SetWebhook(context.Background(), env, "http://127.0.0.1:9/hook", nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		if err := s.Enqueue(store.Sandbox, store.DestCustody, "transaction.created", "transaction", string(rune('a'+i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Enqueue(store.Production, store.DestCustody, "transaction.created", "transaction", "p", nil); err != nil {
		t.Fatal(err)
	}
	sameDepth(t, "enqueued", depth(t, s), map[string]int64{"sandbox/custody/pending": 3, "production/custody/pending": 1})

	jobs, _, err := s.Due(clock.Now(), 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sandbox []store.Job
	for _, j := range jobs {
		if j.Env == store.Sandbox && j.Kind == store.JobDelivery {
			sandbox = append(sandbox, j)
		}
	}
	if len(sandbox) != 3 {
		t.Fatalf("due %+v", jobs)
	}
	now := clock.Now()
	for i, r := range []store.AttemptResult{
		{Success: true, StatusCode: 200, At: now},
		{StatusCode: 500, Error: "500", At: now, RetryAt: now.Add(10 * time.Second)},
		{StatusCode: 500, Error: "500", At: now}, // no retry: dead
	} {
		if _, err := s.RecordAttempt(sandbox[i], r); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int64{"sandbox/custody/delivered": 1, "sandbox/custody/failed": 1, "sandbox/custody/dead": 1,
		"production/custody/pending": 1}
	sameDepth(t, "attempted", depth(t, s), want)

	if _, err := s.RetryDelivery(store.Sandbox, sandbox[2].ID); err != nil {
		t.Fatal(err)
	}
	want = map[string]int64{"sandbox/custody/delivered": 1, "sandbox/custody/failed": 1, "sandbox/custody/pending": 1,
		"production/custody/pending": 1}
	sameDepth(t, "retried", depth(t, s), want)

	// Retention removes the delivered one after its 720 h.
	clock.Advance(store.DefaultDeliveryRetention + time.Hour)
	runJobs(t, s, clock)
	delete(want, "sandbox/custody/delivered")
	sameDepth(t, "after retention", depth(t, s), want)
	if n := s.Count(store.Sandbox, "deliveries"); n != 2 {
		t.Fatalf("%d sandbox deliveries left", n)
	}

	// A file from before the counters: they are counted at the next Open.
	err = s.Commit(func(tx *bolt.Tx) error {
		meta := tx.Bucket([]byte("meta"))
		var keys [][]byte
		meta.ForEach(func(k, _ []byte) error {
			if bytes.HasPrefix(k, []byte("outbox-depth")) {
				keys = append(keys, bytes.Clone(k))
			}
			return nil
		})
		for _, k := range keys {
			if err := meta.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sameDepth(t, "counters removed", depth(t, s), map[string]int64{})
	s.Close()
	s, _ = mustOpen(t, path, store.Options{Now: clock.Now})
	sameDepth(t, "reopened", depth(t, s), want)
}

// TestOutboxDepthGroupCommit: operations sharing group commits count their
// deliveries exactly, and one that fails after enqueueing counts nothing,
// though its group commits the others.
func TestOutboxDepthGroupCommit(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t, "", store.Options{})
	if _, err := s.SetWebhook(context.Background(), store.Sandbox, "http://127.0.0.1:9/hook", nil); err != nil {
		t.Fatal(err)
	}
	const writers, each = 16, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := fmt.Sprintf("w%d-%d", w, i)
				if w%4 == 0 {
					if err := s.EnqueueThenFail(store.Sandbox, store.DestCustody, "transaction.created", "transaction", id); err == nil {
						t.Error("EnqueueThenFail succeeded")
					}
					continue
				}
				if err := s.Enqueue(store.Sandbox, store.DestCustody, "transaction.created", "transaction", id, nil); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	sameDepth(t, "after concurrent writers", depth(t, s), map[string]int64{"sandbox/custody/pending": (writers - writers/4) * each})
	n, cursor := 0, ""
	for {
		page, next, err := s.Deliveries(store.Sandbox, store.DeliveryFilter{}, store.Page{Limit: 200, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		n += len(page)
		if next == nil {
			break
		}
		cursor = *next
	}
	if want := (writers - writers/4) * each; n != want {
		t.Fatalf("%d deliveries listed, want %d", n, want)
	}
}
