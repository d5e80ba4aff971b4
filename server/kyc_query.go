package server

import (
	"strings"
	"time"

	"github.com/complybox/complybox/store"
)

// parseSince reads the review-history since parameter: an ISO 8601
// timestamp with an offset (a "+" left unencoded in the query arrives as a
// space and is taken back), a timestamp without an offset (UTC), or a
// calendar date (its midnight UTC).
func parseSince(v string) (time.Time, bool) {
	v = strings.TrimSpace(v)
	if i := strings.LastIndexByte(v, ' '); i > 0 && strings.Contains(v[:i], "T") {
		v = v[:i] + "+" + v[i+1:]
	}
	if t, ok := store.ParseTime(v); ok {
		return t, true
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
