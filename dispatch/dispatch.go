// Package dispatch runs the loop over the store's durable schedule: it
// claims due work and does it — signed webhook deliveries, the sandbox
// simulators' steps, link expiry and retention batches.
package dispatch

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/complybox/complybox/store"
	"github.com/complybox/complybox/store/urlpolicy"
)

// Store is what the dispatcher needs of the store.
type Store interface {
	Due(now time.Time, limit int, skip func(claim []byte) bool) ([]store.Job, time.Time, error)
	// RecordAttempt returns the status it left the delivery in.
	RecordAttempt(j store.Job, r store.AttemptResult) (string, error)
	RunJob(j store.Job) error
	OnWork(fn func())
	URLPolicy() urlpolicy.Policy
}

// nextFirster is what the dispatcher uses, when the store offers it, to
// send the first attempts queued behind one entity's in a row: the next one
// of the entity goes as soon as the previous attempt has ended, while that
// attempt is being recorded, in event order.
type nextFirster interface {
	NextFirst(j store.Job) (store.Job, bool, error)
}

// freshOfferer is what the dispatcher uses, when the store offers it, to
// take the first attempts a commit made due, with what it takes to send
// them, without reading the schedule (offer).
type freshOfferer interface {
	OnFresh(fn func([]store.Job) bool)
}

// Config configures the dispatcher; zero values take SPEC defaults.
type Config struct {
	PollInterval   time.Duration   // 5s
	AttemptTimeout time.Duration   // 5s
	RetryDelays    []time.Duration // 10s 30s 60s 5m 15m
	MaxAttempts    int             // 5
	Concurrency    int             // 16
	Version        string          // in the User-Agent
	// ReadyMaxAge is how long a claimed job may wait for a slot (100ms).
	// An older one goes back to the schedule, so that what it was read
	// with (the webhook's URL and secret) is read afresh: it waited
	// behind slow attempts.
	ReadyMaxAge time.Duration

	// Now is the clock shared with the store; time.Now when nil.
	Now func() time.Time
	// EnvNow is an environment's clock (the sandbox has a test clock),
	// which stamps attempts and their retries. When nil: the store's
	// NowIn if it has one (store.Store does), else Now.
	EnvNow func(store.Env) time.Time
	// Jitter returns a factor in [-0.1, 0.1] applied to retry delays; random
	// when nil.
	Jitter func() float64
	// AdvanceWaits, when set, is called by Advance as it begins waiting for
	// env's jobs in flight (not called when none is): the point a test
	// synchronises on. It runs under the dispatcher's lock, so it must be
	// quick and must not call the Dispatcher.
	AdvanceWaits func(env store.Env)
}

