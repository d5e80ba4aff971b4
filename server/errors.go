package server

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/complybox/complybox/store"
)

// statusOf maps a store error code to its HTTP status: the one table.
var statusOf = map[string]int{
	store.EINVALID:      http.StatusBadRequest,
	store.EUNAUTHORIZED: http.StatusUnauthorized,
	store.EFORBIDDEN:    http.StatusForbidden,
	store.ENOTFOUND:     http.StatusNotFound,
	store.EMETHOD:       http.StatusMethodNotAllowed,
	store.ECONFLICT:     http.StatusConflict,
	store.ELOCKED:       http.StatusConflict,
	store.EIDEMPOTENCY:  http.StatusConflict,
	store.EGONE:         http.StatusGone,
	store.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	store.ERATELIMIT:    http.StatusTooManyRequests,
	store.EUNAVAILABLE:  http.StatusServiceUnavailable,
	store.EINTERNAL:     http.StatusInternalServerError,
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Field     string `json:"field,omitempty"`
	RequestID string `json:"requestId"`
}

// writeError is the one error writer: it maps err to a status and writes the
// error body. Only internal errors are logged.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := store.AsError(err)
	status, ok := statusOf[e.Code]
	if !ok {
		status = http.StatusInternalServerError
	}
	if e.Code == store.EINTERNAL {
		s.log.Error("internal error", "method", r.Method, "path", redactPath(r.URL.Path), "requestId", requestID(r), "err", err)
	}
	if e.Code == store.ERATELIMIT {
		setRetryAfter(w, e.RetryAfter)
	}
	reason := e.Reason
	if reason == "" {
		reason = e.Code
	}
	s.encode(w, status, errorBody{Error: errorDetail{Code: reason, Message: e.Message, Field: e.Field, RequestID: requestID(r)}})
}

// setRetryAfter says when a rate-limited caller may come back: whole
// seconds, rounded up, at least 1. Every 429, API or console, uses it.
func setRetryAfter(w http.ResponseWriter, d time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(d.Seconds())))))
}
