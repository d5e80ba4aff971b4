package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The sandbox test clock (SPEC §7): the sandbox environment's time is the
// store's clock plus an offset that only grows. It is kept in the meta
// bucket, so it survives a restart, and in memory for every operation to
// read: an operation of the sandbox takes its now from it (updateIn), so
// every timestamp, expiry check, rate-limit window and idempotency window
// of the sandbox follows the test clock. Production's clock is the store's
// clock, never moved.
//
// Each environment has its own schedule (schedOf), keyed by due time on
// that environment's clock, so a walk of one environment's due jobs never
// reads the other's, however far apart the clocks are. Moving the clock forward (AdvanceClock) runs every
// sandbox job due on the way in due order, the clock set to each job's due
// time as it runs, so work that scheduled work (a retry, the next chain
// step) runs too when it falls before the target.

var keySandboxOffset = []byte("sandbox-clock-offset") // meta: the offset, ns, 8 bytes big-endian

// MaxClockSteps bounds the jobs one clock move runs; a move that reaches
// it stops there and says so (ClockMove.Complete false).
const MaxClockSteps = 100_000

// loadClock reads the sandbox offset kept in the file.
func (s *Store) loadClock() error {
	return s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketMeta).Get(keySandboxOffset); len(v) == 8 {
			s.sandboxOffset.Store(int64(binary.BigEndian.Uint64(v)))
		}
		return nil
	})
}

// SandboxClock returns the sandbox environment's current time and its lead
// over the store's clock.
func (s *Store) SandboxClock() (now time.Time, offset time.Duration) {
	offset = time.Duration(s.sandboxOffset.Load())
	return s.Now().Add(offset), offset
}

// ClockMove is what one move of the sandbox clock did.
type ClockMove struct {
	From     time.Time      // the sandbox time before the move
	Now      time.Time      // the sandbox time after it
	Offset   time.Duration  // the sandbox clock's lead over the store's clock after it
	Ran      map[string]int // jobs run, by kind (Job.Kind)
	Steps    int            // jobs run in all
	Complete bool           // false when the move stopped at MaxClockSteps before its target
}

// ClockTarget says where a move of the sandbox clock goes: By ahead of its
// time when the move begins (the offset grows by exactly By), or else to
// the time To. Field names the request field it came from, for errors.
type ClockTarget struct {
	By    time.Duration
	To    time.Time
	Field string
}

// MaxClockMove bounds one move of the test clock (about ten years), so a
// typo cannot push the sandbox past what timestamps can hold.
const MaxClockMove = 10 * 365 * 24 * time.Hour

// MaxClockYear bounds moves of the sandbox clock: none takes it past the
// start of that year (MaxClockTime); only real time, which the clock runs
// on with, does. Time arithmetic in nanoseconds ends in
// April 2262 (time.Duration, UnixNano); the bound keeps the clock, and every
// retry, expiry and window counted from it, well inside that.
const MaxClockYear = 2200

// MaxClockTime returns the latest time the sandbox clock may be moved to,
// 2200-01-01T00:00:00Z.
func MaxClockTime() time.Time { return time.Date(MaxClockYear, 1, 1, 0, 0, 0, 0, time.UTC) }

// NewClockTarget reads where a move of the sandbox clock should go, as
// POST /v1/sandbox/clock and the console's clock page take it: advanceBy,
// a Go duration ("90m", "36h"), or to, a timestamp, exactly one of them;
// now is the sandbox's time. Returns EINVALID naming advanceBy or to.
func NewClockTarget(advanceBy *string, to *Time, now time.Time) (ClockTarget, error) {
	t := ClockTarget{Field: "to"}
	switch {
	case advanceBy != nil && to != nil:
		return t, Invalid("to", "give advanceBy or to, not both")
	case advanceBy != nil:
		t.Field = "advanceBy"
		d, err := time.ParseDuration(strings.TrimSpace(*advanceBy))
		switch {
		case err != nil:
			return t, Invalid(t.Field, "advanceBy must be a duration such as \"90m\" or \"36h\" (units ms, s, m, h)")
		case d < 0:
			return t, Invalid(t.Field, "the sandbox clock moves only forward: advanceBy must not be negative")
		case d > MaxClockMove:
			return t, Invalid(t.Field, "advanceBy must be at most %s", MaxClockMove)
		case d%time.Millisecond != 0:
			// Times are kept to the millisecond: a finer part would be
			// rounded away, or move nothing at all.
			return t, Invalid(t.Field, "advanceBy must be a whole number of milliseconds (units ms, s, m, h)")
		}
		t.By = d
	case to != nil && to.IsZero():
		return t, Invalid(t.Field, "to must be a timestamp after the sandbox clock's time, such as \"2026-11-21T05:17:44.123Z\"")
	case to != nil:
		t.To = to.Time
		if t.To.Sub(now) > MaxClockMove {
			return t, Invalid(t.Field, "to must be within %s of the sandbox clock", MaxClockMove)
		}
	default:
		return t, Invalid("advanceBy", "advanceBy (a duration such as \"36h\") or to (a timestamp) is required")
	}
	return t, nil
}