func (c Config) withDefaults() Config {
	if c.PollInterval <= 0 {
		c.PollInterval = 5 * time.Second
	}
	if c.AttemptTimeout <= 0 {
		c.AttemptTimeout = 5 * time.Second
	}
	if len(c.RetryDelays) == 0 {
		c.RetryDelays = []time.Duration{10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute, 15 * time.Minute}
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 5
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 16
	}
	if c.ReadyMaxAge <= 0 {
		c.ReadyMaxAge = 100 * time.Millisecond
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.EnvNow == nil {
		now := c.Now
		c.EnvNow = func(store.Env) time.Time { return now() }
	}
	if c.Jitter == nil {
		c.Jitter = func() float64 { return (rand.Float64()*2 - 1) / 10 }
	}
	return c
}

// Dispatcher is the loop. Create it with New and start it with Run.
type Dispatcher struct {
	st     Store
	cfg    Config
	log    *slog.Logger
	sender *sender

	wake     chan struct{}
	running  atomic.Bool
	stopping atomic.Bool // Run's context is done: start nothing new

	mu       sync.Mutex
	inflight map[string]*lease // Job.Claim() -> its lease, until recorded
	busy     int               // jobs running: HTTP attempts or simulator steps
	ready    []claimedJob      // claimed, in due order, waiting for a slot
	backlog  bool              // the last scan may have left due jobs unclaimed
	full     bool              // the last pass found the bound on claims reached: the next record's end wakes the loop (do)
	finished []finished        // recorded jobs whose claims the loop releases
	wg       sync.WaitGroup
	// scanning: a read of the schedule is in flight (claim); offered, the
	// claims offer took meanwhile, whose copies in that read are stale.
	scanning bool
	offered  map[string]bool

	// Idle workers wait here for their next job (start); quit, closed
	// when Run returns, ends them.
	handoff  chan claimedJob
	quit     chan struct{}
	quitOnce sync.Once

	// A clock move (Advance) of an environment holds the loop off its
	// jobs: none is started while advancing is set, and the move waits
	// until the environment's running jobs (envBusy) are done.
	advancing map[store.Env]bool
	envBusy   map[store.Env]int
	idle      *sync.Cond // signalled, on mu, when a job of some environment ends
	slotFree  *sync.Cond // signalled, on mu, when a slot of Concurrency frees and a clock move waits for one
	slotWants int        // a clock move's runs waiting for a slot: a freed slot goes to them first
	moves     sync.Mutex // serialises Advance

	observe atomic.Pointer[func(store.Job, store.AttemptResult, string)] // OnAttempt's fn
}

// OnAttempt makes fn be told of every delivery attempt once it is recorded:
// the job (its Delivery says the destination), the result and the status
// the record left the delivery in (store.DeliveryDelivered, DeliveryFailed,
// DeliveryDead, or DeliveryPending when a manual retry re-queued it during
// the attempt, whatever the result's RetryAt said). fn must be quick. A
// later call replaces fn.
func (d *Dispatcher) OnAttempt(fn func(store.Job, store.AttemptResult, string)) {
	d.observe.Store(&fn)
}

// recorded tells OnAttempt's fn of a recorded attempt.
func (d *Dispatcher) recorded(j store.Job, r store.AttemptResult, status string) {
	if f := d.observe.Load(); f != nil {
		(*f)(j, r, status)
	}
}

// lease marks a claimed job. Leases live in memory: the store's file lock
// admits one process, and after a restart every due job is due again.
type lease struct {
	until time.Time // real time; past it the job may be claimed again
	// failures counts the job's consecutive runs that could not commit (a
	// full disk, an I/O error). While held, the job stays claimed until
	// until: its back-off.
	failures int
	held     bool
}

// maxCommitBackoff caps the wait before a job whose outcome could not be
// committed is tried again.
const maxCommitBackoff = time.Minute

// commitBackoff is the wait before a job whose outcome the nth time in a
// row could not be committed (a full disk) is tried again: 1s, 2s, 4s …
// 1 min. Not the webhook retry delays: those are retryAt.
func commitBackoff(n int) time.Duration {
	if n > 6 {
		return maxCommitBackoff
	}
	return min(time.Second<<max(n-1, 0), maxCommitBackoff)
}

// finished is a job whose outcome is committed.
type finished struct {
	claim string
	lease *lease
}

// claimedJob is a job claimed under lease that waits for a concurrency
// slot (Dispatcher.ready).
type claimedJob struct {
	job   store.Job
	lease *lease
	at    time.Time // real time of the scan that claimed it
}

// New returns a dispatcher over st. It registers itself to be woken by every
// commit that enqueues work.
func New(st Store, cfg Config, logger *slog.Logger) *Dispatcher {
	if logger == nil {
		logger = slog.Default()
	}
	if c, ok := st.(interface{ NowIn(store.Env) time.Time }); ok && cfg.EnvNow == nil {
		cfg.EnvNow = c.NowIn
	}
	cfg = cfg.withDefaults()
	d := &Dispatcher{
		st: st, cfg: cfg, log: logger,
		wake:     make(chan struct{}, 1),
		inflight: map[string]*lease{},
		offered:  map[string]bool{},
		handoff:  make(chan claimedJob),
		quit:     make(chan struct{}),

		advancing: map[store.Env]bool{},
		envBusy:   map[store.Env]int{},
	}
	d.idle = sync.NewCond(&d.mu)
	d.slotFree = sync.NewCond(&d.mu)
	d.sender = newSender(cfg, st.URLPolicy())
	st.OnWork(d.Wake)
	if fo, ok := st.(freshOfferer); ok {
		fo.OnFresh(d.offer)
	}
	return d
}

// offer takes the jobs a commit made due (store.OnFresh): each one not
// claimed yet is claimed and made ready, as a scan of the schedule would
// claim it, and started when a slot is free. It reports whether it took
// them all; when it does not (the loop is not running, an environment's
// clock is moving, or the claims are at their bound), the store wakes the
// loop, whose scan finds what is left. Ready jobs may outnumber the slots:
// while every slot is busy, what a commit hands over waits here for one
// (Config.ReadyMaxAge at most) instead of costing a scan later; with a
// ready bound of one job per slot, complyperf's write phase declined about
// half of the hand-overs.
func (d *Dispatcher) offer(jobs []store.Job) bool {
	if !d.running.Load() || d.stopping.Load() {
		return false
	}
	wall := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.scanning {
		d.release()
	}
	if len(d.inflight)+len(jobs) > 4*d.cfg.Concurrency {
		return false
	}
	for _, j := range jobs {
		if d.advancing[j.Env] {
			return false // Advance runs it
		}
		if l, ok := d.inflight[j.Claim()]; ok && (l.held || wall.Before(l.until)) {
			continue // a scan that read it after the commit took it
		}
		if d.scanning {
			d.offered[j.Claim()] = true
		}
		l := &lease{until: wall.Add(d.leaseTime())}
		d.inflight[j.Claim()] = l
		d.ready = append(d.ready, claimedJob{j, l, wall})
	}
	d.startReady(d.cfg.Concurrency - d.busy)
	return true
}

// Wake makes the loop look for due work at once.
func (d *Dispatcher) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Running reports whether the loop is running.
func (d *Dispatcher) Running() bool { return d.running.Load() }

// leaseTime is how long a claimed job is kept from being claimed again:
// longer than any attempt can take. It runs on real time, not the injected
// clock, since it bounds real work.
func (d *Dispatcher) leaseTime() time.Duration { return 2*d.cfg.AttemptTimeout + 10*time.Second }

// Run runs the loop until ctx is done, then waits for work in flight to
// finish (at most the attempt timeout and a little more).
func (d *Dispatcher) Run(ctx context.Context) error {
	d.running.Store(true)
	defer d.running.Store(false)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		wait := d.claim()
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			d.stopping.Store(true)
			d.drain()
			d.quitOnce.Do(func() { close(d.quit) })
			return nil
		case <-d.wake:
		case <-timer.C:
		}
	}
}

