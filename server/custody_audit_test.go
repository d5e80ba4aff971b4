package server_test

import (
	"bytes"
	"testing"
	"time"
)

// TestIdempotencyKeyComparesBodiesAsJSON: the same body with other
// whitespace or key order is the same body; another value is not.
func TestIdempotencyKeyComparesBodiesAsJSON(t *testing.T) {
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
