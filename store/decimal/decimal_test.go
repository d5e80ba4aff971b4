package decimal_test

import (
	"errors"
	"math/big"
	"testing"

	"github.com/complybox/complybox/store/decimal"
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
			var e *decimal.FieldError
			if !errors.As(err, &e) || e.Field != "amount" {
				t.Errorf("ParseUnits(%q, %d) error %v: want a FieldError naming amount", c.in, c.decimals, err)
			}
		}
	})
}

func TestParseAmount(t *testing.T) {
	for _, in := range []string{"0", "0.000", "000"} {
		var e *decimal.FieldError
		if _, err := decimal.ParseAmount("amount", in, 6); !errors.As(err, &e) || e.Field != "amount" {
			t.Errorf("ParseAmount(%q) error %v: want a FieldError naming amount (amounts are positive)", in, err)
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
