package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Retention (SPEC §1 [retention], §7) removes what a long-running sandbox no
// longer needs, in small batches run by the dispatcher as the durable
// schedule job JobRetention, which reschedules itself:
//
//   - delivered and dead deliveries (their attempts live in the delivery
//     record) whose delivery, or last attempt for a dead one, is older than
//     Settings.Retention.Deliveries, with their event: every event has at
//     most one delivery (enqueue makes one per event);
//   - events that never had a delivery (no destination was configured),
//     older than the same window;
//   - hosted-UI sessions and their short links, a day after they expired
//     (sessionRetention), once their expiry job has run;
//   - idempotency records past their 24 h;
//   - rate-limit windows that have slid out (their last call left the window);
//   - console sessions past expiry and login-attempt windows that slid out.
//
// Applicants, their documents and their review history are never removed
// (DELETE /v1/applicants/{id} is the way to erase). Every removal removes
// the record's index entries in the same transaction.
//
// Each kind is found through an index ordered by the time it becomes
// removable, so a batch reads only what it removes: deliveries through
// their fDeliveryDone filter key, the others through the environment's
// "expiry" bucket, whose keys are
//
//	kind (1 byte) | time (Unix ms, 8 bytes big-endian) | record key
//
// with the time the record is measured from (see the expiry kinds).

// JobRetention is the schedule job that runs one retention batch of its
// environment. There is at most one per environment, due on that
// environment's clock when its first record becomes removable (a full
// batch runs again at once), so the sandbox test clock moves sandbox
// retention alone; its key lives in the meta bucket.
const JobRetention = "retention"

// Retention bounds.
const (
	// RetentionBatch is the most records one retention transaction removes.
	RetentionBatch = 500
	// DefaultDeliveryRetention is [retention] deliveries by default.
	DefaultDeliveryRetention = 720 * time.Hour
	// MaxDeliveryRetention is the longest [retention] deliveries the
	// config takes: 10 years.
	MaxDeliveryRetention = 87600 * time.Hour
	// sessionRetention is how long an expired session and its short link
	// are kept after expiry, so a late click still gets the "expired" page.
	sessionRetention = 24 * time.Hour
)

// Expiry kinds of the expiry bucket, with the time each entry carries.
const (
	expiryEvent       byte = 'e' // event without delivery: its timestamp; key: event seq
	expirySession     byte = 's' // session whose expiry job ran: expiresAt; key: token
	expiryIdempotency byte = 'i' // idempotency record: createdAt; key: idemKey
	expiryRateLimit   byte = 'r' // rate-limit window: when its last call leaves it; key: limit key | last call (ns, 8 bytes)
)

// retentionJobKey is the meta key holding the schedule key of env's pending
// JobRetention. The sandbox's is the key of the one job of files written
// before retention was per environment; production's job is then made at
// start-up (ensureRetention).
func retentionJobKey(env Env) []byte {
	if env == Sandbox {
		return []byte("retention-job")
	}
	return []byte("retention-job:" + string(env))
}

// RetentionSettings configure retention.
type RetentionSettings struct {
	Deliveries time.Duration // delivered/dead deliveries, events without one; default 720h
}

func expiryKey(kind byte, at time.Time, key []byte) []byte {
	b := make([]byte, 0, 9+len(key))
	b = append(b, kind)
	b = binary.BigEndian.AppendUint64(b, uint64(at.UnixMilli()))
	return append(b, key...)
}

// expire adds the expiry entry of a record and makes sure retention runs
// by the time it is removable.
func (t *txn) expire(env Env, kind byte, at time.Time, key []byte) error {
	if err := t.env(env, "expiry").Put(expiryKey(kind, at, key), nil); err != nil {
		return err
	}
	return t.retainBy(env, t.removableAt(kind, keyMilli(at)))
}

// unexpire removes the expiry entry of a record.
func (t *txn) unexpire(env Env, kind byte, at time.Time, key []byte) error {
	return t.env(env, "expiry").Delete(expiryKey(kind, at, key))
}

// fDeliveryDone entries use kind 0 in removableAt.
const expiryDelivery byte = 0

