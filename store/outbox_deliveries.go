package store

import (
	"bytes"
	"encoding/json"
	"time"
)

// Delivery destinations.
const (
	DestCustody = "custody" // the PUT /webhooks/outbound URL
	DestKYC     = "kyc"     // the [kyc] callback URL
)

// Delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
	DeliveryDead      = "dead"
)

// Event is one business event with the exact bytes of its envelope, which
// carries every other field. An event with a delivery is stored with it,
// after the delivery's id in its sequence entry (deliveries_idx: seq -> id
// + envelope), so a new delivery and its event append to one B+tree; an
// event kept without a delivery (SPEC §5), and every event stored before
// layout 9, is in the events bucket under its own sequence.
type Event struct {
	Seq        uint64
	ID         string
	EventType  string
	EntityType string
	EntityID   string
	Timestamp  Time
	Payload    []byte

	stampAt int // where Payload's timestamp value starts (restamp)
}

// DeliverySummary is a delivery as lists show it.
type DeliverySummary struct {
	ID            string  `json:"id"`
	EventID       string  `json:"eventId"`
	EventType     string  `json:"eventType"`
	EntityType    string  `json:"entityType"`
	EntityID      string  `json:"entityId"`
	Destination   string  `json:"destination"`
	Status        string  `json:"status"`
	AttemptCount  int     `json:"attemptCount"`
	LastAttemptAt Time    `json:"lastAttemptAt"`
	LastError     *string `json:"lastError"`
	CreatedAt     Time    `json:"createdAt"`
	DeliveredAt   Time    `json:"deliveredAt"`
	NextAttemptAt Time    `json:"nextAttemptAt"`
	Test          bool    `json:"test,omitempty"` // a test event (SPEC §7), sent with X-Webhook-Test: true
}

// Delivery is one (event, destination) pair with its attempts.
type Delivery struct {
	DeliverySummary
	Payload  string    `json:"payload"`
	Attempts []Attempt `json:"attempts"`
}

// Attempt is one HTTP attempt of a delivery.
type Attempt struct {
	ID             string  `json:"id"`
	AttemptNumber  int     `json:"attemptNumber"`
	RequestURL     string  `json:"requestUrl"`
	HTTPStatusCode *int    `json:"httpStatusCode"`
	ResponseBody   *string `json:"responseBody"`
	ErrorMessage   *string `json:"errorMessage"`
	DurationMs     int64   `json:"durationMs"`
	AttemptedAt    Time    `json:"attemptedAt"`
	Success        bool    `json:"success"`
}

type diskDelivery struct {
	DeliverySummary
	Attempts    []Attempt `json:"attempts"`
	Seq         uint64    `json:"seq"`
	EventSeq    uint64    `json:"eventSeq"`   // key of the event in the events bucket; 0: stored with the delivery's sequence entry
	RoundStart  int       `json:"roundStart"` // attemptCount when the current round began
	ScheduleKey []byte    `json:"scheduleKey,omitempty"`

	indexed []fkey // the filter-index keys as stored; nil for a new delivery
}

// Filter-index fields of deliveries (deliveries_bits, see list_filter.go).
const (
	fDeliveryStatus      byte = 's'
	fDeliveryEventType   byte = 'e'
	fDeliveryDestination byte = 'd'
	fDeliveryEntity      byte = 'n'
	fDeliveryCreated     byte = 'c' // createdAt (timeValue): since/until
	// fDeliveryDone orders delivered and dead deliveries by when they
	// became so (deliveredAt, or the last attempt of a dead one), for
	// retention; pending and failed deliveries have no such key.
	fDeliveryDone byte = 'x'
)

// filterKeys returns the filter-index keys of d as it is now.
func (d *diskDelivery) filterKeys() []fkey {
	keys := []fkey{{fDeliveryStatus, d.Status}, {fDeliveryEventType, d.EventType}, {fDeliveryDestination, d.Destination},
		{fDeliveryEntity, d.EntityID}, {fDeliveryCreated, timeValue(d.CreatedAt.Time)}}
	if done := d.doneAt(); !done.IsZero() {
		keys = append(keys, fkey{fDeliveryDone, timeValue(done)})
	}
	return keys
}

