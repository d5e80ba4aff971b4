package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
	// JobRetention (retention.go) runs one retention batch; ID is "all".
)

// Job is one due item of the schedule.
type Job struct {
	Key  []byte // schedule key: due time | sequence
	Kind string
	Env  Env
	ID   string
	Due  time.Time
	// Entity is set on a delivery's first attempt: destination, entity type
	// and entity id. First attempts of one entity go out in event order.
	Entity   string
	Delivery *DeliveryTask // set for JobDelivery; nil when it cannot be sent

	claim string // the entry's own claim bytes, kept for unreadable entries
}

// Claim names the work a job does, whatever its schedule key: two jobs with
// the same Claim must never run at the same time. It is the schedule
// entry's "kind|env|id", the bytes Due hands to its skip function.
func (j Job) Claim() string {
	if j.claim != "" {
		return j.claim
	}
	return j.Kind + "|" + string(j.Env) + "|" + j.ID
}

// Each environment has a schedule of its own, so that each environment's
// due walk reads only its own jobs, whatever the other's clock says:
// production's is the root bucket "schedule" (its name from before the
// split), the sandbox's "schedule_sandbox". Keys draw their sequence from
// "schedule" in both, so a schedule key names one job across the two.
var bucketScheduleSandbox = []byte("schedule_sandbox")

// schedOf returns env's schedule bucket. Its keys start with the due time,
// so most inserts append; pages split full.
func (t *txn) schedOf(env Env) *bolt.Bucket {
	name := bucketSchedule
	if env == Sandbox {
		name = bucketScheduleSandbox
	}
	b := t.Bucket(name)
	b.FillPercent = appendFillPercent
	return b
}

// scheduleKey is the due time in Unix nanoseconds then a sequence, both
// big-endian, so a cursor walks the schedule in due order and, for equal
// times, in the order the work was scheduled.
func scheduleKey(due time.Time, seq uint64) []byte {
	return append(itob(keyNano(due)), itob(seq)...)
}

func scheduleDue(key []byte) time.Time { return time.Unix(0, int64(btoi(key[:8]))).UTC() }

// schedule adds a job due at due and returns its key.
func (t *txn) schedule(due time.Time, kind string, env Env, id string) ([]byte, error) {
	key, _, err := t.scheduleEntity(due, kind, env, id, "", false)
	return key, err
}

// scheduleEntity is schedule for a delivery's first attempt: entity orders
// it after earlier first attempts of the same entity. Those wait in the
// entity's queue (bucketQueue) and only its head is in the schedule, so the
// dispatcher never reads the ones behind it; finishFirst schedules the next
// when the head's first attempt ends. The key returned is the job's schedule
// key from the start, whether it is scheduled now or later; head reports
// that it is scheduled now. A caller that offers the job to the dispatcher
// itself (offer, see Store.OnFresh) takes on waking it for the job.
func (t *txn) scheduleEntity(due time.Time, kind string, env Env, id, entity string, offer bool) (key []byte, head bool, err error) {
	b := t.schedOf(env)
	seq, err := t.Bucket(bucketSchedule).NextSequence()
	if err != nil {
		return nil, false, err
	}
	key = scheduleKey(due, seq)
	v := kind + "|" + string(env) + "|" + id
	if entity != "" {
		v += "\n" + entity
		prefix := queuePrefix(env, entity)
		q := queueOf(t.Tx)
		first, _ := q.Cursor().Seek(prefix)
		waiting := first != nil && bytes.HasPrefix(first, prefix)
		if err := q.Put(append(prefix, key[8:]...), append(bytes.Clone(key), v...)); err != nil {
			return nil, false, err
		}
		if waiting {
			t.s.followed.mark(prefix)
			return key, false, nil
		}
	}
	if err := b.Put(key, []byte(v)); err != nil {
		return nil, false, err
	}
	t.woken = t.woken || !offer
	return key, true, nil
}

// queueOf returns the entity queues' bucket. Within each entity's prefix
// the keys append (schedule sequences), so its pages split full, as the
// schedule's do. At bbolt's default fill the pages stayed half empty and
// the queues dirtied 9.3 of the 67 pages of a commit in complyperf's write
// phase (the wallet's backlog is a queue 13k deep); full, 7.0 of 63.
func queueOf(tx *bolt.Tx) *bolt.Bucket {
	q := tx.Bucket(bucketQueue)
	q.FillPercent = appendFillPercent
	return q
}

