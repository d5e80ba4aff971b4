package store

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/complybox/complybox/store/decimal"
)

// Balance is a wallet's balance as GET /wallets/{id}/balance shows it.
// total is what the wallet holds; available is total less what outgoing
// transactions in flight have reserved (amount plus fee); pending is what
// incoming transactions in flight (deposits, transfers in) will add once
// they complete.
type Balance struct {
	WalletID       string `json:"walletId"`
	VaultAccountID string `json:"vaultAccountId"`
	AssetID        string `json:"assetId"`
	AssetSymbol    string `json:"assetSymbol"`
	Total          string `json:"total"`
	Available      string `json:"available"`
	Pending        string `json:"pending"`
	UpdatedAt      Time   `json:"updatedAt"`
}

// diskBalance keeps base units as decimal integer strings.
type diskBalance struct {
	Total, Available, Pending string
	UpdatedAt                 Time
}

// ledger is a wallet's balance in base units while an operation changes it.
type ledger struct {
	wallet                    diskWallet
	total, available, pending *big.Int
}

func (t *txn) getBalance(env Env, walletID string) (diskBalance, error) {
	v := t.env(env, "balances").Get([]byte(walletID))
	if v == nil {
		return diskBalance{}, nil
	}
	return unmarshalBalance(v)
}

func (t *txn) putBalance(env Env, walletID string, b diskBalance) error {
	return t.env(env, "balances").Put([]byte(walletID), marshalBalance(b))
}

// marshalBalance encodes a balance as "total available pending updatedAt"
// (base units, then Unix milliseconds): balances change on every
// transaction, inside the write transaction, where JSON is the slow part.
func marshalBalance(b diskBalance) []byte {
	out := make([]byte, 0, 64)
	for _, f := range []string{b.Total, b.Available, b.Pending} {
		if f == "" {
			f = "0"
		}
		out = append(append(out, f...), ' ')
	}
	return strconv.AppendInt(out, b.UpdatedAt.UnixMilli(), 10)
}

func unmarshalBalance(v []byte) (diskBalance, error) {
	f := strings.Fields(string(v))
	if len(f) != 4 {
		return diskBalance{}, fmt.Errorf("stored balance %q is not four fields", v)
	}
	ms, err := strconv.ParseInt(f[3], 10, 64)
	if err != nil {
		return diskBalance{}, fmt.Errorf("stored balance %q: %w", v, err)
	}
	return diskBalance{Total: f[0], Available: f[1], Pending: f[2], UpdatedAt: At(time.UnixMilli(ms))}, nil
}

// ledgerOf loads a wallet's balance for change.
func (t *txn) ledgerOf(env Env, w diskWallet) (*ledger, error) {
	b, err := t.getBalance(env, w.WalletID)
	if err != nil {
		return nil, err
	}
	l := &ledger{wallet: w}
	if l.total, err = decimal.ParseBaseUnits(b.Total); err != nil {
		return nil, err
	}
	if l.available, err = decimal.ParseBaseUnits(b.Available); err != nil {
		return nil, err
	}
	if l.pending, err = decimal.ParseBaseUnits(b.Pending); err != nil {
		return nil, err
	}
	return l, nil
}

// change applies deltas in base units to a wallet's balance and saves it.
// When total or available changed it emits balance.updated, so every change
// of either is announced exactly once. Balances never go below zero: the
// callers check available first, and an underflow here is an internal error.
func (t *txn) change(env Env, l *ledger, dTotal, dAvailable, dPending *big.Int) error {
	return t.changeAnnouncing(env, l, dTotal, dAvailable, dPending, nil)
}

// changeAnnouncing is change with its balance.updated event built
// beforehand (balanceEvent), so that encoding it need not wait in the write
// transaction; nil builds it at the operation's time.
func (t *txn) changeAnnouncing(env Env, l *ledger, dTotal, dAvailable, dPending *big.Int, ev *Event) error {
	moved := false
	for _, p := range []struct {
		v, d    *big.Int
		counted bool // total and available are announced; pending is not
	}{{l.total, dTotal, true}, {l.available, dAvailable, true}, {l.pending, dPending, false}} {
		if p.d == nil || p.d.Sign() == 0 {
			continue
		}
		p.v.Add(p.v, p.d)
		if p.v.Sign() < 0 {
			return Errorf(EINTERNAL, "internal_error", "balance of wallet %s would go below zero", l.wallet.WalletID)
		}
		moved = moved || p.counted
	}
	err := t.putBalance(env, l.wallet.WalletID, diskBalance{
		Total: l.total.String(), Available: l.available.String(), Pending: l.pending.String(), UpdatedAt: At(t.now),
	})
	if err != nil || !moved {
		return err
	}
	if ev == nil {
		e, err := balanceEvent(l.wallet, t.now)
		if err != nil {
			return err
		}
		ev = &e
	}
	return t.enqueueEvent(env, DestCustody, *ev)
}

// balanceEvent builds the balance.updated event of wallet w's balance, of
// time at.
func balanceEvent(w diskWallet, at time.Time) (Event, error) {
	return newEvent("balance.updated", "balance", w.VaultID+":"+w.AssetID, at,
		balanceData{VaultAccountID: w.VaultID, AssetID: w.AssetID})
}

// balanceData is the data of balance.updated: no amounts, by design.
type balanceData struct {
	VaultAccountID string `json:"vaultAccountId"`
	AssetID        string `json:"assetId"`
}

// WalletBalance returns a wallet's balance. Returns ENOTFOUND wallet_not_found.
func (s *Store) WalletBalance(env Env, walletID string) (Balance, error) {
	var out Balance
	err := s.viewIn(env, func(t *txn) error {
		w, err := t.wallet(env, walletID)
		if err != nil {
			return err
		}
		a, err := t.asset(env, w.AssetID)
		if err != nil {
			return err
		}
		l, err := t.ledgerOf(env, w)
		if err != nil {
			return err
		}
		b, err := t.getBalance(env, walletID)
		if err != nil {
			return err
		}
		out = Balance{
			WalletID: w.WalletID, VaultAccountID: w.VaultID, AssetID: a.ID, AssetSymbol: a.Symbol,
			Total: decimal.FormatUnits(l.total, a.Decimals), Available: decimal.FormatUnits(l.available, a.Decimals),
			Pending: decimal.FormatUnits(l.pending, a.Decimals), UpdatedAt: b.UpdatedAt,
		}
		return nil
	})
	return out, err
}
