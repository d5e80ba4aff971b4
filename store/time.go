package store

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"time"
)

// TimeLayout is the one wire format of timestamps: UTC, milliseconds.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// Time is a timestamp that encodes as UTC ISO 8601 with milliseconds, and as
// null when zero.
type Time struct{ time.Time }

// At returns t as a Time truncated to milliseconds in UTC.
func At(t time.Time) Time {
	if t.IsZero() {
		return Time{}
	}
	return Time{t.UTC().Truncate(time.Millisecond)}
}

// String formats t in TimeLayout, or "" when zero.
func (t Time) String() string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(TimeLayout)
}

// MarshalJSON implements json.Marshaler.
func (t Time) MarshalJSON() ([]byte, error) {
	return appendJSONTime(make([]byte, 0, len(TimeLayout)+2), t), nil
}

// UnmarshalJSON implements json.Unmarshaler; it accepts null and RFC 3339.
// Anything else is a *json.UnmarshalTypeError of type Time, so the decoder
// names the field and the server can say what a timestamp looks like.
func (t *Time) UnmarshalJSON(b []byte) error {
	var s *string
	if err := json.Unmarshal(b, &s); err != nil {
		return &json.UnmarshalTypeError{Value: jsonKind(b), Type: reflect.TypeFor[Time]()}
	}
	if s == nil || *s == "" {
		*t = Time{}
		return nil
	}
	v, ok := ParseTime(*s)
	if !ok {
		return &json.UnmarshalTypeError{Value: "string " + *s, Type: reflect.TypeFor[Time]()}
	}
	*t = At(v)
	return nil
}

// jsonKind names the kind of a JSON value for an error message.
func jsonKind(b []byte) string {
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '"':
		return "string"
	}
	return "number"
}

// ParseTime parses an ISO 8601 timestamp, the one rule for every time the
// API takes (since, until, the sandbox clock's to): RFC 3339 with or
// without fraction, also without seconds; without an offset it is UTC; a
// plain date is its midnight UTC. The "T" and the "Z" may be written in
// lower case, and the "T" as a space, as RFC 3339 §5.6 allows.
func ParseTime(s string) (time.Time, bool) {
	if len(s) > 10 && (s[10] == 't' || s[10] == ' ') {
		s = s[:10] + "T" + s[11:]
	}
	if strings.HasSuffix(s, "z") {
		s = s[:len(s)-1] + "Z"
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.000Z07:00", "2006-01-02T15:04Z07:00",
		"2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02"} {
		if v, err := time.Parse(layout, s); err == nil {
			return v.UTC(), true
		}
	}
	return time.Time{}, false
}

// keyMilli is t in Unix milliseconds for a big-endian key or a bound
// compared with one, 0 for a time before 1970: the uint64 of a negative
// would sort after every real time (a cutoff 100 years back once removed
// everything).
func keyMilli(t time.Time) uint64 { return uint64(max(t.UnixMilli(), 0)) }

// keyNano is t in Unix nanoseconds for a big-endian key or a bound
// compared with one, held within what an int64 of nanoseconds holds: 0
// before 1970, April 2262 after it (UnixNano is undefined there).
func keyNano(t time.Time) uint64 {
	switch {
	case t.Before(time.Unix(0, 0)):
		return 0
	case t.After(time.Unix(0, math.MaxInt64)):
		return math.MaxInt64
	}
	return uint64(t.UnixNano())
}