// queuePrefix is the key prefix of an entity's queue of first attempts:
// the length of "env|entity" as a uvarint, then the bytes, so no entity's
// prefix is another's. A job's schedule sequence follows, so the queue is
// in event order.
func queuePrefix(env Env, entity string) []byte {
	e := string(env) + "|" + entity
	return append(binary.AppendUvarint(nil, uint64(len(e))), e...)
}

// finishFirst ends the first attempt of j, a job scheduled with an entity:
// it leaves its entity's queue and the next one of that entity, if any, is
// scheduled under the key it was given when it was enqueued, waking the
// dispatcher unless nextClaimed says it already runs that one (its chain,
// NextFirst). It does nothing for other jobs or once done.
func (t *txn) finishFirst(j Job, nextClaimed bool) error {
	if j.Entity == "" || len(j.Key) != 16 {
		return nil
	}
	prefix := queuePrefix(j.Env, j.Entity)
	q := queueOf(t.Tx)
	own := append(bytes.Clone(prefix), j.Key[8:]...)
	c := q.Cursor()
	if k, _ := c.Seek(own); !bytes.Equal(k, own) {
		return nil
	}
	if err := c.Delete(); err != nil {
		return err
	}
	k, v := c.Seek(prefix)
	if k == nil || !bytes.HasPrefix(k, prefix) || len(v) < 16 {
		return nil
	}
	t.woken = t.woken || !nextClaimed
	if err := t.schedOf(j.Env).Put(bytes.Clone(v[:16]), bytes.Clone(v[16:])); err != nil {
		return err
	}
	// The new head has a follower: NextFirst reads it when the head's
	// attempt ends (after a restart, too, when nothing marked it yet).
	if k, _ := c.Next(); k != nil && bytes.HasPrefix(k, prefix) {
		t.s.followed.mark(prefix)
	}
	return nil
}

// unschedule removes the job at key, if any, from the schedule that holds
// it (keys are unique across environments). A cursor deletes where its
// seek found the key: one B+tree search instead of a Get and a Delete.
func (t *txn) unschedule(key []byte) error {
	if len(key) == 0 {
		return nil
	}
	for _, env := range Envs() {
		c := t.schedOf(env).Cursor()
		if k, _ := c.Seek(key); bytes.Equal(k, key) {
			return c.Delete()
		}
	}
	return nil
}

// parseJob reads a schedule entry: "kind|env|id", then "\n" and the entity
// of a first attempt.
func parseJob(k, v []byte) (Job, error) {
	if len(k) != 16 {
		return Job{}, fmt.Errorf("bad schedule key %x", k)
	}
	j := Job{Key: bytes.Clone(k), Due: scheduleDue(k)}
	s := string(v)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, j.Entity = s[:i], s[i+1:]
	}
	parts := strings.SplitN(s, "|", 3)
	if len(parts) != 3 {
		return j, fmt.Errorf("bad schedule entry %x", k)
	}
	j.Kind, j.Env, j.ID = parts[0], Env(parts[1]), parts[2]
	return j, nil
}

