package store

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"unicode"

	"github.com/google/uuid"
)

// newID returns a fresh uuid v7 (RFC 9562), the form of every id the
// service mints from layout 2 on: time-ordered, so new keys append at the
// right edge of each B+tree instead of splitting pages in the middle. Ids
// minted before as v4 keep working: nothing reads an id as a time.
func newID() string { return uuid.Must(uuid.NewV7()).String() }

// IsUUID reports whether s is a canonical uuid.
func IsUUID(s string) bool {
	_, err := uuid.Parse(s)
	return err == nil && len(s) == 36
}

// CanonicalID returns id as the service keeps the UUIDs it mints, in lower
// case, when id is a UUID written with upper-case hex digits: RFC 9562 §4
// takes them in either case on input, and a partner's copy may come back
// upper case (a SQL Server uniqueidentifier column's). Anything else is id
// unchanged: a partner's own ids (externalUserId) keep their case.
func CanonicalID(id string) string {
	if len(id) != 36 || strings.IndexFunc(id, unicode.IsUpper) < 0 {
		return id
	}
	if l := strings.ToLower(id); IsUUID(l) {
		return l
	}
	return id
}

// randomToken returns n random bytes, URL-safe base64 without padding.
func randomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// randomHex returns n random bytes as lowercase hex.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// itob encodes v big-endian so keys sort in numeric order.
func itob(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

// btoi decodes an itob key.
func btoi(b []byte) uint64 { return binary.BigEndian.Uint64(b) }