// JobKinds lists every kind of scheduled job (Job.Kind).
func JobKinds() []string {
	return []string{JobDelivery, JobChainStep, JobReview, JobExpiry, JobRetention}
}

// RanByKind is Ran with every kind of JobKinds present, 0 when none ran.
func (mv ClockMove) RanByKind() map[string]int {
	ran := map[string]int{}
	for _, k := range JobKinds() {
		ran[k] = 0
	}
	for k, n := range mv.Ran {
		ran[k] = n
	}
	return ran
}

// AdvanceClock moves environment env's clock forward to the target, running
// through run, in due order and one at a time (AdvanceClockWide sends a
// backlog of deliveries together), every job of env due by
// then — including jobs that those jobs schedule — with the clock set to
// each job's due time (or left where it is, for a job already overdue)
// before it runs. run must do the job as the dispatcher does (RunJob, or a
// delivery attempt recorded with RecordAttempt) and must not be running
// env's jobs elsewhere meanwhile: the caller (dispatch.Dispatcher.Advance)
// holds env's work back for the duration. Moves are serialised.
//
// Returns EFORBIDDEN for production, whose clock never moves, EINVALID
// naming field when target is before env's current time or past
// MaxClockTime, and the error of
// a job run that fails (the clock then stays at that job's due time, the
// move's other effects kept).
func (s *Store) AdvanceClock(env Env, to ClockTarget, run func(Job) error) (ClockMove, error) {
	return s.AdvanceClockWide(env, to, run, 1)
}

// AdvanceClockWide is AdvanceClock running up to width overdue deliveries
// at once: deliveries due at or before the clock's time as it stands (a
// backlog: no step of the clock is between them) are sent concurrently,
// as the loop sends them, instead of one after another. Each entity's
// deliveries still go in event order (only the head of an entity's queue
// is ever in the schedule), and every other job runs alone at its due
// time. A move under load otherwise sent one delivery at a time while
// the loop held the environment's deliveries back for it: a one-second
// move ran for minutes. run must be safe to call concurrently when width
// is over 1.
func (s *Store) AdvanceClockWide(env Env, to ClockTarget, run func(Job) error, width int) (ClockMove, error) {
	if env != Sandbox {
		return ClockMove{}, Errorf(EFORBIDDEN, "sandbox_only", "the test clock exists only in the sandbox environment")
	}
	s.clockMu.Lock()
	defer s.clockMu.Unlock()
	mv := ClockMove{Ran: map[string]int{}, Complete: true}
	var start time.Duration
	mv.From, start = s.SandboxClock()
	// goal is where the move ends. A move By keeps the sandbox clock's
	// lead growing by exactly By: the time the move itself takes counts.
	goal := func() time.Time { return to.To.UTC() }
	if to.By != 0 || to.To.IsZero() {
		if to.By < 0 {
			return mv, Invalid(to.Field, "the sandbox clock moves only forward: %s is negative", to.By)
		}
		goal = func() time.Time { return s.Now().Add(start + to.By) }
	}
	// The bound is checked on a target computed without overflow: From
	// plus By in time.Time, which reaches far past 2262, not in
	// nanoseconds.
	target := to.To
	if to.By != 0 || to.To.IsZero() {
		target = mv.From.Add(to.By)
	}
	if limit := MaxClockTime(); target.After(limit) {
		return mv, Invalid(to.Field, "the sandbox clock goes no further than %s: this move would take it to %s",
			At(limit).String(), At(target).String())
	}
	if target := goal(); target.Before(mv.From) {
		return mv, Invalid(to.Field, "the sandbox clock moves only forward: %s is before its time, %s",
			At(target).String(), At(mv.From).String())
	}
	var after []byte // the schedule key of the job run last
	for {
		n := max(1, min(width, MaxClockSteps-mv.Steps))
		jobs, err := s.nextDueIn(env, goal(), after, n)
		if err == nil && len(jobs) == 0 && after != nil {
			// A request of env that began before the last step may have
			// scheduled work behind it: look once more from the start.
			after = nil
			jobs, err = s.nextDueIn(env, goal(), nil, n)
		}
		if err != nil {
			return s.clockResult(mv), err
		}
		if len(jobs) == 0 {
			break
		}
		if mv.Steps >= MaxClockSteps {
			mv.Complete = false
			return s.clockResult(mv), nil
		}
		if err := s.setOffset(jobs[0].Due.Sub(s.Now())); err != nil {
			return s.clockResult(mv), err
		}
		if err := runAll(jobs, run); err != nil {
			return s.clockResult(mv), err
		}
		for _, j := range jobs {
			kind := j.Kind
			if kind == "" {
				kind = "unreadable" // dropped by RunJob
			}
			mv.Ran[kind]++
			mv.Steps++
		}
		// Look on from the first job run: a delivery run with others may
		// have scheduled its entity's next one before the last of them.
		after = jobs[0].Key
	}
	end := goal().Sub(s.Now())
	if to.By != 0 || to.To.IsZero() {
		end = start + to.By
	}
	if err := s.setOffset(end); err != nil {
		return s.clockResult(mv), err
	}
	return s.clockResult(mv), nil
}

