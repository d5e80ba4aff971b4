package store

import (
	"encoding/json"
	"testing"
)

func TestParseOwnership(t *testing.T) {
	for in, want := range map[string]string{
		"0": "0", "100": "100", "25.5": "25.5", "33.3333": "33.3333", "33.33330": "33.3333", "1e1": "10",
		"1E-4": "0.0001", "100.0000": "100", "-0": "0",
	} {
		got, err := parseOwnership("p", json.RawMessage(in))
		if err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"100.0001", "-1", "0.00001", "1e3", `"5"`, "null", "true", "[1]", "{}", ""} {
		if got, err := parseOwnership("p", json.RawMessage(in)); err == nil {
			t.Errorf("%s: accepted as %q", in, got)
		}
	}
}

func TestSplitName(t *testing.T) {
	for in, want := range map[string][2]string{
		"Ada King Lovelace": {"Ada King", "Lovelace"}, "Cher": {"", "Cher"}, "  Jean   Paul  Sartre ": {"Jean Paul", "Sartre"},
	} {
		if f, l := splitName(in); f != want[0] || l != want[1] {
			t.Errorf("%q: %q %q, want %v", in, f, l, want)
		}
	}
}
