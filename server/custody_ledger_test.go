package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// createdFields and statusFields are the data fields of seed 001 §6.
var (
	createdFields = []string{"transactionId", "type", "status", "vaultId", "vaultExternalId", "vaultName", "assetId",
		"assetSymbol", "assetNetwork", "sourceWalletId", "destinationWalletId", "amount", "sourceAddress",
		"destinationAddress", "destinationTag", "txHash", "networkFee", "feeCurrency", "amountUSD", "feeUSD", "note", "createdAt"}
	statusFields = []string{"transactionId", "type", "status", "previousStatus", "vaultId", "vaultExternalId", "vaultName",
		"assetId", "assetSymbol", "assetNetwork", "sourceWalletId", "amount", "sourceAddress", "destinationAddress",
		"txHash", "networkFee", "feeCurrency", "amountUSD", "feeUSD", "failureReason", "completedAt"}
	walletFields = []string{"walletId", "vaultId", "assetId", "label", "depositAddress", "depositTag", "status", "createdAt"}
)

func TestDepositLifeArrivesAsWebhooks(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc := newReceiver(t, in.Clock, nil)
	secret := in.configureWebhook(rc)

	var v struct{ VaultID, Name, ExternalID, CreatedAt string }
	in.expect(201, "POST", "/vaults", map[string]any{"name": "Alice", "externalId": "cust-42"}).json(t, &v)
	w := in.wallet(v.VaultID, "ETH")

	e := verified(t, secret, rc.next(t))
	if e.EventType != "wallet.created" || e.EntityType != "wallet" || e.EntityID != w.WalletID {
		t.Fatalf("first event %s %s %s, want wallet.created for %s", e.EventType, e.EntityType, e.EntityID, w.WalletID)
	}
	sameKeys(t, "wallet.created", e.Data, walletFields...)
	fields(t, "wallet.created", e.Data, map[string]any{"walletId": w.WalletID, "vaultId": v.VaultID, "assetId": w.AssetID,
		"label": "ETH wallet", "depositAddress": w.DepositAddress, "depositTag": nil, "status": "Active", "createdAt": "2026-11-21T05:00:00.000Z"})

	var dep map[string]any
	in.expect(201, "POST", "/sandbox/deposits", map[string]any{"walletId": w.WalletID, "amount": "1.50", "sourceAddress": "0x1111111111111111111111111111111111111111"}).json(t, &dep)
	id := dep["transactionId"].(string)

	e = verified(t, secret, rc.next(t))
	if e.EventType != "transaction.created" || e.EntityType != "transaction" || e.EntityID != id {
		t.Fatalf("event %s %s %s, want transaction.created for %s", e.EventType, e.EntityType, e.EntityID, id)
	}
	if e.Timestamp != "2026-11-21T05:00:00.000Z" {
		t.Errorf("timestamp %s", e.Timestamp)
	}
	sameKeys(t, "transaction.created", e.Data, createdFields...)
	txHash, _ := e.Data["txHash"].(string)
	if !regexp.MustCompile(`^0x[0-9a-f]{64}$`).MatchString(txHash) {
		t.Errorf("deposit txHash %q: want the detected on-chain hash", txHash)
	}
	fields(t, "transaction.created", e.Data, map[string]any{
		"transactionId": id, "type": "Deposit", "status": "Submitted", "vaultId": v.VaultID, "vaultExternalId": "cust-42",
		"vaultName": "Alice", "assetId": w.AssetID, "assetSymbol": "ETH", "assetNetwork": "ethereum",
		"sourceWalletId": nil, "destinationWalletId": nil, "amount": "1.5",
		"sourceAddress": "0x1111111111111111111111111111111111111111", "destinationAddress": w.DepositAddress,
		"destinationTag": nil, "networkFee": nil, "feeCurrency": nil, "amountUSD": "4500", "feeUSD": nil, "note": nil,
		"createdAt": "2026-11-21T05:00:00.000Z",
	})
	if b := in.balance(w.WalletID); b.Total != "0" || b.Available != "0" || b.Pending != "1.5" {
		t.Errorf("balance while confirming %+v: want total 0, available 0, pending 1.5", b)
	}

	want := map[string]any{
		"transactionId": id, "type": "Deposit", "vaultId": v.VaultID, "vaultExternalId": "cust-42", "vaultName": "Alice",
		"assetId": w.AssetID, "assetSymbol": "ETH", "assetNetwork": "ethereum", "sourceWalletId": nil, "amount": "1.5",
		"sourceAddress": "0x1111111111111111111111111111111111111111", "destinationAddress": w.DepositAddress,
		"txHash": txHash, "networkFee": nil, "feeCurrency": nil, "amountUSD": "4500", "feeUSD": nil, "failureReason": nil,
	}
	in.advance(stepDelay)
	e = verified(t, secret, rc.next(t))
	if e.EventType != "transaction.status.updated" || e.EntityID != id {
		t.Fatalf("event %s for %s, want transaction.status.updated", e.EventType, e.EntityID)
	}
	sameKeys(t, "status.updated", e.Data, statusFields...)
	want["status"], want["previousStatus"], want["completedAt"] = "Confirming", "Submitted", nil
	fields(t, "status.updated Confirming", e.Data, want)

	in.advance(stepDelay)
	var gotBalance bool
	for range 2 { // the transaction's and the balance's events may arrive in either order
		e = verified(t, secret, rc.next(t))
		switch e.EventType {
		case "transaction.status.updated":
			sameKeys(t, "status.updated", e.Data, statusFields...)
			want["status"], want["previousStatus"], want["completedAt"] = "Completed", "Confirming", "2026-11-21T05:00:06.000Z"
			fields(t, "status.updated Completed", e.Data, want)
		case "balance.updated":
			gotBalance = true
			if e.EntityType != "balance" || e.EntityID != v.VaultID+":"+w.AssetID {
				t.Errorf("balance.updated entity %s %s, want balance %s:%s", e.EntityType, e.EntityID, v.VaultID, w.AssetID)
			}
			sameKeys(t, "balance.updated", e.Data, "vaultAccountId", "assetId")
			fields(t, "balance.updated", e.Data, map[string]any{"vaultAccountId": v.VaultID, "assetId": w.AssetID})
		default:
			t.Fatalf("unexpected %s", e.EventType)
		}
	}
	if !gotBalance {
		t.Fatal("no balance.updated after the deposit completed")
	}
	rc.none(t, 100*time.Millisecond)

	b := in.balance(w.WalletID)
	if b.Total != "1.5" || b.Available != "1.5" || b.Pending != "0" || b.AssetSymbol != "ETH" || b.VaultAccountID != v.VaultID {
		t.Errorf("balance after completion %+v", b)
	}
	x := in.transaction(id)
	sameKeys(t, "GET /transactions/{id}", x, append(createdFields, "previousStatus", "failureReason", "completedAt", "updatedAt")...)
	fields(t, "GET /transactions/{id}", x, map[string]any{"status": "Completed", "completedAt": "2026-11-21T05:00:06.000Z", "updatedAt": "2026-11-21T05:00:06.000Z"})
}

func TestWithdrawalOverAvailableIsRefused(t *testing.T) {
	t.Parallel()
	in := start(t)
	v := in.vault("a")
	w := in.wallet(v, "ETH")
	in.fund(w.WalletID, "1")
	rc := newReceiver(t, in.Clock, nil)
	in.configureWebhook(rc)

	// 1 ETH is available, but 1 ETH plus the 0.002 fee is not.
	r := in.expect(409, "POST", "/transactions", map[string]any{"type": "Withdrawal", "sourceWalletId": w.WalletID,
		"destinationAddress": "0x2222222222222222222222222222222222222222", "amount": "1"})
	if code := r.m(t)["error"].(map[string]any)["code"]; code != "insufficient_funds" {
		t.Errorf("error code %v, want insufficient_funds", code)
	}
	rc.none(t, 200*time.Millisecond)
	if b := in.balance(w.WalletID); b.Total != "1" || b.Available != "1" {
		t.Errorf("balance %+v changed by a refused withdrawal", b)
	}
	var list struct{ Items []map[string]any }
	in.expect(200, "GET", "/transactions?type=Withdrawal", nil).json(t, &list)
	if len(list.Items) != 0 {
		t.Errorf("a refused withdrawal was recorded: %v", list.Items)
	}

	// 0.998 plus the fee is exactly what is available.
	var x map[string]any
	in.expect(201, "POST", "/transactions", map[string]any{"type": "Withdrawal", "sourceWalletId": w.WalletID,
		"destinationAddress": "0x2222222222222222222222222222222222222222", "amount": "0.998", "note": "payout"}).json(t, &x)
	fields(t, "withdrawal", x, map[string]any{"networkFee": "0.002", "feeCurrency": "ETH", "feeUSD": "6", "amountUSD": "2994",
		"note": "payout", "destinationWalletId": nil, "txHash": nil, "status": "Submitted", "previousStatus": nil})
	if b := in.balance(w.WalletID); b.Total != "1" || b.Available != "0" {
		t.Errorf("balance %+v: want total 1, available 0 while reserved", b)
	}
	id := x["transactionId"].(string)
	in.step(id, "PendingSignature")
	x = in.step(id, "Broadcasting")
	if h, _ := x["txHash"].(string); !regexp.MustCompile(`^0x[0-9a-f]{64}$`).MatchString(h) {
		t.Errorf("txHash %q once broadcast", h)
	}
	in.step(id, "Confirming")
	in.step(id, "Completed")
	if b := in.balance(w.WalletID); b.Total != "0" || b.Available != "0" {
		t.Errorf("balance %+v after completion: want 0", b)
	}
}