// doneAt is when a delivered or dead delivery became so; zero otherwise.
func (d *diskDelivery) doneAt() time.Time {
	switch d.Status {
	case DeliveryDelivered:
		return d.DeliveredAt.Time
	case DeliveryDead:
		return d.LastAttemptAt.Time
	}
	return time.Time{}
}

func (t *txn) getDelivery(env Env, id string) (diskDelivery, error) {
	var d diskDelivery
	b := t.env(env, "deliveries").Get([]byte(id))
	if b == nil {
		return d, NotFound("delivery", id)
	}
	if err := unmarshalDelivery(b, &d); err != nil {
		return d, err
	}
	d.indexed = d.filterKeys()
	return d, nil
}

func (t *txn) putDelivery(env Env, d diskDelivery) error {
	b := marshalDelivery(&d)
	keys := d.filterKeys()
	if err := t.reindex(env, "deliveries_bits", d.Seq, d.indexed, keys); err != nil {
		return err
	}
	if done := d.doneAt(); !done.IsZero() {
		if err := t.retainBy(env, t.removableAt(expiryDelivery, keyMilli(done))); err != nil {
			return err
		}
	}
	return t.env(env, "deliveries").Put([]byte(d.ID), b)
}

// eventPayload returns a copy of the envelope bytes of delivery d's event.
func (t *txn) eventPayload(env Env, d diskDelivery) ([]byte, error) {
	var b []byte
	if d.EventSeq == 0 {
		_, b = splitSeqEntry(t.env(env, "deliveries_idx").Get(itob(d.Seq)))
		if len(b) == 0 {
			b = idKeyedPayload(t.env(env, "events").Get(idKeyedEvent(d)))
		}
	} else {
		b = t.env(env, "events").Get(itob(d.EventSeq))
	}
	if len(b) == 0 {
		return nil, NotFound("event", d.EventID)
	}
	return bytes.Clone(b), nil
}

// idKeyedEvent is the events-bucket key of a delivery's event in a file
// written before events were keyed by sequence (before layouts were
// numbered): the event's id, which the delivery names. Such a delivery
// has no event sequence and its sequence entry holds its id alone. An
// event's id is 36 bytes of text, so it never collides with a sequence
// key (8 bytes).
func idKeyedEvent(d diskDelivery) []byte {
	return []byte(d.EventID)
}

// idKeyedPayload returns the envelope bytes of an event keyed by its id:
// the record itself, or, in files from before events were stored as their
// envelope, the base64 "payload" of the event record that held it.
func idKeyedPayload(rec []byte) []byte {
	var old struct {
		Env     string          `json:"env"`
		Payload []byte          `json:"payload"`
		Data    json.RawMessage `json:"data"`
	}
	if json.Unmarshal(rec, &old) == nil && old.Env != "" && len(old.Payload) > 0 && old.Data == nil {
		return old.Payload
	}
	return rec
}

// seqEntry is a delivery's sequence entry (deliveries_idx): its id, then its
// event's envelope (a JSON object, so its first byte '{' never occurs in an
// id). Entries written before layout 9 hold the id alone.
func seqEntry(id string, envelope []byte) []byte {
	return append(append(make([]byte, 0, len(id)+len(envelope)), id...), envelope...)
}

// splitSeqEntry returns the delivery id and the event envelope (nil when
// the event is in the events bucket) of a sequence entry.
func splitSeqEntry(v []byte) (id, envelope []byte) {
	if i := bytes.IndexByte(v, '{'); i >= 0 {
		return v[:i], v[i:]
	}
	return v, nil
}

// enqueue records an event and, when dest is configured (and, for custody,
// subscribed to eventType), a delivery due now. It is the only way events
// are made, so every business change and its event share one transaction.
func (t *txn) enqueue(env Env, dest, eventType, entityType, entityID string, data any) error {
	ev, err := newEvent(eventType, entityType, entityID, t.now, data)
	if err != nil {
		return err
	}
	return t.enqueueEvent(env, dest, ev)
}

// enqueueEvent is enqueue of an event built beforehand (newEvent), so that
// encoding its envelope need not wait in the write transaction.
func (t *txn) enqueueEvent(env Env, dest string, ev Event) error {
	ev = t.emit(env, ev)
	if !t.wants(env, dest, ev.EventType) {
		// Kept, not delivered (SPEC §5), until retention removes it.
		ev, err := t.storeEvent(env, ev)
		if err != nil {
			return err
		}
		return t.expire(env, expiryEvent, t.now, itob(ev.Seq))
	}
	_, err := t.createDelivery(env, dest, ev, newID(), false)
	return err
}

