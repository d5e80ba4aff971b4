package store_test

import (
	"fmt"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/complybox/complybox/store"
)

func TestScheduleOrder(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{})
	add := func(due time.Duration, id, entity string) {
		t.Helper()
		if _, err := s.Schedule(testStart.Add(due), store.JobReview, store.Sandbox, id, entity); err != nil {
			t.Fatal(err)
		}
	}
	add(3*time.Second, "c", "")
	add(1*time.Second, "a", "")
	add(2*time.Second, "b1", "")
	add(2*time.Second, "b2", "") // same time: scheduling order
	add(time.Hour, "later", "")

	ids := func(jobs []store.Job) string {
		var out string
		for _, j := range jobs {
			out += j.ID + " "
		}
		return out
	}
	jobs, next, err := s.Due(testStart.Add(5*time.Second), 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(jobs); got != "a b1 b2 c " {
		t.Errorf("due order %q", got)
	}
	if !next.Equal(testStart.Add(time.Hour)) {
		t.Errorf("next %s, want the hour job", next)
	}
	jobs, next, _ = s.Due(testStart.Add(5*time.Second), 2, nil)
	if got := ids(jobs); got != "a b1 " || !next.IsZero() {
		t.Errorf("limit 2: %q, next %s", got, next)
	}
	// Skipped jobs do not count towards the limit.
	jobs, _, _ = s.Due(testStart.Add(5*time.Second), 2, func(c []byte) bool { return string(c) == "review|sandbox|a" || string(c) == "review|sandbox|b1" })
	if got := ids(jobs); got != "b2 c " {
		t.Errorf("with skips: %q", got)
	}
	jobs, next, _ = s.Due(testStart, 10, nil)
	if len(jobs) != 0 || !next.Equal(testStart.Add(time.Second)) {
		t.Errorf("nothing due yet: %q, next %s", ids(jobs), next)
	}
	// Running a job removes it; running it again does nothing.
	jobs, _, _ = s.Due(testStart.Add(time.Second), 1, nil)
	for range 2 {
		if err := s.RunJob(jobs[0]); err != nil {
			t.Fatal(err)
		}
	}
	jobs, _, _ = s.Due(testStart.Add(5*time.Second), 10, nil)
	if got := ids(jobs); got != "b1 b2 c " {
		t.Errorf("after running a: %q", got)
	}
}

// TestScheduleEntityOrder: of the first attempts of one entity only the
// earliest is due; blocked ones neither count towards the limit nor hide
// other work behind them.
func TestScheduleEntityOrder(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{})
	for i := range 100 {
		if _, err := s.Schedule(testStart, store.JobReview, store.Sandbox, "x"+string(rune('0'+i%10))+string(rune('0'+i/10)), "custody|transaction|X"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Schedule(testStart, store.JobReview, store.Sandbox, "y", "custody|transaction|Y"); err != nil {
		t.Fatal(err)
	}
	jobs, _, err := s.Due(testStart, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].ID != "x00" || jobs[1].ID != "y" {
		t.Fatalf("due: %+v", jobs)
	}
	// While x00 is in flight no other X job is due, and Y still is.
	jobs, _, _ = s.Due(testStart, 2, func(c []byte) bool { return string(c) == "review|sandbox|x00" })
	if len(jobs) != 1 || jobs[0].ID != "y" {
		t.Fatalf("with x00 in flight: %+v", jobs)
	}
}

// TestScheduleDropsUnreadable: an entry that cannot be read comes back with
// no kind, and RunJob removes it so it cannot clog the schedule.
func TestScheduleDropsUnreadable(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{})
	err := s.Commit(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("schedule")).Put([]byte("\x00\x00\x00\x00\x00\x00\x00\x01garbage!"), []byte("garbage"))
	})
	if err != nil {
		t.Fatal(err)
	}
	jobs, _, err := s.Due(testStart, 10, nil)
	if err != nil || len(jobs) != 1 || jobs[0].Kind != "" {
		t.Fatalf("due: %+v %v", jobs, err)
	}
	if err := s.RunJob(jobs[0]); err != nil {
		t.Fatal(err)
	}
	if jobs, _, _ := s.Due(testStart, 10, nil); len(jobs) != 0 {
		t.Errorf("still scheduled: %+v", jobs)
	}
	// A delivery job whose delivery is gone is returned unsendable and dropped.
	if _, err := s.Schedule(testStart, store.JobDelivery, store.Sandbox, "no-such-delivery", ""); err != nil {
		t.Fatal(err)
	}
	jobs, _, _ = s.Due(testStart, 10, nil)
	if len(jobs) != 1 || jobs[0].Delivery != nil {
		t.Fatalf("due: %+v", jobs)
	}
	if err := s.RunJob(jobs[0]); err != nil {
		t.Fatal(err)
	}
	if jobs, _, _ := s.Due(testStart, 10, nil); len(jobs) != 0 {
		t.Errorf("still scheduled: %+v", jobs)
	}
}

// BenchmarkDueBehindBacklog: one scan past a long backlog of one entity
// whose first attempt is in flight.
func BenchmarkDueBehindBacklog(b *testing.B) {
	s, _ := mustOpen(b, "", store.Options{})
	err := s.Commit(func(tx *bolt.Tx) error {
		sb := tx.Bucket([]byte("schedule"))
		for i := range 10000 {
			k := make([]byte, 16)
			k[15], k[14], k[13] = byte(i), byte(i>>8), byte(i>>16)
			if err := sb.Put(k, []byte(fmt.Sprintf("review|sandbox|x%d\ncustody|transaction|X", i))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		jobs, _, err := s.Due(testStart, 16, func([]byte) bool { return true })
		if err != nil || len(jobs) != 0 {
			b.Fatal(jobs, err)
		}
	}
}
