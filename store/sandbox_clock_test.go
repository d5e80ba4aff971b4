package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// TestDuePerEnvironment: with the sandbox clock ahead, Due hands out a
// sandbox job by the sandbox clock and a production job by the real one,
// and says when the next falls due on the real clock.
func TestDuePerEnvironment(t *testing.T) {
	t.Parallel()
	s, clock := mustOpen(t, "", store.Options{})
	session := func(env store.Env, id string, ttl int) {
		t.Helper()
		if _, _, err := s.CreateApplicant(env, store.ApplicantInput{"externalUserId": json.RawMessage(`"` + id + `"`)}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateSession(env, id, store.SessionInput{TTLSecs: &ttl}, store.Idem{}); err != nil {
			t.Fatal(err)
		}
	}
	expiries := func(now time.Time) (map[store.Env]int, time.Time) {
		t.Helper()
		jobs, next, err := s.Due(now, 100, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := map[store.Env]int{}
		for _, j := range jobs {
			if j.Kind == store.JobExpiry {
				n[j.Env]++
			}
		}
		return n, next
	}
	session(store.Production, "p", 3600)
	session(store.Sandbox, "s", 3600)

	// Two hours on the sandbox clock: its session expires, production's not.
	var ran []store.Job
	mv, err := s.AdvanceClock(store.Sandbox, store.ClockTarget{To: testStart.Add(2 * time.Hour), Field: "to"}, func(j store.Job) error {
		ran = append(ran, j)
		return s.RunJob(j)
	})
	if err != nil || !mv.Complete || mv.Offset != 2*time.Hour {
		t.Fatalf("advance: %+v, %v", mv, err)
	}
	for _, j := range ran {
		if j.Env != store.Sandbox {
			t.Errorf("the sandbox move ran a %s job: %+v", j.Env, j)
		}
	}
	if mv.Ran[store.JobExpiry] != 1 {
		t.Fatalf("ran %v", mv.Ran)
	}
	if got := s.NowIn(store.Production); !got.Equal(clock.Now()) {
		t.Fatalf("production now %s, want %s", got, clock.Now())
	}

	// A sandbox session of a minute: due a minute from now on the real
	// clock, before production's hour.
	session(store.Sandbox, "s2", 60)
	n, next := expiries(clock.Now())
	if len(n) != 0 || !next.Equal(testStart.Add(time.Minute)) {
		t.Fatalf("now: due %v, next %s; want none, next in a minute", n, next)
	}
	n, next = expiries(clock.Now().Add(time.Minute))
	if n[store.Sandbox] != 1 || n[store.Production] != 0 || !next.Equal(testStart.Add(time.Hour)) {
		t.Fatalf("in a minute: due %v, next %s; want the sandbox expiry, next production's in an hour", n, next)
	}
	n, _ = expiries(clock.Now().Add(time.Hour))
	if n[store.Sandbox] != 1 || n[store.Production] != 1 {
		t.Fatalf("in an hour: due %v, want both", n)
	}

	// Backwards is refused naming the field, and production has no test clock.
	if _, err := s.AdvanceClock(store.Sandbox, store.ClockTarget{To: testStart, Field: "to"}, s.RunJob); store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("backwards: %v", err)
	}
	if _, err := s.AdvanceClock(store.Production, store.ClockTarget{By: time.Hour}, s.RunJob); store.ErrorCode(err) != store.EFORBIDDEN {
		t.Fatalf("production: %v", err)
	}
}

// TestAdvanceClockBound: a move past store.MaxClockTime is EINVALID naming
// its field, however far it reaches (the longest time.Duration included,
// whose sum with the clock's offset overflows int64), and the clock stays.
func TestAdvanceClockBound(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t, "", store.Options{})
	if _, err := s.AdvanceClock(store.Sandbox, store.ClockTarget{By: 150 * 365 * 24 * time.Hour}, s.RunJob); err != nil {
		t.Fatal(err)
	}
	from, offset := s.SandboxClock()
	for _, to := range []store.ClockTarget{
		{By: time.Duration(math.MaxInt64), Field: "advanceBy"},
		{By: store.MaxClockTime().Sub(from) + time.Millisecond, Field: "advanceBy"},
		{To: store.MaxClockTime().Add(time.Millisecond), Field: "to"},
		{To: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), Field: "to"},
	} {
		_, err := s.AdvanceClock(store.Sandbox, to, s.RunJob)
		var e *store.Error
		if !errors.As(err, &e) || e.Code != store.EINVALID || e.Field != to.Field {
			t.Errorf("%+v: %v, want EINVALID naming %s", to, err, to.Field)
		}
		if _, got := s.SandboxClock(); got != offset {
			t.Errorf("%+v moved the clock: offset %s, was %s", to, got, offset)
		}
	}
	if mv, err := s.AdvanceClock(store.Sandbox, store.ClockTarget{To: store.MaxClockTime(), Field: "to"}, s.RunJob); err != nil || !mv.Now.Equal(store.MaxClockTime()) {
		t.Errorf("to the bound itself: %+v, %v", mv, err)
	}
}

