package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// clockAnswer is the body of GET and POST /v1/sandbox/clock.
type clockAnswer struct {
	Now      string
	Offset   string
	OffsetMs int64
	From     string
	Ran      map[string]int
	Steps    int
	Complete bool
}

// moveClock moves the sandbox clock with body and returns the answer.
func (in *instance) moveClock(body map[string]any) clockAnswer {
	in.t.Helper()
	var out clockAnswer
	in.expect(200, "POST", "/v1/sandbox/clock", body).json(in.t, &out)
	if !out.Complete {
		in.t.Fatalf("clock move %v incomplete: %+v", body, out)
	}
	return out
}

// ms formats t as the API does.
func ms(t time.Time) string { return t.UTC().Format(store.TimeLayout) }

func TestSandboxClockReadAndMove(t *testing.T) {
	t.Parallel()
	in := start(t)
	var c clockAnswer
	in.expect(200, "GET", "/v1/sandbox/clock", nil).json(t, &c)
	if c.Now != ms(testStart) || c.Offset != "0s" || c.OffsetMs != 0 {
		t.Fatalf("fresh clock %+v", c)
	}
	mv := in.moveClock(map[string]any{"advanceBy": "36h"})
	if mv.From != ms(testStart) || mv.Now != ms(testStart.Add(36*time.Hour)) || mv.Offset != "36h0m0s" ||
		mv.OffsetMs != 36*3600*1000 || mv.Steps != 0 {
		t.Fatalf("move +36h: %+v", mv)
	}
	for _, k := range []string{"delivery", "chain", "review", "expiry", "retention"} {
		if n, ok := mv.Ran[k]; !ok || n != 0 {
			t.Errorf("ran[%s] = %d, %v: every kind is present, 0 when none ran", k, n, ok)
		}
	}
	// to: an absolute time; the offset keeps counting against real time.
	to := testStart.Add(48 * time.Hour)
	if mv = in.moveClock(map[string]any{"to": ms(to)}); mv.Now != ms(to) || mv.Offset != "48h0m0s" {
		t.Fatalf("move to %s: %+v", ms(to), mv)
	}
	in.Clock.Advance(time.Hour) // real time passes: the sandbox keeps its lead
	in.expect(200, "GET", "/v1/sandbox/clock", nil).json(t, &c)
	if c.Now != ms(to.Add(time.Hour)) || c.Offset != "48h0m0s" {
		t.Fatalf("after an hour of real time: %+v", c)
	}
	// Sandbox records take the sandbox time.
	a := in.createApplicant("late", "Later")
	if a["createdAtUtc"] != ms(to.Add(time.Hour)) {
		t.Errorf("sandbox applicant createdAtUtc %v, want the sandbox time %s", a["createdAtUtc"], ms(to.Add(time.Hour)))
	}

	t.Run("ErrNeverBackwards", func(t *testing.T) {
		for _, c := range []struct {
			body  any
			field string
		}{
			{map[string]any{"to": ms(testStart)}, "to"},
			{map[string]any{"to": ms(to)}, "to"}, // an hour ago on the sandbox clock
			{map[string]any{"advanceBy": "-1s"}, "advanceBy"},
			{map[string]any{"advanceBy": "soon"}, "advanceBy"},
			{map[string]any{"advanceBy": "7d"}, "advanceBy"},
			{map[string]any{"advanceBy": "1ns"}, "advanceBy"},
			{map[string]any{"advanceBy": "0.5ms"}, "advanceBy"},
			{map[string]any{"advanceBy": "1.0009s"}, "advanceBy"},
			{map[string]any{"advanceBy": 3600}, "advanceBy"},
			{map[string]any{"advanceBy": "100000h"}, "advanceBy"},
			{map[string]any{"to": "yesterday"}, "to"},
			{map[string]any{"advanceBy": "1h", "to": ms(to.Add(48 * time.Hour))}, "to"},
			{map[string]any{}, "advanceBy"},
			{map[string]any{"to": "0001-01-01T00:00:00Z"}, "to"},
		} {
			r := in.expect(400, "POST", "/v1/sandbox/clock", c.body)
			if code, f := errField(t, r); code != "validation_failed" || f != c.field {
				t.Errorf("%v: %s %q, want the field %s; body %s", c.body, code, f, c.field, r.Body)
			}
		}
		in.expect(200, "GET", "/v1/sandbox/clock", nil).json(t, &c)
		if c.Offset != "48h0m0s" {
			t.Fatalf("a refused move moved the clock: %+v", c)
		}
	})

	t.Run("ErrProduction", func(t *testing.T) {
		key, secret := in.credential(store.Production, store.RolePartner)
		for _, m := range []string{"GET", "POST"} {
			r := in.expect(403, m, "/v1/sandbox/clock", map[string]any{"advanceBy": "1h"}, "X-Api-Key", key, "X-Api-Secret", secret)
			if code, _ := errField(t, r); code != "sandbox_only" {
				t.Errorf("%s: %s", m, r.Body)
			}
		}
		// Production's clock is the real one, whatever the sandbox's says.
		p := in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "prod", "firstName": "Pro", "lastName": "Duction"},
			"X-Api-Key", key, "X-Api-Secret", secret).m(t)
		if p["createdAtUtc"] != ms(in.Clock.Now()) {
			t.Errorf("production createdAtUtc %v, want the real time %s", p["createdAtUtc"], ms(in.Clock.Now()))
		}
		if got := in.Store.NowIn(store.Production); !got.Equal(in.Clock.Now()) {
			t.Errorf("production clock %s, want %s", got, in.Clock.Now())
		}
	})
}

