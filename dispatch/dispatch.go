// Package dispatch runs complybox's one background loop: it claims due work
// from the store's durable schedule and does it — signed webhook deliveries
// and the sandbox simulators' steps.
package dispatch

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/complybox/complybox/store"
)

// Store is what the dispatcher needs of the store.
type Store interface {
	Due(now time.Time, limit int, skip func(key []byte) bool) ([]store.Job, error)
	NextDue() (time.Time, error)
	RecordAttempt(j store.Job, r store.AttemptResult) error
	RunJob(j store.Job) error
	OnWork(fn func())
	IsDisallowedAddr(ip netip.Addr) bool
}

// Config configures the dispatcher; zero values take SPEC defaults.
type Config struct {
	PollInterval   time.Duration   // 5s
	AttemptTimeout time.Duration   // 5s
	RetryDelays    []time.Duration // 10s 30s 60s 5m 15m
	MaxAttempts    int             // 5
	Concurrency    int             // 16
	Version        string          // in the User-Agent

	// Now is the clock shared with the store; time.Now when nil.
	Now func() time.Time
	// Jitter returns a factor in [-0.1, 0.1] applied to retry delays; random
	// when nil.
	Jitter func() float64
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
	if c.Version == "" {
		c.Version = "dev"
	}
	if c.Now == nil {
		c.Now = time.Now
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

	wake    chan struct{}
	running atomic.Bool

	mu       sync.Mutex
	inflight map[string]time.Time // schedule key -> lease expiry
	entities map[string]bool      // entity keys with a first attempt in flight
	wg       sync.WaitGroup
}

// New returns a dispatcher over st. It registers itself to be woken by every
// commit that enqueues work.
func New(st Store, cfg Config, logger *slog.Logger) *Dispatcher {
	if logger == nil {
		logger = slog.Default()
	}
	cfg = cfg.withDefaults()
	d := &Dispatcher{
		st: st, cfg: cfg, log: logger,
		wake:     make(chan struct{}, 1),
		inflight: map[string]time.Time{},
		entities: map[string]bool{},
	}
	d.sender = newSender(cfg, st.IsDisallowedAddr)
	st.OnWork(d.Wake)
	return d
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

// lease is how long a claimed job is kept from being claimed again: longer
// than any attempt can take.
func (d *Dispatcher) lease() time.Duration { return d.cfg.AttemptTimeout + 10*time.Second }

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
			d.drain()
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
// before looking again.
func (d *Dispatcher) claim() time.Duration {
	now := d.cfg.Now()
	d.mu.Lock()
	free := d.cfg.Concurrency - len(d.inflight)
	d.mu.Unlock()
	if free > 0 {
		jobs, err := d.st.Due(now, free+d.cfg.Concurrency, d.claimed)
		if err != nil {
			d.log.Error("dispatch: reading the schedule", "err", err)
			return d.cfg.PollInterval
		}
		d.mu.Lock()
		for _, j := range jobs {
			if len(d.inflight) >= d.cfg.Concurrency {
				break
			}
			first := j.Delivery != nil && j.Delivery.Attempt == 1
			if first && d.entities[j.Delivery.EntityKey] {
				continue // an earlier event of this entity goes first
			}
			d.inflight[string(j.Key)] = now.Add(d.lease())
			if first {
				d.entities[j.Delivery.EntityKey] = true
			}
			d.wg.Add(1)
			go d.do(j, first)
		}
		d.mu.Unlock()
	}
	wait := d.cfg.PollInterval
	if next, err := d.st.NextDue(); err == nil && !next.IsZero() {
		if until := next.Sub(now); until < wait {
			wait = max(until, time.Millisecond)
		}
	}
	return wait
}

// claimed reports whether the job at key is in flight under a live lease.
func (d *Dispatcher) claimed(key []byte) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	exp, ok := d.inflight[string(key)]
	return ok && d.cfg.Now().Before(exp)
}

func (d *Dispatcher) do(j store.Job, first bool) {
	defer func() {
		d.mu.Lock()
		delete(d.inflight, string(j.Key))
		if first {
			delete(d.entities, j.Delivery.EntityKey)
		}
		d.mu.Unlock()
		d.wg.Done()
		d.Wake()
	}()
	if j.Kind != store.JobDelivery {
		if err := d.st.RunJob(j); err != nil {
			d.log.Error("dispatch: job", "kind", j.Kind, "id", j.ID, "err", err)
		}
		return
	}
	res := d.sender.send(j.Delivery)
	if !res.Success {
		res.RetryAt = d.retryAt(j.Delivery.RoundAttempt, res)
	}
	if err := d.st.RecordAttempt(j, res.AttemptResult); err != nil {
		d.log.Error("dispatch: recording attempt", "delivery", j.ID, "err", err)
	}
}

// retryAt returns when the next attempt after failed attempt n of a round is
// due, or zero when the round is spent and the delivery is dead.
func (d *Dispatcher) retryAt(n int, res result) time.Time {
	if n >= d.cfg.MaxAttempts {
		return time.Time{}
	}
	delay := d.cfg.RetryDelays[min(n-1, len(d.cfg.RetryDelays)-1)]
	delay = time.Duration(float64(delay) * (1 + d.cfg.Jitter()))
	if res.retryAfter > delay {
		delay = min(res.retryAfter, time.Hour)
	}
	return res.At.Add(delay)
}
