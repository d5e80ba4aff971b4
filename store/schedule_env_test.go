package store_test

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/complybox/complybox/store"
)

// month is how far the sandbox clock runs ahead in these tests.
const month = 30 * 24 * time.Hour

// ids lists the jobs' ids.
func jobIDs(jobs []store.Job) string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.ID)
	}
	return strings.Join(out, " ")
}

// TestDueReadsOnlyItsEnvironment: production holds 20,000 jobs due over the
// next two days, the sandbox's clock is a month ahead and three sandbox
// jobs are due. A Due call reads the three and one entry past the end of
// each environment's walk, not the production jobs between production's now
// and the sandbox's; the next due time is the sandbox's next job, on the
// store's clock.
func TestDueReadsOnlyItsEnvironment(t *testing.T) {
	s, clock := mustOpen(t, "", store.Options{})
	const prod = 20000
	if err := s.ScheduleMany(store.Production, store.JobReview, "p", prod, func(i int) time.Time {
		return testStart.Add(2*time.Hour + time.Duration(i)*8*time.Second)
	}); err != nil {
		t.Fatal(err)
	}
	before := s.ScheduleReads()
	mv, err := s.AdvanceClock(store.Sandbox, store.ClockTarget{By: month}, func(j store.Job) error {
		t.Fatalf("the move ran %+v", j)
		return nil
	})
	if err != nil || mv.Steps != 0 {
		t.Fatalf("move: %+v %v", mv, err)
	}
	if read := s.ScheduleReads() - before; read > 1 {
		t.Errorf("a move past no sandbox work read %d schedule entries", read)
	}
	sandboxNow := testStart.Add(month)
	if err := s.ScheduleMany(store.Sandbox, store.JobReview, "due", 3, func(i int) time.Time {
		return sandboxNow.Add(-time.Duration(i+1) * time.Hour)
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.ScheduleMany(store.Sandbox, store.JobReview, "later", 2, func(i int) time.Time {
		return sandboxNow.Add(time.Duration(i+1) * time.Hour)
	}); err != nil {
		t.Fatal(err)
	}

	before = s.ScheduleReads()
	jobs, next, err := s.Due(clock.Now(), 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	read := s.ScheduleReads() - before
	if got := jobIDs(jobs); got != "due2 due1 due0" {
		t.Errorf("due %q, want the three sandbox jobs in due order", got)
	}
	if read > 3+2 {
		t.Errorf("Due read %d schedule entries for 3 due jobs (production holds %d not due)", read, prod)
	}
	if want := testStart.Add(time.Hour); !next.Equal(want) {
		t.Errorf("next %s, want %s: the sandbox's next job, on the store's clock", next, want)
	}

	// Production's own work is found as its time comes, in due order with
	// the sandbox's by the store's clock.
	clock.Advance(2*time.Hour + 8*time.Second)
	jobs, _, err = s.Due(clock.Now(), 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := jobIDs(jobs); got != "due2 due1 due0 later0 p0 later1 p1" { // p0 and later1 are both due at +2h
		t.Errorf("two hours on: %q", got)
	}
}

// TestAdvanceClockReadsOnlySandboxWork: a month's move of the sandbox
// clock with 20,000 production jobs due within that month runs the
// sandbox's three jobs, reading a few entries per step, none of
// production's.
func TestAdvanceClockReadsOnlySandboxWork(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{})
	if err := s.ScheduleMany(store.Production, store.JobReview, "p", 20000, func(i int) time.Time {
		return testStart.Add(time.Duration(i+1) * time.Minute)
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.ScheduleMany(store.Sandbox, store.JobReview, "s", 3, func(i int) time.Time {
		return testStart.Add(time.Duration(i+1) * 24 * time.Hour)
	}); err != nil {
		t.Fatal(err)
	}
	var ran []string
	before := s.ScheduleReads()
	mv, err := s.AdvanceClock(store.Sandbox, store.ClockTarget{By: month}, func(j store.Job) error {
		ran = append(ran, j.ID)
		return s.RunJob(j) // no such applicant: the job is dropped
	})
	if err != nil || mv.Steps != 3 || strings.Join(ran, " ") != "s0 s1 s2" {
		t.Fatalf("move: %+v %v, ran %v", mv, err, ran)
	}
	// Each step reads the job it runs; the move ends with one look after
	// the last job and one from the start.
	if read := s.ScheduleReads() - before; read > 3+2 {
		t.Errorf("the move read %d schedule entries for 3 sandbox jobs", read)
	}
	jobs, _, err := s.Due(testStart, 10, nil)
	if err != nil || len(jobs) != 0 {
		t.Fatalf("production's jobs are not due yet at its own time: %q %v", jobIDs(jobs), err)
	}
}

// TestScheduleSplitOnUpgrade: a file of layout 2 held both environments'
// jobs in one schedule. Its first open moves the sandbox's to their own,
// under the same keys — a job found by its key (here RunJob's) is still
// found — and after it Due reads only due work again.
func TestScheduleSplitOnUpgrade(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	s, clock := mustOpen(t, path, store.Options{})
	if _, err := s.AdvanceClock(store.Sandbox, store.ClockTarget{By: month}, s.RunJob); err != nil {
		t.Fatal(err)
	}
	const prod = 25000 // more than one upgrade transaction's worth
	if err := s.ScheduleMany(store.Production, store.JobReview, "p", prod, func(i int) time.Time {
		return testStart.Add(time.Hour + time.Duration(i)*time.Second)
	}); err != nil {
		t.Fatal(err)
	}
	// Sandbox jobs: three long overdue, their keys among production's in
	// each upgrade transaction; then one due and two not yet.
	if err := s.ScheduleMany(store.Sandbox, store.JobReview, "o", 3, func(i int) time.Time {
		return testStart.Add(time.Hour + time.Duration(5000+i*10000)*time.Second)
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.ScheduleMany(store.Sandbox, store.JobReview, "s", 3, func(i int) time.Time {
		return testStart.Add(month - time.Hour + time.Duration(i)*2*time.Hour)
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Back to layout 2: every job in "schedule".
	rewriteFile(t, path, func(tx *bolt.Tx) error {
		src, dst := tx.Bucket([]byte("schedule_sandbox")), tx.Bucket([]byte("schedule"))
		if err := src.ForEach(func(k, v []byte) error { return dst.Put(k, v) }); err != nil {
			return err
		}
		if err := tx.DeleteBucket([]byte("schedule_sandbox")); err != nil {
			return err
		}
		return tx.Bucket([]byte("meta")).Put([]byte("layout"), binary.BigEndian.AppendUint64(nil, 2))
	})

	s, _ = mustOpen(t, path, store.Options{Now: clock.Now})
	before := s.ScheduleReads()
	jobs, _, err := s.Due(clock.Now(), 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	if read := s.ScheduleReads() - before; jobIDs(jobs) != "o0 o1 o2 s0" || read > 4+2 {
		t.Fatalf("after the upgrade: due %q, %d entries read", jobIDs(jobs), read)
	}
	for _, j := range jobs {
		if err := s.RunJob(j); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(time.Hour + 10*time.Second)
	jobs, _, err = s.Due(clock.Now(), 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := jobIDs(jobs), "p0 s1 p1 p2 p3 p4 p5 p6 p7 p8 p9 p10"; got != want { // p0 and s1 both at +1h
		t.Errorf("an hour on: %q, want %q", got, want)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		for name, want := range map[string]string{"schedule": "production", "schedule_sandbox": "sandbox"} {
			n := 0
			err := tx.Bucket([]byte(name)).ForEach(func(k, v []byte) error {
				if _, env, _ := strings.Cut(string(v), "|"); !strings.HasPrefix(env, want+"|") {
					return fmt.Errorf("%s holds %q", name, v)
				}
				n++
				return nil
			})
			if err != nil {
				return err
			}
			if name == "schedule_sandbox" && n != 2 || name == "schedule" && n != prod {
				return fmt.Errorf("%s holds %d jobs", name, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}