// TestSandboxClockExpiresLinks: a link of an hour, the clock two hours on:
// its pending steps are expired, the hosted page and the short link answer
// 410 and the history says enrollment.expired.
func TestSandboxClockExpiresLinks(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("exp", "Ire")
	var link struct{ Token, ShortCode, ExpiresAt string }
	in.expect(201, "POST", "/v1/applicants/exp/verification-sessions", map[string]any{"ttlSecs": 3600}).json(t, &link)
	if r := in.sdkGet("/sdk/" + link.Token); r.Status != 200 {
		t.Fatalf("fresh link: %d", r.Status)
	}
	mv := in.moveClock(map[string]any{"advanceBy": "2h"})
	if mv.Ran["expiry"] != 1 {
		t.Fatalf("ran %v, want one expiry", mv.Ran)
	}
	if r := in.sdkGet("/sdk/" + link.Token); r.Status != http.StatusGone {
		t.Fatalf("/sdk page after expiry: %d", r.Status)
	}
	if r := noRedirect(t, in.URL+"/l/"+link.ShortCode); r.StatusCode != http.StatusGone {
		t.Fatalf("short link after expiry: %d", r.StatusCode)
	}
	if s := in.stepStatuses("exp")["selfie"]; s != "expired/RED/EXPIRED" {
		t.Errorf("selfie step %s", s)
	}
	want := []string{"enrollment.expired:system", "enrollment.created:partner", "applicant.created:partner"}
	if h := in.historyTypes("exp"); !slices.Equal(h, want) {
		t.Fatalf("history %v, want %v", h, want)
	}
	// The expiry happened at the link's expiry time, on the sandbox clock.
	var h struct {
		Items []struct{ EventType, AtUtc string }
	}
	in.expect(200, "GET", "/v1/applicants/exp/review-history", nil).json(t, &h)
	if h.Items[0].AtUtc != link.ExpiresAt || link.ExpiresAt != ms(testStart.Add(time.Hour)) {
		t.Errorf("enrollment.expired at %s, link expiring at %s", h.Items[0].AtUtc, link.ExpiresAt)
	}
	// A day after the expiry retention removes the session with its short
	// link (one removal; store.TestRetention sees both buckets empty);
	// the link and the page still answer 410, not 404.
	if mv := in.moveClock(map[string]any{"advanceBy": "48h"}); mv.Ran["retention"] != 1 {
		t.Errorf("ran %v: retention removes the session and its short link", mv.Ran)
	}
	if r := noRedirect(t, in.URL+"/l/"+link.ShortCode); r.StatusCode != http.StatusGone {
		t.Errorf("short link after retention: %d", r.StatusCode)
	}
	if r := in.sdkGet("/sdk/" + link.Token); r.Status != http.StatusGone {
		t.Errorf("/sdk page after retention: %d", r.Status)
	}
}