// restamp makes at ev's timestamp, in its envelope too.
func (ev *Event) restamp(at Time) {
	p := ev.Payload
	var buf [2][40]byte // a timestamp's text fits: no allocation in the write transaction
	old := len(appendJSONTime(buf[0][:0], ev.Timestamp))
	stamp := appendJSONTime(buf[1][:0], at)
	if len(stamp) == old {
		copy(p[ev.stampAt:], stamp)
	} else {
		p = append(append(append(make([]byte, 0, len(p)+len(stamp)-old), p[:ev.stampAt]...), stamp...), p[ev.stampAt+old:]...)
	}
	ev.Payload, ev.Timestamp = p, at
}

// emitted is the timestamp of the last event stored in each environment
// (emit). Only write transactions read and write it, one at a time.
type emitted struct{ sandbox, production Time }

func (e *emitted) last(env Env) Time {
	if env == Sandbox {
		return e.sandbox
	}
	return e.production
}

func (e *emitted) note(env Env, at Time) {
	if env == Sandbox {
		e.sandbox = at
	} else {
		e.production = at
	}
}

// newEvent mints an event of time at and encodes its envelope: the bytes
// every delivery of it sends, fixed from now on.
func newEvent(eventType, entityType, entityID string, at time.Time, data any) (Event, error) {
	ev := Event{ID: newID(), EventType: eventType, EntityType: entityType, EntityID: entityID, Timestamp: At(at)}
	var raw []byte
	if a, ok := data.(jsonAppender); ok {
		raw = a.appendJSON(make([]byte, 0, 1024))
	} else {
		var err error
		if raw, err = json.Marshal(data); err != nil {
			return Event{}, err
		}
	}
	ev.Payload, ev.stampAt = appendEnvelope(make([]byte, 0, len(raw)+256), ev.ID, eventType, entityType, entityID, ev.Timestamp, raw)
	return ev, nil
}

// emit returns ev as it is emitted now, the next event of env. An event's
// timestamp, its time of emission, never goes back from the event emitted
// before it in env: receivers put one entity's events in order by it
// (seed: "receivers compare previousStatus, status and timestamp"). An
// event encoded before its write transaction (a transaction's draft) can
// be older than one a concurrent operation emitted meanwhile; it is stamped
// with this operation's time instead.
func (t *txn) emit(env Env, ev Event) Event {
	last := t.s.emitted.last(env)
	if ev.Timestamp.Before(last.Time) {
		at := At(t.now)
		if at.Before(last.Time) {
			at = last // the wall clock stepped back
		}
		ev.restamp(at)
	}
	t.s.emitted.note(env, ev.Timestamp)
	return ev
}

// storeEvent stores an emitted event that has no delivery under the next
// sequence of the events bucket and returns ev with that sequence.
func (t *txn) storeEvent(env Env, ev Event) (Event, error) {
	b := t.env(env, "events")
	var err error
	if ev.Seq, err = b.NextSequence(); err != nil {
		return Event{}, err
	}
	return ev, b.Put(itob(ev.Seq), ev.Payload)
}

// createDelivery makes the delivery of the emitted event ev to dest, due
// now, and stores ev with it; test marks a test event's (SPEC §7). When the
// delivery is its entity's first attempt to go and the dispatcher takes
// fresh work (OnFresh), the job is kept with what it takes to send it
// (t.fresh), for the dispatcher after the commit.
func (t *txn) createDelivery(env Env, dest string, ev Event, id string, test bool) (string, error) {
	d := diskDelivery{DeliverySummary: DeliverySummary{
		ID: id, EventID: ev.ID, EventType: ev.EventType, EntityType: ev.EntityType, EntityID: ev.EntityID,
		Destination: dest, Status: DeliveryPending, CreatedAt: At(t.now), NextAttemptAt: At(t.now), Test: test,
	}}
	idx := t.env(env, "deliveries_idx")
	var err error
	if d.Seq, err = idx.NextSequence(); err != nil {
		return "", err
	}
	if err := idx.Put(itob(d.Seq), seqEntry(d.ID, ev.Payload)); err != nil {
		return "", err
	}
	entity := dest + "|" + ev.EntityType + "|" + ev.EntityID
	offer := t.grouped && t.s.offersFresh()
	var head bool
	if d.ScheduleKey, head, err = t.scheduleEntity(t.now, JobDelivery, env, d.ID, entity, offer); err != nil {
		return "", err
	}
	if head && offer {
		if err := t.offer(env, d, entity, ev.Payload); err != nil {
			return "", err
		}
	}
	return d.ID, t.putDelivery(env, d)
}

