package store

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/complybox/complybox/store/decimal"
)

// Asset is a custody asset of the catalog.
type Asset struct {
	ID         string `json:"id" toml:"id"`
	Symbol     string `json:"symbol" toml:"symbol"`
	Network    string `json:"network" toml:"network"`
	Decimals   int    `json:"decimals" toml:"decimals"`
	USDPrice   string `json:"usdPrice" toml:"usd_price"` // decimal string
	NeedsMemo  bool   `json:"needsMemo" toml:"needs_memo"`
	NetworkFee string `json:"networkFee" toml:"network_fee"` // decimal string, in the asset
}

// Networks of the built-in assets, and litecoin, whose addresses and
// transaction hashes complybox also mints in their own form (newAddress);
// any other network of a config asset gets Ethereum's (0x…).
const (
	NetworkBitcoin  = "bitcoin"
	NetworkEthereum = "ethereum"
	NetworkRipple   = "ripple"
	NetworkSolana   = "solana"
	NetworkLitecoin = "litecoin"
)

// BuiltinAssets is the built-in catalog, without ids (those are minted once
// per environment and kept in the db).
func BuiltinAssets() []Asset {
	return []Asset{
		{Symbol: "BTC", Network: NetworkBitcoin, Decimals: 8, USDPrice: "65000", NetworkFee: "0.0001"},
		{Symbol: "ETH", Network: NetworkEthereum, Decimals: 18, USDPrice: "3000", NetworkFee: "0.002"},
		{Symbol: "USDC", Network: NetworkEthereum, Decimals: 6, USDPrice: "1", NetworkFee: "1.5"},
		{Symbol: "XRP", Network: NetworkRipple, Decimals: 6, USDPrice: "0.6", NeedsMemo: true, NetworkFee: "0.00001"},
		{Symbol: "SOL", Network: NetworkSolana, Decimals: 9, USDPrice: "150", NetworkFee: "0.000005"},
	}
}

// catalog returns the assets in force: the built-ins with Settings.Assets
// replacing those of the same symbol (compared in upper case) and adding the
// rest, in that order. Ids are not set.
func (s Settings) catalog() []Asset {
	out := BuiltinAssets()
	for _, a := range s.Assets {
		a.Symbol = strings.ToUpper(a.Symbol)
		a.ID = ""
		a.USDPrice, a.NetworkFee = canonicalDecimal(a.USDPrice), canonicalDecimal(a.NetworkFee)
		replaced := false
		for i := range out {
			if out[i].Symbol == a.Symbol {
				out[i], replaced = a, true
			}
		}
		if !replaced {
			out = append(out, a)
		}
	}
	return out
}

// canonicalDecimal drops the trailing zeros of a decimal string ("4000.50"
// is "4000.5"); anything that does not parse is returned unchanged.
func canonicalDecimal(s string) string {
	_, frac, _ := strings.Cut(s, ".")
	v, err := decimal.ParseUnits("value", s, len(frac))
	if err != nil {
		return s
	}
	return decimal.FormatUnits(v, len(frac))
}

// Validate checks an asset of the configuration, which names every key
// (one with a built-in's symbol replaces it whole), needs_memo aside.
// Returns EINVALID naming the key (symbol, network, decimals, usd_price,
// network_fee).
func (a Asset) Validate() error {
	switch {
	case a.Symbol == "" || longerThan(a.Symbol, 16) || strings.ContainsAny(a.Symbol, " /:"):
		return Invalid("symbol", "symbol must be 1 to 16 characters without spaces, '/' or ':'")
	case a.Network == "":
		return Invalid("network", "network is required")
	case a.Decimals < 0 || a.Decimals > 36:
		return Invalid("decimals", "decimals must be from 0 to 36")
	}
	if a.USDPrice == "" {
		return Invalid("usd_price", "usd_price is required, a decimal string such as \"65000\"")
	}
	_, frac, _ := strings.Cut(a.USDPrice, ".")
	if _, err := decimal.ParseUnits("usd_price", a.USDPrice, len(frac)); err != nil {
		return fieldError(err)
	}
	if a.NetworkFee == "" {
		return Invalid("network_fee", "network_fee is required, a decimal string in the asset such as \"0.0001\"")
	}
	if _, err := decimal.ParseUnits("network_fee", a.NetworkFee, a.Decimals); err != nil {
		return fieldError(err)
	}
	return nil
}

