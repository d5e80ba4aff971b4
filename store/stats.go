package store

import "time"

// Stats are the store's gauges for GET /metrics, each read in O(1) (one
// cursor step per environment at most), so a scrape costs the same
// whatever the data size.
type Stats struct {
	DBBytes   int64     // size of the db file (the transaction's view of it)
	OldestDue time.Time // due time of the earliest job of the environment whose earliest is furthest behind its clock; zero when both schedules are empty
	Now       time.Time // that environment's clock when read (the store's when none)
	// Outbox is the number of deliveries by environment, destination and
	// status (counters kept with every delivery change; outbox_depth.go).
	Outbox []OutboxDepth
}

// Stats reads the store's gauges.
func (s *Store) Stats() (Stats, error) {
	var st Stats
	err := s.view(func(t *txn) error {
		st.DBBytes, st.Now = t.Size(), t.now
		// The earliest job of each environment's schedule; the one further
		// behind its own clock is the oldest.
		for _, env := range Envs() {
			k, _ := t.schedOf(env).Cursor().First()
			if len(k) < 8 {
				continue
			}
			due, now := scheduleDue(k), t.nowIn(env)
			if st.OldestDue.IsZero() || now.Sub(due) > st.Now.Sub(st.OldestDue) {
				st.OldestDue, st.Now = due, now
			}
		}
		st.Outbox = t.outboxDepth()
		return nil
	})
	return st, err
}