// TestSandboxClockClearsRateLimits: spawn-kyc refused with 429, the clock
// past the window, the next call is served.
func TestSandboxClockClearsRateLimits(t *testing.T) {
	t.Parallel()
	in := start(t, func(o *options) { o.settings.SpawnRateLimitPerHour = 1 })
	in.createCompany("rl", "Rate", map[string]any{"fullName": "Ra Te", "roles": []string{"ubo"}},
		map[string]any{"fullName": "Li Mit", "roles": []string{"director"}})
	in.spawn(201, "rl", 0, nil)
	r := in.expect(429, "POST", "/v1/applicants/rl/ubos/1/spawn-kyc", nil)
	if r.Header.Get("Retry-After") != "3600" {
		t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	in.moveClock(map[string]any{"advanceBy": "59m59s"})
	in.expect(429, "POST", "/v1/applicants/rl/ubos/1/spawn-kyc", nil)
	in.moveClock(map[string]any{"advanceBy": "1s"})
	in.spawn(201, "rl", 1, nil)
}

// TestSandboxClockExpiresIdempotencyKeys: a key is replayed within 24 h of
// the sandbox clock and forgotten after.
func TestSandboxClockExpiresIdempotencyKeys(t *testing.T) {
	t.Parallel()
	in := start(t)
	body := map[string]any{"name": "idem"}
	var a, b, c struct{ VaultID string }
	in.expect(201, "POST", "/vaults", body, "Idempotency-Key", "k").json(t, &a)
	in.moveClock(map[string]any{"advanceBy": "23h"})
	in.expect(201, "POST", "/vaults", body, "Idempotency-Key", "k").json(t, &b)
	mv := in.moveClock(map[string]any{"advanceBy": "2h"})
	in.expect(201, "POST", "/vaults", body, "Idempotency-Key", "k").json(t, &c)
	if a.VaultID != b.VaultID || c.VaultID == a.VaultID {
		t.Fatalf("vaults %s, %s (replay), %s (after 25 h): want a replay then a new vault", a.VaultID, b.VaultID, c.VaultID)
	}
	if mv.Ran["retention"] != 1 {
		t.Errorf("ran %v: retention removes the record after its 24 h", mv.Ran)
	}
}

// TestSandboxClockKillsDeliveries: a receiver that answers 500, the clock
// moved through the retry schedule: every retry is made to the receiver,
// at the sandbox time it was due, and the delivery ends dead. Each
// attempt's webhook-timestamp is the real time, which Standard Webhooks
// receivers compare with their own clock (SPEC §5: they verify unchanged).
func TestSandboxClockKillsDeliveries(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc := newReceiver(t, in.Clock, func(int) int { return 500 })
	in.configureWebhook(rc)
	t0 := testStart.Add(24 * time.Hour) // the sandbox a day ahead of real time
	in.moveClock(map[string]any{"advanceBy": "24h"})
	var test struct{ DeliveryID string }
	in.expect(202, "POST", "/webhooks/outbound/test", nil).json(t, &test)

	mv := in.moveClock(map[string]any{"advanceBy": "1h"})
	// The loop may have made the first attempt before the move.
	if n := mv.Ran["delivery"]; n != 4 && n != 5 {
		t.Errorf("ran %v, want the retries", mv.Ran)
	}
	var stamps []string
	for range 5 {
		got := rc.next(t)
		stamps = append(stamps, got.Header.Get("webhook-timestamp"))
	}
	rc.none(t, 50*time.Millisecond)
	var d struct {
		Status       string
		AttemptCount int
		Attempts     []struct {
			AttemptNumber  int
			AttemptedAt    string
			HTTPStatusCode int
		}
	}
	in.expect(200, "GET", "/webhooks/deliveries/"+test.DeliveryID, nil).json(t, &d)
	if d.Status != "dead" || d.AttemptCount != 5 || len(d.Attempts) != 5 {
		t.Fatalf("delivery %s after an hour: %+v", test.DeliveryID, d)
	}
	// Retry delays 10s 30s 1m 5m, no jitter, from the sandbox time.
	at := t0
	for i, gap := range []time.Duration{0, 10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute} {
		at = at.Add(gap)
		a := d.Attempts[i]
		if a.AttemptNumber != i+1 || a.AttemptedAt != ms(at) || a.HTTPStatusCode != 500 {
			t.Errorf("attempt %d: %+v, want attemptedAt %s", i+1, a, ms(at))
		}
		if stamps[i] != fmt.Sprint(testStart.Unix()) {
			t.Errorf("attempt %d: webhook-timestamp %s, want the real clock's %d, not the sandbox's %d", i+1, stamps[i], testStart.Unix(), at.Unix())
		}
	}
}

// TestSandboxClockRunsTheChain: a withdrawal with auto_advance and a step
// delay of an hour, the clock five hours on: Completed, each status event
// at the receiver in order, an hour apart on the sandbox clock.
func TestSandboxClockRunsTheChain(t *testing.T) {
	t.Parallel()
	in := start(t, func(o *options) { o.settings.Chain.StepDelay = time.Hour })
	rc := newReceiver(t, in.Clock, nil)
	secret := in.configureWebhook(rc)
	v := in.vault("chain")
	w := in.wallet(v, "ETH")
	in.fund(w.WalletID, "1")
	for range 3 { // the deposit's events, from the manual advances
		rc.next(t)
	}
	var x struct{ TransactionID, CreatedAt string }
	in.expect(201, "POST", "/transactions", map[string]any{"type": "Withdrawal", "sourceWalletId": w.WalletID,
		"destinationAddress": "0x" + strings.Repeat("ab", 20), "amount": "0.25"}).json(t, &x)

	mv := in.moveClock(map[string]any{"advanceBy": "5h"})
	if mv.Ran["chain"] != 4 {
		t.Errorf("ran %v, want four chain steps", mv.Ran)
	}
	if got := in.transaction(x.TransactionID); got["status"] != "Completed" {
		t.Fatalf("withdrawal after 5 h: %v", got["status"])
	}
	var statuses, stamps []string
	for len(statuses) < 4 {
		e := verified(t, secret, rc.next(t))
		if e.EntityID != x.TransactionID || e.EventType != "transaction.status.updated" {
			continue
		}
		statuses = append(statuses, fmt.Sprint(e.Data["status"]))
		stamps = append(stamps, e.Timestamp)
	}
	want := []string{"PendingSignature", "Broadcasting", "Confirming", "Completed"}
	if !slices.Equal(statuses, want) {
		t.Fatalf("status events %v, want %v", statuses, want)
	}
	created, _ := time.Parse(store.TimeLayout, x.CreatedAt)
	for i, s := range stamps {
		if want := ms(created.Add(time.Duration(i+1) * time.Hour)); s != want {
			t.Errorf("event %d (%s) at %s, want %s", i+1, statuses[i], s, want)
		}
	}
}

// TestSandboxClockSurvivesRestart: the next process on the same file keeps
// the sandbox clock's lead.
func TestSandboxClockSurvivesRestart(t *testing.T) {
	t.Parallel()
	a := boot(t)
	a.moveClock(map[string]any{"advanceBy": "90m"})
	a.stop()
	b := boot(t, func(o *bootOptions) { o.path, o.clock = a.Path, a.Clock })
	b.Key, b.Secret = a.Key, a.Secret
	var c clockAnswer
	b.expect(200, "GET", "/v1/sandbox/clock", nil).json(t, &c)
	if c.Offset != "1h30m0s" || c.Now != ms(testStart.Add(90*time.Minute)) {
		t.Fatalf("after restart: %+v", c)
	}
}

// startMoveWatched starts an instance whose waiting channel closes when a
// clock move first finds a sandbox job in flight and waits for it.
func startMoveWatched(t *testing.T) (*instance, <-chan struct{}) {
	waiting := make(chan struct{})
	var once sync.Once
	in := start(t, func(o *options) {
		o.dispatch.AdvanceWaits = func(store.Env) { once.Do(func() { close(waiting) }) }
	})
	return in, waiting
}

// TestSandboxClockWaitsForTheLoop: a move made while the loop's attempt of
// a sandbox delivery is in flight waits for it to be recorded, then makes
// the retries itself: the receiver never sees two attempts at once, and the
// attempts are numbered 1 to 5 without a gap or a repeat.
func TestSandboxClockWaitsForTheLoop(t *testing.T) {
	t.Parallel()
	in, waiting := startMoveWatched(t)
	release := make(chan struct{})
	var mu sync.Mutex
	busy, most := 0, 0
	rc := handlerReceiver(t, in.Clock, func(n int, w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		busy++
		most = max(most, busy)
		mu.Unlock()
		if n == 1 {
			<-release
		}
		mu.Lock()
		busy--
		mu.Unlock()
		w.WriteHeader(500)
	})
	in.configureWebhook(rc)
	var test struct{ DeliveryID string }
	in.expect(202, "POST", "/webhooks/outbound/test", nil).json(t, &test)
	rc.next(t) // the loop's first attempt is in flight, held by the receiver
	moved := make(chan clockAnswer, 1)
	go func() {
		var out clockAnswer
		r := doRequest(t, "POST", in.URL+"/v1/sandbox/clock", map[string]any{"advanceBy": "1h"},
			"X-Api-Key", in.Key, "X-Api-Secret", in.Secret)
		json.Unmarshal(r.Body, &out)
		moved <- out
	}()
	<-waiting // the move found the attempt in flight and waits for it
	close(release)
	mv := <-moved
	if mv.Ran["delivery"] != 4 {
		t.Errorf("ran %v, want the 4 retries", mv.Ran)
	}
	var d struct {
		Status   string
		Attempts []struct{ AttemptNumber int }
	}
	in.expect(200, "GET", "/webhooks/deliveries/"+test.DeliveryID, nil).json(t, &d)
	if d.Status != "dead" || len(d.Attempts) != 5 {
		t.Fatalf("delivery %+v", d)
	}
	for i, a := range d.Attempts {
		if a.AttemptNumber != i+1 {
			t.Errorf("attempt %d numbered %d", i+1, a.AttemptNumber)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if most != 1 {
		t.Errorf("the receiver saw %d attempts at once", most)
	}
}

// TestSandboxClockClientGone: a client that goes away while its move
// waits for a delivery in flight abandons the move: the clock stays, and
// the request is logged as 499 (client closed request), not as a server
// error.
func TestSandboxClockClientGone(t *testing.T) {
	t.Parallel()
	in, waiting := startMoveWatched(t)
	release := make(chan struct{})
	rc := handlerReceiver(t, in.Clock, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			<-release
		}
	})
	in.configureWebhook(rc)
	in.expect(202, "POST", "/webhooks/outbound/test", nil)
	rc.next(t) // the loop's attempt is in flight, held by the receiver
	var before clockAnswer
	in.expect(200, "GET", "/v1/sandbox/clock", nil).json(t, &before)

	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "POST", in.URL+"/v1/sandbox/clock", strings.NewReader(`{"advanceBy":"1h"}`))
		req.Header.Set("X-Api-Key", in.Key)
		req.Header.Set("X-Api-Secret", in.Secret)
		_, err := http.DefaultClient.Do(req)
		gone <- err
	}()
	<-waiting // the move waits for the attempt
	defer close(release)
	cancel()
	if err := <-gone; err == nil {
		t.Fatal("the canceled request got an answer")
	}

	// The attempt is still held: the move can end only by seeing its
	// client gone.
	var log struct {
		Items []struct {
			Path   string
			Status int
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		in.expect(200, "GET", "/v1/requests?path=/v1/sandbox/clock&method=POST", nil).json(t, &log)
		if len(log.Items) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond) // the handler ends once net/http sees the connection closed
	}
	if len(log.Items) != 1 || log.Items[0].Status != 499 {
		t.Fatalf("request log of the abandoned move: %+v, want one 499", log.Items)
	}
	var after clockAnswer
	in.expect(200, "GET", "/v1/sandbox/clock", nil).json(t, &after)
	if after.Offset != before.Offset {
		t.Errorf("clock offset %s after the abandoned move, was %s", after.Offset, before.Offset)
	}
}