// drain waits for work in flight, bounded.
func (d *Dispatcher) drain() {
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d.cfg.AttemptTimeout + 2*time.Second):
		d.log.Warn("dispatch: shutting down with attempts still in flight")
	}
}

// claim starts every due job it has room for and returns how long to wait
// before looking again: the poll interval, or less when a job falls due
// sooner. A job that ends wakes the loop when a scan is owed: its claim
// must be released for a retry or a next step, or due jobs are left
// unclaimed (do).
//
// It also claims up to Concurrency due jobs beyond the free slots and keeps
// them ready: a job that ends hands its slot to the first of them, so that
// under a backlog the schedule is read once per batch of jobs rather than
// once per ended job (each read walks past every entry still in flight).
func (d *Dispatcher) claim() time.Duration {
	now := d.cfg.Now()
	d.mu.Lock()
	d.release()
	// Jobs held for back-off count neither towards the concurrency bound
	// nor towards the records waiting for a commit. One that was not
	// claimed again well after its back-off ran out is gone: forget it.
	wall := time.Now()
	wait := d.cfg.PollInterval
	pending := 0
	for c, l := range d.inflight {
		switch {
		case !l.held:
			pending++
		case wall.After(l.until.Add(2 * maxCommitBackoff)):
			delete(d.inflight, c)
		case wall.Before(l.until):
			wait = min(wait, l.until.Sub(wall))
		}
	}
	// Finished attempts wait for their record's group commit outside the
	// concurrency bound, but a slow disk must not let them pile up. Ready
	// jobs count as pending: they hold leases.
	free := min(d.cfg.Concurrency-d.busy, 4*d.cfg.Concurrency-pending)
	d.startReady(free)
	free = min(d.cfg.Concurrency-d.busy, 4*d.cfg.Concurrency-pending)
	want := min(free+d.cfg.Concurrency-len(d.ready), 4*d.cfg.Concurrency-pending)
	if free <= 0 || want <= 0 {
		d.backlog = true
		d.full = 4*d.cfg.Concurrency-pending <= 0
		d.mu.Unlock()
		return wait
	}
	d.full = false
	d.scanning = true
	d.mu.Unlock()
	jobs, next, err := d.st.Due(now, want, d.claimed)
	d.mu.Lock()
	d.scanning = false
	offered := d.offered
	if len(offered) > 0 {
		d.offered = map[string]bool{}
	}
	if err != nil {
		d.log.Error("dispatch: reading the schedule", "err", err)
		d.backlog = true
		d.mu.Unlock()
		return wait
	}
	d.backlog = len(jobs) == want
	for _, j := range jobs {
		if d.advancing[j.Env] {
			continue // its clock is moving: Advance runs it
		}
		if offered[j.Claim()] {
			continue // handed over fresh (offer) while this scan read it
		}
		prev := d.inflight[j.Claim()]
		l := &lease{until: wall.Add(d.leaseTime())}
		if prev != nil && prev.held {
			l.failures = prev.failures
		}
		d.inflight[j.Claim()] = l
		d.ready = append(d.ready, claimedJob{j, l, wall})
	}
	d.startReady(d.cfg.Concurrency - d.busy)
	d.mu.Unlock()
	if !next.IsZero() {
		wait = min(wait, max(next.Sub(now), time.Millisecond))
	}
	return wait
}

