package store

import (
	"encoding/binary"
	"time"
)

// A sliding window is stored in the environment's ratelimits bucket under
// its limit key as the times (Unix nanoseconds, big-endian, oldest first) of
// the calls it still counts. The window is read and written inside the
// business operation's own transaction: a call that fails leaves no trace,
// and a call that succeeds is counted in the same commit, which survives a
// restart.

// Limit keys.
func spawnLimitKey(credKey string) string { return "spawn-kyc|" + credKey }

func regenerateLimitKey(parentID string, row int) string {
	return "regenerate-link|" + parentID + "|" + itoa(row)
}

// take counts one call against the sliding window key: at most limit calls
// in any span of window. Over the limit it returns ERATELIMIT with
// RetryAfter the time until the oldest counted call leaves the window, and
// counts nothing.
func (t *txn) take(env Env, key, what string, limit int, window time.Duration) error {
	b := t.env(env, "ratelimits")
	calls := decodeWindow(b.Get([]byte(key)))
	var last time.Time // the window's newest call, as stored
	if len(calls) > 0 {
		last = calls[len(calls)-1]
	}
	from := t.now.Add(-window)
	kept := calls[:0]
	for _, c := range calls {
		if c.After(from) {
			kept = append(kept, c)
		}
	}
	if len(kept) >= limit {
		wait := kept[len(kept)-limit].Add(window).Sub(t.now)
		return &Error{Code: ERATELIMIT, Reason: "rate_limited", RetryAfter: wait,
			Message: "too many " + what + " calls: at most " + itoa(limit) + " per " + window.String() + "; retry later"}
	}
	if err := b.Put([]byte(key), encodeWindow(append(kept, t.now))); err != nil {
		return err
	}
	// Retention removes the window once this call has left it.
	if !last.IsZero() {
		if err := t.unexpire(env, expiryRateLimit, last.Add(window), windowExpiry(key, last)); err != nil {
			return err
		}
	}
	return t.expire(env, expiryRateLimit, t.now.Add(window), windowExpiry(key, t.now))
}

func decodeWindow(b []byte) []time.Time {
	out := make([]time.Time, 0, len(b)/8+1)
	for ; len(b) >= 8; b = b[8:] {
		out = append(out, time.Unix(0, int64(binary.BigEndian.Uint64(b))).UTC())
	}
	return out
}

func encodeWindow(calls []time.Time) []byte {
	out := make([]byte, 0, 8*len(calls))
	for _, c := range calls {
		out = binary.BigEndian.AppendUint64(out, uint64(c.UnixNano()))
	}
	return out
}