// TestMemberNamesAreExact: a member that names a field only when case is
// ignored, or a member given twice, is a 400 naming it; no money moves.
// (encoding/json alone took "AMOUNT" as amount, and the last of two.)
func TestMemberNamesAreExact(t *testing.T) {
	t.Parallel()
	in := start(t)
	w := in.wallet(in.vault("a"), "BTC")
	for body, field := range map[string]string{
		`{"walletId":"` + w.WalletID + `","AMOUNT":"4"}`:                "AMOUNT",
		`{"walletId":"` + w.WalletID + `","amount":"4","amount":"400"}`: "amount",
		`{"WalletId":"` + w.WalletID + `","amount":"4"}`:                "WalletId",
	} {
		r := in.expect(400, "POST", "/sandbox/deposits", body)
		if code, f := errField(t, r); code != "validation_failed" || f != field {
			t.Errorf("%s: %s naming %q, want validation_failed naming %q", body, code, f, field)
		}
	}
	r := in.expect(400, "POST", "/vaults", `{"Name":"case"}`)
	if _, f := errField(t, r); f != "Name" {
		t.Errorf("vault Name: field %q", f)
	}
	var list struct{ Items []map[string]any }
	in.expect(200, "GET", "/transactions", nil).json(t, &list)
	if len(list.Items) != 0 {
		t.Errorf("refused bodies made transactions: %v", list.Items)
	}
}

func TestConcurrentWithdrawalsNeverOverdraw(t *testing.T) {
	t.Parallel()
	in := start(t, func(o *options) { o.settings.Chain.AutoAdvance = false })
	v := in.vault("a")
	w := in.wallet(v, "ETH")
	in.fund(w.WalletID, "10")

	// Each takes 0.1 + 0.002 fee: 98 fit into 10 ETH.
	body, _ := json.Marshal(map[string]any{"type": "Withdrawal", "sourceWalletId": w.WalletID,
		"destinationAddress": "0x3333333333333333333333333333333333333333", "amount": "0.1"})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()
	statuses := make([]int, 200)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", in.URL+"/transactions", bytes.NewReader(body))
			req.Header.Set("X-Api-Key", in.Key)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Api-Secret", in.Secret)
			resp, err := client.Do(req)
			if err != nil {
				return
			}
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	if count[201] != 98 || count[409] != 102 {
		t.Fatalf("statuses %v: want 98 × 201 and 102 × 409", count)
	}
	b := in.balance(w.WalletID)
	if b.Total != "10" || b.Available != "0.004" {
		t.Errorf("balance %+v: want total 10, available 0.004", b)
	}
	var list struct {
		Items      []struct{ TransactionID string }
		NextCursor *string
	}
	in.expect(200, "GET", "/transactions?type=Withdrawal&limit=200", nil).json(t, &list)
	if len(list.Items) != 98 {
		t.Fatalf("%d withdrawals recorded, want 98", len(list.Items))
	}
	for range 4 { // concurrent moves of different transactions share commits
		for _, x := range list.Items {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest("POST", in.URL+"/transactions/"+x.TransactionID+"/advance", nil)
				req.Header.Set("X-Api-Key", in.Key)
				req.Header.Set("X-Api-Secret", in.Secret)
				if resp, err := client.Do(req); err == nil {
					resp.Body.Close()
				}
			}()
		}
		wg.Wait()
	}
	if b := in.balance(w.WalletID); b.Total != "0.004" || b.Available != "0.004" {
		t.Errorf("balance %+v after every withdrawal completed: want 0.004", b)
	}
}

func TestAmountsAreExact(t *testing.T) {
	t.Parallel()
	in := start(t, func(o *options) { o.settings.Chain.AutoAdvance = false })
	v := in.vault("a")
	eth := in.wallet(v, "ETH")
	usdc := in.wallet(v, "USDC")

	in.fund(eth.WalletID, "0.123456789012345678")
	in.fund(eth.WalletID, "0.000000000000000001")
	if b := in.balance(eth.WalletID); b.Total != "0.123456789012345679" || b.Available != "0.123456789012345679" {
		t.Errorf("ETH balance %+v: want 0.123456789012345679 exactly", b)
	}
	in.fund(usdc.WalletID, "100.000000") // trailing zeros do not count
	if b := in.balance(usdc.WalletID); b.Total != "100" {
		t.Errorf("USDC balance %q, want 100", b.Total)
	}
	var x map[string]any
	in.expect(201, "POST", "/transactions", map[string]any{"type": "Withdrawal", "sourceWalletId": usdc.WalletID,
		"destinationAddress": "0x4444444444444444444444444444444444444444", "amount": "0.000001"}).json(t, &x)
	fields(t, "USDC withdrawal", x, map[string]any{"amount": "0.000001", "networkFee": "1.5", "amountUSD": "0", "feeUSD": "1.5"})
	if b := in.balance(usdc.WalletID); b.Available != "98.499999" {
		t.Errorf("USDC available %q, want 98.499999", b.Available)
	}

	// USD values are exact, rounded half up to cents: 0.025 XRP at 0.6 is 0.015.
	xrp := in.wallet(v, "XRP")
	in.expect(201, "POST", "/sandbox/deposits", map[string]any{"walletId": xrp.WalletID, "amount": "0.025"}).json(t, &x)
	fields(t, "XRP deposit", x, map[string]any{"amount": "0.025", "amountUSD": "0.02"})

	for _, c := range []struct {
		name   string
		wallet string
		amount any
	}{
		{"too many digits", eth.WalletID, "0.1234567890123456789"},
		{"USDC has 6 decimals", usdc.WalletID, "1.0000001"},
		{"exponent", eth.WalletID, "1e-3"},
		{"upper exponent", eth.WalletID, "1E3"},
		{"sign", eth.WalletID, "-1"},
		{"plus sign", eth.WalletID, "+1"},
		{"zero", eth.WalletID, "0.000"},
		{"empty", eth.WalletID, ""},
		{"spaces", eth.WalletID, " 1"},
		{"no integer part", eth.WalletID, ".5"},
		{"no fraction", eth.WalletID, "5."},
		{"comma", eth.WalletID, "1,5"},
		{"number", eth.WalletID, 1.5},
		{"huge", eth.WalletID, "1000000000000000000000000000000000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := in.expect(400, "POST", "/sandbox/deposits", map[string]any{"walletId": c.wallet, "amount": c.amount})
			if f := r.m(t)["error"].(map[string]any)["field"]; f != "amount" {
				t.Errorf("field %v, want amount; body %s", f, r.Body)
			}
		})
	}
}

