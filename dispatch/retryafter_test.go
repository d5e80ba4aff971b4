package dispatch

import (
	"net/http"
	"testing"
	"time"
)

// TestParseRetryAfterSaturates: seconds and HTTP dates are read; huge values
// saturate at the 1 h cap instead of overflowing (SPEC §5).
func TestParseRetryAfterSaturates(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"-5", 0},
		{"abc", 0},
		{"30", 30 * time.Second},
		{" 30 ", 30 * time.Second},
		{"3600", time.Hour},
		{"3601", time.Hour},
		{"9223372037", time.Hour},              // × 1e9 overflows int64
		{"18446744074", time.Hour},             // overflows uint64 seconds × 1e9
		{"99999999999999999999999", time.Hour}, // overflows int64 itself
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{now.AddDate(100, 0, 0).Format(http.TimeFormat), time.Hour},
	} {
		if got := parseRetryAfter(c.in, now); got != c.want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// FuzzParseRetryAfter: whatever a receiver sends, the delay is within
// [0, 1h]. The seed corpus runs in every go test.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"", "0", "1", "120", "-1", "9223372037", "18446744074", "1e9", "0x10",
		"+5", "99999999999999999999999", "Wed, 21 Oct 2015 07:28:00 GMT", "Sun, 06 Nov 1994 08:49:37 GMT",
		"Fri, 31 Dec 9999 23:59:59 GMT", "Mon, 01 Jan 0001 00:00:00 GMT"} {
		f.Add(s)
	}
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		if d := parseRetryAfter(v, now); d < 0 || d > time.Hour {
			t.Fatalf("parseRetryAfter(%q) = %s, outside [0, 1h]", v, d)
		}
	})
}
