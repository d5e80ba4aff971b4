package store

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Job kinds: the durable schedule holds webhook deliveries and the sandbox
// simulators' work, all keyed by due time.
const (
	JobDelivery  = "delivery" // ID is a delivery id
	JobChainStep = "chain"    // ID is a transaction id
	JobReview    = "review"   // ID is an applicant's externalUserId
	JobExpiry    = "expiry"   // ID is a session token
)

// Job is one due item of the schedule.
type Job struct {
	Key      []byte // schedule key: due time | sequence
	Kind     string
	Env      Env
	ID       string
	Due      time.Time
	Delivery *DeliveryTask // set for JobDelivery
}

// scheduleKey is the due time in Unix nanoseconds then a sequence, both
// big-endian, so a cursor walks the schedule in due order and, for equal
// times, in the order the work was scheduled.
func scheduleKey(due time.Time, seq uint64) []byte {
	return append(itob(uint64(due.UnixNano())), itob(seq)...)
}

func scheduleDue(key []byte) time.Time { return time.Unix(0, int64(btoi(key[:8]))).UTC() }

// schedule adds a job due at due and returns its key.
func (t *txn) schedule(due time.Time, kind string, env Env, id string) ([]byte, error) {
	b := t.Bucket(bucketSchedule)
	seq, err := b.NextSequence()
	if err != nil {
		return nil, err
	}
	key := scheduleKey(due, seq)
	if err := b.Put(key, []byte(kind+"|"+string(env)+"|"+id)); err != nil {
		return nil, err
	}
	t.woken = true
	return key, nil
}

// unschedule removes the job at key, if any.
func (t *txn) unschedule(key []byte) error {
	if len(key) == 0 {
		return nil
	}
	return t.Bucket(bucketSchedule).Delete(key)
}

func parseJob(k, v []byte) (Job, error) {
	parts := strings.SplitN(string(v), "|", 3)
	if len(parts) != 3 || len(k) != 16 {
		return Job{}, fmt.Errorf("bad schedule entry %x", k)
	}
	return Job{Key: bytes.Clone(k), Kind: parts[0], Env: Env(parts[1]), ID: parts[2], Due: scheduleDue(k)}, nil
}

// Due returns up to limit jobs due at or before now, in due order, skipping
// those for which skip returns true (work already in flight). Delivery jobs
// come with what it takes to send them.
func (s *Store) Due(now time.Time, limit int, skip func(key []byte) bool) ([]Job, error) {
	var out []Job
	end := itob(uint64(now.UnixNano()))
	err := s.view(func(t *txn) error {
		c := t.Bucket(bucketSchedule).Cursor()
		for k, v := c.First(); k != nil && len(out) < limit; k, v = c.Next() {
			if bytes.Compare(k[:8], end) > 0 {
				break
			}
			if skip != nil && skip(k) {
				continue
			}
			j, err := parseJob(k, v)
			if err != nil {
				s.log.Warn("schedule: dropping unreadable entry", "key", fmt.Sprintf("%x", k))
				continue
			}
			if j.Kind == JobDelivery {
				task, err := t.deliveryTask(j)
				if err != nil {
					s.log.Warn("schedule: delivery not sendable", "delivery", j.ID, "err", err)
					continue
				}
				j.Delivery = task
			}
			out = append(out, j)
		}
		return nil
	})
	return out, err
}

// NextDue returns the due time of the earliest job, or zero when none.
func (s *Store) NextDue() (time.Time, error) {
	var due time.Time
	err := s.db.View(func(tx *bolt.Tx) error {
		if k, _ := tx.Bucket(bucketSchedule).Cursor().First(); k != nil {
			due = scheduleDue(k)
		}
		return nil
	})
	return due, err
}

// RunJob does one due simulator job (chain step, sandbox review, session
// expiry) in one transaction. A job whose key is gone was done already. A job
// that fails is dropped and logged, so it cannot block the schedule.
func (s *Store) RunJob(j Job) error {
	err := s.update(func(t *txn) error {
		b := t.Bucket(bucketSchedule)
		if b.Get(j.Key) == nil {
			return nil
		}
		if err := b.Delete(j.Key); err != nil {
			return err
		}
		switch j.Kind {
		case JobChainStep:
			return t.chainStep(j)
		case JobReview:
			return t.runReview(j)
		case JobExpiry:
			return t.expireSession(j)
		}
		return nil
	})
	if err != nil {
		s.log.Warn("schedule: job failed; dropped", "kind", j.Kind, "id", j.ID, "err", err)
		return s.update(func(t *txn) error { return t.unschedule(j.Key) })
	}
	return nil
}