// Due returns up to limit jobs due at or before now, in due order, and the
// due time of the next job after now (zero when there is none or the scan
// stopped at limit). now is the store's clock (Now): a sandbox job is due
// by the sandbox test clock, now plus its offset, and the next due time is
// given on the store's clock. It walks each environment's schedule up to
// that environment's now, merging the two in due order on the store's
// clock, so it reads only due jobs (and one entry past each walk's end),
// however far the sandbox's clock runs ahead of production's. It passes
// over jobs whose Claim skip reports (work in flight; skip gets the
// claim's bytes, valid only during the call); they do not count towards
// limit, so work in flight never hides due work behind it, and are not
// parsed. Of the first attempts of one entity only the earliest is in the
// schedule (scheduleEntity), so Due reads the due work and the work in
// flight, never a backlog queued behind them. Delivery jobs come with what
// it takes to send them; one that cannot be sent has a nil Delivery and
// should go to RunJob, which drops it. An unreadable entry is returned with
// an empty Kind, for RunJob to drop.
func (s *Store) Due(now time.Time, limit int, skip func(claim []byte) bool) ([]Job, time.Time, error) {
	var out []Job
	var next time.Time
	offset := time.Duration(s.sandboxOffset.Load())
	err := s.view(func(t *txn) error {
		out, next = nil, time.Time{}
		var dests map[string]destination
		// One walk per environment: its cursor, its current entry, the end
		// of its due range and its clock's lead over the store's.
		type walk struct {
			env   Env
			c     *bolt.Cursor
			k, v  []byte
			end   uint64
			ahead time.Duration
		}
		var walks [2]walk
		for i, env := range [2]Env{Production, Sandbox} {
			w := walk{env: env, c: t.schedOf(env).Cursor(), end: keyNano(now)}
			if env == Sandbox {
				w.ahead = offset
				w.end = keyNano(now.Add(offset))
			}
			if w.k, w.v = w.c.First(); w.k != nil {
				s.stats.scheduleReads.Add(1)
			}
			walks[i] = w
		}
		due := func(w *walk) bool { return w.k != nil && (len(w.k) < 8 || btoi(w.k[:8]) <= w.end) }
		// at is an entry's due time on the store's clock, for the merge.
		at := func(w *walk) int64 {
			if len(w.k) < 8 {
				return 0
			}
			return int64(btoi(w.k[:8])) - int64(w.ahead)
		}
		for len(out) < limit {
			var w *walk
			for i := range walks {
				if due(&walks[i]) && (w == nil || at(&walks[i]) < at(w)) {
					w = &walks[i]
				}
			}
			if w == nil {
				for i := range walks {
					if walks[i].k != nil {
						next = earliest(next, scheduleDue(walks[i].k).Add(-walks[i].ahead))
					}
				}
				break
			}
			k, v := w.k, w.v
			if w.k, w.v = w.c.Next(); w.k != nil {
				s.stats.scheduleReads.Add(1)
			}
			claim := v
			if i := bytes.IndexByte(v, '\n'); i >= 0 {
				claim = v[:i]
			}
			if skip != nil && skip(claim) {
				continue
			}
			j, err := parseJob(k, v)
			if err == nil && j.Env != w.env {
				err = fmt.Errorf("a job of %q in the schedule of %s", j.Env, w.env)
			}
			if err != nil {
				s.log.Warn("schedule: unreadable entry", "env", w.env, "key", fmt.Sprintf("%x", k), "err", err)
				out = append(out, Job{Key: bytes.Clone(k), Env: w.env, claim: string(claim)})
				continue
			}
			if j.Kind == JobDelivery {
				if dests == nil {
					dests = map[string]destination{}
				}
				task, err := t.deliveryTask(j, dests)
				if err != nil {
					s.log.Warn("schedule: delivery cannot be sent", "delivery", j.ID, "err", err)
				}
				j.Delivery = task
			}
			out = append(out, j)
		}
		return nil
	})
	return out, next, err
}

// RunJob does one due simulator job (chain step, sandbox review, session
// expiry) in one transaction that also removes its schedule entry. A job
// whose key is gone was done already.
//
// A job that fails for a reason outside itself — an I/O error, a full disk,
// a failed commit — stays scheduled and RunJob returns the error: the
// caller tries it again later, with back-off (the dispatcher does). Only a
// job that can never succeed (an unreadable entry, a delivery that cannot
// be sent, a step its record's state refuses) is dropped, and its record is
// repaired in the same transaction so that nothing is left waiting for it
// (see repairJob); RunJob then returns nil. If even that transaction fails,
// the entry stays and RunJob returns the error.
func (s *Store) RunJob(j Job) error {
	var cannot error // why the job can never succeed
	err := s.updateIn(j.Env, func(t *txn) error {
		cannot = nil
		b := t.schedOf(j.Env)
		if b.Get(j.Key) == nil {
			return nil
		}
		if err := b.Delete(j.Key); err != nil {
			return err
		}
		if err := t.finishFirst(j, false); err != nil { // the entity's next first attempt is due now
			return err
		}
		var err error
		switch j.Kind {
		case JobChainStep:
			err = t.chainStep(j)
		case JobReview:
			err = t.runReview(j)
		case JobExpiry:
			err = t.expireSession(j)
		case JobRetention:
			err = t.retain(j.Env)
		case JobDelivery:
			cannot = errors.New("the delivery cannot be sent")
		default:
			cannot = errors.New("unreadable schedule entry")
		}
		if err != nil && permanent(err) {
			// Roll the job's writes back; repairJob runs in a fresh transaction.
			cannot = err
			return err
		}
		return err
	})
	switch {
	case err != nil && cannot == nil:
		s.log.Warn("schedule: job failed; kept for a retry", "kind", j.Kind, "id", j.ID, "err", err)
		return err
	case cannot == nil:
		return nil
	}
	s.log.Warn("schedule: job can never succeed; dropped and its record repaired", "kind", j.Kind, "id", j.ID,
		"key", fmt.Sprintf("%x", j.Key), "err", cannot)
	// Repair fully (fail the transaction, hold the review); if the record's
	// state refuses even that, just unlink the job from it.
	for _, minimal := range []bool{false, true} {
		err = s.updateIn(j.Env, func(t *txn) error {
			if t.schedOf(j.Env).Get(j.Key) == nil {
				return nil // done meanwhile
			}
			if err := t.unschedule(j.Key); err != nil {
				return err
			}
			if err := t.finishFirst(j, false); err != nil {
				return err
			}
			return t.repairJob(j, cannot, minimal)
		})
		if err == nil || !permanent(err) {
			break
		}
	}
	if err != nil {
		s.log.Warn("schedule: repairing after a dropped job failed; kept for a retry", "kind", j.Kind, "id", j.ID, "err", err)
	}
	return err
}

