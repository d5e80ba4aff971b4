package store_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/complybox/complybox/store"
)

// TestDueCostIsDueWork: with 5,000 first attempts queued on one entity (as
// every withdrawal of one wallet shares its balance.updated entity), a claim
// reads a constant number of schedule entries, first attempts go out in
// event order, a failing one does not hold back the next, and after a crash
// the claimed head is due again.
func TestDueCostIsDueWork(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	s, clock := mustOpen(t, path, store.Options{})
	if _, err := s.SetWebhook(context.Background(), store.Sandbox, "http://127.0.0.1:9/hook", nil); err != nil {
		t.Fatal(err)
	}
	const backlog = 5000
	if err := s.EnqueueN(store.Sandbox, store.DestCustody, "balance.updated", "wallet", "W", backlog); err != nil {
		t.Fatal(err)
	}
	if err := s.Enqueue(store.Sandbox, store.DestCustody, "transaction.created", "transaction", "Y", nil); err != nil {
		t.Fatal(err)
	}
	n := func(j store.Job) int {
		t.Helper()
		var env struct{ Data struct{ N int } }
		if j.Delivery == nil || json.Unmarshal(j.Delivery.Payload, &env) != nil {
			t.Fatalf("job %+v cannot be sent", j)
		}
		return env.Data.N
	}
	inflight := map[string]bool{}
	claim := func(limit int) []store.Job {
		t.Helper()
		before := s.ScheduleReads()
		jobs, _, err := s.Due(clock.Now(), limit, func(c []byte) bool { return inflight[string(c)] })
		if err != nil {
			t.Fatal(err)
		}
		// The claimed jobs, those in flight and one more to see the end.
		if read := s.ScheduleReads() - before; read > int64(len(jobs)+len(inflight)+1) {
			t.Fatalf("a claim of %d jobs with %d in flight read %d schedule entries", len(jobs), len(inflight), read)
		}
		for _, j := range jobs {
			inflight[j.Claim()] = true
		}
		return jobs
	}
	record := func(j store.Job, ok bool) {
		t.Helper()
		r := store.AttemptResult{RequestURL: "http://127.0.0.1:9/hook", At: clock.Now(), Success: ok}
		if !ok {
			r.Error, r.RetryAt = "503", clock.Now().Add(time.Hour)
		}
		if _, err := s.RecordAttempt(j, r); err != nil {
			t.Fatal(err)
		}
		delete(inflight, j.Claim())
	}

	jobs := claim(16)
	if len(jobs) != 2 || n(jobs[0]) != 0 || jobs[1].Delivery.EventType != "transaction.created" {
		t.Fatalf("first claim: %+v", jobs)
	}
	record(jobs[1], true)
	head := jobs[0]
	if jobs := claim(16); len(jobs) != 0 {
		t.Fatalf("with W's head in flight: %+v", jobs)
	}

	// The head is claimed but never recorded: a crash. After a restart it
	// is due again, and still alone.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, _ = mustOpen(t, path, store.Options{Now: clock.Now})
	inflight = map[string]bool{}
	if jobs := claim(16); len(jobs) != 1 || jobs[0].ID != head.ID {
		t.Fatalf("after the crash: %+v, want %s again", jobs, head.ID)
	}

	// The head fails: its retry waits an hour and the next goes at once.
	record(head, false)
	for want := 1; want < 200; want++ {
		jobs := claim(16)
		if len(jobs) != 1 || n(jobs[0]) != want {
			t.Fatalf("claim %d: %+v", want, jobs)
		}
		record(jobs[0], true)
	}
	d, err := s.Delivery(store.Sandbox, head.ID)
	if err != nil || d.Status != store.DeliveryFailed || d.AttemptCount != 1 {
		t.Fatalf("failed head: %+v %v", d.DeliverySummary, err)
	}
}

// TestQueueMigration: a file written before entity queues (and before
// layout 3) held every first attempt of both environments in one schedule;
// on its first open only each entity's earliest is left due and the rest
// follow in order.
func TestQueueMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	s, clock := mustOpen(t, path, store.Options{})
	// The old layout: every first attempt scheduled, no queue, no mark.
	err := s.Commit(func(tx *bolt.Tx) error {
		sched := tx.Bucket([]byte("schedule"))
		for i, id := range []string{"a1", "b1", "a2", "a3"} {
			key := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(testStart.UnixNano())), uint64(100+i))
			if err := sched.Put(key, []byte("review|sandbox|"+id+"\ncustody|x|"+id[:1])); err != nil {
				return err
			}
		}
		if err := tx.Bucket([]byte("meta")).Put([]byte("layout"), binary.BigEndian.AppendUint64(nil, 2)); err != nil {
			return err
		}
		return tx.Bucket([]byte("meta")).Delete([]byte("schedule_queue"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, _ = mustOpen(t, path, store.Options{Now: clock.Now})
	var got []string
	for range 5 {
		jobs, _, err := s.Due(clock.Now(), 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, j := range jobs {
			ids = append(ids, j.ID)
			if err := s.RunJob(j); err != nil {
				t.Fatal(err)
			}
		}
		got = append(got, strings.Join(ids, " "))
	}
	if want := "a1 b1|a2|a3||"; strings.Join(got, "|") != want {
		t.Errorf("rounds %q, want %q", strings.Join(got, "|"), want)
	}
}

// TestQueuePagesSplitFull: an entity's queue only appends, so its pages
// split full. A wallet's backlog of first attempts, each enqueued in its
// own commit with a new transaction's first attempt beside it (as
// withdrawals enqueue them), leaves the queues' leaf pages at least 85 %
// full; bbolt's default split left them at about half.
func TestQueuePagesSplitFull(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{NoSync: true})
	if _, err := s.SetWebhook(context.Background(), store.Sandbox, "http://127.0.0.1:9/hook", nil); err != nil {
		t.Fatal(err)
	}
	for i := range 1500 {
		if err := s.EnqueueN(store.Sandbox, store.DestCustody, "balance.updated", "wallet", "W", 1); err != nil {
			t.Fatal(err)
		}
		if err := s.EnqueueN(store.Sandbox, store.DestCustody, "transaction.created", "transaction", fmt.Sprintf("T%06d", i), 1); err != nil {
			t.Fatal(err)
		}
	}
	if fill := s.QueueFill(); !(fill >= 0.85) { // NaN too: no leaf pages at all
		t.Errorf("the entity queues' leaf pages are %.0f %% full, want at least 85 %%", 100*fill)
	}
}