func (s *Store) clockResult(mv ClockMove) ClockMove {
	mv.Now, mv.Offset = s.SandboxClock()
	return mv
}

// setOffset moves the sandbox clock's lead to offset, if that is forward:
// it is written to the file first, then made current. Only AdvanceClock
// calls it, under clockMu.
func (s *Store) setOffset(offset time.Duration) error {
	if offset <= time.Duration(s.sandboxOffset.Load()) {
		return nil
	}
	err := s.update(func(t *txn) error {
		return t.Bucket(bucketMeta).Put(keySandboxOffset, binary.BigEndian.AppendUint64(nil, uint64(offset)))
	})
	if err != nil {
		return err
	}
	s.sandboxOffset.Store(int64(offset))
	return nil
}

// nextDueIn returns the next jobs of env due at or before until on env's
// clock, in schedule order, looking after the schedule key after (nil: from
// the start), each delivery with what it takes to send it: one job, or up
// to n deliveries in a row that are all overdue on the clock as it stands
// (they need no step of the clock between them). A job schedules its
// follow-up at or after its own due time with a greater sequence (an
// entity's next delivery at its event's time, after the one before), so
// looking on from the first job of those run last leaves nothing behind.
func (s *Store) nextDueIn(env Env, until time.Time, after []byte, n int) ([]Job, error) {
	var jobs []Job
	// The API shows due times in milliseconds; the schedule keeps them
	// finer. A move to a shown time runs what is due within it.
	end := keyNano(until.Truncate(time.Millisecond).Add(time.Millisecond - 1))
	now, _ := s.SandboxClock()
	overdue := keyNano(now) // due by the clock as it stands: no step between them
	err := s.viewIn(env, func(t *txn) error {
		jobs = jobs[:0]
		dests := map[string]destination{}
		c := t.schedOf(env).Cursor()
		k, v := c.First()
		if after != nil {
			if k, v = c.Seek(after); bytes.Equal(k, after) {
				k, v = c.Next()
			}
		}
		for ; k != nil && len(jobs) < n; k, v = c.Next() {
			s.stats.scheduleReads.Add(1)
			if len(k) >= 8 && btoi(k[:8]) > end {
				return nil
			}
			j, err := parseJob(k, v)
			if err == nil && j.Env != env {
				err = fmt.Errorf("a job of %q in the schedule of %s", j.Env, env)
			}
			if err != nil {
				if len(jobs) > 0 {
					return nil // runs alone, next
				}
				s.log.Warn("schedule: unreadable entry", "key", fmt.Sprintf("%x", k))
				jobs = append(jobs, Job{Key: bytes.Clone(k), Env: env, Due: scheduleDue(k), claim: string(v)})
				return nil
			}
			// Only overdue deliveries run together; any other job, or one
			// the clock must step to, runs alone.
			together := j.Kind == JobDelivery && btoi(k[:8]) <= overdue
			if len(jobs) > 0 && !together {
				return nil
			}
			if j.Kind == JobDelivery {
				task, err := t.deliveryTask(j, dests)
				if err != nil {
					s.log.Warn("schedule: delivery cannot be sent", "delivery", j.ID, "err", err)
				}
				j.Delivery = task
			}
			jobs = append(jobs, j)
			if !together {
				return nil
			}
		}
		return nil
	})
	return jobs, err
}

// runAll runs jobs through run, concurrently when there are several, and
// returns the first error.
func runAll(jobs []Job, run func(Job) error) error {
	if len(jobs) == 1 {
		return run(jobs[0])
	}
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() { errs[i] = run(j) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// entryEnv returns the environment of a schedule entry, whose value is
// "kind|env|id", without allocating.
func entryEnv(v []byte) Env {
	_, rest, _ := bytes.Cut(v, []byte("|"))
	e, _, _ := bytes.Cut(rest, []byte("|"))
	switch string(e) {
	case string(Sandbox):
		return Sandbox
	case string(Production):
		return Production
	}
	return ""
}

// earliest returns the earlier of a and b, a zero time standing for none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}
