package store

import "time"

// Stats are the store's gauges for GET /metrics, each read in O(1) (one
// cursor step at most), so a scrape costs the same whatever the data size.
type Stats struct {
	DBBytes   int64     // size of the db file (the transaction's view of it)
	OldestDue time.Time // due time of the earliest schedule entry; zero when the schedule is empty
	Now       time.Time // the store's clock when read
}

// Stats reads the store's gauges.
func (s *Store) Stats() (Stats, error) {
	var st Stats
	err := s.view(func(t *txn) error {
		st.DBBytes, st.Now = t.Size(), t.now
		if k, _ := t.Bucket(bucketSchedule).Cursor().First(); len(k) >= 8 {
			st.OldestDue = scheduleDue(k)
		}
		return nil
	})
	return st, err
}
