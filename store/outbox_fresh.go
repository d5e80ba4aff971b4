package store

// Fresh work. A commit that makes a delivery its entity's first attempt to
// go (a new event of an entity with nothing queued) hands the job, with
// what it takes to send it, straight to the dispatcher (OnFresh): the
// dispatcher neither reads the schedule to find it nor the delivery and its
// event to send it. The schedule holds the job all the same, so one the
// dispatcher declines, or loses to a restart, is found there as before.
// Under complyperf's withdrawals the dispatcher's loop scanned the schedule
// about 2,500 times a second, woken by each commit; with the hand-over and
// with records that schedule a job the dispatcher already runs no longer
// waking it (AttemptResult.NextClaimed), about 900.

// OnFresh makes fn be handed, after every commit that made first attempts
// due, those jobs with their Delivery set. fn reports whether it took them
// all; when it did not, the OnWork functions are called, as they are for
// any other work. A later call replaces fn.
func (s *Store) OnFresh(fn func([]Job) bool) { s.fresh.Store(&fn) }

func (s *Store) offersFresh() bool { return s.fresh.Load() != nil }

// handFresh hands the jobs a group commit made due to the OnFresh
// function, or wakes the dispatcher for what it did not take. The committer
// calls it after the commit and before it answers the group's callers or
// commits again, so no attempt of those jobs can have been recorded (and
// its claim released) by then: the dispatcher cannot take one twice.
func (s *Store) handFresh(jobs []Job) {
	if fn := s.fresh.Load(); fn == nil || !(*fn)(jobs) {
		s.wake()
	}
}

// offer keeps the job of d, a new delivery scheduled now with the event
// bytes payload, for the dispatcher, as Due would return it.
func (t *txn) offer(env Env, d diskDelivery, entity string, payload []byte) error {
	dest, err := t.destination(env, d.Destination)
	if err != nil {
		return err
	}
	t.fresh = append(t.fresh, Job{
		Key: d.ScheduleKey, Kind: JobDelivery, Env: env, ID: d.ID, Due: scheduleDue(d.ScheduleKey), Entity: entity,
		Delivery: &DeliveryTask{
			DeliveryID: d.ID, EventID: d.EventID, EventType: d.EventType, Destination: d.Destination,
			URL: dest.url, Secret: dest.secret, Payload: payload, Attempt: 1, RoundAttempt: 1, Test: d.Test,
		},
	})
	return nil
}
