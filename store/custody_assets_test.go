package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/complybox/complybox/store"
)

func TestAssetValidate(t *testing.T) {
	for _, a := range store.BuiltinAssets() {
		if err := a.Validate(); err != nil {
			t.Errorf("built-in %s: %v", a.Symbol, err)
		}
	}
	// The symbol is 1 to 16 characters, not bytes.
	if err := (store.Asset{Symbol: strings.Repeat("Ξ", 16), Network: "x", Decimals: 2, USDPrice: "1", NetworkFee: "0.01"}).Validate(); err != nil {
		t.Errorf("16-character symbol: %v", err)
	}
	for _, c := range []struct {
		a     store.Asset
		field string
	}{
		{store.Asset{Network: "x", Decimals: 2}, "symbol"},
		{store.Asset{Symbol: "A:B", Network: "x", Decimals: 2}, "symbol"},
		{store.Asset{Symbol: strings.Repeat("Ξ", 17), Network: "x", Decimals: 2}, "symbol"},
		{store.Asset{Symbol: "X", Decimals: 2}, "network"},
		{store.Asset{Symbol: "X", Network: "x", Decimals: -1}, "decimals"},
		{store.Asset{Symbol: "X", Network: "x", Decimals: 2, USDPrice: "1e3", NetworkFee: "0.01"}, "usd_price"},
		{store.Asset{Symbol: "X", Network: "x", Decimals: 2, NetworkFee: "0.01"}, "usd_price"},
		{store.Asset{Symbol: "X", Network: "x", Decimals: 2, USDPrice: "1", NetworkFee: "0.001"}, "network_fee"},
		{store.Asset{Symbol: "X", Network: "x", Decimals: 2, USDPrice: "1"}, "network_fee"},
	} {
		var e *store.Error
		if err := c.a.Validate(); !errors.As(err, &e) || e.Field != c.field {
			t.Errorf("%+v: error %v, want one naming %s", c.a, err, c.field)
		}
	}
}
