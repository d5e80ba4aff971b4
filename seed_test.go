package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/complybox/complybox/store"
)

// TestSeed: seed fills a db through the store's operations: the applicants
// and deposits asked for, and at least the deliveries asked for, every one
// delivered, so a server started on the file has nothing to send.
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
	if applicants != 25 || transactions != 30 || deliveries < 200 {
		t.Errorf("%d applicants, %d transactions, %d deliveries; want 25, 30, >= 200", applicants, transactions, deliveries)
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
