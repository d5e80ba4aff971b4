package decimal_test

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"strconv"
	"testing"

	"github.com/complybox/complybox/store/decimal"
	"github.com/complybox/complybox/store/fielderr"
)

func TestParseUnits(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		for _, c := range []struct {
			in       string
			decimals int
			want     string
		}{
			{"1.5", 6, "1500000"},
			{"0.000001", 6, "1"},
			{"100", 6, "100000000"},
			{"100.000000000", 6, "100000000"}, // trailing zeros do not count
			{"007.50", 2, "750"},
			{"0.123456789012345678", 18, "123456789012345678"},
			{"123456789012345678901234567890.123456789012345678", 18, "123456789012345678901234567890123456789012345678"},
			{"0", 8, "0"},
			{"5", 0, "5"},
		} {
			got, err := decimal.ParseUnits("amount", c.in, c.decimals)
			if err != nil {
				t.Errorf("ParseUnits(%q, %d): %v", c.in, c.decimals, err)
				continue
			}
			if got.String() != c.want {
				t.Errorf("ParseUnits(%q, %d) = %s, want %s", c.in, c.decimals, got, c.want)
			}
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, c := range []struct {
			in       string
			decimals int
		}{
			{"", 6}, {"1e5", 6}, {"1E5", 6}, {"-1", 6}, {"+1", 6}, {" 1", 6}, {"1 ", 6}, {".5", 6}, {"5.", 6},
			{"1.2.3", 6}, {"1,5", 6}, {"0x10", 6}, {"1.0000001", 6}, {"0.5", 0}, {"NaN", 6}, {"Infinity", 6},
			{"1234567890123456789012345678901", 6}, {"١", 6},
		} {
			_, err := decimal.ParseUnits("amount", c.in, c.decimals)
			var e *fielderr.Error
			if !errors.As(err, &e) || e.Field != "amount" {
				t.Errorf("ParseUnits(%q, %d) error %v: want a fielderr.Error naming amount", c.in, c.decimals, err)
			}
		}
	})
}

func TestParseAmount(t *testing.T) {
	for _, in := range []string{"0", "0.000", "000"} {
		var e *fielderr.Error
		if _, err := decimal.ParseAmount("amount", in, 6); !errors.As(err, &e) || e.Field != "amount" {
			t.Errorf("ParseAmount(%q) error %v: want a fielderr.Error naming amount (amounts are positive)", in, err)
		}
	}
	if v, err := decimal.ParseAmount("amount", "0.000000000000000001", 18); err != nil || v.Int64() != 1 {
		t.Errorf("ParseAmount(1 wei) = %v, %v", v, err)
	}
}

func TestFormatUnits(t *testing.T) {
	for _, c := range []struct {
		units    string
		decimals int
		want     string
	}{
		{"1500000", 6, "1.5"},
		{"1", 6, "0.000001"},
		{"100000000", 6, "100"},
		{"0", 18, "0"},
		{"123456789012345678", 18, "0.123456789012345678"},
		{"1000000000000000000000", 18, "1000"},
		{"7", 0, "7"},
		{"-1500000", 6, "-1.5"},
	} {
		v, _ := new(big.Int).SetString(c.units, 10)
		if got := decimal.FormatUnits(v, c.decimals); got != c.want {
			t.Errorf("FormatUnits(%s, %d) = %q, want %q", c.units, c.decimals, got, c.want)
		}
	}
}

// TestRoundTrip checks that formatting what was parsed gives the canonical
// form back.
func TestRoundTrip(t *testing.T) {
	for _, in := range []string{"1.50", "0001", "0.10000", "3.141592653589793238"} {
		v, err := decimal.ParseUnits("amount", in, 18)
		if err != nil {
			t.Fatal(err)
		}
		again, err := decimal.ParseUnits("amount", decimal.FormatUnits(v, 18), 18)
		if err != nil || again.Cmp(v) != 0 {
			t.Errorf("%q: round trip gave %v, %v", in, again, err)
		}
	}
}

