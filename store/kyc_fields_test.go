package store_test

import (
	"testing"

	"github.com/complybox/complybox/store"
)

func TestCountryCodes(t *testing.T) {
	if n := store.CountryCount(); n != 249 {
		t.Fatalf("%d ISO 3166-1 alpha-3 codes, want 249", n)
	}
	for _, c := range []string{"DEU", "GBR", "USA", "ALA", "ZWE", "SSD", "BES"} {
		if !store.IsCountry(c) {
			t.Errorf("%s rejected", c)
		}
	}
	for _, c := range []string{"deu", "DE", "XXX", "EU ", "LA ", "A D", "", "DEUT", "EUR"} {
		if store.IsCountry(c) {
			t.Errorf("%q accepted", c)
		}
	}
}