// removableAt is when a record whose entry of kind carries ms becomes
// removable: retainEnv removes an entry once its time is a whole
// millisecond before the kind's cutoff.
func (t *txn) removableAt(kind byte, ms uint64) time.Time {
	at := time.UnixMilli(int64(ms) + 1).UTC()
	switch kind {
	case expiryDelivery, expiryEvent:
		return at.Add(t.s.settings.Retention.Deliveries)
	case expirySession:
		return at.Add(sessionRetention)
	case expiryIdempotency:
		return at.Add(idempotencyWindow)
	}
	return at
}

// retainBy makes sure env's retention job is due at or before at. The job
// is scheduled only while something is waiting to be removed, due when the
// first thing is: a db with nothing to remove has no retention job, and
// the job never polls.
func (t *txn) retainBy(env Env, at time.Time) error {
	meta := t.Bucket(bucketMeta)
	if k := meta.Get(retentionJobKey(env)); k != nil && t.schedOf(env).Get(k) != nil {
		if !scheduleDue(k).After(at) {
			return nil
		}
		if err := t.unschedule(bytes.Clone(k)); err != nil {
			return err
		}
	}
	return t.scheduleRetention(env, at)
}

func (t *txn) scheduleRetention(env Env, due time.Time) error {
	key, err := t.schedule(due, JobRetention, env, "all")
	if err != nil {
		return err
	}
	return t.Bucket(bucketMeta).Put(retentionJobKey(env), key)
}

// ensureRetention makes each environment's retention job due by the time
// its first waiting record becomes removable under the windows configured
// now: it schedules one when none is pending (a db upgraded to layout 2,
// or to one job per environment), and brings a pending one forward when
// [retention] deliveries was shortened since it was scheduled, which would
// otherwise wait out the old window. A few seeks at start-up, no scan.
func (t *txn) ensureRetention() error {
	for _, env := range Envs() {
		if next, ok := t.nextRetention(env); ok {
			if err := t.retainBy(env, next); err != nil {
				return err
			}
		}
	}
	return nil
}

// nextRetention returns when the first record of env waiting for retention
// becomes removable, on env's clock; ok is false when none waits.
func (t *txn) nextRetention(env Env) (next time.Time, ok bool) {
	consider := func(at time.Time) {
		if !ok || at.Before(next) {
			next, ok = at, true
		}
	}
	fp := fkey{field: fDeliveryDone, value: "12345678"}.prefix()[:3]
	if k, _ := t.env(env, "deliveries_bits").Cursor().Seek(fp); k != nil && bytes.HasPrefix(k, fp) && len(k) == 19 {
		consider(t.removableAt(expiryDelivery, btoi(k[3:11])))
	}
	c := t.env(env, "expiry").Cursor()
	for _, kind := range []byte{expiryEvent, expirySession, expiryIdempotency, expiryRateLimit} {
		if k, _ := c.Seek([]byte{kind}); k != nil && k[0] == kind && len(k) >= 9 {
			consider(t.removableAt(kind, btoi(k[1:9])))
		}
	}
	return next, ok
}

// retain runs one retention batch of env, whose clock is t.now, and
// schedules the next: at once when the batch was full, else when the next
// record becomes removable. Console sessions and login attempts, which
// belong to no environment, are swept on the store's own clock.
func (t *txn) retain(env Env) error {
	n, err := t.retainEnv(env, RetentionBatch)
	if err != nil {
		return err
	}
	if n >= RetentionBatch {
		return t.scheduleRetention(env, t.now)
	}
	b, err := t.consoleWrite()
	if err != nil {
		return err
	}
	if err := sweepConsoleSessions(b, t.base); err != nil {
		return err
	}
	if err := sweepConsoleAttempts(b, t.base.Add(-ConsoleLoginWindow)); err != nil {
		return err
	}
	if next, ok := t.nextRetention(env); ok {
		return t.scheduleRetention(env, next)
	}
	return nil
}

