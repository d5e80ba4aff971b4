package store_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// limits returns settings with spawn-kyc limited to perHour and
// regenerate-link to perDay.
func limits(perHour, perDay int) store.Settings {
	return store.Settings{SpawnRateLimitPerHour: perHour, RegenerateLinkPerChildCapPer24h: perDay}
}

// mustCompany creates company extID with n director rows.
func mustCompany(tb testing.TB, s *store.Store, extID string, n int) {
	tb.Helper()
	rows := []map[string]any{}
	for range n {
		rows = append(rows, map[string]any{"fullName": "Dee Rector", "roles": []string{"director"}})
	}
	in := store.ApplicantInput{}
	for k, v := range map[string]any{"externalUserId": extID, "type": "company", "companyName": "Co", "ubos": rows} {
		b, _ := json.Marshal(v)
		in[k] = b
	}
	if _, _, err := s.CreateApplicant(store.Sandbox, in); err != nil {
		tb.Fatal(err)
	}
}

func wantRetryAfter(tb testing.TB, err error, want time.Duration) {
	tb.Helper()
	var e *store.Error
	if !errors.As(err, &e) || e.Code != store.ERATELIMIT || e.RetryAfter != want {
		tb.Fatalf("got %v, want ERATELIMIT retrying after %v", err, want)
	}
}

func TestSpawnLimitSlidingHour(t *testing.T) {
	clock := store.NewManualClock(time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC))
	path := filepath.Join(t.TempDir(), "rl.db")
	s, _ := mustOpen(t, path, store.Options{Now: clock.Now, Settings: limits(3, 5)})
	mustCompany(t, s, "co", 2)
	spawn := func(s *store.Store, cred, index string) error {
		_, err := s.SpawnKYC(store.Sandbox, cred, "co", index, store.LinkInput{})
		return err
	}

	// Three calls at 0, 10 and 20 minutes fill the hour; repeats count.
	for i := range 3 {
		if err := spawn(s, "k1", "0"); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		clock.Advance(10 * time.Minute)
	}
	// A failing call is not counted, and a refused one counts nothing: the
	// wait shrinks with the clock until the 0-minute call leaves at 60.
	if err := spawn(s, "k1", "9"); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("row 9: %v", err)
	}
	wantRetryAfter(t, spawn(s, "k1", "1"), 30*time.Minute)
	clock.Advance(29*time.Minute + 59500*time.Millisecond)
	wantRetryAfter(t, spawn(s, "k1", "1"), 500*time.Millisecond)
	// Another credential has its own window.
	if err := spawn(s, "k2", "1"); err != nil {
		t.Fatal(err)
	}

	// The window survives a restart.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, _ = mustOpen(t, path, store.Options{Now: clock.Now, Settings: limits(3, 5)})
	wantRetryAfter(t, spawn(s, "k1", "1"), 500*time.Millisecond)
	clock.Advance(500 * time.Millisecond)
	if err := spawn(s, "k1", "1"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
	wantRetryAfter(t, spawn(s, "k1", "1"), 10*time.Minute)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Lowered to 2, the wait is until only one counted call is left: the
	// 20-minute call leaves at 80.
	s, _ = mustOpen(t, path, store.Options{Now: clock.Now, Settings: limits(2, 5)})
	wantRetryAfter(t, spawn(s, "k1", "1"), 20*time.Minute)
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestRegenerateCapPerRow(t *testing.T) {
	clock := store.NewManualClock(time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC))
	s, _ := mustOpen(t, "", store.Options{Now: clock.Now, Settings: limits(100, 2)})
	mustCompany(t, s, "co", 2)
	regen := func(index string) error {
		_, err := s.RegenerateLink(store.Sandbox, "co", index, store.LinkInput{})
		return err
	}
	if err := regen("0"); store.ErrorCode(err) != store.ECONFLICT {
		t.Fatalf("before spawn: %v", err)
	}
	for _, i := range []string{"0", "1"} {
		if _, err := s.SpawnKYC(store.Sandbox, "k", "co", i, store.LinkInput{}); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := regen("0"); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Hour)
	}
	wantRetryAfter(t, regen("0"), 22*time.Hour)
	if err := regen("1"); err != nil {
		t.Fatalf("row 1 has its own cap: %v", err)
	}
	clock.Advance(22 * time.Hour)
	if err := regen("0"); err != nil {
		t.Fatal(err)
	}
}
