package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math/big"
	"strings"
	"testing"
)

// TestAddressEncodingsMatchPublishedVectors: the encoders give the
// addresses their specifications publish for known keys.
func TestAddressEncodingsMatchPublishedVectors(t *testing.T) {
	t.Parallel()
	// BIP-173's P2WPKH example.
	program, _ := hex.DecodeString("751e76e8199196d454941c45d1b3a323f1433bd6")
	if got := segwitV0Address("bc", program); got != "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4" {
		t.Errorf("segwit v0: %s", got)
	}
	// Ripple's genesis account.
	account, _ := hex.DecodeString("B5F762798A53D543A014CAF8B297CFF8F2F937E8")
	if got := rippleAddress(account); got != "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh" {
		t.Errorf("ripple: %s", got)
	}
	// Base58 keeps leading zero bytes as the alphabet's first character.
	if got := base58([]byte{0, 0, 1}, base58Chars); got != "112" {
		t.Errorf("base58 of 00 00 01: %s", got)
	}
}

// TestNewAddressesDecode: every minted deposit address and Solana
// transaction hash decodes as its chain's libraries decode it, checksum
// included (SPEC §4: addresses of their network's form).
func TestNewAddressesDecode(t *testing.T) {
	t.Parallel()
	for range 200 {
		if a := newAddress(NetworkBitcoin); !validSegwitV0(a, "bc") {
			t.Fatalf("bitcoin address %s: bad bech32", a)
		}
		if a := newAddress(NetworkLitecoin); !validSegwitV0(a, "ltc") {
			t.Fatalf("litecoin address %s: bad bech32", a)
		}
		if h := newTxHash(NetworkLitecoin); len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
			t.Fatalf("litecoin transaction hash %s", h)
		}
		a := newAddress(NetworkRipple)
		b, ok := unbase58(a, rippleBase58)
		if !ok || len(b) != 25 || b[0] != 0 || a[0] != 'r' || !checksumOK(b) {
			t.Fatalf("ripple address %s: %x", a, b)
		}
		if b, ok := unbase58(newAddress(NetworkSolana), base58Chars); !ok || len(b) != 32 {
			t.Fatalf("solana address: %d bytes", len(b))
		}
		if b, ok := unbase58(newTxHash(NetworkSolana), base58Chars); !ok || len(b) != 64 {
			t.Fatalf("solana transaction hash: %d bytes", len(b))
		}
		if a := newAddress(NetworkEthereum); len(a) != 42 || !strings.HasPrefix(a, "0x") || strings.Trim(a[2:], "0123456789abcdef") != "" {
			t.Fatalf("ethereum address %s", a)
		}
	}
}

// validSegwitV0 decodes a segwit address of prefix want (bc, ltc) as
// BIP-173 does: checksum, version 0, a 20-byte program.
func validSegwitV0(a, want string) bool {
	hrp, data, ok := strings.Cut(a, "1")
	if !ok || hrp != want || len(data) < 7 {
		return false
	}
	values := hrpExpand(hrp)
	for _, c := range data {
		i := strings.IndexRune(bech32Chars, c)
		if i < 0 {
			return false
		}
		values = append(values, byte(i))
	}
	if bech32Polymod(values) != 1 {
		return false
	}
	words := values[len(hrpExpand(hrp)) : len(values)-6]
	return words[0] == 0 && len(words)-1 == 32 // version 0, 160 bits of program
}

// unbase58 decodes s in alphabet.
func unbase58(s, alphabet string) ([]byte, bool) {
	n := new(big.Int)
	for _, c := range s {
		i := strings.IndexRune(alphabet, c)
		if i < 0 {
			return nil, false
		}
		n.Mul(n, big.NewInt(58)).Add(n, big.NewInt(int64(i)))
	}
	zeros := len(s) - len(strings.TrimLeft(s, alphabet[:1]))
	return append(make([]byte, zeros), n.Bytes()...), true
}

// checksumOK checks base58check's four bytes of double SHA-256.
func checksumOK(b []byte) bool {
	first := sha256.Sum256(b[:len(b)-4])
	second := sha256.Sum256(first[:])
	return bytes.Equal(second[:4], b[len(b)-4:])
}
