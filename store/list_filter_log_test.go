package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// TestWriteBehindListsMatchRecords changes deliveries and transactions at
// random — attempts that succeed, fail or kill, bulk retries, status steps,
// cancellations, retention — and folds the write-behind logs at random
// moments. After every round each filtered list must be exactly the
// unfiltered list (read from the sequence index, written in place)
// filtered by the test, whatever part of the changes is still in the logs.
func TestWriteBehindListsMatchRecords(t *testing.T) {
	s, clock := mustOpen(t, "", store.Options{FoldDelay: -1, Settings: store.Settings{Retention: store.RetentionSettings{Deliveries: time.Hour}}})
	env := store.Sandbox
	rng := rand.New(rand.NewPCG(8, 8))
	if _, err := s.SetWebhook(context.Background(), env, "http://127.0.0.1:9/hook", nil); err != nil {
		t.Fatal(err)
	}
	vault, wallets := vaultOfWallets(t, s, env, 3)
	entities := []string{"e0", "e1", "e2", "e3"}
	var txs []string
	walletOf := map[string]string{} // deposit -> the wallet it credits
	for round := range 12 {
		for range 20 {
			e := entities[rng.IntN(len(entities))]
			if err := s.Enqueue(env, store.DestCustody, []string{"balance.updated", "transaction.created"}[rng.IntN(2)], "balance", e, nil); err != nil {
				t.Fatal(err)
			}
		}
		for range 5 {
			w := wallets[rng.IntN(len(wallets))]
			x, err := s.CreateDeposit(env, store.DepositInput{WalletID: &w, Amount: ptr("1")}, store.Idem{})
			if err != nil {
				t.Fatal(err)
			}
			txs = append(txs, x.TransactionID)
			walletOf[x.TransactionID] = w
		}
		for range 8 {
			id := txs[rng.IntN(len(txs))]
			if rng.IntN(4) == 0 {
				s.CancelTransaction(env, id) // fails once final: fine
			} else {
				s.AdvanceTransaction(env, id)
			}
		}
		jobs, _, err := s.Due(clock.Now(), 1000, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			if j.Kind != store.JobDelivery {
				if err := s.RunJob(j); err != nil {
					t.Fatal(err)
				}
				continue
			}
			r := store.AttemptResult{RequestURL: "http://127.0.0.1:9/hook", StatusCode: 200, At: clock.Now(), Success: true}
			switch rng.IntN(3) {
			case 1:
				r = store.AttemptResult{RequestURL: "http://127.0.0.1:9/hook", StatusCode: 500, Error: "HTTP 500", At: clock.Now(), RetryAt: clock.Now().Add(time.Minute)}
			case 2:
				r = store.AttemptResult{RequestURL: "http://127.0.0.1:9/hook", StatusCode: 500, Error: "HTTP 500", At: clock.Now()}
			}
			if _, err := s.RecordAttempt(j, r); err != nil {
				t.Fatal(err)
			}
		}
		if round%4 == 3 {
			if _, err := s.RetryDeliveries(env, store.DeliveryFilter{Status: store.DeliveryDead, EntityID: entities[rng.IntN(len(entities))]}); err != nil {
				t.Fatal(err)
			}
		}
		if round == 7 {
			clock.Advance(2 * time.Hour) // past retention: delivered and dead ones go
			runJobs(t, s, clock)
		}
		if rng.IntN(3) == 0 {
			if err := s.FoldIndexes(); err != nil {
				t.Fatal(err)
			}
		}
		clock.Advance(time.Second)
		checkDeliveryLists(t, s, fmt.Sprint("round ", round), entities)
		checkTransactionLists(t, s, fmt.Sprint("round ", round), vault, wallets, walletOf)
	}
	if err := s.FoldIndexes(); err != nil {
		t.Fatal(err)
	}
	checkDeliveryLists(t, s, "folded", entities)
	checkTransactionLists(t, s, "folded", vault, wallets, walletOf)
}

func allPages[T any](t *testing.T, list func(store.Page) ([]T, *string, error)) []T {
	t.Helper()
	var all []T
	p := store.Page{Limit: 7}
	for {
		items, next, err := list(p)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, items...)
		if next == nil {
			return all
		}
		p.Cursor = *next
	}
}

