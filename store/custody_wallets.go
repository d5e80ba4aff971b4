package store

import (
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
)

// WalletActive is the status of every wallet.
const WalletActive = "Active"

// Wallet is one asset's wallet in a vault; it is also the data of
// wallet.created.
type Wallet struct {
	WalletID       string  `json:"walletId"`
	VaultID        string  `json:"vaultId"`
	AssetID        string  `json:"assetId"`
	Label          string  `json:"label"`
	DepositAddress string  `json:"depositAddress"`
	DepositTag     *string `json:"depositTag"`
	Status         string  `json:"status"`
	CreatedAt      Time    `json:"createdAt"`
}

type diskWallet struct {
	Wallet
	Seq uint64 `json:"seq"`
}

// fWalletVault is the filter-index field of wallets (wallets_by, see
// list_filter.go): the vault, which never changes.
const fWalletVault byte = 'v'

func (w *diskWallet) filterKeys() []fkey { return []fkey{{fWalletVault, w.VaultID}} }

// WalletInput is the body of POST /vaults/{id}/wallets: the asset by id or
// by symbol, and an optional label.
type WalletInput struct {
	AssetID     *string `json:"assetId"`
	AssetSymbol *string `json:"assetSymbol"`
	Label       *string `json:"label"`
}

func (t *txn) wallet(env Env, id string) (diskWallet, error) {
	var w diskWallet
	b := t.env(env, "wallets").Get([]byte(id))
	if b == nil {
		return w, NotFound("wallet", id)
	}
	return w, t.s.wallets.decode(b, &w)
}

func (t *txn) putWallet(env Env, w diskWallet) error {
	b, err := json.Marshal(w)
	if err != nil {
		return err
	}
	return t.env(env, "wallets").Put([]byte(w.WalletID), b)
}

// resolveAsset finds the asset a wallet request names. Returns EINVALID
// naming assetId or assetSymbol when it is missing, unknown or the two
// disagree.
func (t *txn) resolveAsset(env Env, in WalletInput) (Asset, error) {
	list, _, err := t.assets(env)
	if err != nil {
		return Asset{}, err
	}
	var byID, bySymbol *Asset
	for i := range list {
		if in.AssetID != nil && list[i].ID == *in.AssetID {
			byID = &list[i]
		}
		if in.AssetSymbol != nil && list[i].Symbol == strings.ToUpper(*in.AssetSymbol) {
			bySymbol = &list[i]
		}
	}
	switch {
	case in.AssetID == nil && in.AssetSymbol == nil:
		return Asset{}, Invalid("assetId", "assetId or assetSymbol is required")
	case in.AssetID != nil && byID == nil:
		return Asset{}, Invalid("assetId", "unknown assetId %q; GET /assets lists them", *in.AssetID)
	case in.AssetSymbol != nil && bySymbol == nil:
		return Asset{}, Invalid("assetSymbol", "unknown assetSymbol %q; GET /assets lists them", *in.AssetSymbol)
	case byID != nil && bySymbol != nil && byID.ID != bySymbol.ID:
		return Asset{}, Invalid("assetSymbol", "assetSymbol %q is not the asset of assetId %q", *in.AssetSymbol, *in.AssetID)
	case byID != nil:
		return *byID, nil
	}
	return *bySymbol, nil
}

