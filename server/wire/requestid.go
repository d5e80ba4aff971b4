package wire

import (
	"context"
	"net/http"
	"strings"

	"github.com/google/uuid"
)

type ctxKey int

const keyRequestID ctxKey = iota

// WithRequestID gives r its request id: the caller's X-Request-Id when it
// is a valid one, else a new uuid. The id is set as the X-Request-Id of the
// answer and read back with RequestID.
func WithRequestID(w http.ResponseWriter, r *http.Request) (*http.Request, string) {
	id := r.Header.Get("X-Request-Id")
	if !validRequestID(id) {
		id = uuid.Must(uuid.NewV7()).String()
	}
	w.Header().Set("X-Request-Id", id)
	return r.WithContext(context.WithValue(r.Context(), keyRequestID, id)), id
}

// RequestID is the request id WithRequestID gave r; "" when it gave none.
func RequestID(r *http.Request) string {
	id, _ := r.Context().Value(keyRequestID).(string)
	return id
}

// validRequestID reports whether a caller's X-Request-Id can be adopted:
// 1 to 128 characters of A-Z a-z 0-9 and "._:-".
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range []byte(id) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._:-", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}