// release releases the claims of recorded jobs, on d.mu. It runs between
// scans, never during one (claim, and offer when no scan is in flight): a
// scan's snapshot that predates a job's record still holds the job's key,
// so its claim must stand until a scan starts after that commit.
func (d *Dispatcher) release() {
	for _, f := range d.finished {
		if d.inflight[f.claim] == f.lease {
			delete(d.inflight, f.claim)
		}
	}
	clear(d.finished)
	d.finished = d.finished[:0]
}

// startReady starts up to n ready jobs, in due order, on d.mu, and reports
// how many it started. Ready jobs of an environment whose clock is moving,
// or any once the loop is stopping, are dropped with their claims: the
// schedule still holds them. So are those older than Config.ReadyMaxAge,
// for the loop's next scan.
func (d *Dispatcher) startReady(n int) int {
	started := 0
	var now time.Time
	for started < n && len(d.ready) > 0 {
		r := d.ready[0]
		d.ready[0] = claimedJob{}
		d.ready = d.ready[1:]
		if d.stopping.Load() || d.advancing[r.job.Env] {
			d.unclaim(r)
			continue
		}
		if now.IsZero() {
			now = time.Now()
		}
		if now.Sub(r.at) > d.cfg.ReadyMaxAge {
			d.unclaim(r)
			d.backlog = true
			continue
		}
		d.envBusy[r.job.Env]++
		d.busy++
		d.wg.Add(1)
		d.start(r.job, r.lease)
		started++
	}
	return started
}

// unclaim releases the claim of a ready job that will not run, on d.mu.
func (d *Dispatcher) unclaim(r claimedJob) {
	if d.inflight[r.job.Claim()] == r.lease {
		delete(d.inflight, r.job.Claim())
	}
}

// claimed reports whether the job of claim (a Job.Claim, "kind|env|id")
// is in flight under a live lease, or belongs to an environment whose
// clock is moving (Advance runs it), so that Due passes over it.
func (d *Dispatcher) claimed(claim []byte) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.advancing) > 0 {
		_, rest, _ := bytes.Cut(claim, []byte("|"))
		env, _, _ := bytes.Cut(rest, []byte("|"))
		if d.advancing[store.Env(env)] {
			return true
		}
	}
	l, ok := d.inflight[string(claim)]
	return ok && time.Now().Before(l.until)
}

// workerIdle is how long a worker waits for another job before it ends.
const workerIdle = 5 * time.Second

// start runs a claimed job (counted in d.wg) on a worker that waits for one,
// or on a new worker. Workers outlive their jobs so that an attempt runs on
// a stack already grown to what an attempt needs: a goroutine per job grew
// (copied) its stack on every attempt, 2 % of the CPU of complyperf's
// write phase.
func (d *Dispatcher) start(j store.Job, l *lease) {
	select {
	case d.handoff <- claimedJob{job: j, lease: l}:
	default:
		go d.worker(j, l)
	}
}

// worker runs j, then each job handed to it, until it has waited
// workerIdle for one or the loop has stopped.
func (d *Dispatcher) worker(j store.Job, l *lease) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		d.do(j, l)
		idle.Reset(workerIdle)
		select {
		case c := <-d.handoff:
			j, l = c.job, c.lease
		case <-idle.C:
			return
		case <-d.quit:
			return
		}
	}
}