// permanent reports whether err, returned by a job, can never go away by
// trying again: a business error of the store (the record's state refuses
// the step) or a record that cannot be decoded. Anything else — I/O, a full
// disk, a failed commit — may pass.
func permanent(err error) bool {
	var e *Error
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	return errors.As(err, &e) || errors.As(err, &syntax) || errors.As(err, &typ)
}

// repairJob leaves nothing waiting for job j, which can never succeed and
// whose entry is gone: a transaction whose pending step it was is Failed
// with the reason (its reservation released, SPEC §4); an applicant whose
// sandbox review it was is put on hold for an operator. When minimal (the
// full repair was refused), the record only forgets the job. Other jobs
// need no repair: an expired session is refused by its expiry time
// whatever the schedule says.
func (t *txn) repairJob(j Job, cause error, minimal bool) error {
	msg := cause.Error()
	if e, ok := cause.(*Error); ok {
		msg = e.Message
	}
	switch j.Kind {
	case JobChainStep:
		x, err := t.transaction(j.Env, j.ID)
		if err != nil || !bytes.Equal(x.ChainKey, j.Key) || terminal(x.Status) {
			return nil
		}
		x.ChainKey = nil
		if minimal {
			return t.putTransaction(j.Env, x)
		}
		_, err = t.move(j.Env, x, StatusFailed, "the chain simulator could not advance the transaction: "+msg)
		return err
	case JobReview:
		a, err := t.getApplicant(j.Env, j.ID)
		if err != nil || !bytes.Equal(a.ReviewJob, j.Key) {
			return nil
		}
		a.ReviewJob = nil
		if minimal || !a.InReview || a.erased() {
			return t.save(j.Env, a)
		}
		return t.hold(j.Env, a)
	}
	return nil
}

// NextFirst returns the first attempt queued right after j's in j's entity
// queue, with what it takes to send it, once j's attempt has been made: the
// dispatcher sends it at once, in event order, instead of waiting for j's
// record to schedule it. ok is false when j has no entity or none follows.
func (s *Store) NextFirst(j Job) (next Job, ok bool, err error) {
	if j.Entity == "" || len(j.Key) != 16 {
		return Job{}, false, nil
	}
	prefix := queuePrefix(j.Env, j.Entity)
	mark, followed := s.followed.get(prefix)
	if !followed {
		return Job{}, false, nil
	}
	s.stats.queueReads.Add(1)
	none := false
	err = s.view(func(t *txn) error {
		own := append(bytes.Clone(prefix), j.Key[8:]...)
		c := t.Bucket(bucketQueue).Cursor()
		k, v := c.Seek(own)
		if bytes.Equal(k, own) {
			k, v = c.Next()
		}
		if k == nil || !bytes.HasPrefix(k, prefix) || len(v) < 16 {
			none = k == nil || !bytes.HasPrefix(k, prefix)
			return nil
		}
		var err error
		if next, err = parseJob(v[:16], v[16:]); err != nil {
			return nil // an unreadable entry waits for the schedule, where RunJob drops it
		}
		if next.Kind == JobDelivery {
			next.Delivery, err = t.deliveryTask(next, map[string]destination{})
			if err != nil {
				return nil // likewise: RunJob drops it once it is scheduled
			}
		}
		ok = next.Kind == JobDelivery
		return nil
	})
	if none {
		s.followed.forget(prefix, mark)
	}
	return next, ok, err
}

