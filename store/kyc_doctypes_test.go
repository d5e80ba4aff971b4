package store_test

import (
	"slices"
	"testing"

	"github.com/complybox/complybox/store"
)

// TestIDDocTypesFor: the table names only real countries, and reads as
// documented: every country issues passports and driving licences, the
// EU/EEA and Switzerland ID cards and residence permits, the USA its
// state ID cards, the UK no ID card.
func TestIDDocTypesFor(t *testing.T) {
	t.Parallel()
	for typ, countries := range store.IDDocTypeCountries() {
		for _, c := range countries {
			if !store.IsCountry(c) {
				t.Errorf("%s lists %q, not an ISO alpha-3 code", typ, c)
			}
		}
		if len(countries) != len(slices.Compact(slices.Sorted(slices.Values(countries)))) {
			t.Errorf("%s lists a country twice", typ)
		}
	}
	for _, c := range []struct {
		country string
		want    []string
	}{
		{"DEU", []string{"PASSPORT", "ID_CARD", "DRIVERS", "RESIDENCE_PERMIT"}},
		{"CHE", []string{"PASSPORT", "ID_CARD", "DRIVERS", "RESIDENCE_PERMIT"}},
		{"NOR", []string{"PASSPORT", "ID_CARD", "DRIVERS", "RESIDENCE_PERMIT"}},
		{"USA", []string{"PASSPORT", "ID_CARD", "DRIVERS", "RESIDENCE_PERMIT"}},
		{"IND", []string{"PASSPORT", "ID_CARD", "DRIVERS"}},
		{"GBR", []string{"PASSPORT", "DRIVERS", "RESIDENCE_PERMIT"}},
		{"BRA", []string{"PASSPORT", "ID_CARD", "DRIVERS"}},
		{"FJI", []string{"PASSPORT", "DRIVERS"}},
		{"deu", nil},
		{"XXX", nil},
	} {
		if got := store.IDDocTypesFor(c.country); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.country, got, c.want)
		}
	}
}