func TestIdempotencyKeyReplaysTheFirstResponse(t *testing.T) {
	t.Parallel()
	in := start(t)
	v := in.vault("a")
	w := in.wallet(v, "BTC")
	in.fund(w.WalletID, "1")
	rc := newReceiver(t, in.Clock, nil)
	in.configureWebhook(rc, "transaction.created")

	body := map[string]any{"type": "Withdrawal", "sourceWalletId": w.WalletID, "destinationAddress": "bc1qexample", "amount": "0.25"}
	first := in.expect(201, "POST", "/transactions", body, "Idempotency-Key", "k-1")
	again := in.expect(201, "POST", "/transactions", body, "Idempotency-Key", "k-1")
	if !bytes.Equal(first.Body, again.Body) {
		t.Errorf("replay answered\n%s\nwant the first response\n%s", again.Body, first.Body)
	}
	if b := in.balance(w.WalletID); b.Available != "0.7499" {
		t.Errorf("available %q: a replay must not reserve again (want 0.7499)", b.Available)
	}
	rc.nextOfType(t, "transaction.created")
	rc.none(t, 200*time.Millisecond)

	// Concurrent first uses of one key make one transaction.
	body["amount"] = "0.01"
	ids := make([]string, 10)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, _ := json.Marshal(body)
			req, _ := http.NewRequest("POST", in.URL+"/transactions", bytes.NewReader(b))
			req.Header.Set("X-Api-Key", in.Key)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Api-Secret", in.Secret)
			req.Header.Set("Idempotency-Key", "k-concurrent")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			var x struct{ TransactionID string }
			if resp.StatusCode == 201 && json.NewDecoder(resp.Body).Decode(&x) == nil {
				ids[i] = x.TransactionID
			}
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id == "" || id != ids[0] {
			t.Fatalf("concurrent uses of one key answered %v: want one transaction, ten times", ids)
		}
	}
	if b := in.balance(w.WalletID); b.Available != "0.7398" {
		t.Errorf("available %q after one 0.01 withdrawal more, want 0.7398", b.Available)
	}
	rc.nextOfType(t, "transaction.created")
	rc.none(t, 200*time.Millisecond)

	body["amount"] = "0.5"
	r := in.expect(409, "POST", "/transactions", body, "Idempotency-Key", "k-1")
	if code := r.m(t)["error"].(map[string]any)["code"]; code != "idempotency_key_reused" {
		t.Errorf("code %v", code)
	}
	if f, has := r.m(t)["error"].(map[string]any)["field"]; has {
		t.Errorf("a reused key's 409 names field %v; SPEC §2 keeps field for validation errors", f)
	}
	// The same key on another route is another key.
	in.expect(201, "POST", "/vaults", map[string]any{"name": "b"}, "Idempotency-Key", "k-1")

	// Vaults, wallets and deposits replay too.
	v1 := in.expect(201, "POST", "/vaults", map[string]any{"name": "c"}, "Idempotency-Key", "v-1")
	v2 := in.expect(201, "POST", "/vaults", map[string]any{"name": "c"}, "Idempotency-Key", "v-1")
	if !bytes.Equal(v1.Body, v2.Body) {
		t.Errorf("vault replay differs")
	}
	w1 := in.expect(201, "POST", "/vaults/"+v+"/wallets", map[string]any{"assetSymbol": "SOL"}, "Idempotency-Key", "w-1")
	w2 := in.expect(201, "POST", "/vaults/"+v+"/wallets", map[string]any{"assetSymbol": "SOL"}, "Idempotency-Key", "w-1")
	if !bytes.Equal(w1.Body, w2.Body) {
		t.Errorf("wallet replay differs")
	}
	d1 := in.expect(201, "POST", "/sandbox/deposits", map[string]any{"walletId": w.WalletID, "amount": "1"}, "Idempotency-Key", "d-1")
	d2 := in.expect(201, "POST", "/sandbox/deposits", map[string]any{"walletId": w.WalletID, "amount": "1"}, "Idempotency-Key", "d-1")
	if !bytes.Equal(d1.Body, d2.Body) {
		t.Errorf("deposit replay differs")
	}
	if b := in.balance(w.WalletID); b.Pending != "1" {
		t.Errorf("pending %q after a replayed deposit, want 1", b.Pending)
	}
}

func TestIllegalMovesAreConflicts(t *testing.T) {
	t.Parallel()
	in := start(t, func(o *options) { o.settings.Chain.AutoAdvance = false })
	v := in.vault("a")
	w := in.wallet(v, "SOL")
	in.fund(w.WalletID, "5")
	withdraw := func() string {
		var x struct{ TransactionID string }
		in.expect(201, "POST", "/transactions", map[string]any{"type": "Withdrawal", "sourceWalletId": w.WalletID,
			"destinationAddress": "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin", "amount": "1"}).json(t, &x)
		return x.TransactionID
	}
	id := withdraw()
	in.expect(200, "POST", "/transactions/"+id+"/advance", nil)
	in.expect(200, "POST", "/transactions/"+id+"/advance", nil) // Broadcasting
	r := in.expect(409, "POST", "/transactions/"+id+"/cancel", nil)
	if code := r.m(t)["error"].(map[string]any)["code"]; code != "invalid_transition" {
		t.Errorf("code %v, want invalid_transition", code)
	}
	in.expect(200, "POST", "/transactions/"+id+"/advance", nil)
	in.expect(200, "POST", "/transactions/"+id+"/advance", nil) // Completed
	in.expect(409, "POST", "/transactions/"+id+"/advance", nil)
	in.expect(409, "POST", "/transactions/"+id+"/fail", map[string]any{"reason": "late"})
	in.expect(409, "POST", "/transactions/"+id+"/cancel", nil)

	// A deposit skips signing and broadcasting.
	var d struct{ TransactionID string }
	in.expect(201, "POST", "/sandbox/deposits", map[string]any{"walletId": w.WalletID, "amount": "1"}).json(t, &d)
	var x struct{ Status, PreviousStatus string }
	in.expect(200, "POST", "/transactions/"+d.TransactionID+"/advance", nil).json(t, &x)
	if x.Status != "Confirming" || x.PreviousStatus != "Submitted" {
		t.Errorf("deposit advanced to %s from %s, want Confirming from Submitted", x.Status, x.PreviousStatus)
	}

	in.expect(404, "POST", "/transactions/not-a-uuid/advance", nil)
	in.expect(404, "POST", "/transactions/00000000-0000-4000-8000-000000000000/cancel", nil)
	in.expect(400, "POST", "/transactions/"+withdraw()+"/fail", map[string]any{"reason": 7})
}

func TestFailAndCancelReleaseTheReservation(t *testing.T) {
	t.Parallel()
	in := start(t, func(o *options) { o.settings.Chain.AutoAdvance = false })
	v := in.vault("a")
	w := in.wallet(v, "XRP")
	if w.DepositTag == nil || !regexp.MustCompile(`^[0-9]+$`).MatchString(*w.DepositTag) {
		t.Errorf("XRP wallet depositTag %v: want a numeric tag", w.DepositTag)
	}
	in.fund(w.WalletID, "100")
	rc := newReceiver(t, in.Clock, nil)
	secret := in.configureWebhook(rc)

	for _, c := range []struct{ name, action, advance, status string }{
		{"fail while broadcasting", "fail", "2", "Failed"},
		{"cancel while pending signature", "cancel", "1", "Cancelled"},
		{"cancel when submitted", "cancel", "0", "Cancelled"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var x struct{ TransactionID string }
			in.expect(201, "POST", "/transactions", map[string]any{"type": "Withdrawal", "sourceWalletId": w.WalletID,
				"destinationAddress": "rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe", "destinationTag": "12345", "amount": "10"}).json(t, &x)
			if got := rc.collect(t, secret, 2); len(got["transaction.created"]) != 1 || len(got["balance.updated"]) != 1 {
				t.Fatalf("events at submission %v: want transaction.created and balance.updated", got)
			}
			if b := in.balance(w.WalletID); b.Available != "89.99999" || b.Total != "100" {
				t.Fatalf("balance %+v while reserved", b)
			}
			for range c.advance[0] - '0' {
				in.expect(200, "POST", "/transactions/"+x.TransactionID+"/advance", nil)
				rc.nextOfType(t, "transaction.status.updated")
			}
			in.expect(200, "POST", "/transactions/"+x.TransactionID+"/"+c.action, map[string]any{"reason": "node rejected"})
			got := rc.collect(t, secret, 2)
			if len(got["transaction.status.updated"]) != 1 || len(got["balance.updated"]) != 1 {
				t.Fatalf("events %v: want one status update and one balance.updated", got)
			}
			reason := any(nil)
			if c.status == "Failed" {
				reason = "node rejected"
			}
			fields(t, c.status, got["transaction.status.updated"][0].Data, map[string]any{"status": c.status, "failureReason": reason, "completedAt": "2026-11-21T05:00:00.000Z"})
			if b := in.balance(w.WalletID); b.Available != "100" || b.Total != "100" {
				t.Errorf("balance %+v after %s: want the reservation released", b, c.action)
			}
		})
	}
}