// vaultOfWallets creates a vault with n ETH wallets.
func vaultOfWallets(t *testing.T, s *store.Store, env store.Env, n int) (vault string, wallets []string) {
	t.Helper()
	v, err := s.CreateVault(env, store.VaultInput{Name: ptr("v")}, store.Idem{})
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		w, err := s.CreateWallet(env, v.VaultID, store.WalletInput{AssetSymbol: ptr("ETH")}, store.Idem{})
		if err != nil {
			t.Fatal(err)
		}
		wallets = append(wallets, w.WalletID)
	}
	return v.VaultID, wallets
}

// checkList walks every page of list and checks that it answers want and
// decodes no record it does not answer: entries that the logs have removed
// are skipped before any decode.
func checkList(t *testing.T, s *store.Store, what string, want []string, list func(store.Page) ([]string, *string, error)) {
	t.Helper()
	before := s.ListDecodes()
	got := allPages(t, list)
	if !slices.Equal(got, want) {
		t.Errorf("%s: %d %v, want %d %v", what, len(got), got, len(want), want)
	}
	if n := s.ListDecodes() - before; n > int64(len(got)+pageSlack) {
		t.Errorf("%s: %d records decoded for %d", what, n, len(got))
	}
}

func checkDeliveryLists(t *testing.T, s *store.Store, when string, entities []string) {
	t.Helper()
	env := store.Sandbox
	every := allPages(t, func(p store.Page) ([]store.DeliverySummary, *string, error) {
		return s.Deliveries(env, store.DeliveryFilter{}, p)
	})
	if len(every) == 0 {
		t.Fatalf("%s: no deliveries", when)
	}
	var filters []store.DeliveryFilter
	for _, st := range []string{store.DeliveryPending, store.DeliveryDelivered, store.DeliveryFailed, store.DeliveryDead} {
		filters = append(filters, store.DeliveryFilter{Status: st})
		for _, e := range entities {
			filters = append(filters, store.DeliveryFilter{Status: st, EntityID: e})
		}
	}
	mid := every[len(every)/2].CreatedAt.Time
	filters = append(filters, store.DeliveryFilter{EventType: "balance.updated"}, store.DeliveryFilter{EntityID: "e1", EventType: "transaction.created"},
		store.DeliveryFilter{Since: mid}, store.DeliveryFilter{Until: mid, Status: store.DeliveryDelivered})
	for _, f := range filters {
		var want []string
		for _, d := range every {
			if (f.Status == "" || d.Status == f.Status) && (f.EntityID == "" || d.EntityID == f.EntityID) &&
				(f.EventType == "" || d.EventType == f.EventType) && (f.Since.IsZero() || !d.CreatedAt.Before(f.Since)) &&
				(f.Until.IsZero() || d.CreatedAt.Before(f.Until)) {
				want = append(want, d.ID)
			}
		}
		checkList(t, s, fmt.Sprintf("%s: deliveries %+v", when, f), want, func(p store.Page) ([]string, *string, error) {
			items, next, err := s.Deliveries(env, f, p)
			var ids []string
			for _, d := range items {
				ids = append(ids, d.ID)
			}
			return ids, next, err
		})
	}
}

func checkTransactionLists(t *testing.T, s *store.Store, when, vault string, wallets []string, walletOf map[string]string) {
	t.Helper()
	env := store.Sandbox
	every := allPages(t, func(p store.Page) ([]store.Transaction, *string, error) {
		return s.Transactions(env, store.TransactionFilter{}, p)
	})
	statuses := map[string]bool{}
	for _, x := range every {
		statuses[x.Status] = true
	}
	var filters []store.TransactionFilter
	for st := range statuses {
		filters = append(filters, store.TransactionFilter{Status: st}, store.TransactionFilter{Status: st, WalletID: wallets[0]})
	}
	for _, w := range wallets {
		filters = append(filters, store.TransactionFilter{WalletID: w})
	}
	filters = append(filters, store.TransactionFilter{VaultID: vault, Type: store.TxDeposit})
	for _, f := range filters {
		var want []string
		for _, x := range every {
			if (f.Status == "" || x.Status == f.Status) && (f.WalletID == "" || walletOf[x.TransactionID] == f.WalletID) &&
				(f.VaultID == "" || x.VaultID == f.VaultID) && (f.Type == "" || x.Type == f.Type) {
				want = append(want, x.TransactionID)
			}
		}
		checkList(t, s, fmt.Sprintf("%s: transactions %+v", when, f), want, func(p store.Page) ([]string, *string, error) {
			items, next, err := s.Transactions(env, f, p)
			var ids []string
			for _, x := range items {
				ids = append(ids, x.TransactionID)
			}
			return ids, next, err
		})
	}
}