// TestSandboxClockBound: the sandbox clock goes no further than
// store.MaxClockTime, so its time arithmetic never overflows (time.Duration
// and UnixNano end in 2262). A move past it, by advanceBy or to, is a 400
// naming the field and leaves the clock where it was, and moves within the
// bound still work after it: the sandbox is never stuck.
func TestSandboxClockBound(t *testing.T) {
	t.Parallel()
	in := start(t)
	bound := time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
	refused := func(body map[string]any, field string) {
		t.Helper()
		var before, after clockAnswer
		in.expect(200, "GET", "/v1/sandbox/clock", nil).json(t, &before)
		r := in.expect(400, "POST", "/v1/sandbox/clock", body)
		if code, f := errField(t, r); code != "validation_failed" || f != field || !strings.Contains(string(r.Body), "2200-01-01T00:00:00.000Z") {
			t.Errorf("%v: %s, want validation_failed naming %s and the bound", body, r.Body, field)
		}
		in.expect(200, "GET", "/v1/sandbox/clock", nil).json(t, &after)
		if after.Now != before.Now || after.Offset != before.Offset {
			t.Errorf("%v moved the clock: %+v, then %+v", body, before, after)
		}
	}
	// Ten years at a time, as far as the bound lets.
	var c clockAnswer
	for range 17 { // 2026 + 170 years: 2196
		c = in.moveClock(map[string]any{"advanceBy": "87600h"})
	}
	if now, _ := time.Parse(time.RFC3339, c.Now); now.After(bound) || bound.Sub(now) > 87600*time.Hour {
		t.Fatalf("after 17 moves of ten years: %s", c.Now)
	}
	refused(map[string]any{"advanceBy": "87600h"}, "advanceBy")
	refused(map[string]any{"to": "2200-01-01T00:00:00.001Z"}, "to")
	in.moveClock(map[string]any{"advanceBy": "1h"})
	if mv := in.moveClock(map[string]any{"to": ms(bound)}); mv.Now != ms(bound) {
		t.Fatalf("move to the bound: %+v", mv)
	}
	refused(map[string]any{"advanceBy": "1ms"}, "advanceBy")
	refused(map[string]any{"to": "2209-06-01T00:00:00Z"}, "to")
}

// TestSandboxClockToShownDueTime: a move to exactly the due time the API
// shows (milliseconds) runs the job due then, though the schedule keeps a
// finer time: the move counts it, and a read right after sees it done.
func TestSandboxClockToShownDueTime(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc := newReceiver(t, in.Clock, func(int) int { return 500 })
	in.configureWebhook(rc)
	in.Clock.Advance(400 * time.Microsecond) // real time is rarely a whole millisecond
	id := in.testEvent()
	rc.next(t)
	in.waitDelivery(id, "failed", 1)
	var d struct {
		NextAttemptAt string
		AttemptCount  int
	}
	in.expect(200, "GET", "/webhooks/deliveries/"+id, nil).json(t, &d)
	mv := in.moveClock(map[string]any{"to": d.NextAttemptAt})
	if mv.Ran["delivery"] != 1 {
		t.Errorf("move to the shown due time %s ran %v, want the delivery's retry", d.NextAttemptAt, mv.Ran)
	}
	in.expect(200, "GET", "/webhooks/deliveries/"+id, nil).json(t, &d)
	if d.AttemptCount != 2 {
		t.Errorf("attemptCount %d right after the move, want 2", d.AttemptCount)
	}
}
