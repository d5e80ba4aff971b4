package store

import (
	"fmt"
	"testing"
)

// TestDecodedFollowsBytes: the cache answers with what the bytes read
// encode, whatever it decoded before — a record that changed is decoded
// afresh and its old version is never answered for the new bytes — keeps
// no value of bytes that fail to decode, and holds at most decodedMax
// records.
func TestDecodedFollowsBytes(t *testing.T) {
	var c decoded[diskWallet]
	get := func(b string) diskWallet {
		t.Helper()
		var w diskWallet
		if err := c.decode([]byte(b), &w); err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
		return w
	}
	v1, v2 := `{"walletId":"w","label":"one","seq":1}`, `{"walletId":"w","label":"two","seq":1}`
	for i, want := range []struct{ b, label string }{{v1, "one"}, {v1, "one"}, {v2, "two"}, {v1, "one"}, {v2, "two"}} {
		if got := get(want.b); got.Label != want.label || got.WalletID != "w" || got.Seq != 1 {
			t.Fatalf("read %d: %+v, want label %q", i, got, want.label)
		}
	}
	var w diskWallet
	if err := c.decode([]byte(`{"walletId":`), &w); err == nil {
		t.Fatal("truncated JSON decoded without an error")
	}
	if _, ok := c.m[`{"walletId":`]; ok {
		t.Fatal("bytes that failed to decode were kept")
	}
	for i := range 3 * decodedMax {
		get(fmt.Sprintf(`{"walletId":"w%d"}`, i))
		if len(c.m) > decodedMax {
			t.Fatalf("%d records held, want at most %d", len(c.m), decodedMax)
		}
	}
}
