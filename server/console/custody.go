package console

import (
	"net/http"
	"net/url"

	"github.com/complybox/complybox/server/wire"
	"github.com/complybox/complybox/store"
)

// Custody (read-only): vaults, wallets, transactions.

// Vaults serves GET /console/vaults.
func (c *Console) Vaults(w http.ResponseWriter, r *Request) error {
	p, err := wire.Page(r.Request)
	if err != nil {
		return err
	}
	items, next, err := c.store.Vaults(r.env, p)
	if err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, "vaults", "Vaults", "custody", map[string]any{"Items": items, "Next": deref(next)})
}

// Vault serves GET /console/vaults/:id with its wallets.
func (c *Console) Vault(w http.ResponseWriter, r *Request) error {
	id := store.CanonicalID(r.params.ByName("id"))
	v, err := c.store.Vault(r.env, id)
	if err != nil {
		return err
	}
	p, err := wire.Page(r.Request)
	if err != nil {
		return err
	}
	wallets, next, err := c.store.VaultWallets(r.env, id, p)
	if err != nil {
		return err
	}
	balances := make([]store.Balance, len(wallets))
	for i, wl := range wallets {
		if balances[i], err = c.store.WalletBalance(r.env, wl.WalletID); err != nil {
			return err
		}
	}
	return c.render(w, r, http.StatusOK, "vault", "Vault "+v.Name, "custody", map[string]any{
		"V": v, "Fields": recordFields(v), "Wallets": wallets, "Balances": balances, "Next": deref(next)})
}

// Wallet serves GET /console/wallets/:id with its balance and latest
// transactions.
func (c *Console) Wallet(w http.ResponseWriter, r *Request) error {
	id := store.CanonicalID(r.params.ByName("id"))
	wl, err := c.store.Wallet(r.env, id)
	if err != nil {
		return err
	}
	bal, err := c.store.WalletBalance(r.env, id)
	if err != nil {
		return err
	}
	txs, next, err := c.store.Transactions(r.env, store.TransactionFilter{WalletID: id}, store.Page{Limit: 50})
	if err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, "wallet", "Wallet "+wl.WalletID, "custody", map[string]any{
		"W": wl, "Fields": recordFields(wl), "Balance": recordFields(bal), "Txs": txs,
		"More": next != nil, "MoreURL": "/console/transactions?walletId=" + url.QueryEscape(id)})
}

// Transactions serves GET /console/transactions.
func (c *Console) Transactions(w http.ResponseWriter, r *Request) error {
	p, err := wire.Page(r.Request)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := store.TransactionFilter{VaultID: store.CanonicalID(q.Get("vaultId")), Status: q.Get("status"), Type: q.Get("type"),
		WalletID: store.CanonicalID(q.Get("walletId"))}
	items, next, err := c.store.Transactions(r.env, f, p)
	if err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, "transactions", "Transactions", "custody", map[string]any{
		"Items": items, "Next": deref(next), "F": f, "Statuses": store.TransactionStatuses(), "Types": store.TransactionTypes()})
}

// Transaction serves GET /console/transactions/:id.
func (c *Console) Transaction(w http.ResponseWriter, r *Request) error {
	tx, err := c.store.Transaction(r.env, store.CanonicalID(r.params.ByName("id")))
	if err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, "transaction", "Transaction "+tx.TransactionID, "custody", map[string]any{
		"T": tx, "Fields": recordFields(tx)})
}
