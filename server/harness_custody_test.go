package server_test

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/complybox/complybox/dispatch"
)

// stepDelay is the chain simulator's step in the harness settings.
const stepDelay = 3 * time.Second

// wallet is a wallet record as the API answers it.
type wallet struct {
	WalletID       string  `json:"walletId"`
	VaultID        string  `json:"vaultId"`
	AssetID        string  `json:"assetId"`
	Label          string  `json:"label"`
	DepositAddress string  `json:"depositAddress"`
	DepositTag     *string `json:"depositTag"`
	Status         string  `json:"status"`
	CreatedAt      string  `json:"createdAt"`
}

// balance is GET /wallets/{id}/balance.
type balance struct {
	WalletID, VaultAccountID, AssetID, AssetSymbol string
	Total, Available, Pending, UpdatedAt           string
}

// vault creates a vault and returns its id.
func (in *instance) vault(name string) string {
	in.t.Helper()
	var v struct{ VaultID string }
	in.expect(201, "POST", "/vaults", map[string]any{"name": name, "externalId": "ext-" + name}).json(in.t, &v)
	return v.VaultID
}

// wallet creates a wallet of symbol in vault.
func (in *instance) wallet(vaultID, symbol string) wallet {
	in.t.Helper()
	var w wallet
	in.expect(201, "POST", "/vaults/"+vaultID+"/wallets", map[string]any{"assetSymbol": symbol, "label": symbol + " wallet"}).json(in.t, &w)
	return w
}

// balance reads a wallet's balance.
func (in *instance) balance(walletID string) balance {
	in.t.Helper()
	var b balance
	in.expect(200, "GET", "/wallets/"+walletID+"/balance", nil).json(in.t, &b)
	return b
}

// fund deposits amount into a wallet and completes the deposit by hand.
func (in *instance) fund(walletID, amount string) {
	in.t.Helper()
	var x struct{ TransactionID string }
	in.expect(201, "POST", "/sandbox/deposits", map[string]any{"walletId": walletID, "amount": amount}).json(in.t, &x)
	in.expect(200, "POST", "/transactions/"+x.TransactionID+"/advance", nil)
	in.expect(200, "POST", "/transactions/"+x.TransactionID+"/advance", nil)
}

// transaction reads a transaction as a map.
func (in *instance) transaction(id string) map[string]any {
	in.t.Helper()
	return in.expect(200, "GET", "/transactions/"+id, nil).m(in.t)
}

// event is a decoded webhook envelope.
type event struct {
	ID         string         `json:"id"`
	EventType  string         `json:"eventType"`
	EntityType string         `json:"entityType"`
	EntityID   string         `json:"entityId"`
	Timestamp  string         `json:"timestamp"`
	Data       map[string]any `json:"data"`
}

// decodeEvent decodes a received webhook body.
func decodeEvent(t testing.TB, r received) event {
	t.Helper()
	var e event
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Fatalf("webhook body %s: %v", r.Body, err)
	}
	return e
}

// waitStatus waits until the simulator has moved a transaction to status.
func (in *instance) waitStatus(id, status string) map[string]any {
	in.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		x := in.transaction(id)
		if x["status"] == status {
			return x
		}
		if time.Now().After(deadline) {
			in.t.Fatalf("transaction %s is %v, want %s", id, x["status"], status)
		}
	}
}

// step advances the clock by one simulator step and waits for the
// transaction to reach status.
func (in *instance) step(id, status string) map[string]any {
	in.t.Helper()
	in.advance(stepDelay)
	return in.waitStatus(id, status)
}

// verified decodes a received webhook after checking both signatures.
func verified(t testing.TB, secret string, r received) event {
	t.Helper()
	if !dispatch.Verify(secret, r.Body, r.Header.Get("X-Webhook-Signature")) {
		t.Fatalf("X-Webhook-Signature does not verify for %s", r.Body)
	}
	e := decodeEvent(t, r)
	ts, err := strconv.ParseInt(r.Header.Get("webhook-timestamp"), 10, 64)
	if err != nil || r.Header.Get("webhook-signature") != dispatch.SignStandard(secret, e.ID, ts, r.Body) {
		t.Fatalf("webhook-signature does not verify for %s", r.Body)
	}
	if r.Header.Get("X-Webhook-Event-Type") != e.EventType {
		t.Fatalf("X-Webhook-Event-Type %q, body says %q", r.Header.Get("X-Webhook-Event-Type"), e.EventType)
	}
	return e
}

// keys returns the sorted keys of m.
func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sameKeys fails unless m has exactly the keys want.
func sameKeys(t testing.TB, what string, m map[string]any, want ...string) {
	t.Helper()
	sort.Strings(want)
	if got := keys(m); !slices.Equal(got, want) {
		t.Errorf("%s keys:\n got %v\nwant %v", what, got, want)
	}
}

// fields fails for every key of want whose value in m differs. A want of
// nil means JSON null.
func fields(t testing.TB, what string, m map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		got, ok := m[k]
		if !ok {
			t.Errorf("%s: %s missing", what, k)
			continue
		}
		if got != v {
			t.Errorf("%s: %s = %#v, want %#v", what, k, got, v)
		}
	}
}

// collect receives n webhooks, checks their signatures and returns them by
// event type, in arrival order. Events of different entities may arrive in
// any order; those of one entity arrive in event order.
func (rc *receiver) collect(t testing.TB, secret string, n int) map[string][]event {
	t.Helper()
	out := map[string][]event{}
	for range n {
		e := verified(t, secret, rc.next(t))
		out[e.EventType] = append(out[e.EventType], e)
	}
	return out
}
