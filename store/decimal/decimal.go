// Package decimal converts between the plain decimal strings of the API
// ("1.5") and integer base units of an asset (1500000 with 6 decimals), and
// values amounts in USD, without floats. Its input errors are *fielderr.Error
// naming the offending field.
package decimal

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/complybox/complybox/store/fielderr"
)

// maxIntegerDigits bounds the integer part of a decimal input, so a hostile
// amount cannot make the ledger do arithmetic on a megabyte of digits.
const maxIntegerDigits = 30

// invalid returns a *fielderr.Error naming field.
func invalid(field, format string, args ...any) *fielderr.Error {
	return fielderr.New(field, format, args...)
}

// ParseUnits parses a plain decimal string ("1.5", "0.000001", "100") into
// base units of an asset with the given decimals: "1.5" with 6 decimals is
// 1500000. It rejects signs, exponents, spaces, empty parts ("1.", ".5") and
// more significant fraction digits than decimals (trailing zeros do not
// count). Errors are *fielderr.Error naming field.
func ParseUnits(field, s string, decimals int) (*big.Int, error) {
	intPart, frac, ok := strings.Cut(s, ".")
	if s == "" {
		return nil, invalid(field, "%s must be a decimal string such as \"1.5\"", field)
	}
	if !allDigits(intPart) || (ok && !allDigits(frac)) {
		if strings.ContainsAny(s, "eE") {
			return nil, invalid(field, "%s must be a plain decimal string without an exponent, not %q", field, s)
		}
		if strings.ContainsAny(s, "+-") {
			return nil, invalid(field, "%s must be a decimal string without a sign, not %q", field, s)
		}
		return nil, invalid(field, "%s must be a plain decimal string such as \"1.5\", not %q", field, s)
	}
	intPart = strings.TrimLeft(intPart, "0")
	if len(intPart) > maxIntegerDigits {
		return nil, invalid(field, "%s has more than %d integer digits", field, maxIntegerDigits)
	}
	frac = strings.TrimRight(frac, "0")
	if len(frac) > decimals {
		return nil, invalid(field, "%s has %d fraction digits; this asset has %d decimals", field, len(frac), decimals)
	}
	digits := intPart + frac + strings.Repeat("0", decimals-len(frac))
	v, ok := parseDigits(digits)
	if !ok {
		return nil, invalid(field, "%s is not a decimal number", field)
	}
	return v, nil
}

// parseDigits parses a decimal integer as big.Int.SetString does ("" is
// zero). Amounts and balances nearly always fit 64 bits, and strconv parses
// those without SetString's allocations.
func parseDigits(s string) (*big.Int, bool) {
	if s == "" {
		return new(big.Int), true
	}
	if len(s) <= 19 {
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return new(big.Int).SetUint64(u), true
		}
	}
	return new(big.Int).SetString(s, 10)
}

// pow10 returns 10^n, n >= 0.
func pow10(n int) *big.Int {
	if n <= 19 {
		p := uint64(1)
		for range n {
			p *= 10
		}
		return new(big.Int).SetUint64(p)
	}
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// ParseAmount is ParseUnits for an amount, which must also be positive.
func ParseAmount(field, s string, decimals int) (*big.Int, error) {
	v, err := ParseUnits(field, s, decimals)
	if err != nil {
		return nil, err
	}
	if v.Sign() <= 0 {
		return nil, invalid(field, "%s must be greater than zero", field)
	}
	return v, nil
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// FormatUnits formats base units of an asset with the given decimals as a
// plain decimal string without trailing zeros: 1500000 with 6 decimals is
// "1.5", 100000000 with 6 is "100". Negative values keep their sign (they
// never reach the API: balances cannot go below zero).
func FormatUnits(v *big.Int, decimals int) string {
	sign := ""
	if v.Sign() < 0 {
		sign = "-"
		v = new(big.Int).Neg(v)
	}
	s := v.String()
	if decimals <= 0 {
		return sign + s
	}
	if len(s) <= decimals {
		s = strings.Repeat("0", decimals-len(s)+1) + s
	}
	intPart, frac := s[:len(s)-decimals], strings.TrimRight(s[len(s)-decimals:], "0")
	if frac == "" {
		return sign + intPart
	}
	return sign + intPart + "." + frac
}

// usdDecimals is the precision of USD values: cents.
const usdDecimals = 2

// USDValue returns units (of an asset with decimals) times price (a decimal
// string), in USD rounded half up to cents, or nil when price is unusable.
func USDValue(units *big.Int, decimals int, price string) *string {
	if units == nil || price == "" {
		return nil
	}
	_, frac, _ := strings.Cut(price, ".")
	p, err := ParseUnits("usdPrice", price, len(frac))
	if err != nil {
		return nil
	}
	// units × p has decimals+len(frac) fraction digits; keep two.
	shift := decimals + len(frac) - usdDecimals
	prod := new(big.Int).Mul(units, p)
	if shift > 0 {
		div := pow10(shift)
		q, r := new(big.Int).QuoRem(prod, div, new(big.Int))
		if new(big.Int).Mul(r, big.NewInt(2)).Cmp(div) >= 0 {
			q.Add(q, big.NewInt(1))
		}
		prod = q
	} else if shift < 0 {
		prod.Mul(prod, pow10(-shift))
	}
	s := FormatUnits(prod, usdDecimals)
	return &s
}

// ParseBaseUnits reads a base-unit amount written as a decimal integer
// string, as the store keeps balances and ledger entries; "" is zero.
func ParseBaseUnits(s string) (*big.Int, error) {
	v, ok := parseDigits(s)
	if !ok {
		return nil, fmt.Errorf("stored amount %q is not an integer", s)
	}
	return v, nil
}
