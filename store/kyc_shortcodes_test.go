package store_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/complybox/complybox/store"
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// TestShortCodeStrength: a short code is a bearer credential, so it carries
// at least 128 random bits (SPEC §3.4): 22 base62 characters (≈131 bits),
// and it still opens its session.
func TestShortCodeStrength(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{})
	if _, _, err := s.CreateApplicant(store.Sandbox, store.ApplicantInput{"externalUserId": json.RawMessage(`"u1"`)}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range 50 {
		link, err := s.CreateSession(store.Sandbox, "u1", store.SessionInput{}, store.Idem{})
		if err != nil {
			t.Fatal(err)
		}
		c := link.ShortCode
		if len(c) != 22 || strings.Trim(c, base62) != "" {
			t.Fatalf("short code %q: want 22 base62 characters", c)
		}
		if seen[c] {
			t.Fatalf("short code %q minted twice", c)
		}
		seen[c] = true
		if url, err := s.ShortLink(c); err != nil || url != link.URL {
			t.Fatalf("ShortLink(%q) = %q, %v; want %q", c, url, err, link.URL)
		}
	}
}

// TestShortCodeUnbiased: each character is drawn by rejection sampling
// (no modulo bias): fed one byte value over and over, the sampler either
// makes a code of that value's character or never accepts it, and over all
// 256 values each of the 62 characters is reached by exactly 4 of them (the
// 8 rejected values would otherwise favour some characters).
func TestShortCodeUnbiased(t *testing.T) {
	counts := map[byte]int{}
	rejected := 0
	for v := range 256 {
		code, err := store.ShortCodeFrom(bytes.NewReader(bytes.Repeat([]byte{byte(v)}, 64)))
		if err != nil {
			rejected++
			continue
		}
		if len(code) != 22 || strings.Count(code, code[:1]) != 22 {
			t.Fatalf("byte %d: code %q, want 22 times one character", v, code)
		}
		counts[code[0]]++
	}
	if rejected != 256-248 {
		t.Errorf("%d byte values rejected, want 8", rejected)
	}
	for i := range len(base62) {
		if n := counts[base62[i]]; n != 4 {
			t.Errorf("character %q reached by %d byte values, want 4", base62[i], n)
		}
	}
}

// TestShortCodeUniform: over many codes from crypto/rand, character
// frequencies pass a chi-square test with a threshold (61 degrees of
// freedom, 150) that an unbiased source exceeds with probability below
// 1e-9, while the old modulo bias (78 vs 62 per 1000) exceeds it by far.
func TestShortCodeUniform(t *testing.T) {
	const codes = 20000
	counts := make([]float64, 256)
	for range codes {
		code, err := store.ShortCodeFrom(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []byte(code) {
			counts[c]++
		}
	}
	want := float64(codes*22) / 62
	chi := 0.0
	for i := range len(base62) {
		d := counts[base62[i]] - want
		chi += d * d / want
	}
	if chi > 150 {
		t.Errorf("chi-square %.1f over 62 characters, want < 150", chi)
	}
}