// followed remembers the entity queues that had a first attempt queued
// behind their head, so that NextFirst reads only those: most entities (a
// transaction's transaction.created) never have one, and for them the read
// was one transaction per delivery. A mark is set when a follower is queued
// (scheduleEntity, before its commit) or found behind a new head
// (finishFirst) and dropped when NextFirst finds none behind the head,
// unless marked again meanwhile. A missing mark only makes the follower
// wait for the head's record to schedule it (finishFirst), never breaks
// event order; a mark left by a rolled-back operation costs one read.
type followed struct {
	marks sync.Map // queue prefix (string) -> uint64, the mark's generation
	gen   atomic.Uint64
}

func (f *followed) mark(prefix []byte) { f.marks.Store(string(prefix), f.gen.Add(1)) }

func (f *followed) get(prefix []byte) (uint64, bool) {
	g, ok := f.marks.Load(string(prefix))
	if !ok {
		return 0, false
	}
	return g.(uint64), true
}

// forget drops prefix's mark if it is still the one of generation g.
func (f *followed) forget(prefix []byte, g uint64) { f.marks.CompareAndDelete(string(prefix), g) }

// metaQueue marks a file whose first attempts wait in entity queues.
var metaQueue = []byte("schedule_queue")

// migrateQueue moves a file written before entity queues existed to them,
// once: every first attempt joins its entity's queue and only each queue's
// head stays scheduled. On any later open it reads one meta key.
func migrateQueue(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if meta.Get(metaQueue) != nil {
		return nil
	}
	sched, q := tx.Bucket(bucketSchedule), queueOf(tx)
	type entry struct{ k, v []byte }
	var queued []entry
	err := sched.ForEach(func(k, v []byte) error {
		if len(k) == 16 && bytes.IndexByte(v, '\n') >= 0 {
			queued = append(queued, entry{bytes.Clone(k), bytes.Clone(v)})
		}
		return nil
	})
	if err != nil {
		return err
	}
	// In schedule sequence order, which is the order they were enqueued.
	slices.SortFunc(queued, func(a, b entry) int { return bytes.Compare(a.k[8:], b.k[8:]) })
	for _, e := range queued {
		j, err := parseJob(e.k, e.v)
		if err != nil {
			continue
		}
		prefix := queuePrefix(j.Env, j.Entity)
		head, _ := q.Cursor().Seek(prefix)
		if head != nil && bytes.HasPrefix(head, prefix) {
			if err := sched.Delete(e.k); err != nil {
				return err
			}
		}
		if err := q.Put(append(prefix, e.k[8:]...), append(e.k, e.v...)); err != nil {
			return err
		}
	}
	return meta.Put(metaQueue, []byte("1"))
}

// splitSchedule moves the sandbox's jobs of a file written before each
// environment had a schedule (layout 3) from "schedule" to
// "schedule_sandbox", under the same keys, so records that name their job
// by its key (a delivery, a transaction's step, a review) still find it. It
// reads every entry of "schedule" once — pending work, not records — in
// transactions of at most migrateBatch entries, and rewrites only the
// sandbox's. A move is a Put and a Delete in one transaction, so a run
// stopped half way goes on at the next Open.
func (s *Store) splitSchedule() error {
	var after []byte
	for {
		done := false
		err := s.db.Update(func(tx *bolt.Tx) error {
			src, dst := tx.Bucket(bucketSchedule), tx.Bucket(bucketScheduleSandbox)
			c := src.Cursor()
			k, v := c.First()
			if after != nil {
				if k, v = c.Seek(after); bytes.Equal(k, after) {
					k, v = c.Next()
				}
			}
			var moved [][]byte
			for n := 0; n < migrateBatch && k != nil; n++ {
				if entryEnv(v) == Sandbox {
					if err := dst.Put(bytes.Clone(k), bytes.Clone(v)); err != nil {
						return err
					}
					moved = append(moved, bytes.Clone(k))
				}
				after = append(after[:0:0], k...)
				k, v = c.Next()
			}
			done = k == nil
			for _, k := range moved { // not through the cursor: a delete under it skips the next entry
				if err := src.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil || done {
			return err
		}
	}
}