// CreateWallet provisions a wallet for an asset in a vault, with a fresh
// deposit address (and a deposit tag on memo chains) and a zero balance,
// and emits wallet.created. With an Idempotency-Key seen before with the
// same body it returns the first wallet. Returns ENOTFOUND vault_not_found,
// EINVALID for a bad body and EIDEMPOTENCY for a key reused with another body.
func (s *Store) CreateWallet(env Env, vaultID string, in WalletInput, idem Idem) (Wallet, error) {
	label := ""
	if in.Label != nil {
		if err := checkText("label", *in.Label, 200); err != nil {
			return Wallet{}, err
		}
		label = *in.Label
	}
	scope := "POST /vaults/" + vaultID + "/wallets"
	var out Wallet
	err := s.updateIn(env, func(t *txn) error {
		if ok, err := t.replay(env, scope, idem, &out); ok || err != nil {
			return err
		}
		if _, err := t.vault(env, vaultID); err != nil {
			return err
		}
		a, err := t.resolveAsset(env, in)
		if err != nil {
			return err
		}
		w := diskWallet{Wallet: Wallet{WalletID: newID(), VaultID: vaultID, AssetID: a.ID, Label: label, Status: WalletActive, CreatedAt: At(t.now)}}
		addrs := t.env(env, "addresses")
		for {
			w.DepositAddress = newAddress(a.Network)
			if addrs.Get([]byte(w.DepositAddress)) == nil {
				break
			}
		}
		if err := addrs.Put([]byte(w.DepositAddress), []byte(w.WalletID)); err != nil {
			return err
		}
		if a.NeedsMemo {
			tag := strconv.FormatUint(uint64(rand.Uint32N(4294967295))+1, 10)
			w.DepositTag = &tag
		}
		if w.Seq, err = index(t.env(env, "wallets_idx"), w.WalletID); err != nil {
			return err
		}
		if err := t.reindex(env, "wallets_by", w.Seq, nil, w.filterKeys()); err != nil {
			return err
		}
		if err := t.putWallet(env, w); err != nil {
			return err
		}
		if err := t.putBalance(env, w.WalletID, diskBalance{UpdatedAt: At(t.now)}); err != nil {
			return err
		}
		if err := t.enqueue(env, DestCustody, "wallet.created", "wallet", w.WalletID, w.Wallet); err != nil {
			return err
		}
		out = w.Wallet
		return t.remember(env, scope, idem, out)
	})
	return out, err
}

// Wallet returns a wallet. Returns ENOTFOUND wallet_not_found.
func (s *Store) Wallet(env Env, id string) (Wallet, error) {
	var out Wallet
	err := s.viewIn(env, func(t *txn) error {
		w, err := t.wallet(env, id)
		out = w.Wallet
		return err
	})
	return out, err
}

// VaultWallets lists a vault's wallets newest first, reading the vault's
// filter index (a page reads O(limit) records). Returns ENOTFOUND
// vault_not_found and EINVALID for a bad cursor.
func (s *Store) VaultWallets(env Env, vaultID string, p Page) ([]Wallet, *string, error) {
	out := []Wallet{}
	var next *string
	err := s.viewIn(env, func(t *txn) error {
		if _, err := t.vault(env, vaultID); err != nil {
			return err
		}
		var err error
		scan := listScan{kind: cursorKind{listWallets, env}, seqs: t.env(env, "wallets_idx"), filters: t.env(env, "wallets_by"), keys: []fkey{{fWalletVault, vaultID}}}
		next, err = scan.run(p, func(_ uint64, id []byte) (bool, error) {
			s.listDecodes.Add(1)
			w, err := t.wallet(env, string(id))
			if err != nil || w.VaultID != vaultID {
				return false, err
			}
			out = append(out, w.Wallet)
			return true, nil
		})
		return err
	})
	return out, next, err
}

// newAddress returns a random address of the network's form, valid for its
// chain libraries (custody_addresses.go): bech32 P2WPKH (bc1q…, with its
// checksum) on bitcoin, a 32-byte public key in base58 on solana, a classic
// r… address (base58check) on ripple, and an EVM address (0x + 40
// lowercase hex) otherwise.
func newAddress(network string) string {
	switch network {
	case NetworkBitcoin:
		return segwitV0Address("bc", randomBytes(20))
	case NetworkLitecoin:
		return segwitV0Address("ltc", randomBytes(20))
	case NetworkSolana:
		return base58(randomBytes(32), base58Chars)
	case NetworkRipple:
		return rippleAddress(randomBytes(20))
	}
	return "0x" + hex.EncodeToString(randomBytes(20))
}
