package store_test

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// runJobs runs every simulator and retention job due at the clock's time,
// again and again while any is due, the way the dispatcher does, and
// returns how many retention batches ran. Deliveries are left alone.
func runJobs(t *testing.T, s *store.Store, clock *store.ManualClock) int {
	t.Helper()
	batches := 0
	for range 1000 {
		jobs, _, err := s.Due(clock.Now(), 1000, nil)
		if err != nil {
			t.Fatal(err)
		}
		ran := 0
		for _, j := range jobs {
			if j.Kind == store.JobDelivery {
				continue
			}
			if j.Kind == store.JobRetention {
				batches++
			}
			if err := s.RunJob(j); err != nil {
				t.Fatal(err)
			}
			ran++
		}
		if ran == 0 {
			return batches
		}
	}
	t.Fatal("jobs never stop being due")
	return 0
}

// TestRetention moves the clock past each window and checks that the
// retention job removes exactly what SPEC §1 [retention] and §7 say, and
// never an applicant, its documents or its history.
func TestRetention(t *testing.T) {
	s, clock := mustOpen(t, "", store.Options{})
	env := store.Sandbox
	ctx := context.Background()
	start := clock.Now()

	// Applicant side (no KYC callback: its events are kept, not delivered).
	mustCompany(t, s, "co", 1)
	link, err := s.CreateSession(env, "co", store.SessionInput{}, store.Idem{})
	if err != nil {
		t.Fatal(err)
	}
	child, err := s.SpawnKYC(env, "cred", "co", "0", store.LinkInput{})
	if err != nil {
		t.Fatal(err)
	}
	history, err := s.ApplicantHistory(env, "co")
	if err != nil {
		t.Fatal(err)
	}
	// An idempotency record and a console session.
	if _, err := s.CreateVault(env, store.VaultInput{Name: ptr("v")}, store.Idem{Key: "k1", BodyHash: "h"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetConsolePassword("correct horse"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ConsoleLogin(store.ConsoleFirstAdmin, "correct horse", "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	// Custody deliveries: one delivered, one dead, one failed (retrying
	// far in the future), one pending (never attempted).
	if _, err := s.SetWebhook(ctx, env, "http://127.0.0.1:9/hook", nil); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, fate := range []string{"delivered", "dead", "failed", "pending"} {
		if err := s.Enqueue(env, store.DestCustody, "balance.updated", "balance", fate, map[string]string{"fate": fate}); err != nil {
			t.Fatal(err)
		}
		items, _, err := s.Deliveries(env, store.DeliveryFilter{EntityID: fate}, store.Page{})
		if err != nil || len(items) != 1 {
			t.Fatalf("%s: %v %v", fate, items, err)
		}
		ids[fate] = items[0].ID
	}
	jobs, _, err := s.Due(clock.Now(), 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		r := store.AttemptResult{StatusCode: 500, Error: "HTTP 500", At: clock.Now()}
		switch j.ID {
		case ids["delivered"]:
			r = store.AttemptResult{StatusCode: 200, At: clock.Now(), Success: true}
		case ids["dead"]:
		case ids["failed"]:
			r.RetryAt = start.Add(5000 * time.Hour)
		default:
			continue
		}
		if _, err := s.RecordAttempt(j, r); err != nil {
			t.Fatal(err)
		}
	}
	events := s.Events(env)
	if s.Count(env, "sessions") != 2 || s.Count(env, "idempotency") != 1 || s.Count(env, "ratelimits") != 1 || s.ConsoleSessions() != 1 {
		t.Fatalf("fixture: sessions %d idempotency %d ratelimits %d console %d", s.Count(env, "sessions"),
			s.Count(env, "idempotency"), s.Count(env, "ratelimits"), s.ConsoleSessions())
	}

	deliveryState := func() map[string]string {
		out := map[string]string{}
		for fate, id := range ids {
			d, err := s.Delivery(env, id)
			switch {
			case store.ErrorCode(err) == store.ENOTFOUND:
				out[fate] = "removed"
			case err != nil:
				t.Fatal(err)
			case len(d.Payload) == 0:
				t.Errorf("%s: no payload", fate)
			default:
				out[fate] = d.Status
			}
		}
		return out
	}
	kept := map[string]string{"delivered": "delivered", "dead": "dead", "failed": "failed", "pending": "pending"}

	// A day and a half in: the session links are a day past expiry (the
	// hosted-UI session's; the child's link lives 7 days), the idempotency
	// record is past 24 h, the rate-limit window and the console session
	// have slid out. Deliveries and events stay.
	clock.Advance(36 * time.Hour)
	runJobs(t, s, clock)
	if _, err := s.ShortLink(link.ShortCode); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("expired short link a day later: %v, want removed", err)
	}
	if _, err := s.ShortLink(child.SDKLink.ShortCode); err != nil {
		t.Errorf("child link, valid for 7 days: %v", err)
	}
	if n := s.Count(env, "sessions"); n != 1 {
		t.Errorf("%d sessions, want the child's only", n)
	}
	if n := s.Count(env, "idempotency"); n != 0 {
		t.Errorf("%d idempotency records past 24 h", n)
	}
	if n := s.Count(env, "ratelimits"); n != 0 {
		t.Errorf("%d rate-limit windows slid out", n)
	}
	if n := s.ConsoleSessions(); n != 0 {
		t.Errorf("%d console sessions past expiry", n)
	}
	if got := deliveryState(); fmt.Sprint(got) != fmt.Sprint(kept) {
		t.Errorf("deliveries before their window: %v", got)
	}
	if n := s.Events(env); n != events {
		t.Errorf("%d events before their window, want %d", n, events)
	}

	// Just short of 720 h after the deliveries: nothing more goes.
	clock.Advance(start.Add(720*time.Hour - time.Second).Sub(clock.Now()))
	runJobs(t, s, clock)
	if got := deliveryState(); fmt.Sprint(got) != fmt.Sprint(kept) {
		t.Errorf("deliveries inside their window: %v", got)
	}
	// Past it: delivered and dead go with their events, and so do the
	// events that never had a delivery; pending and failed stay.
	clock.Advance(2 * time.Second)
	runJobs(t, s, clock)
	want := map[string]string{"delivered": "removed", "dead": "removed", "failed": "failed", "pending": "pending"}
	if got := deliveryState(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("deliveries past their window: %v, want %v", got, want)
	}
	if n := s.Events(env); n != 2 {
		t.Errorf("%d events left, want the failed and the pending deliveries'", n)
	}
	if n := s.Count(env, "sessions") + s.Count(env, "shortlinks"); n != 0 {
		t.Errorf("%d sessions and links left", n)
	}
	// Lists, filters and indexes agree with what is left.
	items, next, err := s.Deliveries(env, store.DeliveryFilter{}, store.Page{})
	if err != nil || len(items) != 2 || next != nil || items[0].ID != ids["pending"] || items[1].ID != ids["failed"] {
		t.Errorf("deliveries left: %+v %v %v", items, next, err)
	}
	for _, st := range []string{store.DeliveryDelivered, store.DeliveryDead} {
		if items, _, _ := s.Deliveries(env, store.DeliveryFilter{Status: st}, store.Page{}); len(items) != 0 {
			t.Errorf("%s deliveries listed after removal: %d", st, len(items))
		}
	}
	if items, _, _ := s.Deliveries(env, store.DeliveryFilter{Since: start}, store.Page{}); len(items) != 2 {
		t.Errorf("%d deliveries since the start, want 2", len(items))
	}
	// Applicants, their documents and history are never removed.
	for _, id := range []string{"co", child.ChildExternalUserID} {
		if _, err := s.Applicant(env, id); err != nil {
			t.Errorf("applicant %s: %v", id, err)
		}
	}
	if h, err := s.ApplicantHistory(env, "co"); err != nil || len(h) < len(history) {
		t.Errorf("history of co: %d entries, had %d; %v", len(h), len(history), err)
	}
	if items, _, _ := s.Applicants(env, store.ApplicantFilter{Type: "company"}, store.Page{}); len(items) != 1 {
		t.Errorf("%d companies listed", len(items))
	}
	// Nothing waits for retention: no job is left in the schedule.
	jobs, _, _ = s.Due(start.Add(100000*time.Hour), 1000, nil)
	for _, j := range jobs {
		if j.Kind == store.JobRetention {
			t.Errorf("a retention job is scheduled with nothing to remove: due %s", j.Due)
		}
	}
}

// TestRetentionBatches removes more deliveries than one batch holds: each
// run removes at most store.RetentionBatch and is due again at once, until
// every one is gone.
func TestRetentionBatches(t *testing.T) {
	s, clock := mustOpen(t, "", store.Options{Settings: store.Settings{Retention: store.RetentionSettings{Deliveries: time.Hour}}})
	env := store.Sandbox
	if _, err := s.SetWebhook(context.Background(), env, "http://127.0.0.1:9/hook", nil); err != nil {
		t.Fatal(err)
	}
	const n = store.RetentionBatch*2 + 10
	parallel(t, n, func(i int) error {
		return s.Enqueue(env, store.DestCustody, "balance.updated", "balance", fmt.Sprintf("e%d", i), nil)
	})
	jobs, _, err := s.Due(clock.Now(), 2*n, nil)
	if err != nil || len(jobs) != n {
		t.Fatalf("%d due, %v", len(jobs), err)
	}
	parallel(t, n, func(i int) error {
		status, err := s.RecordAttempt(jobs[i], store.AttemptResult{StatusCode: 204, At: clock.Now(), Success: true})
		if err == nil && status != store.DeliveryDelivered {
			return fmt.Errorf("recorded %s, want delivered", status)
		}
		return err
	})
	clock.Advance(time.Hour + time.Second)
	jobs, _, err = s.Due(clock.Now(), 10, nil)
	if err != nil || len(jobs) != 1 || jobs[0].Kind != store.JobRetention {
		t.Fatalf("due: %+v %v", jobs, err)
	}
	if err := s.RunJob(jobs[0]); err != nil {
		t.Fatal(err)
	}
	if left := s.Count(env, "deliveries"); left != n-store.RetentionBatch {
		t.Errorf("one batch left %d deliveries, want %d", left, n-store.RetentionBatch)
	}
	if batches := runJobs(t, s, clock); batches != 2 {
		t.Errorf("%d more batches, want 2", batches)
	}
	for _, b := range []string{"deliveries", "deliveries_idx", "deliveries_bits", "events"} {
		if left := s.Count(env, b); left != 0 {
			t.Errorf("%s: %d keys left", b, left)
		}
	}
}

// TestRetentionLongWindow: a window reaching before 1970 (876000h, 100
// years) or past 2262 (the longest time.Duration) keeps every delivery and
// event when another kind's record makes a retention batch run, and the
// retention job is not due at once. Such a cutoff once wrapped to a huge
// key bound, so every delivered and dead delivery looked old.
func TestRetentionLongWindow(t *testing.T) {
	for _, window := range []time.Duration{876000 * time.Hour, 500000 * time.Hour, time.Duration(math.MaxInt64)} {
		t.Run(window.String(), func(t *testing.T) {
			s, clock := mustOpen(t, "", store.Options{Settings: store.Settings{Retention: store.RetentionSettings{Deliveries: window}}})
			env := store.Sandbox
			// An event without a delivery (no webhook yet), then a
			// delivered and a dead delivery.
			if err := s.Enqueue(env, store.DestCustody, "balance.updated", "balance", "orphan", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := s.SetWebhook(context.Background(), env, "http://127.0.0.1:9/hook", nil); err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{"delivered", "dead"} {
				if err := s.Enqueue(env, store.DestCustody, "balance.updated", "balance", id, nil); err != nil {
					t.Fatal(err)
				}
			}
			jobs, _, err := s.Due(clock.Now(), 100, nil)
			if err != nil || len(jobs) != 2 {
				t.Fatalf("due: %+v %v", jobs, err)
			}
			for i, j := range jobs {
				r := store.AttemptResult{StatusCode: 500, Error: "HTTP 500", At: clock.Now()}
				if i == 0 {
					r = store.AttemptResult{StatusCode: 200, At: clock.Now(), Success: true}
				}
				if _, err := s.RecordAttempt(j, r); err != nil {
					t.Fatal(err)
				}
			}
			if jobs, _, err := s.Due(clock.Now(), 100, nil); err != nil || len(jobs) != 0 {
				t.Fatalf("due right after delivering: %+v %v", jobs, err)
			}
			// An idempotency record brings a retention batch 24 h later.
			if _, err := s.CreateVault(env, store.VaultInput{Name: ptr("v")}, store.Idem{Key: "k1", BodyHash: "h"}); err != nil {
				t.Fatal(err)
			}
			events := s.Events(env)
			clock.Advance(25 * time.Hour)
			if batches := runJobs(t, s, clock); batches != 1 {
				t.Errorf("%d retention batches, want 1", batches)
			}
			if n := s.Count(env, "idempotency"); n != 0 {
				t.Errorf("%d idempotency records past 24 h", n)
			}
			if n := s.Count(env, "deliveries"); n != 2 {
				t.Errorf("%d deliveries left, want 2", n)
			}
			if n := s.Events(env); n != events || n != 3 {
				t.Errorf("%d events left, want %d (3)", n, events)
			}
		})
	}
}

// TestRetentionWindowShortenedAtRestart: a process started with a shorter
// [retention] deliveries removes what is older than the new window when it
// is due, not when the job scheduled under the old window would have run
// (up to 720 h later on an idle sandbox).
func TestRetentionWindowShortenedAtRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "window.db")
	clock := store.NewManualClock(testStart)
	s, err := store.Open(path, store.Options{Now: clock.Now, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	env := store.Sandbox
	if _, err := s.SetWebhook(context.Background(), env, "http://127.0.0.1:9/hook", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Enqueue(env, store.DestCustody, "balance.updated", "balance", "w", nil); err != nil {
		t.Fatal(err)
	}
	jobs, _, err := s.Due(clock.Now(), 10, nil)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("due: %+v %v", jobs, err)
	}
	if _, err := s.RecordAttempt(jobs[0], store.AttemptResult{StatusCode: 200, At: clock.Now(), Success: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, _ = mustOpen(t, path, store.Options{Now: clock.Now, Settings: store.Settings{Retention: store.RetentionSettings{Deliveries: time.Hour}}})
	clock.Advance(2 * time.Hour)
	if batches := runJobs(t, s, clock); batches != 1 {
		t.Errorf("%d retention batches two hours on, want 1", batches)
	}
	if n := s.Count(env, "deliveries"); n != 0 {
		t.Errorf("%d deliveries left past the new 1 h window", n)
	}
}