// wants reports whether dest is configured and subscribed to eventType.
func (t *txn) wants(env Env, dest, eventType string) bool {
	switch dest {
	case DestCustody:
		cfg, err := t.webhookConfig(env)
		if err != nil || cfg.URL == "" {
			return false
		}
		if cfg.Subscribed == nil {
			return true
		}
		for _, s := range cfg.Subscribed {
			if s == eventType {
				return true
			}
		}
		return false
	case DestKYC:
		cb, err := t.callback()
		return err == nil && cb.URL != ""
	}
	return false
}

// Delivery returns one delivery with its payload and attempts. Returns
// ENOTFOUND for an unknown id.
func (s *Store) Delivery(env Env, id string) (Delivery, error) {
	var out Delivery
	err := s.viewIn(env, func(t *txn) error {
		d, err := t.getDelivery(env, id)
		if err != nil {
			return err
		}
		payload, err := t.eventPayload(env, d)
		if err != nil {
			return err
		}
		out = Delivery{DeliverySummary: d.DeliverySummary, Payload: string(payload), Attempts: d.Attempts}
		if out.Attempts == nil {
			out.Attempts = []Attempt{}
		}
		return nil
	})
	return out, err
}

// DeliveryFilter selects deliveries; empty fields match everything.
type DeliveryFilter struct {
	Status      string
	EventType   string
	Destination string
	EntityID    string
	Since       time.Time // createdAt at or after
	Until       time.Time // createdAt before
}

// Validate returns EINVALID naming status, destination or eventType when
// it is not one the service knows.
func (f DeliveryFilter) Validate() error {
	switch f.Status {
	case "", DeliveryPending, DeliveryDelivered, DeliveryFailed, DeliveryDead:
	default:
		return Invalid("status", "status must be pending, delivered, failed or dead")
	}
	switch f.Destination {
	case "", DestCustody, DestKYC:
	default:
		return Invalid("destination", "destination must be custody or kyc")
	}
	if f.EventType != "" && !KnownEventType(f.EventType) {
		return Invalid("eventType", "unknown event type %q; see GET /webhooks/events/catalog and GET /v1/webhooks/events/catalog", f.EventType)
	}
	return nil
}

func (f DeliveryFilter) match(d DeliverySummary) bool {
	return (f.Status == "" || d.Status == f.Status) &&
		(f.EventType == "" || d.EventType == f.EventType) &&
		(f.Destination == "" || d.Destination == f.Destination) &&
		(f.EntityID == "" || d.EntityID == f.EntityID) &&
		(f.Since.IsZero() || !d.CreatedAt.Before(f.Since)) &&
		(f.Until.IsZero() || d.CreatedAt.Before(f.Until))
}