func TestInternalTransferCreditsTheDestination(t *testing.T) {
	t.Parallel()
	in := start(t)
	a, b := in.vault("a"), in.vault("b")
	src, dst := in.wallet(a, "USDC"), in.wallet(b, "USDC")
	in.fund(src.WalletID, "50")
	rc := newReceiver(t, in.Clock, nil)
	secret := in.configureWebhook(rc)

	var x map[string]any
	in.expect(201, "POST", "/transactions", map[string]any{"type": "InternalTransfer", "sourceWalletId": src.WalletID,
		"destinationWalletId": dst.WalletID, "amount": "20.5"}).json(t, &x)
	fields(t, "transfer", x, map[string]any{"destinationWalletId": dst.WalletID, "destinationAddress": dst.DepositAddress,
		"sourceAddress": src.DepositAddress, "networkFee": nil, "feeCurrency": nil, "feeUSD": nil, "amountUSD": "20.5", "vaultId": a})
	id := x["transactionId"].(string)
	e := verified(t, secret, rc.nextOfType(t, "transaction.created"))
	fields(t, "transaction.created", e.Data, map[string]any{"type": "InternalTransfer", "destinationWalletId": dst.WalletID, "sourceWalletId": src.WalletID})
	if bal := in.balance(dst.WalletID); bal.Pending != "20.5" || bal.Total != "0" {
		t.Errorf("destination %+v while in flight: want pending 20.5", bal)
	}
	for _, s := range []string{"PendingSignature", "Broadcasting", "Confirming", "Completed"} {
		in.step(id, s)
	}
	// Events of different entities arrive in any order (the reservation's
	// balance.updated may come before or after transaction.created), so
	// read until Completed and the destination's credit have both arrived.
	entities := map[string]bool{}
	completed := false
	for !completed || !entities[b+":"+dst.AssetID] {
		e := verified(t, secret, rc.next(t))
		switch e.EventType {
		case "balance.updated":
			entities[e.EntityID] = true
		case "transaction.status.updated":
			completed = completed || e.Data["status"] == "Completed"
		}
	}
	if len(entities) > 2 || (len(entities) == 2 && !entities[a+":"+src.AssetID]) {
		t.Errorf("balance.updated entities %v: want only the two wallets", entities)
	}
	var list struct {
		Items []struct{ TransactionID string }
	}
	in.expect(200, "GET", "/transactions?type=InternalTransfer&vaultId="+a, nil).json(t, &list)
	if len(list.Items) != 1 || list.Items[0].TransactionID != id {
		t.Errorf("the source vault's transactions %+v: want the transfer", list.Items)
	}
	in.expect(200, "GET", "/transactions?type=InternalTransfer&vaultId="+b, nil).json(t, &list)
	if len(list.Items) != 0 {
		t.Errorf("?vaultId= of the destination vault listed %+v: the filter matches the record's vaultId only", list.Items)
	}
	if bal := in.balance(src.WalletID); bal.Total != "29.5" || bal.Available != "29.5" {
		t.Errorf("source %+v", bal)
	}
	if bal := in.balance(dst.WalletID); bal.Total != "20.5" || bal.Available != "20.5" || bal.Pending != "0" {
		t.Errorf("destination %+v", bal)
	}
}

func TestEnvironmentsArePartitioned(t *testing.T) {
	t.Parallel()
	in := start(t)
	v := in.vault("a")
	w := in.wallet(v, "ETH")
	in.fund(w.WalletID, "1")
	key, secret := in.credential(store.Production, store.RolePartner)
	prod := []string{"X-Api-Key", key, "X-Api-Secret", secret}

	in.expect(404, "GET", "/vaults/"+v, nil, prod...)
	in.expect(404, "GET", "/wallets/"+w.WalletID, nil, prod...)
	in.expect(404, "GET", "/wallets/"+w.WalletID+"/balance", nil, prod...)
	var list struct{ Items []any }
	in.expect(200, "GET", "/vaults", nil, prod...).json(t, &list)
	if len(list.Items) != 0 {
		t.Errorf("production sees sandbox vaults: %v", list.Items)
	}
	in.expect(200, "GET", "/transactions", nil, prod...).json(t, &list)
	if len(list.Items) != 0 {
		t.Errorf("production sees sandbox transactions: %v", list.Items)
	}
	in.expect(404, "POST", "/transactions", map[string]any{"type": "Withdrawal", "sourceWalletId": w.WalletID,
		"destinationAddress": "0x5555555555555555555555555555555555555555", "amount": "0.1"}, prod...)

	pv := in.expect(201, "POST", "/vaults", map[string]any{"name": "p"}, prod...).m(t)["vaultId"].(string)
	pw := in.expect(201, "POST", "/vaults/"+pv+"/wallets", map[string]any{"assetSymbol": "ETH"}, prod...).m(t)["walletId"].(string)
	r := in.expect(403, "POST", "/sandbox/deposits", map[string]any{"walletId": pw, "amount": "1"}, prod...)
	if code := r.m(t)["error"].(map[string]any)["code"]; code != "sandbox_only" {
		t.Errorf("code %v, want sandbox_only", code)
	}
	in.expect(404, "GET", "/vaults/"+pv, nil)

	var id struct{ TransactionID string }
	in.expect(201, "POST", "/transactions", map[string]any{"type": "Withdrawal", "sourceWalletId": w.WalletID,
		"destinationAddress": "0x5555555555555555555555555555555555555555", "amount": "0.1"}).json(t, &id)
	in.expect(404, "GET", "/transactions/"+id.TransactionID, nil, prod...)
	in.expect(404, "POST", "/transactions/"+id.TransactionID+"/cancel", nil, prod...)
	in.expect(403, "POST", "/transactions/"+id.TransactionID+"/advance", nil, prod...)
	in.expect(403, "POST", "/transactions/"+id.TransactionID+"/fail", nil, prod...)
}

func TestSimulatorContinuesAfterRestart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "complybox.db")
	clock := store.NewManualClock(testStart)
	in := start(t, func(o *options) { o.path, o.clock = path, clock })
	v := in.vault("a")
	w := in.wallet(v, "BTC")
	var x struct{ TransactionID string }
	in.expect(201, "POST", "/sandbox/deposits", map[string]any{"walletId": w.WalletID, "amount": "0.5"}).json(t, &x)
	in.step(x.TransactionID, "Confirming")
	in.stop()

	in = start(t, func(o *options) { o.path, o.clock = path, clock })
	in.step(x.TransactionID, "Completed")
	if b := in.balance(w.WalletID); b.Total != "0.5" {
		t.Errorf("balance %+v after the restarted simulator completed the deposit", b)
	}
	var assets struct{ Items []struct{ ID, Symbol string } }
	in.expect(200, "GET", "/assets", nil).json(t, &assets)
	for _, a := range assets.Items {
		if a.Symbol == "BTC" && a.ID != w.AssetID {
			t.Errorf("BTC asset id %s changed across a restart (was %s)", a.ID, w.AssetID)
		}
	}
}

func TestManualMoveReplacesThePendingStep(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc := newReceiver(t, in.Clock, nil)
	secret := in.configureWebhook(rc, "transaction.status.updated")
	v := in.vault("a")
	w := in.wallet(v, "ETH")
	var x struct{ TransactionID string }
	in.expect(201, "POST", "/sandbox/deposits", map[string]any{"walletId": w.WalletID, "amount": "2"}).json(t, &x)
	in.advance(stepDelay - time.Second)
	in.expect(200, "POST", "/transactions/"+x.TransactionID+"/advance", nil) // Confirming at 05:00:02
	if e := verified(t, secret, rc.next(t)); e.Data["status"] != "Confirming" {
		t.Fatalf("status %v, want Confirming", e.Data["status"])
	}
	in.advance(time.Second) // 05:00:03, when the replaced step was due: nothing moves
	rc.none(t, 200*time.Millisecond)
	in.advance(stepDelay - time.Second) // 05:00:05: the rescheduled step
	e := verified(t, secret, rc.next(t))
	if e.Data["status"] != "Completed" || e.Data["completedAt"] != "2026-11-21T05:00:05.000Z" {
		t.Errorf("status %v at %v: want Completed at 05:00:05", e.Data["status"], e.Data["completedAt"])
	}
}