// do runs one claimed job. The concurrency slot is freed as soon as the
// HTTP attempt ends; the claim holds until its outcome is recorded, so the
// record can share a group commit with others while the next attempt runs.
// A job whose outcome could not be committed (RunJob or RecordAttempt
// failed: a full disk, an I/O error) stays in the store's schedule; its
// claim is held for a growing back-off, so it is neither lost nor retried
// in a tight loop.
func (d *Dispatcher) do(j store.Job, l *lease) {
	// done: the job can never be claimed again (a delivered delivery), so
	// its claim may wait for the loop's next pass to be released.
	freed, failed, done := false, false, false
	free := func() {
		if !freed {
			freed = true
			d.mu.Lock()
			d.busy--
			// The slot passes to a clock move waiting for one, else to a
			// ready job; the loop looks for more once none is left, if its
			// last scan left some. Work enqueued since wakes it (OnWork).
			d.passSlot()
			look := len(d.ready) == 0 && d.backlog
			d.mu.Unlock()
			if look {
				d.Wake()
			}
		}
	}
	defer func() {
		free()
		d.mu.Lock()
		if failed {
			l.failures++
			l.held, l.until = true, time.Now().Add(commitBackoff(l.failures))
		} else {
			d.finished = append(d.finished, finished{j.Claim(), l})
		}
		if d.envBusy[j.Env]--; d.envBusy[j.Env] == 0 {
			d.idle.Broadcast()
		}
		// Any other job's claim is released before the next scan, which
		// may be due at once (a retry, a simulator's next step). Delivered
		// ones are released here once Concurrency of them have gathered,
		// unless a scan is in flight (release): waking the loop to release
		// them cost a scan, which read every entry still in flight. But
		// when the loop's last pass found the bound on claims reached
		// (full), records are what make room, and no slot may free to
		// send it back (free): the first record's end wakes it.
		wake := !done || d.full
		d.full = false
		if !wake && len(d.finished) >= d.cfg.Concurrency {
			if d.scanning {
				wake = true
			} else {
				d.release()
			}
		}
		d.mu.Unlock()
		d.wg.Done()
		if wake {
			d.Wake()
		}
	}()
	if j.Kind != store.JobDelivery || j.Delivery == nil {
		if err := d.st.RunJob(j); err != nil {
			failed = true
			d.log.Error("dispatch: job kept for a retry", "kind", j.Kind, "id", j.ID, "err", err, "failures", l.failures+1)
		}
		return
	}
	res := d.sender.send(j.Env, j.Delivery)
	if !res.Success {
		res.RetryAt = d.retryAt(j.Delivery.RoundAttempt, res)
	}
	if next, nl, ok := d.chain(j); ok {
		freed = true // the concurrency slot passes to next
		res.NextClaimed = true
		d.wg.Add(1)
		d.start(next, nl)
	}
	free()
	status, err := d.st.RecordAttempt(j, res.AttemptResult)
	if err != nil {
		failed = true
		d.log.Error("dispatch: recording attempt; kept for a retry", "delivery", j.ID, "err", err, "failures", l.failures+1)
		return
	}
	done = res.Success
	d.recorded(j, res.AttemptResult, status)
}

