package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/complybox/complybox/store/imagecheck"

	bolt "go.etcd.io/bbolt"
)

// Enqueue records an event as its own operation, as business methods do
// inside theirs.
func (s *Store) Enqueue(env Env, dest, eventType, entityType, entityID string, data any) error {
	return s.update(func(t *txn) error { return t.enqueue(env, dest, eventType, entityType, entityID, data) })
}

// Commit runs fn through the group commit.
func (s *Store) Commit(fn func(*bolt.Tx) error) error { return s.commit.run(fn) }

// CommitsQueued is how many functions wait for the group commit's next
// group.
func (s *Store) CommitsQueued() int {
	s.commit.mu.Lock()
	defer s.commit.mu.Unlock()
	return len(s.commit.queue)
}

// Schedule adds a job to the schedule and returns its key.
func (s *Store) Schedule(due time.Time, kind string, env Env, id, entity string) ([]byte, error) {
	var key []byte
	err := s.update(func(t *txn) error {
		var err error
		key, _, err = t.scheduleEntity(due, kind, env, id, entity, false)
		return err
	})
	return key, err
}

// ScheduleMany adds n jobs of kind to env's schedule in one transaction,
// the i-th due at due(i) with id "<prefix><i>".
func (s *Store) ScheduleMany(env Env, kind, prefix string, n int, due func(i int) time.Time) error {
	return s.update(func(t *txn) error {
		for i := range n {
			if _, err := t.schedule(due(i), kind, env, fmt.Sprint(prefix, i)); err != nil {
				return err
			}
		}
		return nil
	})
}

// ListDecodes returns how many records the store's lists have decoded since
// it opened: the test hook of SPEC §2 "a page costs O(limit)".
func (s *Store) ListDecodes() int64 { return s.listDecodes.Load() }

// Count returns how many keys env's bucket name holds.
func (s *Store) Count(env Env, name string) int {
	n := 0
	s.view(func(t *txn) error {
		n = t.env(env, name).Stats().KeyN
		return nil
	})
	return n
}

// Events returns how many events env holds: those in the events bucket and
// those stored with their delivery's sequence entry.
func (s *Store) Events(env Env) int {
	n := 0
	s.view(func(t *txn) error {
		n = t.env(env, "events").Stats().KeyN
		return t.env(env, "deliveries_idx").ForEach(func(_, v []byte) error {
			if _, envelope := splitSeqEntry(v); envelope != nil {
				n++
			}
			return nil
		})
	})
	return n
}

// ConsoleSessions returns how many console sessions the db holds, expired
// or not.
func (s *Store) ConsoleSessions() int {
	n := 0
	s.view(func(t *txn) error {
		b := t.consoleRead()
		if b == nil {
			return nil
		}
		c := b.Cursor()
		p := []byte(consoleSessionPrefix)
		for k, _ := c.Seek(p); k != nil && len(k) >= len(p) && string(k[:len(p)]) == string(p); k, _ = c.Next() {
			n++
		}
		return nil
	})
	return n
}

// ShortCodeFrom mints a short code from r's bytes (crypto/rand when nil).
func ShortCodeFrom(r io.Reader) (string, error) { return shortCodeFrom(r) }

// BeforeApply sets a hook that Verify and AddDocument call between
// decoding the images and the transaction that stores them, and that the
// creation of a transaction calls between its draft and its write.
func BeforeApply(s *Store, fn func()) { s.beforeApply = fn }

// FailCommits makes every commit call fault first and fail with its error,
// as a full disk would; nil removes the fault.
func FailCommits(s *Store, fault func() error) {
	if fault == nil {
		s.commit.fault.Store(nil)
		return
	}
	s.commit.fault.Store(&fault)
}

// SetDecodeLimiter replaces the store's image decode limiter.
func SetDecodeLimiter(s *Store, l *imagecheck.Limiter) { s.decodes = l }

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

// QueueFill is how full the entity queues' leaf pages are: the bytes their
// entries use over the bytes of the pages that hold them.
func (s *Store) QueueFill() float64 {
	var fill float64
	s.view(func(t *txn) error {
		st := t.Bucket(bucketQueue).Stats()
		fill = float64(st.LeafInuse) / float64(st.LeafAlloc)
		return nil
	})
	return fill
}

// ScheduleReads is how many schedule entries Due and the sandbox clock's
// moves (AdvanceClock) have read so far.
func (s *Store) ScheduleReads() int64 { return s.stats.scheduleReads.Load() }

// OpenReads is how many records Open (ResumeSimulator) has read beyond the
// fixed configuration.
func (s *Store) OpenReads() int64 { return s.stats.openReads.Load() }

// QueueReads is how many times NextFirst has read an entity queue.
func (s *Store) QueueReads() int64 { return s.stats.queueReads.Load() }