// TestUSDValue checks the USD value against exact rational arithmetic,
// rounded half up to cents, across the sizes where the arithmetic changes
// path (products and powers of ten beyond 64 bits).
func TestUSDValue(t *testing.T) {
	for _, c := range []struct {
		units    string
		decimals int
		price    string
		want     string
	}{
		{"1500000", 6, "2", "3"},
		{"1", 6, "0.5", "0"},        // 0.0000005 rounds down
		{"10000", 6, "0.5", "0.01"}, // 0.005 rounds half up
		{"2500000000000000000", 18, "3412.123456", "8530.31"},
		{"12345", 0, "0.01", "123.45"}, // no shift
		{"7", 0, "3", "21"},            // the product gains cents
		{"123456789012345678901234567890", 18, "99999.999999", "12345678901111111.1"},
	} {
		units, _ := new(big.Int).SetString(c.units, 10)
		got := decimal.USDValue(units, c.decimals, c.price)
		if got == nil || *got != c.want {
			t.Errorf("USDValue(%s, %d, %s) = %v, want %s", c.units, c.decimals, c.price, got, c.want)
		}
	}
	r := rand.New(rand.NewSource(1))
	for range 2000 {
		units := new(big.Int).Rand(r, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(r.Intn(32))), nil))
		decimals := r.Intn(19) // with up to 6 price digits, shifts from -2 to 22
		price := strconv.Itoa(r.Intn(1_000_000))
		if f := r.Intn(7); f > 0 {
			price += fmt.Sprintf(".%0*d", f, r.Intn(int(math.Pow10(f))))
		}
		if got, want := decimal.USDValue(units, decimals, price), usdExact(units, decimals, price); got == nil || *got != want {
			t.Fatalf("USDValue(%s, %d, %s) = %v, want %s", units, decimals, price, got, want)
		}
	}
	if got := decimal.USDValue(big.NewInt(1), 6, "abc"); got != nil {
		t.Errorf("USDValue with price %q = %q, want nil", "abc", *got)
	}
}

// usdExact is units / 10^decimals × price rounded half up to cents.
func usdExact(units *big.Int, decimals int, price string) string {
	p, _ := new(big.Rat).SetString(price)
	v := new(big.Rat).SetFrac(units, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil))
	v.Mul(v, p).Mul(v, big.NewRat(100, 1))
	cents := new(big.Int).Quo(v.Num(), v.Denom())
	if rem := new(big.Rat).Sub(v, new(big.Rat).SetInt(cents)); rem.Cmp(big.NewRat(1, 2)) >= 0 {
		cents.Add(cents, big.NewInt(1))
	}
	return decimal.FormatUnits(cents, 2)
}

// TestParseBaseUnits checks stored amounts on both sides of 64 bits, and
// that what is not a decimal integer is refused as big.Int.SetString would.
func TestParseBaseUnits(t *testing.T) {
	for _, in := range []string{"0", "5", "-5", "+5", "007", "9999999999999999999", "18446744073709551615",
		"18446744073709551616", "-18446744073709551616", "123456789012345678901234567890"} {
		want, _ := new(big.Int).SetString(in, 10)
		got, err := decimal.ParseBaseUnits(in)
		if err != nil || got.Cmp(want) != 0 {
			t.Errorf("ParseBaseUnits(%q) = %v, %v, want %s", in, got, err, want)
		}
	}
	if got, err := decimal.ParseBaseUnits(""); err != nil || got.Sign() != 0 {
		t.Errorf("ParseBaseUnits(\"\") = %v, %v, want 0", got, err)
	}
	for _, in := range []string{"abc", "1.5", "1_000", " 1", "0x10", "-", "1e3"} {
		if got, err := decimal.ParseBaseUnits(in); err == nil {
			t.Errorf("ParseBaseUnits(%q) = %v, want an error", in, got)
		}
	}
}