// chain claims the first attempt queued right after j's in its entity,
// once j's attempt has ended, so that a busy entity's first attempts go out
// one after another without waiting for each record's commit. Nothing else
// can have sent that one: the schedule offers it only after j's record,
// which comes after this.
func (d *Dispatcher) chain(j store.Job) (store.Job, *lease, bool) {
	nf, ok := d.st.(nextFirster)
	if !ok || j.Entity == "" || d.stopping.Load() {
		return store.Job{}, nil, false
	}
	next, ok, err := nf.NextFirst(j)
	if err != nil {
		d.log.Error("dispatch: reading the next first attempt", "delivery", j.ID, "err", err)
		return store.Job{}, nil, false
	}
	if !ok {
		return store.Job{}, nil, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if l, held := d.inflight[next.Claim()]; (held && time.Now().Before(l.until)) || d.advancing[next.Env] {
		return store.Job{}, nil, false // in flight, or its clock is moving: Advance runs it
	}
	l := &lease{until: time.Now().Add(d.leaseTime())}
	d.inflight[next.Claim()] = l
	d.envBusy[next.Env]++ // as claim counts it: a clock move waits for it
	return next, l, true
}

// retryAt returns when the next attempt after failed attempt n of a round is
// due, or zero when the round is spent and the delivery is dead: the
// configured delay with jitter, or a 429/503 answer's Retry-After when that
// is longer (the Retry-After counts up to an hour), after the attempt ended
// (SPEC §5), not after it began: a slow failure must not shorten either.
func (d *Dispatcher) retryAt(n int, res result) time.Time {
	if n >= d.cfg.MaxAttempts {
		return time.Time{}
	}
	delay := d.cfg.RetryDelays[min(max(n, 1)-1, len(d.cfg.RetryDelays)-1)]
	delay = time.Duration(float64(delay) * (1 + d.cfg.Jitter()))
	delay = max(delay, min(res.retryAfter, maxRetryAfter))
	return res.End.Add(delay)
}

// Advance moves environment env's clock forward to target (SPEC §7, the
// sandbox test clock), running every job of env due on the way, in due
// order, exactly as the loop does — deliveries are sent to their receivers
// and recorded — with the clock at each job's due time: one at a time,
// except deliveries already due when the clock stands where it is (a
// backlog), which go out concurrently as the loop sends them, each
// entity's in event order.
// The loop holds off env's jobs for the duration and Advance first waits
// for those already running, so a move never overlaps the loop's work of
// env; other environments carry on. ctx bounds only that wait: once it
// is done (the client went away) Advance returns ECANCELED and the clock
// stays.
//
// It needs a store with a test clock (store.Store); errors as
// store.Store.AdvanceClock.
func (d *Dispatcher) Advance(ctx context.Context, env store.Env, to store.ClockTarget) (store.ClockMove, error) {
	cs, ok := d.st.(clockStore)
	if !ok {
		return store.ClockMove{}, errors.New("dispatch: the store has no test clock")
	}
	d.moves.Lock()
	defer d.moves.Unlock()
	d.mu.Lock()
	d.advancing[env] = true
	kept := d.ready[:0]
	for _, r := range d.ready {
		if r.job.Env == env {
			d.unclaim(r) // Advance runs it, at its due time
			continue
		}
		kept = append(kept, r)
	}
	clear(d.ready[len(kept):])
	d.ready = kept
	stop := context.AfterFunc(ctx, func() {
		d.mu.Lock()
		d.idle.Broadcast()
		d.mu.Unlock()
	})
	if d.envBusy[env] > 0 && d.cfg.AdvanceWaits != nil {
		d.cfg.AdvanceWaits(env)
	}
	for d.envBusy[env] > 0 && ctx.Err() == nil {
		d.idle.Wait()
	}
	d.mu.Unlock()
	stop()
	defer func() {
		d.mu.Lock()
		delete(d.advancing, env)
		d.mu.Unlock()
		d.Wake()
	}()
	if ctx.Err() != nil {
		return store.ClockMove{}, store.Errorf(store.ECANCELED, "request_canceled",
			"the request ended while the move waited for the deliveries in flight; the clock did not move")
	}
	// Overdue deliveries go out as concurrently as the loop sends them, in
	// its slots: the move's and the loop's (other environments') together
	// never exceed Concurrency.
	return cs.AdvanceClockWide(env, to, d.runInSlot, d.cfg.Concurrency)
}

// runInSlot runs job j as runNow does in one of the loop's Concurrency
// slots, waiting for one to free.
func (d *Dispatcher) runInSlot(j store.Job) error {
	d.mu.Lock()
	d.slotWants++
	for d.busy >= d.cfg.Concurrency {
		d.slotFree.Wait()
	}
	d.slotWants--
	d.busy++
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		d.busy--
		d.passSlot()
		d.mu.Unlock()
	}()
	return d.runNow(j)
}

// passSlot gives a slot just freed to a clock move's run waiting for one,
// else to a ready job: the loop's jobs get only the free slots beyond
// those the move's waiting runs will take (a run signalled before may not
// have woken yet). Called on d.mu.
func (d *Dispatcher) passSlot() {
	if d.slotWants > 0 {
		d.slotFree.Signal()
	}
	if d.cfg.Concurrency-d.busy-d.slotWants > 0 {
		d.startReady(1)
	}
}

// clockStore is what Advance needs of the store beyond Store.
type clockStore interface {
	AdvanceClockWide(env store.Env, to store.ClockTarget, run func(store.Job) error, width int) (store.ClockMove, error)
}

// runNow does job j at once, as do does, and returns what kept its outcome
// from being committed.
func (d *Dispatcher) runNow(j store.Job) error {
	if j.Kind != store.JobDelivery || j.Delivery == nil {
		return d.st.RunJob(j)
	}
	res := d.sender.send(j.Env, j.Delivery)
	if !res.Success {
		res.RetryAt = d.retryAt(j.Delivery.RoundAttempt, res)
	}
	status, err := d.st.RecordAttempt(j, res.AttemptResult)
	if err != nil {
		return err
	}
	d.recorded(j, res.AttemptResult, status)
	return nil
}
