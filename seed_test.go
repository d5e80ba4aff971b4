package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// TestSeed: seed fills a db through the store's operations: the applicants
// and deposits asked for, and the deliveries asked for (more than the other
// records make: exactly that many), every one delivered, so a server
// started on the file has nothing to send.
func TestSeed(t *testing.T) {
	db := filepath.Join(t.TempDir(), "seed.db")
	out := mustRun(t, "seed", "--db", db, "--applicants", "25", "--transactions", "30", "--deliveries", "200", "--wallets", "4")
	for _, phase := range []string{"applicants", "transactions", "deliveries"} {
		if !strings.Contains(out, phase) {
			t.Errorf("output %q does not report %s", out, phase)
		}
	}
	st, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	count := func(list func(p store.Page) (int, *string, error)) int {
		t.Helper()
		n := 0
		p := store.Page{Limit: store.MaxLimit}
		for {
			got, next, err := list(p)
			if err != nil {
				t.Fatal(err)
			}
			n += got
			if next == nil {
				return n
			}
			p.Cursor = *next
		}
	}
	applicants := count(func(p store.Page) (int, *string, error) {
		l, next, err := st.Applicants(store.Sandbox, store.ApplicantFilter{}, p)
		return len(l), next, err
	})
	transactions := count(func(p store.Page) (int, *string, error) {
		l, next, err := st.Transactions(store.Sandbox, store.TransactionFilter{}, p)
		return len(l), next, err
	})
	var undelivered []store.DeliverySummary
	deliveries := count(func(p store.Page) (int, *string, error) {
		l, next, err := st.Deliveries(store.Sandbox, store.DeliveryFilter{}, p)
		for _, d := range l {
			if d.Status != store.DeliveryDelivered || d.AttemptCount != 1 {
				undelivered = append(undelivered, d)
			}
		}
		return len(l), next, err
	})
	if applicants != 25 || transactions != 30 || deliveries != 200 {
		t.Errorf("%d applicants, %d transactions, %d deliveries; want 25, 30, 200", applicants, transactions, deliveries)
	}
	if len(undelivered) > 0 {
		t.Errorf("%d deliveries not delivered once, e.g. %+v", len(undelivered), undelivered[0])
	}
	if jobs, _, err := st.Due(st.Now(), 10, nil); err != nil || len(jobs) != 0 {
		t.Errorf("due after seed: %+v %v", jobs, err)
	}
	if err := st.Check(); err != nil {
		t.Error(err)
	}
}

// TestSeedNeedsACount: seed without a count is a usage error (exit 2), not
// an empty db reported as done.
func TestSeedNeedsACount(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "seed.db")
	if r := runCmd(t, "seed", "--db", db); r.code != 2 || !strings.Contains(r.stderr, "nothing to seed") {
		t.Fatalf("seed without counts: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(db); err == nil {
		t.Fatal("seed without counts created the db")
	}
}

// TestSeedAheadClock: on a db whose sandbox clock runs 800 h ahead of real
// time (a served db whose clock was moved, then stopped), seed writes on the
// sandbox clock: every delivery it reports is in the file, delivered after
// it was created, at sandbox time; retention (720 h) removes none of them.
// The partner's custody webhook and KYC callback are left as they were.
func TestSeedAheadClock(t *testing.T) {
	db := filepath.Join(t.TempDir(), "seed.db")
	const hook, callback = "http://127.0.0.1:8080/partner-hook", "http://127.0.0.1:8080/partner-kyc"
	st, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := st.SetWebhook(ctx, store.Sandbox, hook, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := st.InitCallback(); err != nil {
		t.Fatal(err)
	}
	if err := st.SetCallbackURL(ctx, callback); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AdvanceClock(store.Sandbox, store.ClockTarget{By: 800 * time.Hour}, st.RunJob); err != nil {
		t.Fatal(err)
	}
	before, _ := st.SandboxClock()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	out := mustRun(t, "seed", "--db", db, "--applicants", "5", "--transactions", "10", "--deliveries", "40", "--wallets", "2")
	var reported int
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "deliveries" {
			reported, _ = strconv.Atoi(f[1])
		}
	}
	if reported < 40 {
		t.Fatalf("seed reported %d deliveries, want >= 40:\n%s", reported, out)
	}

	st, err = store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	items, _, err := st.Deliveries(store.Sandbox, store.DeliveryFilter{}, store.Page{Limit: store.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != reported {
		t.Errorf("%d deliveries in the file, seed reported %d", len(items), reported)
	}
	for _, d := range items {
		if d.CreatedAt.Before(before.Truncate(time.Millisecond)) || d.DeliveredAt.Before(d.CreatedAt.Time) {
			t.Errorf("delivery %s created %s, delivered %s; sandbox time was %s before seed", d.ID, d.CreatedAt, d.DeliveredAt, store.At(before))
			break
		}
	}
	if v, err := st.WebhookConfig(store.Sandbox); err != nil || v.URL == nil || *v.URL != hook {
		t.Errorf("custody webhook after seed: %+v %v, want %s", v, err, hook)
	}
	if u, err := st.CallbackURL(); err != nil || u != callback {
		t.Errorf("KYC callback after seed: %q %v, want %s", u, err, callback)
	}
}

// TestSeedLeavesNoCallback: on a db without a KYC callback, seed sends its
// applicants' events to a discard URL while it runs, then takes it away,
// so a server started on the file sends no KYC callbacks there.
func TestSeedLeavesNoCallback(t *testing.T) {
	db := filepath.Join(t.TempDir(), "seed.db")
	mustRun(t, "seed", "--db", db, "--applicants", "3")
	st, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if u, err := st.CallbackURL(); err != nil || u != "" {
		t.Errorf("KYC callback after seed: %q %v, want none", u, err)
	}
	items, _, err := st.Deliveries(store.Sandbox, store.DeliveryFilter{}, store.Page{Limit: store.MaxLimit})
	if err != nil || len(items) != 3 {
		t.Errorf("%d deliveries, want the 3 applicants' applicantCreated; %v", len(items), err)
	}
	// Nor a signing secret nobody was shown: the first serve generates
	// one and prints it (SPEC §1: generated, stored, printed once).
	if generated, err := st.InitCallback(); err != nil || generated == "" {
		t.Errorf("a KYC callback secret was kept from seed, never printed (%v)", err)
	}
}

// TestSeedMakesTheDeliveriesAskedFor: above what the other records make,
// --deliveries is the count the file ends with, not a floor it may pass
// (advancing a deposit emits one event or two).
func TestSeedMakesTheDeliveriesAskedFor(t *testing.T) {
	t.Parallel()
	for _, want := range []int{33, 50, 51} {
		db := filepath.Join(t.TempDir(), "seed.db")
		mustRun(t, "seed", "--db", db, "--applicants", "10", "--transactions", "10", "--deliveries", strconv.Itoa(want), "--wallets", "2")
		st, err := store.Open(db, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		items, _, err := st.Deliveries(store.Sandbox, store.DeliveryFilter{}, store.Page{Limit: store.MaxLimit})
		st.Close()
		if err != nil || len(items) != want {
			t.Errorf("--deliveries %d: %d deliveries in the file (%v)", want, len(items), err)
		}
	}
}
