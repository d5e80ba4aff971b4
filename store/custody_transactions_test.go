package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// mustOpen opens a store on a temp db with the chain simulator off.
func ptr(s string) *string { return &s }

// TestTransactionStateMachine walks every type to every reachable status and
// tries every move from there: exactly the moves of SPEC §4 succeed, the
// others are ECONFLICT and change nothing.
func TestTransactionStateMachine(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{})
	env := store.Sandbox
	v, err := s.CreateVault(env, store.VaultInput{Name: ptr("v")}, store.Idem{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := s.CreateWallet(env, v.VaultID, store.WalletInput{AssetSymbol: ptr("ETH")}, store.Idem{})
	if err != nil {
		t.Fatal(err)
	}
	dst, err := s.CreateWallet(env, v.VaultID, store.WalletInput{AssetSymbol: ptr("ETH")}, store.Idem{})
	if err != nil {
		t.Fatal(err)
	}
	fund, err := s.CreateDeposit(env, store.DepositInput{WalletID: &src.WalletID, Amount: ptr("1000")}, store.Idem{})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := s.AdvanceTransaction(env, fund.TransactionID); err != nil {
			t.Fatal(err)
		}
	}

	paths := map[string][]string{
		store.TxDeposit:          {"Submitted", "Confirming", "Completed"},
		store.TxWithdrawal:       {"Submitted", "PendingSignature", "Broadcasting", "Confirming", "Completed"},
		store.TxInternalTransfer: {"Submitted", "PendingSignature", "Broadcasting", "Confirming", "Completed"},
	}
	create := func(typ string) store.Transaction {
		t.Helper()
		var x store.Transaction
		var err error
		switch typ {
		case store.TxDeposit:
			x, err = s.CreateDeposit(env, store.DepositInput{WalletID: &dst.WalletID, Amount: ptr("1")}, store.Idem{})
		case store.TxWithdrawal:
			x, err = s.CreateTransaction(env, store.TransactionInput{Type: ptr(typ), SourceWalletID: &src.WalletID, DestinationAddress: ptr("0xabc"), Amount: ptr("1")}, store.Idem{})
		default:
			x, err = s.CreateTransaction(env, store.TransactionInput{Type: ptr(typ), SourceWalletID: &src.WalletID, DestinationWalletID: &dst.WalletID, Amount: ptr("1")}, store.Idem{})
		}
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	for typ, path := range paths {
		for i, at := range append(path, "Failed", "Cancelled") {
			for _, action := range []string{"advance", "fail", "cancel"} {
				x := create(typ)
				err = nil
				// Bring x to status at.
				switch at {
				case "Failed":
					x, err = s.FailTransaction(env, x.TransactionID, ptr("setup"))
				case "Cancelled":
					x, err = s.CancelTransaction(env, x.TransactionID)
				default:
					for range i {
						if x, err = s.AdvanceTransaction(env, x.TransactionID); err != nil {
							break
						}
					}
				}
				if err != nil || x.Status != at {
					t.Fatalf("%s: could not reach %s: %v (at %s)", typ, at, err, x.Status)
				}
				final := at == "Completed" || at == "Failed" || at == "Cancelled"
				var want string
				switch action {
				case "advance":
					if !final {
						want = path[i+1]
					}
				case "fail":
					if !final {
						want = "Failed"
					}
				case "cancel":
					if at == "Submitted" || at == "PendingSignature" {
						want = "Cancelled"
					}
				}
				var got store.Transaction
				switch action {
				case "advance":
					got, err = s.AdvanceTransaction(env, x.TransactionID)
				case "fail":
					got, err = s.FailTransaction(env, x.TransactionID, ptr("boom"))
				case "cancel":
					got, err = s.CancelTransaction(env, x.TransactionID)
				}
				name := typ + " " + at + " " + action
				if want == "" {
					if store.ErrorCode(err) != store.ECONFLICT {
						t.Errorf("%s: error %v, want ECONFLICT", name, err)
					}
					if after, _ := s.Transaction(env, x.TransactionID); after.Status != at {
						t.Errorf("%s: a refused move changed the status to %s", name, after.Status)
					}
					continue
				}
				if err != nil || got.Status != want || got.PreviousStatus == nil || *got.PreviousStatus != at {
					t.Errorf("%s: got %s from %v, %v; want %s from %s", name, got.Status, got.PreviousStatus, err, want, at)
					continue
				}
				if isFinal := want == "Completed" || want == "Failed" || want == "Cancelled"; isFinal == got.CompletedAt.IsZero() {
					t.Errorf("%s: completedAt %v with status %s", name, got.CompletedAt, want)
				}
				if (want == "Failed") != (got.FailureReason != nil) {
					t.Errorf("%s: failureReason %v with status %s", name, got.FailureReason, want)
				}
				if typ != store.TxDeposit && (got.TxHash != nil) != (i >= 2 || want == "Broadcasting") {
					t.Errorf("%s: txHash %v at %s", name, got.TxHash, want)
				}
			}
		}
	}

	// Fail whatever is still in flight: then every reservation was released
	// or paid and every pending credit dropped or credited.
	all, _, err := s.Transactions(env, store.TransactionFilter{}, store.Page{Limit: 200})
	if err != nil || len(all) == 200 {
		t.Fatalf("%d transactions, %v", len(all), err)
	}
	for _, x := range all {
		if x.CompletedAt.IsZero() {
			if _, err := s.FailTransaction(env, x.TransactionID, ptr("cleanup")); err != nil {
				t.Fatal(err)
			}
		}
	}
	b, err := s.WalletBalance(env, src.WalletID)
	if err != nil {
		t.Fatal(err)
	}
	if b.Available != b.Total {
		t.Errorf("source balance %+v: reservations left behind", b)
	}
	d, err := s.WalletBalance(env, dst.WalletID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Pending != "0" || d.Available != d.Total {
		t.Errorf("destination balance %+v: pending credits left behind", d)
	}
}

// TestTransactionCreatedAtCreation: transaction.created carries the
// transaction's createdAt as its timestamp (it is encoded with the draft,
// before the write transaction) and the transaction as its data.
func TestTransactionCreatedAtCreation(t *testing.T) {
	s, clock := mustOpen(t, "", store.Options{})
	env := store.Sandbox
	if _, err := s.SetWebhook(context.Background(), env, "http://127.0.0.1:9/hook", nil); err != nil {
		t.Fatal(err)
	}
	v, _ := s.CreateVault(env, store.VaultInput{Name: ptr("v")}, store.Idem{})
	w, err := s.CreateWallet(env, v.VaultID, store.WalletInput{AssetSymbol: ptr("ETH")}, store.Idem{})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(1500 * time.Millisecond)
	x, err := s.CreateDeposit(env, store.DepositInput{WalletID: &w.WalletID, Amount: ptr("2.5")}, store.Idem{})
	if err != nil {
		t.Fatal(err)
	}
	d, ev := newestEvent(t, s, env, store.DeliveryFilter{EntityID: x.TransactionID, EventType: "transaction.created"})
	if ev.Timestamp != x.CreatedAt.String() || ev.EventType != "transaction.created" || ev.EntityType != "transaction" ||
		ev.EntityID != x.TransactionID || ev.ID != d.EventID {
		t.Errorf("envelope %+v, want transaction.created of %s at %s, id %s", ev, x.TransactionID, x.CreatedAt, d.EventID)
	}
	if ev.Data["transactionId"] != x.TransactionID || ev.Data["amount"] != "2.5" || ev.Data["createdAt"] != x.CreatedAt.String() {
		t.Errorf("data %v does not describe %s", ev.Data, x.TransactionID)
	}
}

// fundedWallet opens a store whose sandbox sends custody webhooks, with a
// vault of one wallet holding 2 of its asset, available.
func fundedWallet(t *testing.T) (s *store.Store, clock *store.ManualClock, vault string, wallets []string) {
	t.Helper()
	s, clock = mustOpen(t, "", store.Options{})
	env := store.Sandbox
	if _, err := s.SetWebhook(context.Background(), env, "http://127.0.0.1:9/hook", nil); err != nil {
		t.Fatal(err)
	}
	vault, wallets = vaultOfWallets(t, s, env, 1)
	fund, err := s.CreateDeposit(env, store.DepositInput{WalletID: &wallets[0], Amount: ptr("2")}, store.Idem{})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := s.AdvanceTransaction(env, fund.TransactionID); err != nil {
			t.Fatal(err)
		}
	}
	return s, clock, vault, wallets
}

// TestWithdrawalAnnouncesBalance: a withdrawal's balance.updated, encoded
// with the draft like its transaction.created, names the debited wallet's
// balance, carries no amounts, and is of the transaction's createdAt.
func TestWithdrawalAnnouncesBalance(t *testing.T) {
	s, clock, vault, wallets := fundedWallet(t)
	env := store.Sandbox
	clock.Advance(1500 * time.Millisecond)
	x, err := s.CreateTransaction(env, store.TransactionInput{Type: ptr(store.TxWithdrawal), SourceWalletID: &wallets[0],
		DestinationAddress: ptr("0xabc"), Amount: ptr("0.5")}, store.Idem{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Wallet(env, wallets[0])
	if err != nil {
		t.Fatal(err)
	}
	entity := vault + ":" + w.AssetID
	d, ev := newestEvent(t, s, env, store.DeliveryFilter{EntityID: entity, EventType: "balance.updated"})
	if ev.Timestamp != x.CreatedAt.String() || ev.EntityType != "balance" || ev.EntityID != entity || ev.ID != d.EventID {
		t.Errorf("envelope %+v, want balance.updated of %s at %s, id %s", ev, entity, x.CreatedAt, d.EventID)
	}
	if len(ev.Data) != 2 || ev.Data["vaultAccountId"] != vault || ev.Data["assetId"] != w.AssetID {
		t.Errorf("data %v, want only vaultAccountId %s and assetId %s", ev.Data, vault, w.AssetID)
	}
	// In event order: transaction.created, then balance.updated.
	newest, _, err := s.Deliveries(env, store.DeliveryFilter{}, store.Page{Limit: 2})
	if err != nil || len(newest) != 2 || newest[0].ID != d.ID || newest[1].EntityID != x.TransactionID || newest[1].EventType != "transaction.created" {
		t.Errorf("the two newest deliveries %+v, want transaction.created of %s then %s (%v)", newest, x.TransactionID, d.ID, err)
	}
}

// TestDraftedEventsStayInOrder: a withdrawal drafted before another one of
// the same wallet is written, and written after it, does not carry an older
// timestamp than the events stored before its own: receivers put an
// entity's events in order by timestamp (seed 2: "receivers compare
// previousStatus, status and timestamp"). Its createdAt stays the time its
// request was taken in.
func TestDraftedEventsStayInOrder(t *testing.T) {
	s, clock, vault, wallets := fundedWallet(t)
	env := store.Sandbox
	withdraw := func() store.Transaction {
		t.Helper()
		x, err := s.CreateTransaction(env, store.TransactionInput{Type: ptr(store.TxWithdrawal), SourceWalletID: &wallets[0],
			DestinationAddress: ptr("0xabc"), Amount: ptr("0.1")}, store.Idem{})
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	drafted := clock.Now()
	var between store.Transaction
	store.BeforeApply(s, func() {
		store.BeforeApply(s, nil)
		clock.Advance(2 * time.Second)
		between = withdraw()
	})
	late := withdraw()
	if !late.CreatedAt.Time.Equal(drafted) || !between.CreatedAt.Time.Equal(drafted.Add(2*time.Second)) {
		t.Fatalf("createdAt %s and %s, want %s and 2 s later", late.CreatedAt, between.CreatedAt, drafted.Format(time.RFC3339Nano))
	}

	// Every event of the environment, in the order stored (the deliveries
	// list is newest first).
	list, _, err := s.Deliveries(env, store.DeliveryFilter{}, store.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var last string
	stamps := map[string]string{} // entityId|eventType of the two withdrawals -> timestamp
	for i := len(list) - 1; i >= 0; i-- {
		d, err := s.Delivery(env, list[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		var ev envelope
		if err := json.Unmarshal([]byte(d.Payload), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Timestamp < last {
			t.Errorf("%s of %s at %s, after an event at %s", ev.EventType, ev.EntityID, ev.Timestamp, last)
		}
		last = ev.Timestamp
		stamps[ev.EntityID+"|"+ev.EventType] = ev.Timestamp
	}
	now := clock.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	if got := stamps[late.TransactionID+"|transaction.created"]; got != now {
		t.Errorf("the late withdrawal's transaction.created at %q, want its write's time %s", got, now)
	}
	if got := stamps[vault+":"+late.AssetID+"|balance.updated"]; got != now {
		t.Errorf("the wallet's last balance.updated at %q, want %s", got, now)
	}
}

// envelope is a webhook event's envelope as a receiver reads it.
type envelope struct {
	ID, EventType, EntityType, EntityID, Timestamp string
	Data                                           map[string]any
}

// newestEvent returns the newest delivery f selects and its event's
// envelope.
func newestEvent(t *testing.T, s *store.Store, env store.Env, f store.DeliveryFilter) (store.Delivery, envelope) {
	t.Helper()
	list, _, err := s.Deliveries(env, f, store.Page{Limit: 1})
	if err != nil || len(list) != 1 {
		t.Fatalf("deliveries %+v: %v, %v", f, list, err)
	}
	d, err := s.Delivery(env, list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var ev envelope
	if err := json.Unmarshal([]byte(d.Payload), &ev); err != nil {
		t.Fatal(err)
	}
	return d, ev
}