// retainEnv removes at most max records of env and returns how many.
func (t *txn) retainEnv(env Env, max int) (int, error) {
	n := 0
	cutoff := t.now.Add(-t.s.settings.Retention.Deliveries)
	// Deliveries, by when they were delivered or died: the done index
	// folded first, so it holds every delivery (list_filter_log.go).
	by := t.env(env, "deliveries_bits")
	if _, err := fold(by, t.logOf(env, "deliveries_bits"), math.MaxInt); err != nil {
		return 0, err
	}
	fp := fkey{field: fDeliveryDone, value: "12345678"}.prefix()[:3]
	var seqs []uint64
	c := by.Cursor()
	for k, v := c.Seek(fp); k != nil && bytes.HasPrefix(k, fp) && len(seqs) < max; k, v = c.Next() {
		if len(k) != 3+8+8 || btoi(k[3:11]) >= keyMilli(cutoff) {
			break
		}
		eachBit(k, v, func(seq uint64) bool {
			seqs = append(seqs, seq)
			return len(seqs) < max
		})
	}
	for _, seq := range seqs {
		if err := t.removeDelivery(env, seq); err != nil {
			return n, err
		}
		n++
	}
	// The removals too, so that nextRetention sees them.
	if _, err := fold(by, t.logOf(env, "deliveries_bits"), math.MaxInt); err != nil {
		return n, err
	}
	// The expiry kinds, each up to its own cutoff.
	for _, kind := range []struct {
		kind   byte
		cutoff time.Time
		remove func(key []byte) error
	}{
		{expiryEvent, cutoff, func(key []byte) error { return t.env(env, "events").Delete(key) }},
		{expirySession, t.now.Add(-sessionRetention), func(key []byte) error { return t.removeSession(env, key) }},
		{expiryIdempotency, t.now.Add(-idempotencyWindow), func(key []byte) error { return t.removeIdempotency(env, key) }},
		{expiryRateLimit, t.now, func(key []byte) error { return t.removeWindow(env, key) }},
	} {
		ex := t.env(env, "expiry")
		var keys [][]byte
		c := ex.Cursor()
		for k, _ := c.Seek([]byte{kind.kind}); k != nil && k[0] == kind.kind && n+len(keys) < max; k, _ = c.Next() {
			// Strictly before the cutoff's millisecond: whatever is
			// removed is older than the window by a whole millisecond.
			if len(k) < 9 || btoi(k[1:9]) >= keyMilli(kind.cutoff) {
				break
			}
			keys = append(keys, bytes.Clone(k))
		}
		for _, k := range keys {
			if err := kind.remove(k[9:]); err != nil {
				return n, err
			}
			if err := ex.Delete(k); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// removeDelivery removes the delivery at seq with its attempts, its event
// and every index entry. A delivery that is no longer delivered or dead (a
// stale entry) only loses that entry.
func (t *txn) removeDelivery(env Env, seq uint64) error {
	id, _ := splitSeqEntry(t.env(env, "deliveries_idx").Get(itob(seq)))
	if id == nil {
		return nil
	}
	d, err := t.getDelivery(env, string(id))
	if err != nil {
		return err
	}
	if d.doneAt().IsZero() {
		return nil
	}
	if err := t.unschedule(d.ScheduleKey); err != nil {
		return err
	}
	if err := t.unindexDelivery(env, d); err != nil {
		return err
	}
	if err := t.env(env, "deliveries_idx").Delete(itob(seq)); err != nil {
		return err
	}
	if err := t.env(env, "deliveries").Delete([]byte(d.ID)); err != nil {
		return err
	}
	if d.EventSeq == 0 {
		// The event went with the sequence entry, or, in a file from before
		// events were keyed by sequence, it is keyed by its id.
		return t.env(env, "events").Delete(idKeyedEvent(d))
	}
	return t.env(env, "events").Delete(itob(d.EventSeq))
}

func (t *txn) unindexDelivery(env Env, d diskDelivery) error {
	return t.reindex(env, "deliveries_bits", d.Seq, d.indexed, nil)
}

// removeSession removes a session and its short link.
func (t *txn) removeSession(env Env, token []byte) error {
	x, ok, err := t.getSession(env, string(token))
	if err != nil || !ok {
		return err
	}
	if !x.ExpiresAt.Before(t.now.Add(-sessionRetention)) {
		return nil
	}
	if sc := t.env(env, "shortlinks"); string(sc.Get([]byte(x.ShortCode))) == x.Token {
		if err := sc.Delete([]byte(x.ShortCode)); err != nil {
			return err
		}
	}
	return t.env(env, "sessions").Delete(token)
}

// removeIdempotency removes an idempotency record past its window. A record
// written again under the same key since (a key reused after 24 h) is kept:
// its own entry removes it later.
func (t *txn) removeIdempotency(env Env, key []byte) error {
	b := t.env(env, "idempotency")
	v := b.Get(key)
	if v == nil {
		return nil
	}
	var r idemRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return err
	}
	if t.now.Sub(r.CreatedAt) <= idempotencyWindow {
		return nil
	}
	return b.Delete(key)
}

// windowExpiry is the expiry entry key of a rate-limit window whose last
// call is last: the entry names the call, so an entry left behind by a
// window that counted calls since never removes it.
func windowExpiry(limitKey string, last time.Time) []byte {
	return binary.BigEndian.AppendUint64([]byte(limitKey), uint64(last.UnixNano()))
}

// removeWindow removes a rate-limit window whose last call left it.
func (t *txn) removeWindow(env Env, entry []byte) error {
	if len(entry) < 8 {
		return nil
	}
	key, last := entry[:len(entry)-8], btoi(entry[len(entry)-8:])
	b := t.env(env, "ratelimits")
	calls := decodeWindow(b.Get(key))
	if len(calls) > 0 && uint64(calls[len(calls)-1].UnixNano()) != last {
		return nil // counted a call since; that call's entry removes it
	}
	return b.Delete(key)
}

// migrateRetention adds the expiry entries of records written before
// layout 2: events without a delivery, sessions, idempotency records and
// rate-limit windows. Sessions get theirs whether or not their expiry job
// ran; one that expired over a day ago did run it unless the server was
// down through it.
func (s *Store) migrateRetention(env Env) error {
	// Events that have a delivery: collected from the deliveries (event
	// sequence only), then every other event is marked.
	had := map[uint64]bool{}
	hadID := map[string]bool{} // events keyed by id, of files from before events were keyed by sequence
	err := s.db.View(func(tx *bolt.Tx) error {
		return envBucket(tx, env, "deliveries").ForEach(func(_, v []byte) error {
			var d diskDelivery
			if err := unmarshalDelivery(v, &d); err != nil {
				return err
			}
			had[d.EventSeq] = true
			if d.EventSeq == 0 {
				hadID[d.EventID] = true
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	steps := []struct {
		bucket string
		do     func(t *txn, k, v []byte) error
	}{
		{"events", func(t *txn, k, v []byte) error {
			if len(k) == 8 && had[btoi(k)] || len(k) != 8 && hadID[string(k)] {
				// Its delivery removes it (removeDelivery; a key of another
				// length is an event keyed by its id, from before events
				// were keyed by sequence, which its delivery names).
				return nil
			}
			var e struct {
				Timestamp Time `json:"timestamp"`
			}
			if err := json.Unmarshal(v, &e); err != nil {
				return err
			}
			return t.expire(env, expiryEvent, e.Timestamp.Time, k)
		}},
		{"sessions", func(t *txn, k, v []byte) error {
			var x Session
			if err := json.Unmarshal(v, &x); err != nil {
				return err
			}
			return t.expire(env, expirySession, x.ExpiresAt.Time, k)
		}},
		{"idempotency", func(t *txn, k, v []byte) error {
			var r idemRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			return t.expire(env, expiryIdempotency, r.CreatedAt, k)
		}},
		{"ratelimits", func(t *txn, k, v []byte) error {
			calls := decodeWindow(v)
			if len(calls) == 0 {
				return t.expire(env, expiryRateLimit, time.Unix(0, 0), windowExpiry(string(k), time.Unix(0, 0)))
			}
			// The window's length is not stored; the longest limit's
			// (24 h) keeps every window until it surely slid out.
			last := calls[len(calls)-1]
			return t.expire(env, expiryRateLimit, last.Add(24*time.Hour), windowExpiry(string(k), last))
		}},
	}
	for _, st := range steps {
		if err := s.migrateKeys(env, st.bucket, st.do); err != nil {
			return err
		}
	}
	return nil
}
