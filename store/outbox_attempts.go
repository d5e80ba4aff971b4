package store

import (
	"cmp"
	"time"
)

// The dispatcher's side of the outbox: what one attempt of a claimed
// delivery needs (DeliveryTask, read when Due claims the job) and the record
// of its outcome (RecordAttempt).

// DeliveryTask is what the dispatcher needs to make one attempt.
type DeliveryTask struct {
	DeliveryID   string
	EventID      string
	EventType    string
	Destination  string
	URL          string // "" when the destination is no longer configured
	Secret       string
	Payload      []byte
	Attempt      int  // number of this attempt, counting every attempt so far
	RoundAttempt int  // number of this attempt within the current round
	Test         bool // a test event: sent with X-Webhook-Test: true
}

// destination is where a destination's deliveries go now.
type destination struct{ url, secret string }

// deliveryTask reads what it takes to send the delivery of j. dests caches
// the destinations read so far in this transaction.
func (t *txn) deliveryTask(j Job, dests map[string]destination) (*DeliveryTask, error) {
	d, err := t.getDelivery(j.Env, j.ID)
	if err != nil {
		return nil, err
	}
	payload, err := t.eventPayload(j.Env, d)
	if err != nil {
		return nil, err
	}
	task := &DeliveryTask{
		DeliveryID: d.ID, EventID: d.EventID, EventType: d.EventType,
		Destination: d.Destination, Payload: payload,
		Attempt: d.AttemptCount + 1, RoundAttempt: d.AttemptCount - d.RoundStart + 1, Test: d.Test,
	}
	key := string(j.Env) + "|" + d.Destination
	dest, ok := dests[key]
	if !ok {
		if dest, err = t.destination(j.Env, d.Destination); err != nil {
			return nil, err
		}
		dests[key] = dest
	}
	task.URL, task.Secret = dest.url, dest.secret
	return task, nil
}

// destination reads where env's deliveries to dest go now.
func (t *txn) destination(env Env, dest string) (destination, error) {
	switch dest {
	case DestCustody:
		cfg, err := t.webhookConfig(env)
		return destination{cfg.URL, cfg.Secret}, err
	case DestKYC:
		cb, err := t.callback()
		return destination{cb.URL, cb.Secret}, err
	}
	return destination{}, nil
}

// AttemptResult is the outcome of one delivery attempt.
type AttemptResult struct {
	RequestURL   string
	StatusCode   int // 0 when no response arrived
	ResponseBody *string
	Error        string // why it failed; "" on success
	Duration     time.Duration
	At           time.Time // when it began, on the environment's clock
	// End is when it ended (failed, or its answer was read) on the same
	// clock: a retry is due a delay after it, and a delivery is delivered
	// at it. Zero: At.
	End     time.Time
	Success bool
	RetryAt time.Time // failed: when the next attempt is due; zero makes the delivery dead
	// NextClaimed: the dispatcher already runs the next first attempt of
	// the job's entity (NextFirst), so scheduling it needs no wake-up.
	NextClaimed bool
}

// RecordAttempt records an attempt of the delivery claimed at j and moves the
// delivery to delivered, failed (rescheduled at RetryAt) or dead, or leaves
// it pending when a manual retry re-queued it during the attempt. It returns
// the status it committed. Returns ENOTFOUND for an unknown delivery.
func (s *Store) RecordAttempt(j Job, r AttemptResult) (string, error) {
	var status string
	err := s.updateIn(j.Env, func(t *txn) error {
		d, err := t.getDelivery(j.Env, j.ID)
		if err != nil {
			return err
		}
		a := Attempt{ID: newID(), AttemptNumber: d.AttemptCount + 1, RequestURL: r.RequestURL,
			ResponseBody: r.ResponseBody, DurationMs: r.Duration.Milliseconds(), AttemptedAt: At(r.At), Success: r.Success}
		if r.StatusCode != 0 {
			code := r.StatusCode
			a.HTTPStatusCode = &code
		}
		if r.Error != "" {
			msg := r.Error
			a.ErrorMessage = &msg
		}
		if err := t.finishFirst(j, r.NextClaimed); err != nil {
			return err
		}
		d.Attempts = append(d.Attempts, a)
		d.AttemptCount++
		d.LastAttemptAt = a.AttemptedAt
		// The claimed key is still current unless a manual retry moved the
		// delivery meanwhile; then the retry's schedule stands.
		current := string(d.ScheduleKey) == string(j.Key)
		if current {
			if err := t.unschedule(j.Key); err != nil {
				return err
			}
			d.ScheduleKey = nil
			d.NextAttemptAt = Time{}
		}
		switch {
		case r.Success:
			// Delivered when the receiver's 2xx arrived (seed 001 §3).
			d.Status, d.DeliveredAt, d.LastError = DeliveryDelivered, At(cmp.Or(r.End, r.At)), nil
			if !current {
				if err := t.unschedule(d.ScheduleKey); err != nil {
					return err
				}
				d.ScheduleKey, d.NextAttemptAt = nil, Time{}
			}
		case !current:
			// A manual retry re-queued the delivery during this attempt,
			// which belongs to the round before: the new round keeps all
			// of its attempts.
			d.LastError = a.ErrorMessage
			d.RoundStart++
		case r.RetryAt.IsZero():
			d.Status, d.LastError = DeliveryDead, a.ErrorMessage
		default:
			d.Status, d.LastError = DeliveryFailed, a.ErrorMessage
			if d.ScheduleKey, err = t.schedule(r.RetryAt, JobDelivery, j.Env, d.ID); err != nil {
				return err
			}
			d.NextAttemptAt = At(r.RetryAt)
		}
		status = d.Status
		return t.putDelivery(j.Env, d)
	})
	if err != nil {
		return "", err
	}
	return status, nil
}
