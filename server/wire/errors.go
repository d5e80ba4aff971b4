// Package wire holds what every complybox endpoint shares on the wire (SPEC
// §2), for the partner API (package server), the hosted UI and the console:
// the one table from store error codes to HTTP statuses with its one
// fallback, the JSON error writer, Retry-After, request ids, and JSON bodies
// in and out. It imports store and nothing else of complybox.
package wire

import (
	"log/slog"
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
	store.ECANCELED:     StatusClientClosed,
}

// StatusClientClosed is the status logged for a request whose client went
// away while it waited (nginx's 499 "client closed request"): no client
// reads it, and it is not a server error.
const StatusClientClosed = 499

// Status is the HTTP status of err: that of its store error code, 500 for
// any other error. JSON and HTML error pages alike answer with it.
func Status(err error) int {
	if status, ok := statusOf[store.AsError(err).Code]; ok {
		return status
	}
	return http.StatusInternalServerError
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

// Error is the one JSON error writer: it answers err with its Status and
// the body {"error":{"code","message","field","requestId"}}. Only internal
// errors are logged, to log.
func Error(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	status, e := Prepare(w, r, log, err)
	reason := e.Reason
	if reason == "" {
		reason = e.Code
	}
	JSON(w, log, status, errorBody{Error: errorDetail{Code: reason, Message: e.Message, Field: e.Field, RequestID: RequestID(r)}})
}

// Prepare does what every error answer does first, JSON or an HTML page
// (the console's, the hosted UI's): it logs an internal error to log, sets
// Retry-After on a 429 or 503, and returns the answer's status and err as
// a store error.
func Prepare(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) (int, *store.Error) {
	e := store.AsError(err)
	if e.Code == store.EINTERNAL {
		log.Error("internal error", "method", r.Method, "path", RedactPath(r.URL.Path), "requestId", RequestID(r), "err", err)
	}
	if e.Code == store.ERATELIMIT || e.Code == store.EUNAVAILABLE {
		SetRetryAfter(w, e.RetryAfter)
	}
	return Status(err), e
}

// SetRetryAfter says when a rate-limited (429) or turned-away (503) caller
// may come back: whole seconds, rounded up, at least 1. Every 429 and 503,
// API or console, uses it.
func SetRetryAfter(w http.ResponseWriter, d time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(d.Seconds())))))
}