// InflightReads is how many entries of the in-flight index Open has read.
func (s *Store) InflightReads() int64 { return s.stats.inflightReads.Load() }

// StoreDeliveryAsJSON rewrites a stored delivery in the JSON form that
// versions before the binary form wrote, as an old file holds it.
func (s *Store) StoreDeliveryAsJSON(env Env, id string) error {
	return s.update(func(t *txn) error {
		d, err := t.getDelivery(env, id)
		if err != nil {
			return err
		}
		b, err := json.Marshal(d)
		if err != nil {
			return err
		}
		return t.env(env, "deliveries").Put([]byte(id), b)
	})
}

// StoreEventAsLayout8 moves delivery id's event where versions before
// layout 9 kept it: into the events bucket, the delivery naming its
// sequence, the delivery's sequence entry holding its id alone.
func (s *Store) StoreEventAsLayout8(env Env, id string) error {
	return s.moveEventOut(env, id, func(t *txn, d *diskDelivery, envelope []byte) error {
		ev, err := t.storeEvent(env, Event{Payload: envelope})
		if err != nil {
			return err
		}
		d.EventSeq = ev.Seq
		return t.env(env, "deliveries").Put([]byte(id), marshalDelivery(d))
	})
}

// moveEventOut takes delivery id's event out of its sequence entry, which
// then holds the delivery's id alone, and hands its envelope to store,
// which keeps it as an older version did.
func (s *Store) moveEventOut(env Env, id string, store func(t *txn, d *diskDelivery, envelope []byte) error) error {
	return s.update(func(t *txn) error {
		d, err := t.getDelivery(env, id)
		if err != nil {
			return err
		}
		idx := t.env(env, "deliveries_idx")
		_, envelope := splitSeqEntry(idx.Get(itob(d.Seq)))
		if envelope == nil {
			return errors.New("the event is not in the sequence entry")
		}
		envelope = bytes.Clone(envelope)
		if err := idx.Put(itob(d.Seq), []byte(d.ID)); err != nil {
			return err
		}
		return store(t, &d, envelope)
	})
}

// StoreEventAsUnnumbered moves delivery id's event where versions from
// before layouts were numbered (before events were keyed by sequence)
// kept it: into the events bucket under the event's id, the delivery, in
// JSON, naming no event sequence, its sequence entry holding its id alone;
// asRecord stores the event as the first versions did, a record holding
// the envelope in base64, else as its envelope bytes.
func (s *Store) StoreEventAsUnnumbered(env Env, id string, asRecord bool) error {
	return s.moveEventOut(env, id, func(t *txn, d *diskDelivery, envelope []byte) error {
		rec := envelope
		if asRecord {
			// The first versions stored the event as a record holding the
			// envelope in base64.
			var err error
			if rec, err = json.Marshal(map[string]any{"id": d.EventID, "env": env, "eventType": d.EventType, "entityType": d.EntityType,
				"entityId": d.EntityID, "timestamp": d.CreatedAt, "payload": envelope}); err != nil {
				return err
			}
		}
		if err := t.env(env, "events").Put([]byte(d.EventID), rec); err != nil {
			return err
		}
		d.EventSeq = 0
		b, err := json.Marshal(d)
		if err != nil {
			return err
		}
		return t.env(env, "deliveries").Put([]byte(id), b)
	})
}

// DeliveryRecord returns the stored bytes of a delivery.
func (s *Store) DeliveryRecord(env Env, id string) []byte {
	var b []byte
	s.view(func(t *txn) error {
		b = bytes.Clone(t.env(env, "deliveries").Get([]byte(id)))
		return nil
	})
	return b
}

const FoldMax = foldMax

// EnqueueThenFail records an event as Enqueue does, then fails, so that
// nothing of it may stay.
func (s *Store) EnqueueThenFail(env Env, dest, eventType, entityType, entityID string) error {
	return s.updateIn(env, func(t *txn) error {
		if err := t.enqueue(env, dest, eventType, entityType, entityID, nil); err != nil {
			return err
		}
		return errors.New("the operation fails after enqueueing")
	})
}

// IndexEntries returns how many records the bitmap index name of env
// holds, a set bit each (list_filter_bits.go).
func (s *Store) IndexEntries(env Env, name string) int {
	n := 0
	s.view(func(t *txn) error {
		return t.env(env, name).ForEach(func(k, v []byte) error {
			eachBit(k, v, func(uint64) bool { n++; return true })
			return nil
		})
	})
	return n
}

// LayoutVersion is the layout this version writes, for the upgrade tests.
const LayoutVersion = layoutVersion

// OpenReadTxs is how many bbolt read transactions are open now.
func (s *Store) OpenReadTxs() int { return s.db.Stats().OpenTxN }
