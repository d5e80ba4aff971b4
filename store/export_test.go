package store

import (
	"time"

	bolt "go.etcd.io/bbolt"
)

// Enqueue records an event as its own operation, as business methods do
// inside theirs.
func (s *Store) Enqueue(env Env, dest, eventType, entityType, entityID string, data any) error {
	return s.update(func(t *txn) error { return t.enqueue(env, dest, eventType, entityType, entityID, data) })
}

// Commit runs fn through the group commit.
func (s *Store) Commit(fn func(*bolt.Tx) error) error { return s.commit.run(fn) }

// Schedule adds a job to the schedule and returns its key.
func (s *Store) Schedule(due time.Time, kind string, env Env, id, entity string) ([]byte, error) {
	var key []byte
	err := s.update(func(t *txn) error {
		var err error
		key, err = t.scheduleEntity(due, kind, env, id, entity)
		return err
	})
	return key, err
}

// EnqueueN records n events of one entity in one operation; data is the
// event's index.
func (s *Store) EnqueueN(env Env, dest, eventType, entityType, entityID string, n int) error {
	return s.update(func(t *txn) error {
		for i := range n {
			if err := t.enqueue(env, dest, eventType, entityType, entityID, map[string]int{"n": i}); err != nil {
				return err
			}
		}
		return nil
	})
}

// ScheduleReads is how many schedule entries Due has read so far.
func (s *Store) ScheduleReads() int64 { return s.stats.scheduleReads.Load() }

// OpenReads is how many records Open (ResumeSimulator) has read beyond the
// fixed configuration.
func (s *Store) OpenReads() int64 { return s.stats.openReads.Load() }
