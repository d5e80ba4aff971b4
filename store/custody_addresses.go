package store

import (
	"crypto/sha256"
	"math/big"
	"math/rand/v2"
)

// Deposit addresses and transaction hashes that a chain library accepts,
// not only look like its network's: bech32 with its checksum (BIP-173), a
// Ripple account ID in base58check, a Solana public key of 32 bytes.

// bech32Chars is the bech32 data alphabet (BIP-173).
const bech32Chars = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

// Base58 alphabets: Bitcoin's (Solana's too) and Ripple's.
const (
	base58Chars  = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
	rippleBase58 = "rpshnaf39wBUDNEGHJKLM4PQRST7VWXYZ2bcdeCg65jkm8oFqi1tuvAxyz"
)

// randomBytes returns n random bytes (addresses are sandbox data, not
// secrets: math/rand is enough).
func randomBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rand.UintN(256))
	}
	return b
}

// segwitV0Address encodes a version 0 witness program of 20 bytes (P2WPKH)
// as a bech32 address of human-readable part hrp ("bc" on mainnet).
func segwitV0Address(hrp string, program []byte) string {
	data := append([]byte{0}, convertBits(program, 8, 5)...)
	values := append(hrpExpand(hrp), data...)
	polymod := bech32Polymod(append(values, 0, 0, 0, 0, 0, 0)) ^ 1
	out := []byte(hrp + "1")
	for _, d := range data {
		out = append(out, bech32Chars[d])
	}
	for i := range 6 {
		out = append(out, bech32Chars[(polymod>>(5*(5-i)))&31])
	}
	return string(out)
}

// bech32Polymod is BIP-173's checksum function.
func bech32Polymod(values []byte) uint32 {
	gen := [5]uint32{0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3}
	chk := uint32(1)
	for _, v := range values {
		top := chk >> 25
		chk = (chk&0x1ffffff)<<5 ^ uint32(v)
		for i := range 5 {
			if (top>>i)&1 == 1 {
				chk ^= gen[i]
			}
		}
	}
	return chk
}

// hrpExpand is BIP-173's expansion of the human-readable part.
func hrpExpand(hrp string) []byte {
	out := make([]byte, 0, 2*len(hrp)+1)
	for i := 0; i < len(hrp); i++ {
		out = append(out, hrp[i]>>5)
	}
	out = append(out, 0)
	for i := 0; i < len(hrp); i++ {
		out = append(out, hrp[i]&31)
	}
	return out
}

// convertBits regroups bits of from-bit groups into to-bit groups, padding
// the last one with zeros.
func convertBits(in []byte, from, to uint) []byte {
	var acc, bits uint
	var out []byte
	maxv := uint(1)<<to - 1
	for _, b := range in {
		acc = acc<<from | uint(b)
		bits += from
		for bits >= to {
			bits -= to
			out = append(out, byte(acc>>bits&maxv))
		}
	}
	if bits > 0 {
		out = append(out, byte(acc<<(to-bits)&maxv))
	}
	return out
}

// base58 encodes b in alphabet, a leading zero byte as the alphabet's
// first character, as Bitcoin, Solana and Ripple do.
func base58(b []byte, alphabet string) string {
	n := new(big.Int).SetBytes(b)
	radix, mod := big.NewInt(58), new(big.Int)
	var out []byte
	for n.Sign() > 0 {
		n.DivMod(n, radix, mod)
		out = append(out, alphabet[mod.Int64()])
	}
	for _, c := range b {
		if c != 0 {
			break
		}
		out = append(out, alphabet[0])
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}

// base58Check appends the first four bytes of payload's double SHA-256 and
// encodes the whole in alphabet.
func base58Check(payload []byte, alphabet string) string {
	first := sha256.Sum256(payload)
	second := sha256.Sum256(first[:])
	return base58(append(payload, second[:4]...), alphabet)
}

// rippleAddress encodes a 20-byte account ID as a classic Ripple address
// (version byte 0, base58check in Ripple's alphabet: r…).
func rippleAddress(accountID []byte) string {
	return base58Check(append([]byte{0}, accountID...), rippleBase58)
}
