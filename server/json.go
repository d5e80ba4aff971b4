package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"

	"github.com/complybox/complybox/server/wire"
)

// bodyHash returns the hex SHA-256 of a body, for idempotency keys. A JSON
// body is hashed in a canonical form (compact, object keys sorted, numbers
// as written), so whitespace and key order do not make another body.
func bodyHash(b []byte) string {
	b = bytes.TrimSpace(b)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) == nil && !dec.More() {
		if c, err := json.Marshal(v); err == nil {
			b = c
		}
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// noBody reads the body of a call that takes none: empty, or any JSON
// object, whose members it ignores (clients that always send {}).
// Malformed JSON or another JSON value is 400 malformed_json before
// anything changes; an over-limit body is 413.
func noBody(r *request) error {
	return wire.Decode(r.Request, &struct{}{})
}

// list is the body of every list endpoint.
type list[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"nextCursor"`
}

func newList[T any](items []T, next *string) list[T] {
	if items == nil {
		items = []T{}
	}
	return list[T]{Items: items, NextCursor: next}
}

// encode writes v as JSON with status.
func (s *Server) encode(w http.ResponseWriter, status int, v any) {
	wire.JSON(w, s.log, status, v)
}

// writeError is the one error writer of the API (wire.Error): handlers
// return errors, they never choose a status.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	wire.Error(w, r, s.log, err)
}
