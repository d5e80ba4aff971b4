package server_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"
)

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