// TestClockMoveSendsABacklogTogether: a move sends the deliveries already
// due on the clock as it stands concurrently, as the loop would (under
// load a one-second move sent them one at a time, ran for minutes and
// held every sandbox delivery back meanwhile), and still each entity's in
// event order, one at a time.
func TestClockMoveSendsABacklogTogether(t *testing.T) {
	t.Parallel()
	s, clock := mustOpen(t, "", store.Options{})
	env := store.Sandbox
	if _, err := s.SetWebhook(context.Background(), env, "http://127.0.0.1:9/hook", nil); err != nil {
		t.Fatal(err)
	}
	const width = 4
	for i := range 3 { // one wallet's three events, then five other wallets'
		if err := s.Enqueue(env, store.DestCustody, "wallet.created", "wallet", "w0", map[string]int{"n": i}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= 5; i++ {
		if err := s.Enqueue(env, store.DestCustody, "wallet.created", "wallet", fmt.Sprintf("w%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	var (
		mu              sync.Mutex
		inFlight, most  int
		w0              []string // w0's payloads in the order sent
		w0Busy, overlap bool
		together        = make(chan struct{})
		once            sync.Once
	)
	run := func(j store.Job) error {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		if inFlight == 2 {
			once.Do(func() { close(together) })
		}
		mine := j.Delivery != nil && strings.Contains(string(j.Delivery.Payload), `"entityId":"w0"`)
		if mine {
			overlap = overlap || w0Busy
			w0Busy = true
			w0 = append(w0, string(j.Delivery.Payload))
		}
		mu.Unlock()
		// The first job waits for a second to start: run one at a time,
		// none would (the wait ends the test instead of hanging it).
		select {
		case <-together:
		case <-time.After(10 * time.Second):
			return errors.New("no second delivery ran beside the first")
		}
		_, err := s.RecordAttempt(j, store.AttemptResult{RequestURL: "http://127.0.0.1:9/hook", StatusCode: 200, At: clock.Now(), Success: true})
		mu.Lock()
		inFlight--
		if mine {
			w0Busy = false
		}
		mu.Unlock()
		return err
	}
	mv, err := s.AdvanceClockWide(env, store.ClockTarget{By: time.Second}, run, width)
	if err != nil || mv.Ran[store.JobDelivery] != 8 {
		t.Fatalf("move: %+v %v; want 8 deliveries", mv, err)
	}
	if most < 2 || most > width {
		t.Errorf("at most %d deliveries at once, want 2 to %d", most, width)
	}
	if overlap || len(w0) != 3 {
		t.Fatalf("w0's deliveries overlapped (%v) or not all sent: %q", overlap, w0)
	}
	for i, p := range w0 {
		if !strings.Contains(p, fmt.Sprintf(`"n":%d`, i)) {
			t.Errorf("w0's delivery %d sent %s: not in event order", i, p)
		}
	}
}