func TestCustodyListsAndValidation(t *testing.T) {
	t.Parallel()
	in := start(t, func(o *options) { o.settings.Chain.AutoAdvance = false })
	var vaults []string
	for i := range 5 {
		vaults = append(vaults, in.vault(string(rune('a'+i))))
	}
	var page struct {
		Items      []struct{ VaultID string }
		NextCursor *string
	}
	in.expect(200, "GET", "/vaults?limit=3", nil).json(t, &page)
	if len(page.Items) != 3 || page.Items[0].VaultID != vaults[4] || page.NextCursor == nil {
		t.Fatalf("first page %+v: want the 3 newest and a cursor", page)
	}
	in.expect(200, "GET", "/vaults?limit=3&cursor="+*page.NextCursor, nil).json(t, &page)
	if len(page.Items) != 2 || page.Items[1].VaultID != vaults[0] || page.NextCursor != nil {
		t.Fatalf("second page %+v", page)
	}
	in.expect(400, "GET", "/vaults?limit=0", nil)
	in.expect(400, "GET", "/vaults?cursor=nonsense!", nil)

	eth, sol := in.wallet(vaults[0], "ETH"), in.wallet(vaults[0], "sol")
	other := in.wallet(vaults[1], "ETH")
	var wl struct{ Items []wallet }
	in.expect(200, "GET", "/vaults/"+vaults[0]+"/wallets", nil).json(t, &wl)
	if len(wl.Items) != 2 || wl.Items[0].WalletID != sol.WalletID || wl.Items[1].WalletID != eth.WalletID {
		t.Errorf("wallets of the vault %+v", wl.Items)
	}
	in.expect(404, "GET", "/vaults/nope/wallets", nil)
	if !regexp.MustCompile(`^0x[0-9a-f]{40}$`).MatchString(eth.DepositAddress) || eth.DepositAddress == other.DepositAddress {
		t.Errorf("ETH deposit addresses %q, %q", eth.DepositAddress, other.DepositAddress)
	}
	if !regexp.MustCompile(`^[1-9A-HJ-NP-Za-km-z]{32,44}$`).MatchString(sol.DepositAddress) || sol.DepositTag != nil {
		t.Errorf("SOL deposit address %q tag %v", sol.DepositAddress, sol.DepositTag)
	}
	if btc := in.wallet(vaults[2], "BTC"); !regexp.MustCompile(`^bc1q[02-9ac-hj-np-z]{38}$`).MatchString(btc.DepositAddress) {
		t.Errorf("BTC deposit address %q", btc.DepositAddress)
	}
	if xrp := in.wallet(vaults[2], "XRP"); !regexp.MustCompile(`^r[1-9A-HJ-NP-Za-km-z]{24,34}$`).MatchString(xrp.DepositAddress) {
		t.Errorf("XRP deposit address %q", xrp.DepositAddress)
	}
	in.fund(eth.WalletID, "3")
	in.fund(other.WalletID, "1")
	var d struct{ TransactionID string }
	in.expect(201, "POST", "/sandbox/deposits", map[string]any{"walletId": eth.WalletID, "amount": "1"}).json(t, &d)

	var txs struct {
		Items []struct{ TransactionID, Status, VaultID string }
	}
	in.expect(200, "GET", "/transactions?vaultId="+vaults[0], nil).json(t, &txs)
	if len(txs.Items) != 2 || txs.Items[0].TransactionID != d.TransactionID {
		t.Errorf("transactions of vault a %+v: want 2, newest first", txs.Items)
	}
	in.expect(200, "GET", "/transactions?status=Completed", nil).json(t, &txs)
	if len(txs.Items) != 2 {
		t.Errorf("completed transactions %+v: want the two funding deposits", txs.Items)
	}
	in.expect(200, "GET", "/transactions?status=Submitted&vaultId="+vaults[0], nil).json(t, &txs)
	if len(txs.Items) != 1 || txs.Items[0].TransactionID != d.TransactionID {
		t.Errorf("submitted transactions of vault a %+v", txs.Items)
	}

	for _, c := range []struct {
		method, path string
		body         any
		field        string
	}{
		{"GET", "/transactions?status=Done", nil, "status"},
		{"GET", "/transactions?status=completed", nil, "status"},
		{"POST", "/vaults", map[string]any{"externalId": "x"}, "name"},
		{"POST", "/vaults", map[string]any{"name": 5}, "name"},
		{"POST", "/vaults", map[string]any{"name": "   "}, "name"},
		{"POST", "/vaults", `{"name":`, ""},
		{"POST", "/vaults/" + vaults[0] + "/wallets", map[string]any{}, "assetId"},
		{"POST", "/vaults/" + vaults[0] + "/wallets", map[string]any{"assetSymbol": "DOGE"}, "assetSymbol"},
		{"POST", "/vaults/" + vaults[0] + "/wallets", map[string]any{"assetId": "nope"}, "assetId"},
		{"POST", "/vaults/" + vaults[0] + "/wallets", map[string]any{"assetId": eth.AssetID, "assetSymbol": "BTC"}, "assetSymbol"},
		{"POST", "/transactions", map[string]any{"sourceWalletId": eth.WalletID, "amount": "1"}, "type"},
		{"POST", "/transactions", map[string]any{"type": "Deposit", "sourceWalletId": eth.WalletID, "amount": "1"}, "type"},
		{"POST", "/transactions", map[string]any{"type": "withdrawal", "sourceWalletId": eth.WalletID, "amount": "1"}, "type"},
		{"POST", "/transactions", map[string]any{"type": "Withdrawal", "amount": "1", "destinationAddress": "0x1"}, "sourceWalletId"},
		{"POST", "/transactions", map[string]any{"type": "Withdrawal", "sourceWalletId": eth.WalletID, "destinationAddress": "0x1"}, "amount"},
		{"POST", "/transactions", map[string]any{"type": "Withdrawal", "sourceWalletId": eth.WalletID, "amount": "1"}, "destinationAddress"},
		{"POST", "/transactions", map[string]any{"type": "Withdrawal", "sourceWalletId": eth.WalletID, "amount": "1", "destinationAddress": "0x 1"}, "destinationAddress"},
		{"POST", "/transactions", map[string]any{"type": "Withdrawal", "sourceWalletId": eth.WalletID, "amount": "1", "destinationAddress": "0x1", "destinationTag": "7"}, "destinationTag"},
		{"POST", "/transactions", map[string]any{"type": "Withdrawal", "sourceWalletId": eth.WalletID, "amount": 1, "destinationAddress": "0x1"}, "amount"},
		{"POST", "/transactions", map[string]any{"type": "InternalTransfer", "sourceWalletId": eth.WalletID, "amount": "1"}, "destinationWalletId"},
		{"POST", "/transactions", map[string]any{"type": "InternalTransfer", "sourceWalletId": eth.WalletID, "destinationWalletId": eth.WalletID, "amount": "1"}, "destinationWalletId"},
		{"POST", "/transactions", map[string]any{"type": "InternalTransfer", "sourceWalletId": eth.WalletID, "destinationWalletId": sol.WalletID, "amount": "1"}, "destinationWalletId"},
		{"POST", "/sandbox/deposits", map[string]any{"amount": "1"}, "walletId"},
		{"POST", "/sandbox/deposits", map[string]any{"walletId": eth.WalletID, "amount": "1", "sourceAddress": ""}, "sourceAddress"},
	} {
		r := in.expect(400, c.method, c.path, c.body)
		if f, _ := r.m(t)["error"].(map[string]any)["field"].(string); f != c.field {
			t.Errorf("%s %s %v: field %q, want %q; body %s", c.method, c.path, c.body, f, c.field, r.Body)
		}
	}
	for _, path := range []string{"/vaults/nope", "/wallets/nope", "/wallets/nope/balance", "/transactions/nope",
		"/vaults/00000000-0000-4000-8000-000000000000", "/transactions/" + eth.WalletID} {
		in.expect(404, "GET", path, nil)
	}
	r := in.expect(404, "POST", "/transactions", map[string]any{"type": "InternalTransfer", "sourceWalletId": eth.WalletID,
		"destinationWalletId": "00000000-0000-4000-8000-000000000000", "amount": "1"})
	if code := r.m(t)["error"].(map[string]any)["code"]; code != "wallet_not_found" {
		t.Errorf("code %v, want wallet_not_found", code)
	}
	in.expect(404, "POST", "/vaults/nope/wallets", map[string]any{"assetSymbol": "ETH"})
}

func TestConfiguredAssetsAddAndReplace(t *testing.T) {
	t.Parallel()
	in := start(t, func(o *options) {
		o.settings.Assets = []store.Asset{
			{Symbol: "eth", Network: "ethereum", Decimals: 18, USDPrice: "4000.50", NetworkFee: "0.001"},
			{Symbol: "DOGE", Network: "dogecoin", Decimals: 8, USDPrice: "0.1", NetworkFee: "1"},
		}
	})
	var assets struct {
		Items []map[string]any
	}
	in.expect(200, "GET", "/assets", nil).json(t, &assets)
	bySymbol := map[string]map[string]any{}
	for _, a := range assets.Items {
		sameKeys(t, "asset", a, "id", "symbol", "network", "decimals", "usdPrice", "needsMemo", "networkFee")
		bySymbol[a["symbol"].(string)] = a
	}
	if len(assets.Items) != 6 {
		t.Errorf("%d assets, want the 5 built-ins (ETH replaced) and DOGE", len(assets.Items))
	}
	// Catalog order, as the document says: the built-ins (a replaced one
	// in its place), then what [[assets]] adds; the same page by page.
	var order []string
	for cursor := ""; ; {
		var page struct {
			Items      []struct{ Symbol string }
			NextCursor *string
		}
		in.expect(200, "GET", "/assets?limit=4"+cursor, nil).json(t, &page)
		for _, a := range page.Items {
			order = append(order, a.Symbol)
		}
		if page.NextCursor == nil {
			break
		}
		cursor = "&cursor=" + *page.NextCursor
	}
	if got := strings.Join(order, ","); got != "BTC,ETH,USDC,XRP,SOL,DOGE" {
		t.Errorf("catalog order %s, want BTC,ETH,USDC,XRP,SOL,DOGE", got)
	}
	fields(t, "ETH", bySymbol["ETH"], map[string]any{"usdPrice": "4000.5", "networkFee": "0.001", "decimals": 18.0})
	fields(t, "XRP", bySymbol["XRP"], map[string]any{"network": "ripple", "needsMemo": true, "decimals": 6.0})
	fields(t, "DOGE", bySymbol["DOGE"], map[string]any{"network": "dogecoin", "decimals": 8.0})

	v := in.vault("a")
	var w wallet
	in.expect(201, "POST", "/vaults/"+v+"/wallets", map[string]any{"assetId": bySymbol["ETH"]["id"]}).json(t, &w)
	in.fund(w.WalletID, "1")
	var x map[string]any
	in.expect(201, "POST", "/transactions", map[string]any{"type": "Withdrawal", "sourceWalletId": w.WalletID,
		"destinationAddress": "0x6666666666666666666666666666666666666666", "amount": "0.5"}).json(t, &x)
	fields(t, "withdrawal", x, map[string]any{"networkFee": "0.001", "amountUSD": "2000.25", "feeUSD": "4"})
	if b := in.balance(w.WalletID); b.Available != "0.499" {
		t.Errorf("available %q, want 0.499", b.Available)
	}
}