// TestWriteBehindLogStaysShort writes far more index changes than foldMax
// with the background fold off: the writers fold themselves, so the logs
// a list reads stay about foldMax entries long; and Open folds what a
// previous process left.
func TestWriteBehindLogStaysShort(t *testing.T) {
	path := t.TempDir() + "/log.db"
	s, _ := mustOpen(t, path, store.Options{FoldDelay: -1})
	env := store.Sandbox
	if _, err := s.SetWebhook(context.Background(), env, "http://127.0.0.1:9/hook", nil); err != nil {
		t.Fatal(err)
	}
	const n = 3 * store.FoldMax
	parallel(t, n, func(i int) error {
		return s.Enqueue(env, store.DestCustody, "balance.updated", "balance", fmt.Sprint("e", i%10), nil)
	})
	if got := s.Count(env, "deliveries_bits_log"); got == 0 || got > store.FoldMax+64 {
		t.Errorf("%d log entries after %d deliveries, want 1..%d", got, n, store.FoldMax+64)
	}
	if got := s.IndexEntries(env, "deliveries_bits"); got < 5*(n-store.FoldMax-64) {
		t.Errorf("%d index entries after %d deliveries: the writers did not fold", got, n)
	}
	everyEntity(t, s, n, "part of the index in the log")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, _ = mustOpen(t, path, store.Options{FoldDelay: -1})
	if got := s.Count(env, "deliveries_bits_log"); got != 0 {
		t.Errorf("%d log entries after Open", got)
	}
	if got := s.IndexEntries(env, "deliveries_bits"); got != 5*n {
		t.Errorf("%d index entries after Open, want %d (five keys per delivery)", got, 5*n)
	}
	everyEntity(t, s, n, "folded")
}

// everyEntity checks that each entity e0..e9 of TestWriteBehindLogStaysShort
// (delivery i has entity i%10) lists exactly its pending deliveries, which
// spread over a dozen blocks of the bitmap index, page after page.
func everyEntity(t *testing.T, s *store.Store, n int, when string) {
	t.Helper()
	for e := range 10 {
		entity := fmt.Sprint("e", e)
		seen := map[string]bool{}
		for p := (store.Page{Limit: 250}); ; {
			items, next, err := s.Deliveries(store.Sandbox, store.DeliveryFilter{EntityID: entity, Status: store.DeliveryPending}, p)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range items {
				if d.EntityID != entity || seen[d.ID] {
					t.Fatalf("%s: %s listed %s of %s (again: %v)", when, entity, d.ID, d.EntityID, seen[d.ID])
				}
				seen[d.ID] = true
			}
			if next == nil {
				break
			}
			p.Cursor = *next
		}
		if want := (n - e + 9) / 10; len(seen) != want {
			t.Errorf("%s: %s lists %d deliveries, want %d", when, entity, len(seen), want)
		}
	}
}

// TestBackgroundFold leaves the fold to the store: shortly after the last
// change, nothing is left in the logs.
func TestBackgroundFold(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{FoldDelay: time.Millisecond})
	env := store.Sandbox
	if _, err := s.SetWebhook(context.Background(), env, "http://127.0.0.1:9/hook", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Enqueue(env, store.DestCustody, "balance.updated", "balance", "e", nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.Count(env, "deliveries_bits_log") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the log was not folded within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	if got := s.IndexEntries(env, "deliveries_bits"); got != 5 {
		t.Errorf("%d index entries, want 5", got)
	}
}