// keys returns the filter-index keys of the filter's equality fields.
func (f DeliveryFilter) keys() []fkey {
	var keys []fkey
	for _, k := range []fkey{{fDeliveryEntity, f.EntityID}, {fDeliveryStatus, f.Status},
		{fDeliveryEventType, f.EventType}, {fDeliveryDestination, f.Destination}} {
		if k.value != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// scan returns the walk over the deliveries f selects: its equality fields
// through their indexes, since/until as sequence bounds from the createdAt
// index. ok is false when no delivery falls in the time range.
func (f DeliveryFilter) scan(t *txn, env Env) (scan listScan, ok bool) {
	scan = listScan{kind: cursorKind{listDeliveries, env}, seqs: t.env(env, "deliveries_idx"), filters: t.env(env, "deliveries_bits"), log: t.logOf(env, "deliveries_bits"), keys: f.keys()}
	if !f.Since.IsZero() || !f.Until.IsZero() {
		var empty bool
		if scan.lo, scan.hi, empty = timeBounds(scan.filters, scan.log, fDeliveryCreated, f.Since, f.Until); empty {
			return scan, false
		}
	}
	return scan, true
}

// Deliveries lists deliveries newest first, reading the filter indexes (a
// page reads O(limit) records).
func (s *Store) Deliveries(env Env, f DeliveryFilter, p Page) ([]DeliverySummary, *string, error) {
	out := []DeliverySummary{}
	var next *string
	err := s.viewIn(env, func(t *txn) error {
		scan, ok := f.scan(t, env)
		if !ok {
			if p.Cursor != "" {
				_, err := decodeCursor(scan.kind, p.Cursor)
				return err
			}
			return nil
		}
		var err error
		next, err = scan.run(p, func(_ uint64, entry []byte) (bool, error) {
			s.listDecodes.Add(1)
			id, _ := splitSeqEntry(entry)
			d, err := t.getDelivery(env, string(id))
			if err != nil {
				return false, err
			}
			if !f.match(d.DeliverySummary) {
				return false, nil
			}
			out = append(out, d.DeliverySummary)
			return true, nil
		})
		return err
	})
	return out, next, err
}

// requeue makes a failed or dead delivery pending and due now, with a fresh
// round of automatic attempts.
func (t *txn) requeue(env Env, d diskDelivery) error {
	if err := t.unschedule(d.ScheduleKey); err != nil {
		return err
	}
	var err error
	if d.ScheduleKey, err = t.schedule(t.now, JobDelivery, env, d.ID); err != nil {
		return err
	}
	d.Status, d.RoundStart, d.NextAttemptAt = DeliveryPending, d.AttemptCount, At(t.now)
	return t.putDelivery(env, d)
}

// RetryDelivery re-queues a failed or dead delivery. Returns ENOTFOUND for
// an unknown id and ECONFLICT for a pending or delivered one.
func (s *Store) RetryDelivery(env Env, id string) (DeliverySummary, error) {
	var out DeliverySummary
	err := s.updateIn(env, func(t *txn) error {
		d, err := t.getDelivery(env, id)
		if err != nil {
			return err
		}
		if d.Status != DeliveryFailed && d.Status != DeliveryDead {
			return Conflict("delivery_not_retryable", "delivery %s is %s; only failed or dead deliveries can be retried", id, d.Status)
		}
		if err := t.requeue(env, d); err != nil {
			return err
		}
		d, err = t.getDelivery(env, id)
		out = d.DeliverySummary
		return err
	})
	return out, err
}

// RetryBatch is the most deliveries one transaction of RetryDeliveries
// re-queues.
const RetryBatch = 500

// RetryDeliveries re-queues every failed or dead delivery that f selects and
// returns how many. It walks the status index newest first in transactions
// of at most RetryBatch deliveries, each continuing below the last one
// handled, so a large match set never makes one huge transaction and a
// delivery that fails again meanwhile is not re-queued twice. Returns
// EINVALID unless f.Status is failed or dead.
func (s *Store) RetryDeliveries(env Env, f DeliveryFilter) (int, error) {
	if f.Status != DeliveryFailed && f.Status != DeliveryDead {
		return 0, Invalid("status", "status must be failed or dead")
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Until.After(f.Since) {
		return 0, Invalid("until", "until must be later than since")
	}
	total := 0
	cursor := ""
	for {
		var n int
		var next *string
		err := s.updateIn(env, func(t *txn) error {
			n = 0
			scan, ok := f.scan(t, env)
			if !ok {
				next = nil
				return nil
			}
			var matches []diskDelivery
			var err error
			next, err = scan.run(Page{Limit: RetryBatch, Cursor: cursor}, func(_ uint64, entry []byte) (bool, error) {
				s.listDecodes.Add(1)
				id, _ := splitSeqEntry(entry)
				d, err := t.getDelivery(env, string(id))
				if err != nil || !f.match(d.DeliverySummary) {
					return false, err
				}
				matches = append(matches, d)
				return true, nil
			})
			if err != nil {
				return err
			}
			for _, d := range matches {
				if err := t.requeue(env, d); err != nil {
					return err
				}
				n++
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += n
		if next == nil {
			return total, nil
		}
		cursor = *next
	}
}

// SendTestEvent enqueues a webhook.test event to the custody URL and returns
// its delivery id (SendSampleEvent with no type). Returns ECONFLICT
// webhook_not_configured without a URL.
func (s *Store) SendTestEvent(env Env) (string, error) {
	return s.SendSampleEvent(env, DestCustody, "")
}
