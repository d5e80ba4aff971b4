package store_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/complybox/complybox/store"
)

func TestUboOwnershipPercent(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{Settings: limits(10, 10)})
	mustCompany(t, s, "co", 0)
	add := func(pct string) (store.UboAdded, error) {
		return s.AddUbo(store.Sandbox, "co", store.UboInput{"fullName": json.RawMessage(`"A B"`),
			"roles": json.RawMessage(`["director"]`), "ownershipPercent": json.RawMessage(pct)}, store.SourceAPI, store.Idem{})
	}
	for in, want := range map[string]string{
		"0": "0", "100": "100", "25.5": "25.5", "33.3333": "33.3333", "33.33330": "33.3333", "1e1": "10",
		"1E-4": "0.0001", "100.0000": "100", "-0": "0",
	} {
		got, err := add(in)
		if err != nil || got.Row.OwnershipPercent.String() != want {
			t.Errorf("%s: %q %v, want %q", in, got.Row.OwnershipPercent, err, want)
		}
	}
	for _, in := range []string{"100.0001", "-1", "0.00001", "1e3", `"5"`, "null", "true", "[1]", "{}"} {
		if got, err := add(in); store.ErrorCode(err) != store.EINVALID {
			t.Errorf("%s: accepted as %q (%v)", in, got.Row.OwnershipPercent, err)
		}
	}
}

func TestSpawnSplitsTheName(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{Settings: limits(10, 10)})
	mustCompany(t, s, "co", 0)
	for i, c := range []struct{ full, first, last string }{
		{"Ada King Lovelace", "Ada King", "Lovelace"}, {"Cher", "", "Cher"}, {"  Jean   Paul  Sartre ", "Jean Paul", "Sartre"},
	} {
		name, _ := json.Marshal(c.full)
		if _, err := s.AddUbo(store.Sandbox, "co", store.UboInput{"fullName": name, "roles": json.RawMessage(`["director"]`)}, store.SourceSDK, store.Idem{}); err != nil {
			t.Fatal(err)
		}
		out, err := s.SpawnKYC(store.Sandbox, "k", "co", strconv.Itoa(i), store.LinkInput{})
		if err != nil {
			t.Fatal(err)
		}
		a, err := s.Applicant(store.Sandbox, out.ChildExternalUserID)
		if err != nil {
			t.Fatal(err)
		}
		first, last := a.Info["firstName"], a.Info["lastName"]
		if (c.first == "") != (first == nil) || (first != nil && *first != c.first) || last == nil || *last != c.last {
			t.Errorf("%q: first %v last %v", c.full, first, last)
		}
		if out.Row.Source != store.SourceSDK {
			t.Errorf("source %s", out.Row.Source)
		}
	}
}