// TestIdempotencyKeyComparesBodiesAsJSON: the same body with other
// whitespace or key order is the same body; another value is not.
func TestIdempotencyKeyComparesBodiesAsJSON(t *testing.T) {
	t.Parallel()
	in := start(t, func(o *options) { o.settings.Chain.AutoAdvance = false })
	v := in.vault("a")
	w := in.wallet(v, "USDC")
	in.fund(w.WalletID, "10")

	first := in.expect(201, "POST", "/transactions",
		`{"type":"Withdrawal","sourceWalletId":"`+w.WalletID+`","destinationAddress":"0xabc","amount":"1"}`, "Idempotency-Key", "k")
	again := in.expect(201, "POST", "/transactions",
		"{\n  \"amount\": \"1\",\n  \"destinationAddress\": \"0xabc\",\n  \"sourceWalletId\": \""+w.WalletID+"\",\n  \"type\": \"Withdrawal\"\n}\n",
		"Idempotency-Key", "k")
	if !bytes.Equal(first.Body, again.Body) {
		t.Errorf("a reformatted body was not replayed:\n%s\nwant\n%s", again.Body, first.Body)
	}
	if b := in.balance(w.WalletID); b.Available != "7.5" {
		t.Errorf("available %s: want one withdrawal reserved (7.5)", b.Available)
	}
	in.expect(409, "POST", "/transactions",
		`{"type":"Withdrawal","sourceWalletId":"`+w.WalletID+`","destinationAddress":"0xabc","amount":"1.0"}`, "Idempotency-Key", "k")

	d1 := in.expect(201, "POST", "/vaults", `{"name":"b","externalId":"x"}`, "Idempotency-Key", "v")
	d2 := in.expect(201, "POST", "/vaults", `{ "externalId" : "x", "name" : "b" }`, "Idempotency-Key", "v")
	if !bytes.Equal(d1.Body, d2.Body) {
		t.Errorf("a reformatted vault body was not replayed")
	}
}

// TestIdempotencyKeyLastsADay: a key binds its first body for 24 h, then it
// is free again.
func TestIdempotencyKeyLastsADay(t *testing.T) {
	t.Parallel()
	in := start(t, func(o *options) { o.settings.Chain.AutoAdvance = false })
	first := in.expect(201, "POST", "/vaults", map[string]any{"name": "a"}, "Idempotency-Key", "day")
	in.advance(24*time.Hour - time.Second)
	in.expect(409, "POST", "/vaults", map[string]any{"name": "b"}, "Idempotency-Key", "day")
	if again := in.expect(201, "POST", "/vaults", map[string]any{"name": "a"}, "Idempotency-Key", "day"); !bytes.Equal(first.Body, again.Body) {
		t.Errorf("replay within 24 h answered %s, want %s", again.Body, first.Body)
	}
	in.advance(2 * time.Second)
	if later := in.expect(201, "POST", "/vaults", map[string]any{"name": "b"}, "Idempotency-Key", "day"); bytes.Equal(first.Body, later.Body) {
		t.Error("a key older than 24 h still replayed its first response")
	}
}

// pathCase is one transaction driven along one status path: advances moves
// along the happy path, then end ("" completes by advancing, "fail" or
// "cancel"); illegalCancel first tries a cancel that must be refused.
type pathCase struct {
	typ           string
	advances      int
	end           string
	illegalCancel bool
}

func (c pathCase) String() string {
	return fmt.Sprintf("%s/%d/%s/%v", c.typ, c.advances, c.end, c.illegalCancel)
}

