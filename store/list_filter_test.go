package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// The tests of this file hold SPEC §2 "Lists": every filter a list accepts
// is served by an index, so a filtered page decodes at most its limit plus
// a small constant, however many records do not match. They count decodes
// through the store's test hook (ListDecodes), never time.

// pageSlack is how many records beyond its limit a page may decode.
const pageSlack = 2

// noise is how many records that match none of the filters each test writes.
const noise = 2000

// parallel runs fn(0..n-1) on a few goroutines, so the writes share group
// commits and the fixture builds in seconds.
func parallel(t testing.TB, n int, fn func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 16 {
				if err := fn(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// listFunc answers one page of a list as ids.
type listFunc func(p store.Page) ([]string, *string, error)

// walkPages reads every page of list with limit and returns the ids in the
// order answered. Each page must decode at most limit + pageSlack records.
func walkPages(t *testing.T, s *store.Store, name string, limit int, list listFunc) []string {
	t.Helper()
	var all []string
	p := store.Page{Limit: limit}
	for pages := 0; ; pages++ {
		if pages > noise {
			t.Fatalf("%s: no end of pages", name)
		}
		before := s.ListDecodes()
		ids, next, err := list(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := s.ListDecodes() - before; got > int64(limit+pageSlack) {
			t.Errorf("%s: page %d decoded %d records for a limit of %d", name, pages+1, got, limit)
		}
		if len(ids) > limit {
			t.Errorf("%s: %d items on a page of %d", name, len(ids), limit)
		}
		all = append(all, ids...)
		if next == nil {
			return all
		}
		p.Cursor = *next
	}
}

// newestFirst returns ids in reverse creation order.
func newestFirst(ids []string) []string {
	out := slices.Clone(ids)
	slices.Reverse(out)
	return out
}

func TestApplicantFiltersReadIndexes(t *testing.T) { logStates(t, testApplicantFilters) }

func testApplicantFilters(t *testing.T, settle func(*store.Store)) {
	s, _ := mustOpen(t, "", store.Options{FoldDelay: -1})
	env := store.Sandbox
	create := func(id, typ string) error {
		_, _, err := s.CreateApplicant(env, store.ApplicantInput{"externalUserId": json.RawMessage(`"` + id + `"`), "type": json.RawMessage(`"` + typ + `"`)})
		return err
	}
	// Noise: individuals active (half of them blocklisted) and companies
	// active, so each single filter below matches many records and only
	// the combined one is rare.
	parallel(t, noise, func(i int) error {
		typ := "individual"
		if i%4 == 0 {
			typ = "company"
		}
		if err := create(fmt.Sprintf("noise-%04d", i), typ); err != nil {
			return err
		}
		if i%4 == 1 {
			_, err := s.Blocklist(env, fmt.Sprintf("noise-%04d", i))
			return err
		}
		return nil
	})
	var rareCompanies, reviewed []string // creation order
	for i := range 3 {
		id := fmt.Sprintf("blocked-co-%d", i)
		if err := create(id, "company"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Blocklist(env, id); err != nil {
			t.Fatal(err)
		}
		rareCompanies = append(rareCompanies, id)
		id = fmt.Sprintf("reviewed-%d", i)
		if err := create(id, "individual"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ForceReview(env, id, store.Decision{ReviewAnswer: "GREEN"}); err != nil {
			t.Fatal(err)
		}
		reviewed = append(reviewed, id)
	}
	settle(s)
	list := func(f store.ApplicantFilter) listFunc {
		return func(p store.Page) ([]string, *string, error) {
			items, next, err := s.Applicants(env, f, p)
			var ids []string
			for _, a := range items {
				ids = append(ids, a.ExternalUserID)
			}
			return ids, next, err
		}
	}
	for _, c := range []struct {
		name   string
		filter store.ApplicantFilter
		want   []string
	}{
		{"reviewStatus", store.ApplicantFilter{ReviewStatus: store.ReviewCompleted}, newestFirst(reviewed)},
		{"type+status", store.ApplicantFilter{Type: "company", Status: store.StatusBlocklisted}, newestFirst(rareCompanies)},
		{"status+type+reviewStatus", store.ApplicantFilter{Status: store.StatusActive, Type: "individual", ReviewStatus: store.ReviewCompleted}, newestFirst(reviewed)},
		{"status none", store.ApplicantFilter{Status: store.StatusDeactivated}, nil},
	} {
		for _, limit := range []int{1, 2, 50} {
			got := walkPages(t, s, c.name, limit, list(c.filter))
			if !slices.Equal(got, c.want) {
				t.Errorf("%s limit %d: %v, want %v", c.name, limit, got, c.want)
			}
		}
	}
	// Single filters matching many: a page still decodes only its limit.
	for _, f := range []store.ApplicantFilter{{Status: store.StatusBlocklisted}, {Type: "company"}, {Status: store.StatusActive}} {
		before := s.ListDecodes()
		items, next, err := s.Applicants(env, f, store.Page{Limit: 10})
		if err != nil || len(items) != 10 || next == nil {
			t.Fatalf("%+v: %d items, next %v, %v", f, len(items), next, err)
		}
		items2, _, err := s.Applicants(env, f, store.Page{Limit: 10, Cursor: *next})
		if err != nil || len(items2) != 10 || items2[0].ExternalUserID == items[9].ExternalUserID {
			t.Fatalf("%+v second page: %d items, %v", f, len(items2), err)
		}
		if got := s.ListDecodes() - before; got > 2*(10+pageSlack) {
			t.Errorf("%+v: two pages of 10 decoded %d records", f, got)
		}
	}
	// A status change moves the applicant between the status indexes.
	if _, err := s.Unblocklist(env, rareCompanies[1]); err != nil {
		t.Fatal(err)
	}
	got := walkPages(t, s, "after unblocklist", 2, list(store.ApplicantFilter{Type: "company", Status: store.StatusBlocklisted}))
	if want := []string{rareCompanies[2], rareCompanies[0]}; !slices.Equal(got, want) {
		t.Errorf("after unblocklist: %v, want %v", got, want)
	}
}

// TestApplicantSearchIsSliced holds the console's search to bounded slices:
// a page reads at most store.SearchSlice records and, short of matches,
// answers a cursor to continue that reaches every match.
func TestApplicantSearchIsSliced(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{})
	env := store.Sandbox
	create := func(id string) error {
		_, _, err := s.CreateApplicant(env, store.ApplicantInput{"externalUserId": json.RawMessage(`"` + id + `"`)})
		return err
	}
	if err := create("needle-old"); err != nil {
		t.Fatal(err)
	}
	parallel(t, 2*store.SearchSlice+100, func(i int) error { return create(fmt.Sprintf("hay-%05d", i)) })
	if err := create("needle-new"); err != nil {
		t.Fatal(err)
	}
	var found []string
	p := store.Page{Limit: 10}
	for calls := 0; ; calls++ {
		if calls > 10 {
			t.Fatal("search never ends")
		}
		before := s.ListDecodes()
		items, next, err := s.Applicants(env, store.ApplicantFilter{Query: "NEEDLE"}, p)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.ListDecodes() - before; got > store.SearchSlice {
			t.Errorf("one search page decoded %d records, more than a slice of %d", got, store.SearchSlice)
		}
		for _, a := range items {
			found = append(found, a.ExternalUserID)
		}
		if next == nil {
			break
		}
		p.Cursor = *next
	}
	if want := []string{"needle-new", "needle-old"}; !slices.Equal(found, want) {
		t.Errorf("search found %v, want %v", found, want)
	}
}

// logStates runs test twice: with the index changes of the fixture still
// in the write-behind logs (as many as foldMax lets stay there), and folded
// into the indexes. The background fold is off either way, so which of the
// two a list sees does not depend on timing.
func logStates(t *testing.T, test func(t *testing.T, settle func(s *store.Store))) {
	for _, folded := range []bool{false, true} {
		name := "unfolded"
		if folded {
			name = "folded"
		}
		t.Run(name, func(t *testing.T) {
			test(t, func(s *store.Store) {
				if !folded {
					return
				}
				if err := s.FoldIndexes(); err != nil {
					t.Fatal(err)
				}
				if n := s.Count(store.Sandbox, "deliveries_bits_log") + s.Count(store.Sandbox, "transactions_bits_log") + s.Count(store.Sandbox, "applicants_bits_log"); n != 0 {
					t.Fatalf("%d log entries left after FoldIndexes", n)
				}
			})
		})
	}
}

func TestTransactionFiltersReadIndexes(t *testing.T) { logStates(t, testTransactionFilters) }

func testTransactionFilters(t *testing.T, settle func(*store.Store)) {
	s, _ := mustOpen(t, "", store.Options{FoldDelay: -1})
	env := store.Sandbox
	vault := func(name string) string {
		v, err := s.CreateVault(env, store.VaultInput{Name: ptr(name)}, store.Idem{})
		if err != nil {
			t.Fatal(err)
		}
		return v.VaultID
	}
	wallet := func(vaultID string) string {
		w, err := s.CreateWallet(env, vaultID, store.WalletInput{AssetSymbol: ptr("ETH")}, store.Idem{})
		if err != nil {
			t.Fatal(err)
		}
		return w.WalletID
	}
	busyVault, quietVault := vault("busy"), vault("quiet")
	busy, quiet, other := wallet(busyVault), wallet(quietVault), wallet(busyVault)
	deposit := func(w string) (string, error) {
		x, err := s.CreateDeposit(env, store.DepositInput{WalletID: &w, Amount: ptr("1")}, store.Idem{})
		return x.TransactionID, err
	}
	fund, err := deposit(busy)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := s.AdvanceTransaction(env, fund); err != nil {
			t.Fatal(err)
		}
	}
	parallel(t, noise, func(int) error { _, err := deposit(busy); return err })
	var quietDeposits, withdrawals, cancelled, transfers []string
	for range 3 {
		id, err := deposit(quiet)
		if err != nil {
			t.Fatal(err)
		}
		quietDeposits = append(quietDeposits, id)
		x, err := s.CreateTransaction(env, store.TransactionInput{Type: ptr(store.TxWithdrawal), SourceWalletID: &busy,
			DestinationAddress: ptr("0xabc"), Amount: ptr("0.01")}, store.Idem{})
		if err != nil {
			t.Fatal(err)
		}
		withdrawals = append(withdrawals, x.TransactionID)
		if _, err := s.CancelTransaction(env, x.TransactionID); err != nil {
			t.Fatal(err)
		}
		cancelled = append(cancelled, x.TransactionID)
		x, err = s.CreateTransaction(env, store.TransactionInput{Type: ptr(store.TxInternalTransfer), SourceWalletID: &busy,
			DestinationWalletID: &other, Amount: ptr("0.01")}, store.Idem{})
		if err != nil {
			t.Fatal(err)
		}
		transfers = append(transfers, x.TransactionID)
	}
	settle(s)
	list := func(f store.TransactionFilter) listFunc {
		return func(p store.Page) ([]string, *string, error) {
			items, next, err := s.Transactions(env, f, p)
			var ids []string
			for _, x := range items {
				ids = append(ids, x.TransactionID)
			}
			return ids, next, err
		}
	}
	for _, c := range []struct {
		name   string
		filter store.TransactionFilter
		want   []string
	}{
		{"vaultId", store.TransactionFilter{VaultID: quietVault}, newestFirst(quietDeposits)},
		{"walletId", store.TransactionFilter{WalletID: quiet}, newestFirst(quietDeposits)},
		{"walletId credited", store.TransactionFilter{WalletID: other}, newestFirst(transfers)},
		{"status", store.TransactionFilter{Status: store.StatusCancelled}, newestFirst(cancelled)},
		{"type", store.TransactionFilter{Type: store.TxInternalTransfer}, newestFirst(transfers)},
		{"walletId+type", store.TransactionFilter{WalletID: busy, Type: store.TxWithdrawal}, newestFirst(withdrawals)},
		{"vaultId+status+type", store.TransactionFilter{VaultID: busyVault, Status: store.StatusSubmitted, Type: store.TxInternalTransfer}, newestFirst(transfers)},
		{"vaultId+type none", store.TransactionFilter{VaultID: quietVault, Type: store.TxWithdrawal}, nil},
	} {
		for _, limit := range []int{1, 2, 50} {
			got := walkPages(t, s, c.name, limit, list(c.filter))
			if !slices.Equal(got, c.want) {
				t.Errorf("%s limit %d: %v, want %v", c.name, limit, got, c.want)
			}
		}
	}
}

func TestVaultWalletsReadIndex(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{})
	env := store.Sandbox
	busy, err := s.CreateVault(env, store.VaultInput{Name: ptr("busy")}, store.Idem{})
	if err != nil {
		t.Fatal(err)
	}
	quiet, err := s.CreateVault(env, store.VaultInput{Name: ptr("quiet")}, store.Idem{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for range 3 {
		w, err := s.CreateWallet(env, quiet.VaultID, store.WalletInput{AssetSymbol: ptr("BTC")}, store.Idem{})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, w.WalletID)
	}
	parallel(t, noise, func(int) error {
		_, err := s.CreateWallet(env, busy.VaultID, store.WalletInput{AssetSymbol: ptr("ETH")}, store.Idem{})
		return err
	})
	for _, limit := range []int{1, 2, 50} {
		got := walkPages(t, s, "vault wallets", limit, func(p store.Page) ([]string, *string, error) {
			items, next, err := s.VaultWallets(env, quiet.VaultID, p)
			var ids []string
			for _, w := range items {
				ids = append(ids, w.WalletID)
			}
			return ids, next, err
		})
		if !slices.Equal(got, newestFirst(want)) {
			t.Errorf("limit %d: %v, want %v", limit, got, newestFirst(want))
		}
	}
}

// deliveryFixture enqueues noise deliveries of one busy entity and a few of
// others, with attempts that leave some delivered, some failed and some
// dead. It returns the store, its clock and the ids of the few.
type deliveryFixture struct {
	s     *store.Store
	clock *store.ManualClock
	start time.Time // before the few
	// the few, each in creation order
	kyc, other, dead, failed, delivered []string
}

func newDeliveryFixture(t *testing.T, settle func(*store.Store)) *deliveryFixture {
	t.Helper()
	s, clock := mustOpen(t, "", store.Options{FoldDelay: -1, Settings: store.Settings{KYC: store.KYCSettings{CallbackURL: "http://127.0.0.1:9/kyc"}}})
	f := &deliveryFixture{s: s, clock: clock}
	env := store.Sandbox
	if _, err := s.SetWebhook(context.Background(), env, "http://127.0.0.1:9/hook", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.InitCallback(); err != nil {
		t.Fatal(err)
	}
	parallel(t, noise, func(i int) error {
		return s.Enqueue(env, store.DestCustody, "balance.updated", "balance", "busy", map[string]int{"n": i})
	})
	clock.Advance(time.Minute)
	f.start = clock.Now()
	ids := func() []string {
		items, _, err := s.Deliveries(env, store.DeliveryFilter{}, store.Page{Limit: 1})
		if err != nil || len(items) != 1 {
			t.Fatal(err)
		}
		return []string{items[0].ID}
	}
	for i := range 3 {
		if err := s.Enqueue(env, store.DestKYC, "applicantCreated", "applicant", fmt.Sprintf("kyc-%d", i), map[string]int{"n": i}); err != nil {
			t.Fatal(err)
		}
		f.kyc = append(f.kyc, ids()...)
		for _, fate := range []*[]string{&f.dead, &f.failed, &f.delivered} {
			if err := s.Enqueue(env, store.DestCustody, "transaction.created", "transaction", fmt.Sprintf("tx-%d", i), map[string]int{"n": i}); err != nil {
				t.Fatal(err)
			}
			*fate = append(*fate, ids()...)
			f.other = append(f.other, (*fate)[len(*fate)-1])
		}
		clock.Advance(time.Second)
	}
	// One attempt each for the few. First attempts of one entity are due
	// one after the other, so claim in rounds.
	for round := 0; round < 3; round++ {
		jobs, _, err := s.Due(clock.Now(), 100000, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			r := store.AttemptResult{RequestURL: "http://127.0.0.1:9/hook", StatusCode: 500, Error: "HTTP 500", At: clock.Now(), RetryAt: clock.Now().Add(time.Hour)}
			switch {
			case slices.Contains(f.dead, j.ID):
				r.RetryAt = time.Time{}
			case slices.Contains(f.delivered, j.ID):
				r = store.AttemptResult{RequestURL: "http://127.0.0.1:9/hook", StatusCode: 200, At: clock.Now(), Success: true}
			case slices.Contains(f.failed, j.ID):
			default:
				continue
			}
			if _, err := s.RecordAttempt(j, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	settle(s)
	return f
}

func (f *deliveryFixture) list(filter store.DeliveryFilter) listFunc {
	return func(p store.Page) ([]string, *string, error) {
		items, next, err := f.s.Deliveries(store.Sandbox, filter, p)
		var ids []string
		for _, d := range items {
			ids = append(ids, d.ID)
		}
		return ids, next, err
	}
}

func TestDeliveryFiltersReadIndexes(t *testing.T) { logStates(t, testDeliveryFilters) }

func testDeliveryFilters(t *testing.T, settle func(*store.Store)) {
	f := newDeliveryFixture(t, settle)
	third := f.start.Add(2 * time.Second) // the third round of the few
	for _, c := range []struct {
		name   string
		filter store.DeliveryFilter
		want   []string
	}{
		{"status dead", store.DeliveryFilter{Status: store.DeliveryDead}, newestFirst(f.dead)},
		{"status failed", store.DeliveryFilter{Status: store.DeliveryFailed}, newestFirst(f.failed)},
		{"status delivered", store.DeliveryFilter{Status: store.DeliveryDelivered}, newestFirst(f.delivered)},
		{"destination", store.DeliveryFilter{Destination: store.DestKYC}, newestFirst(f.kyc)},
		{"eventType", store.DeliveryFilter{EventType: "transaction.created"}, newestFirst(f.other)},
		{"entityId", store.DeliveryFilter{EntityID: "tx-1"}, newestFirst(f.other[3:6])},
		{"since", store.DeliveryFilter{Since: third}, newestFirst(append(f.kyc[2:3:3], f.other[6:]...))},
		{"since+until", store.DeliveryFilter{Since: f.start.Add(time.Second), Until: third}, newestFirst(append(f.kyc[1:2:2], f.other[3:6]...))},
		{"until+status", store.DeliveryFilter{Until: f.start.Add(time.Second), Status: store.DeliveryDead}, f.dead[:1]},
		{"status+destination", store.DeliveryFilter{Status: store.DeliveryDead, Destination: store.DestCustody}, newestFirst(f.dead)},
		{"entityId+eventType+status", store.DeliveryFilter{EntityID: "tx-2", EventType: "transaction.created", Status: store.DeliveryFailed}, f.failed[2:]},
		{"destination+status none", store.DeliveryFilter{Destination: store.DestKYC, Status: store.DeliveryDead}, nil},
		{"until before all", store.DeliveryFilter{Until: f.start.Add(-time.Hour)}, nil},
	} {
		for _, limit := range []int{1, 2, 50} {
			got := walkPages(t, f.s, c.name, limit, f.list(c.filter))
			if !slices.Equal(got, c.want) {
				t.Errorf("%s limit %d: %v, want %v", c.name, limit, got, c.want)
			}
		}
	}
}

// TestRetryDeliveriesReadsStatusIndex re-queues dead deliveries among
// thousands that are not: the bulk retry decodes only the matches.
func TestRetryDeliveriesReadsStatusIndex(t *testing.T) { logStates(t, testRetryReadsIndex) }

func testRetryReadsIndex(t *testing.T, settle func(*store.Store)) {
	f := newDeliveryFixture(t, settle)
	before := f.s.ListDecodes()
	n, err := f.s.RetryDeliveries(store.Sandbox, store.DeliveryFilter{Status: store.DeliveryDead, Destination: store.DestCustody})
	if err != nil || n != len(f.dead) {
		t.Fatalf("requeued %d, %v; want %d", n, err, len(f.dead))
	}
	if got := f.s.ListDecodes() - before; got > int64(n+pageSlack) {
		t.Errorf("bulk retry of %d decoded %d records", n, got)
	}
	got := walkPages(t, f.s, "dead after retry", 10, f.list(store.DeliveryFilter{Status: store.DeliveryDead}))
	if len(got) != 0 {
		t.Errorf("dead after retry: %v", got)
	}
	before = f.s.ListDecodes()
	n, err = f.s.RetryDeliveries(store.Sandbox, store.DeliveryFilter{Status: store.DeliveryFailed, Since: f.start.Add(time.Second)})
	if err != nil || n != 2 {
		t.Fatalf("requeued %d failed since the second round, %v; want 2", n, err)
	}
	if got := f.s.ListDecodes() - before; got > int64(n+pageSlack) {
		t.Errorf("bulk retry of %d decoded %d records", n, got)
	}
}

// TestRetryDeliveriesInBatches re-queues more dead deliveries than one
// transaction takes: every one is re-queued exactly once.
func TestRetryDeliveriesInBatches(t *testing.T) {
	s, clock := mustOpen(t, "", store.Options{})
	env := store.Sandbox
	if _, err := s.SetWebhook(context.Background(), env, "http://127.0.0.1:9/hook", nil); err != nil {
		t.Fatal(err)
	}
	const n = store.RetryBatch*2 + 7
	parallel(t, n, func(i int) error {
		return s.Enqueue(env, store.DestCustody, "balance.updated", "balance", fmt.Sprintf("e%d", i), nil)
	})
	jobs, _, err := s.Due(clock.Now(), 2*n, nil)
	if err != nil || len(jobs) != n {
		t.Fatalf("%d due, %v", len(jobs), err)
	}
	parallel(t, len(jobs), func(i int) error {
		status, err := s.RecordAttempt(jobs[i], store.AttemptResult{StatusCode: 500, Error: "HTTP 500", At: clock.Now()})
		if err == nil && status != store.DeliveryDead {
			return fmt.Errorf("recorded %s, want dead", status)
		}
		return err
	})
	got, err := s.RetryDeliveries(env, store.DeliveryFilter{Status: store.DeliveryDead})
	if err != nil || got != n {
		t.Fatalf("requeued %d, %v; want %d", got, err, n)
	}
	pending := walkPages(t, s, "pending", store.MaxLimit, func(p store.Page) ([]string, *string, error) {
		items, next, err := s.Deliveries(env, store.DeliveryFilter{Status: store.DeliveryPending}, p)
		var ids []string
		for _, d := range items {
			if d.AttemptCount != 1 {
				t.Errorf("%s: attemptCount %d", d.ID, d.AttemptCount)
			}
			ids = append(ids, d.ID)
		}
		return ids, next, err
	})
	if len(pending) != n {
		t.Errorf("%d pending after the retry, want %d", len(pending), n)
	}
}
