package server_test

import (
	"slices"
	"strings"
	"testing"
)

// pages walks every page of a list through its nextCursor and returns the
// value of field of every item, in the order answered.
func (in *instance) pages(path, field string) []string {
	in.t.Helper()
	var out []string
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	cursor := ""
	for n := 0; n < 1000; n++ {
		p := path
		if cursor != "" {
			p += sep + "cursor=" + cursor
		}
		var l struct {
			Items      []map[string]any
			NextCursor *string
		}
		in.expect(200, "GET", p, nil).json(in.t, &l)
		for _, it := range l.Items {
			out = append(out, it[field].(string))
		}
		if l.NextCursor == nil {
			return out
		}
		cursor = *l.NextCursor
	}
	in.t.Fatalf("%s: no end of pages", path)
	return nil
}

// TestFilteredListsPageThroughIndexes: filtered lists, single and combined,
// answer exactly the matching records newest first across cursor pages,
// among many that do not match (SPEC §2 "Lists", served by indexes since
// issue 8).
func TestFilteredListsPageThroughIndexes(t *testing.T) {
	in := start(t)
	in.configureWebhook(newReceiver(t, in.Clock, nil))
	busyVault, quietVault := in.vault("busy"), in.vault("quiet")
	busy, quiet := in.wallet(busyVault, "ETH"), in.wallet(quietVault, "ETH")
	deposit := func(walletID string) string {
		var x struct{ TransactionID string }
		in.expect(201, "POST", "/sandbox/deposits", map[string]any{"walletId": walletID, "amount": "1"}).json(t, &x)
		return x.TransactionID
	}
	var noise []string
	for range 25 {
		noise = append(noise, deposit(busy.WalletID))
	}
	var quietDeposits []string
	for range 3 {
		quietDeposits = append(quietDeposits, deposit(quiet.WalletID))
		noise = append(noise, deposit(busy.WalletID))
	}
	in.expect(200, "POST", "/transactions/"+quietDeposits[1]+"/advance", nil) // Confirming
	newest := func(ids []string) []string { out := slices.Clone(ids); slices.Reverse(out); return out }

	for path, want := range map[string][]string{
		"/transactions?walletId=" + quiet.WalletID + "&limit=1":                  newest(quietDeposits),
		"/transactions?vaultId=" + quietVault + "&limit=2":                       newest(quietDeposits),
		"/transactions?vaultId=" + quietVault + "&status=Confirming&limit=1":     {quietDeposits[1]},
		"/transactions?vaultId=" + quietVault + "&status=Submitted&type=Deposit": {quietDeposits[2], quietDeposits[0]},
		"/transactions?walletId=" + busy.WalletID + "&type=Deposit&limit=7":      newest(noise),
		"/transactions?walletId=" + busy.WalletID + "&status=Confirming":         nil,
		"/transactions?vaultId=" + quietVault + "&type=Withdrawal":               nil,
	} {
		if got := in.pages(path, "transactionId"); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", path, got, want)
		}
	}
	if got := in.pages("/vaults/"+quietVault+"/wallets?limit=1", "walletId"); !slices.Equal(got, []string{quiet.WalletID}) {
		t.Errorf("quiet vault's wallets: %v", got)
	}

	// Deliveries: one transaction.created per deposit, wallet.created per
	// wallet, status.updated for the advanced one.
	entity := in.pages("/webhooks/deliveries?entityId="+quietDeposits[1]+"&limit=1", "eventType")
	if !slices.Equal(entity, []string{"transaction.status.updated", "transaction.created"}) {
		t.Errorf("deliveries of %s: %v", quietDeposits[1], entity)
	}
	created := in.pages("/webhooks/deliveries?entityId="+quietDeposits[1]+"&eventType=transaction.created&destination=custody", "entityId")
	if !slices.Equal(created, []string{quietDeposits[1]}) {
		t.Errorf("transaction.created of %s: %v", quietDeposits[1], created)
	}
	wallets := in.pages("/webhooks/deliveries?eventType=wallet.created&limit=1", "entityId")
	if !slices.Equal(wallets, []string{quiet.WalletID, busy.WalletID}) {
		t.Errorf("wallet.created deliveries: %v", wallets)
	}
	if got := in.pages("/webhooks/deliveries?destination=kyc", "id"); len(got) != 0 {
		t.Errorf("kyc deliveries without a callback: %v", got)
	}

	// Applicants: a status change moves an applicant between filters.
	for _, id := range []string{"a1", "a2", "a3", "a4", "a5", "a6"} {
		in.createApplicant(id, "Green")
	}
	in.expect(200, "POST", "/v1/applicants/a2/blocklist", nil)
	in.expect(200, "POST", "/v1/applicants/a5/blocklist", nil)
	in.expect(200, "POST", "/v1/applicants/a4/deactivate", nil)
	if got := in.pages("/v1/applicants?status=blocklisted&limit=1", "externalUserId"); !slices.Equal(got, []string{"a5", "a2"}) {
		t.Errorf("blocklisted: %v", got)
	}
	in.expect(200, "DELETE", "/v1/applicants/a5/blocklist", nil)
	if got := in.pages("/v1/applicants?status=blocklisted&reviewStatus=pending&limit=1", "externalUserId"); !slices.Equal(got, []string{"a2"}) {
		t.Errorf("blocklisted after unblocklisting a5: %v", got)
	}
	if got := in.pages("/v1/applicants?status=active&limit=2", "externalUserId"); !slices.Equal(got, []string{"a6", "a5", "a3", "a1"}) {
		t.Errorf("active: %v", got)
	}
}