// catalogAsset returns the asset in force for symbol, if any.
func (s Settings) catalogAsset(symbol string) (Asset, bool) {
	for _, a := range s.catalog() {
		if a.Symbol == symbol {
			return a, true
		}
	}
	return Asset{}, false
}

// storedAssets reads the environment's assets bucket (id -> asset).
func (t *txn) storedAssets(env Env) (map[string]Asset, error) {
	out := map[string]Asset{}
	err := t.env(env, "assets").ForEach(func(k, v []byte) error {
		var a Asset
		if err := json.Unmarshal(v, &a); err != nil {
			return err
		}
		out[a.Symbol] = a
		return nil
	})
	return out, err
}

// assets returns the catalog with its ids, minting (when writable) an id for
// every symbol that has none yet and refreshing stored copies whose settings
// changed. Read-only, it reports missing = true instead.
func (t *txn) assets(env Env) (list []Asset, missing bool, err error) {
	stored, err := t.storedAssets(env)
	if err != nil {
		return nil, false, err
	}
	for _, a := range t.s.settings.catalog() {
		old, ok := stored[a.Symbol]
		if ok {
			a.ID = old.ID
			if old.Decimals != a.Decimals {
				return nil, false, t.s.settings.decimalsChanged(old, a.Decimals)
			}
		}
		if !ok || old != a {
			if !t.Writable() {
				missing = true
				continue
			}
			if !ok {
				a.ID = newID()
			}
			b, err := json.Marshal(a)
			if err != nil {
				return nil, false, err
			}
			if err := t.env(env, "assets").Put([]byte(a.ID), b); err != nil {
				return nil, false, err
			}
		}
		list = append(list, a)
	}
	return list, missing, nil
}

// decimalsChanged is the error for a catalog that gives stored asset old
// other decimals: balances, reservations and amounts are integers in base
// units of the stored decimals, so new ones would rescale every one of
// them. It names the [[assets]] entry of the symbol, if any.
func (s Settings) decimalsChanged(old Asset, decimals int) error {
	why := fmt.Sprintf("this db holds %s with decimals = %d, and its balances, reservations and transaction amounts are stored in base units of those decimals, so %d would rescale every one of them", old.Symbol, old.Decimals, decimals)
	for i, a := range s.Assets {
		if strings.ToUpper(a.Symbol) == old.Symbol {
			return Errorf(EINVALID, "validation_failed", "config: assets[%d].decimals: is %d, but %s; keep decimals = %d, or use another symbol or a new db", i, decimals, why, old.Decimals)
		}
	}
	return Errorf(EINVALID, "validation_failed", "config: assets: the built-in %s has decimals = %d, but %s; add an [[assets]] entry for %s with decimals = %d", old.Symbol, decimals, why, old.Symbol, old.Decimals)
}

// asset returns the asset with id: the stored copy with the settings in
// force for its symbol (a symbol dropped from the configuration keeps its
// last stored settings). Returns ENOTFOUND for an unknown id.
func (t *txn) asset(env Env, id string) (Asset, error) {
	var a Asset
	b := t.env(env, "assets").Get([]byte(id))
	if b == nil {
		return a, NotFound("asset", id)
	}
	if err := t.s.assets.decode(b, &a); err != nil {
		return a, err
	}
	if cur, ok := t.s.settings.catalogAsset(a.Symbol); ok {
		cur.ID = a.ID
		a = cur
	}
	return a, nil
}

// Assets returns the environment's asset catalog.
func (s *Store) Assets(env Env) ([]Asset, error) {
	var out []Asset
	var missing bool
	err := s.viewIn(env, func(t *txn) (err error) {
		out, missing, err = t.assets(env)
		return err
	})
	if err == nil && missing {
		err = s.updateIn(env, func(t *txn) (err error) {
			out, _, err = t.assets(env)
			return err
		})
	}
	return out, err
}
