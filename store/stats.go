package store

import "time"

// Stats are the store's gauges for GET /metrics, each read in O(1) (one
// cursor step at most), so a scrape costs the same whatever the data size.
type Stats struct {
	DBBytes   int64     // size of the db file (the transaction's view of it)
	OldestDue time.Time // due time of the earliest schedule entry; zero when the schedule is empty
	Now       time.Time // the clock of the earliest job's environment when read (the store's when none)
	// Outbox is the number of deliveries by environment, destination and
	// status (counters kept with every delivery change; outbox_depth.go).
	Outbox []OutboxDepth
}

// Stats reads the store's gauges.
func (s *Store) Stats() (Stats, error) {
	var st Stats
	err := s.view(func(t *txn) error {
		st.DBBytes, st.Now = t.Size(), t.now
		if k, v := t.Bucket(bucketSchedule).Cursor().First(); len(k) >= 8 {
			st.OldestDue, st.Now = scheduleDue(k), t.nowIn(entryEnv(v))
		}
		st.Outbox = t.outboxDepth()
		return nil
	})
	return st, err
}