// TestEveryStatusPathAtTheReceiver drives deposits, withdrawals and internal
// transfers along every status path (Completed; Failed from each
// non-terminal state; Cancelled from Submitted and PendingSignature; refused
// cancels later on) and checks, at a real receiver, every envelope and data
// field of every event and that balance.updated fired exactly once per
// wallet per change of total or available.
func TestEveryStatusPathAtTheReceiver(t *testing.T) {
	t.Parallel()
	in := start(t, func(o *options) { o.settings.Chain.AutoAdvance = false })
	rc := newReceiver(t, in.Clock, nil)
	secret := in.configureWebhook(rc)

	var cases []pathCase
	for _, typ := range []string{"Withdrawal", "InternalTransfer"} {
		cases = append(cases, pathCase{typ: typ, advances: 4},
			pathCase{typ: typ, end: "fail"}, pathCase{typ: typ, advances: 1, end: "fail"},
			pathCase{typ: typ, advances: 2, end: "fail", illegalCancel: true},
			pathCase{typ: typ, advances: 3, end: "fail", illegalCancel: true},
			pathCase{typ: typ, end: "cancel"}, pathCase{typ: typ, advances: 1, end: "cancel"})
	}
	cases = append(cases, pathCase{typ: "Deposit", advances: 2}, pathCase{typ: "Deposit", end: "fail"},
		pathCase{typ: "Deposit", advances: 1, end: "fail", illegalCancel: true}, pathCase{typ: "Deposit", end: "cancel"})

	want := map[string]int{}       // eventType|entityId → count
	wallets := map[string]string{} // balance entity → wallet id
	type run struct {
		pathCase
		id, src, dst     string // dst: the credited wallet (deposit target, transfer destination)
		vault, vaultName string
		created          map[string]any
		final            string
		walletAddr       map[string]string
	}
	var runs []*run
	deposit := func(walletID, amount string) string {
		var x struct{ TransactionID string }
		in.expect(201, "POST", "/sandbox/deposits", map[string]any{"walletId": walletID, "amount": amount}).json(t, &x)
		want["transaction.created|"+x.TransactionID]++
		return x.TransactionID
	}
	newWallet := func(name string) (vaultID string, w wallet) {
		vaultID = in.vault(name)
		w = in.wallet(vaultID, "USDC")
		want["wallet.created|"+w.WalletID]++
		wallets[vaultID+":"+w.AssetID] = w.WalletID
		return vaultID, w
	}
	balanceKey := func(walletID string) string {
		for k, v := range wallets {
			if v == walletID {
				return "balance.updated|" + k
			}
		}
		t.Fatalf("no wallet %s", walletID)
		return ""
	}
	move := func(id, action string, status int) {
		in.expect(status, "POST", "/transactions/"+id+"/"+action, map[string]any{})
		if status == 200 {
			want["transaction.status.updated|"+id]++
		}
	}

	for i, c := range cases {
		r := &run{pathCase: c, walletAddr: map[string]string{}}
		var body map[string]any
		if c.typ == "Deposit" {
			r.vaultName = fmt.Sprintf("dep-%d", i)
			v, w := newWallet(r.vaultName)
			r.vault, r.dst, r.walletAddr[w.WalletID] = v, w.WalletID, w.DepositAddress
			in.expect(201, "POST", "/sandbox/deposits", map[string]any{"walletId": w.WalletID, "amount": "10.250", "sourceAddress": "0xfeed"}).json(t, &r.created)
			r.id = r.created["transactionId"].(string)
			want["transaction.created|"+r.id]++
		} else {
			r.vaultName = fmt.Sprintf("src-%d", i)
			v, w := newWallet(r.vaultName)
			r.vault, r.src, r.walletAddr[w.WalletID] = v, w.WalletID, w.DepositAddress
			f := deposit(w.WalletID, "100")
			move(f, "advance", 200)
			move(f, "advance", 200)
			want[balanceKey(w.WalletID)]++ // the funding deposit completed
			body = map[string]any{"type": c.typ, "sourceWalletId": w.WalletID, "amount": "10.25", "note": "case " + c.String()}
			if c.typ == "InternalTransfer" {
				_, d := newWallet(fmt.Sprintf("dst-%d", i))
				r.dst, r.walletAddr[d.WalletID] = d.WalletID, d.DepositAddress
				body["destinationWalletId"] = d.WalletID
			} else {
				body["destinationAddress"] = "0x00000000000000000000000000000000000000aa"
			}
			in.expect(201, "POST", "/transactions", body).json(t, &r.created)
			r.id = r.created["transactionId"].(string)
			want["transaction.created|"+r.id]++
			want[balanceKey(r.src)]++ // the reservation
		}
		for range c.advances {
			move(r.id, "advance", 200)
		}
		if c.illegalCancel {
			move(r.id, "cancel", 409)
		}
		switch c.end {
		case "fail":
			move(r.id, "fail", 200)
		case "cancel":
			move(r.id, "cancel", 200)
		}
		r.final = in.transaction(r.id)["status"].(string)
		completed := r.final == "Completed"
		if r.src != "" {
			want[balanceKey(r.src)]++ // paid or released
		}
		if completed && r.dst != "" {
			want[balanceKey(r.dst)]++ // credited
		}
		for _, action := range []string{"advance", "fail", "cancel"} {
			move(r.id, action, 409) // terminal: nothing moves
		}
		runs = append(runs, r)
	}

	total := 0
	for _, n := range want {
		total += n
	}
	got := map[string][]event{}
	ids := map[string]bool{}
	stamp := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
	for range total {
		r := rc.next(t)
		e := verified(t, secret, r)
		var raw map[string]any
		if err := json.Unmarshal(r.Body, &raw); err != nil {
			t.Fatal(err)
		}
		sameKeys(t, "envelope", raw, "id", "eventType", "entityType", "entityId", "timestamp", "data")
		if ids[e.ID] {
			t.Errorf("event id %s delivered twice", e.ID)
		}
		ids[e.ID] = true
		if !stamp.MatchString(e.Timestamp) {
			t.Errorf("timestamp %q", e.Timestamp)
		}
		wantEntity := map[string]string{"transaction.created": "transaction", "transaction.status.updated": "transaction",
			"wallet.created": "wallet", "balance.updated": "balance"}[e.EventType]
		if e.EntityType != wantEntity {
			t.Errorf("%s entityType %q, want %q", e.EventType, e.EntityType, wantEntity)
		}
		key := e.EventType + "|" + e.EntityID
		got[key] = append(got[key], e)
	}
	rc.none(t, 200*time.Millisecond)

	for k, n := range want {
		if len(got[k]) != n {
			t.Errorf("%s: %d events, want %d", k, len(got[k]), n)
		}
	}
	for k := range got {
		if want[k] == 0 {
			t.Errorf("%s: %d unexpected events", k, len(got[k]))
		}
	}
	for k, es := range got {
		for _, e := range es {
			switch e.EventType {
			case "balance.updated":
				sameKeys(t, k, e.Data, "vaultAccountId", "assetId")
				if e.EntityID != fmt.Sprint(e.Data["vaultAccountId"], ":", e.Data["assetId"]) {
					t.Errorf("%s: entityId is not vaultAccountId:assetId of %v", k, e.Data)
				}
			case "wallet.created":
				sameKeys(t, k, e.Data, walletFields...)
				fields(t, k, e.Data, map[string]any{"walletId": e.EntityID, "status": "Active", "depositTag": nil, "label": "USDC wallet"})
			}
		}
	}

	for _, r := range runs {
		name := r.String()
		x := in.transaction(r.id)
		created := got["transaction.created|"+r.id]
		if len(created) != 1 {
			continue // counted above
		}
		c := created[0].Data
		sameKeys(t, name+" created", c, createdFields...)
		for _, k := range createdFields { // the data equals the POST answer
			if c[k] != r.created[k] {
				t.Errorf("%s created: %s = %#v, the POST answered %#v", name, k, c[k], r.created[k])
			}
		}
		fee, feeCurrency, feeUSD := any(nil), any(nil), any(nil)
		if r.typ == "Withdrawal" {
			fee, feeCurrency, feeUSD = "1.5", "USDC", "1.5"
		}
		var srcWallet, dstWallet any
		if r.src != "" {
			srcWallet = r.src
		}
		if r.typ == "InternalTransfer" {
			dstWallet = r.dst
		}
		fields(t, name+" created", c, map[string]any{"transactionId": r.id, "type": r.typ, "status": "Submitted",
			"vaultId": r.vault, "vaultName": r.vaultName, "vaultExternalId": "ext-" + r.vaultName, "assetSymbol": "USDC", "assetNetwork": "ethereum",
			"sourceWalletId": srcWallet, "destinationWalletId": dstWallet, "amount": "10.25", "networkFee": fee,
			"feeCurrency": feeCurrency, "amountUSD": "10.25", "feeUSD": feeUSD})
		if r.typ == "Deposit" {
			fields(t, name+" created", c, map[string]any{"sourceAddress": "0xfeed", "destinationAddress": r.walletAddr[r.dst], "note": nil})
			if c["txHash"] == nil {
				t.Errorf("%s: a detected deposit has its txHash", name)
			}
		} else {
			fields(t, name+" created", c, map[string]any{"sourceAddress": r.walletAddr[r.src], "txHash": nil, "note": "case " + name})
		}

		prev := "Submitted"
		statuses := got["transaction.status.updated|"+r.id]
		for i, e := range statuses {
			d := e.Data
			sameKeys(t, name+" status.updated", d, statusFields...)
			status := d["status"].(string)
			if d["previousStatus"] != prev {
				t.Errorf("%s: update %d %s has previousStatus %v, want %s", name, i, status, d["previousStatus"], prev)
			}
			prev = status
			terminal := status == "Completed" || status == "Failed" || status == "Cancelled"
			if (d["completedAt"] != nil) != terminal {
				t.Errorf("%s: %s has completedAt %v", name, status, d["completedAt"])
			}
			if (d["failureReason"] != nil) != (status == "Failed") {
				t.Errorf("%s: %s has failureReason %v", name, status, d["failureReason"])
			}
			broadcast := r.typ == "Deposit" || slices.Contains([]string{"Broadcasting", "Confirming", "Completed"}, status) ||
				(terminal && slices.Contains([]string{"Broadcasting", "Confirming"}, fmt.Sprint(d["previousStatus"])))
			if (d["txHash"] != nil) != broadcast {
				t.Errorf("%s: %s has txHash %v", name, status, d["txHash"])
			}
			for _, k := range []string{"transactionId", "type", "vaultId", "vaultExternalId", "vaultName", "assetId",
				"assetSymbol", "assetNetwork", "sourceWalletId", "amount", "sourceAddress", "destinationAddress",
				"networkFee", "feeCurrency", "amountUSD", "feeUSD"} {
				if d[k] != c[k] {
					t.Errorf("%s: %s %s = %#v, transaction.created said %#v", name, status, k, d[k], c[k])
				}
			}
		}
		if prev != r.final {
			t.Errorf("%s: last update says %s, the record %s", name, prev, r.final)
		}
		if len(statuses) > 0 {
			last := statuses[len(statuses)-1].Data
			for _, k := range statusFields {
				if last[k] != x[k] {
					t.Errorf("%s: last update %s = %#v, GET answers %#v", name, k, last[k], x[k])
				}
			}
		}

		completed := r.final == "Completed"
		if r.src != "" {
			b := in.balance(r.src)
			wantTotal := map[bool]string{true: map[bool]string{true: "88.25", false: "89.75"}[r.typ == "Withdrawal"], false: "100"}[completed]
			if b.Total != wantTotal || b.Available != wantTotal || b.Pending != "0" {
				t.Errorf("%s: source balance %+v, want total and available %s", name, b, wantTotal)
			}
		}
		if r.dst != "" {
			b := in.balance(r.dst)
			wantTotal := map[bool]string{true: "10.25", false: "0"}[completed]
			if b.Total != wantTotal || b.Available != wantTotal || b.Pending != "0" {
				t.Errorf("%s: credited balance %+v, want total and available %s", name, b, wantTotal)
			}
		}
	}
}

