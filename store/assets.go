package store

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