// TestCreatedAnswersTheStoredRecord: the 201 of POST /transactions and POST
// /sandbox/deposits is byte for byte what GET /transactions/{id} answers
// right after, so a partner that stores the created answer holds the record.
func TestCreatedAnswersTheStoredRecord(t *testing.T) {
	t.Parallel()
	in := start(t)
	v := in.vault("a")
	w := in.wallet(v, "BTC")
	in.fund(w.WalletID, "1")
	for _, c := range []struct {
		path string
		body map[string]any
	}{
		{"/transactions", map[string]any{"type": "Withdrawal", "sourceWalletId": w.WalletID, "destinationAddress": "bc1qexample", "amount": "0.25", "note": "<payout & \"fee\">"}},
		{"/sandbox/deposits", map[string]any{"walletId": w.WalletID, "amount": "0.5", "sourceAddress": "bc1qsender"}},
	} {
		created := in.expect(201, "POST", c.path, c.body)
		var x struct{ TransactionID string }
		created.json(t, &x)
		if loc := created.Header.Get("Location"); loc != "/transactions/"+x.TransactionID {
			t.Errorf("%s: Location %q", c.path, loc)
		}
		got := in.expect(200, "GET", "/transactions/"+x.TransactionID, nil)
		if !bytes.Equal(created.Body, got.Body) {
			t.Errorf("%s answered\n%s\nGET answers\n%s", c.path, created.Body, got.Body)
		}
		if n := created.Header.Get("Content-Length"); n != strconv.Itoa(len(created.Body)) {
			t.Errorf("%s: Content-Length %s for a body of %d bytes", c.path, n, len(created.Body))
		}
	}
}

// TestFailReasonCountsCharacters: a fail reason is 1 to 500 characters, not
// bytes, of text.
func TestFailReasonCountsCharacters(t *testing.T) {
	t.Parallel()
	in := start(t, func(o *options) { o.settings.Chain.AutoAdvance = false })
	w := in.wallet(in.vault("a"), "SOL")
	in.fund(w.WalletID, "5")
	withdraw := func() string {
		var x struct{ TransactionID string }
		in.expect(201, "POST", "/transactions", map[string]any{"type": "Withdrawal", "sourceWalletId": w.WalletID,
			"destinationAddress": "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin", "amount": "1"}).json(t, &x)
		return x.TransactionID
	}
	id := withdraw()
	r := in.expect(400, "POST", "/transactions/"+id+"/fail", map[string]any{"reason": strings.Repeat("é", 501)})
	if _, f := errField(t, r); f != "reason" {
		t.Errorf("501-character reason: field %q", f)
	}
	// It goes into the record and the transaction.status.updated webhook:
	// blank text and control characters are refused, as for a note, and
	// nothing changes.
	for _, bad := range []string{"", "   ", "a\u0000b", "node\nrejected", "x\u007f"} {
		r := in.expect(400, "POST", "/transactions/"+id+"/fail", map[string]any{"reason": bad})
		if _, f := errField(t, r); f != "reason" {
			t.Errorf("reason %q: field %q", bad, f)
		}
	}
	var x struct{ Status string }
	in.expect(200, "GET", "/transactions/"+id, nil).json(t, &x)
	if x.Status == "Failed" {
		t.Fatalf("a refused reason failed the transaction")
	}
	in.expect(200, "POST", "/transactions/"+id+"/fail", map[string]any{"reason": strings.Repeat("é", 500)})
}

// TestVaultWithoutExternalID: externalId is optional on POST /vaults, but
// the custody seed types vaultExternalId as a string ("value supplied at
// vault creation"), never null: a vault made without one answers "" and so
// do its transactions and their events, which typed receivers decode.
func TestVaultWithoutExternalID(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc := newReceiver(t, in.Clock, nil)
	secret := in.configureWebhook(rc, "transaction.created", "transaction.status.updated")

	v := in.expect(201, "POST", "/vaults", map[string]any{"name": "Treasury"}).m(t)
	if ext, ok := v["externalId"].(string); !ok || ext != "" {
		t.Fatalf("vault without externalId: %v", v)
	}
	if got := in.expect(200, "GET", "/vaults/"+v["vaultId"].(string), nil).m(t); got["externalId"] != "" {
		t.Fatalf("GET vault: %v", got)
	}
	w := in.wallet(v["vaultId"].(string), "BTC")
	tx := in.expect(201, "POST", "/sandbox/deposits", map[string]any{"walletId": w.WalletID, "amount": "1"}).m(t)
	if ext, ok := tx["vaultExternalId"].(string); !ok || ext != "" {
		t.Fatalf("deposit: vaultExternalId %#v", tx["vaultExternalId"])
	}
	in.advance(stepDelay)
	for _, want := range []string{"transaction.created", "transaction.status.updated"} {
		e := verified(t, secret, rc.next(t))
		if ext, ok := e.Data["vaultExternalId"].(string); e.EventType != want || !ok || ext != "" {
			t.Fatalf("%s: vaultExternalId %#v", e.EventType, e.Data["vaultExternalId"])
		}
	}
	if got := in.expect(200, "GET", "/transactions/"+tx["transactionId"].(string), nil).m(t); got["vaultExternalId"] != "" {
		t.Fatalf("GET transaction: vaultExternalId %#v", got["vaultExternalId"])
	}
}

// TestUpperCaseIDs: a UUID's hex digits are case-insensitive on input (RFC
// 9562 §4), so an id the service minted, sent back in upper case (as a SQL
// Server uniqueidentifier column returns it), finds its record in a path,
// a body and a list filter alike; a filter never answers an empty page for
// it.
func TestUpperCaseIDs(t *testing.T) {
	t.Parallel()
	in := start(t, func(o *options) { o.settings.Chain.AutoAdvance = false })
	rc := newReceiver(t, in.Clock, nil)
	in.expect(200, "PUT", "/webhooks/outbound", map[string]any{"url": rc.URL})
	vault := in.vault("upper")
	w := in.wallet(strings.ToUpper(vault), "BTC")
	up := strings.ToUpper
	var x struct{ TransactionID, WalletID string }
	in.expect(201, "POST", "/sandbox/deposits", map[string]any{"walletId": up(w.WalletID), "amount": "1"}).json(t, &x)
	for _, path := range []string{"/vaults/" + up(vault), "/wallets/" + up(w.WalletID), "/wallets/" + up(w.WalletID) + "/balance",
		"/vaults/" + up(vault) + "/wallets", "/transactions/" + up(x.TransactionID)} {
		in.expect(200, "GET", path, nil)
	}
	for _, q := range []string{"?walletId=" + up(w.WalletID), "?vaultId=" + up(vault)} {
		if n := len(in.expect(200, "GET", "/transactions"+q, nil).m(t)["items"].([]any)); n != 1 {
			t.Errorf("GET /transactions%s: %d items, want the deposit", q, n)
		}
	}
	in.expect(200, "POST", "/transactions/"+up(x.TransactionID)+"/advance", nil)
	id := in.testEvent()
	in.waitDelivery(id, "delivered", 1)
	in.expect(200, "GET", "/webhooks/deliveries/"+up(id), nil)
	// An asset id, and the console's pages of each record, alike.
	var assets struct{ Items []struct{ ID, Symbol string } }
	in.expect(200, "GET", "/assets", nil).json(t, &assets)
	in.expect(201, "POST", "/vaults/"+vault+"/wallets", map[string]any{"assetId": up(assets.Items[0].ID)})
	b := in.operator()
	// The console's transaction list filters alike.
	if page := b.page("/console/transactions?walletId=" + up(w.WalletID)); !strings.Contains(page, x.TransactionID) {
		t.Errorf("the console's list filtered by an upper-case walletId misses the deposit")
	}
	for _, path := range []string{"/console/vaults/" + up(vault), "/console/wallets/" + up(w.WalletID), "/console/transactions/" + up(x.TransactionID),
		"/console/deliveries/" + up(id)} {
		b.page(path)
	}
}

// TestFeelessNetworkCarriesNoFee: a withdrawal of an asset whose network
// charges no fee (network_fee = "0") carries networkFee, feeCurrency and
// feeUSD null, as deposits and internal transfers do: seed 001 has them
// "present when the network charges a fee". Its debit is the amount alone.
func TestFeelessNetworkCarriesNoFee(t *testing.T) {
	t.Parallel()
	in := start(t, func(o *options) {
		o.settings.Assets = []store.Asset{{Symbol: "FREE", Network: "freechain", Decimals: 2, USDPrice: "1", NetworkFee: "0"}}
		o.settings.Chain.AutoAdvance = false
	})
	w := in.wallet(in.vault("free"), "FREE")
	in.fund(w.WalletID, "10")
	x := in.expect(201, "POST", "/transactions", map[string]any{"type": "Withdrawal", "sourceWalletId": w.WalletID,
		"destinationAddress": "free-address-1", "amount": "4"}).m(t)
	fields(t, "feeless withdrawal", x, map[string]any{"networkFee": nil, "feeCurrency": nil, "feeUSD": nil, "amountUSD": "4"})
	if b := in.balance(w.WalletID); b.Available != "6" {
		t.Errorf("available %q after withdrawing 4 of 10 with no fee, want 6", b.Available)
	}
}
