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
	"strings"
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
	e := store.AsError(err)
	if e.Code == store.EINTERNAL {
		log.Error("internal error", "method", r.Method, "path", RedactPath(r.URL.Path), "requestId", RequestID(r), "err", err)
	}
	if e.Code == store.ERATELIMIT || e.Code == store.EUNAVAILABLE {
		SetRetryAfter(w, e.RetryAfter)
	}
	reason := e.Reason
	if reason == "" {
		reason = e.Code
	}
	JSON(w, log, Status(err), errorBody{Error: errorDetail{Code: reason, Message: e.Message, Field: e.Field, RequestID: RequestID(r)}})
}

// SetRetryAfter says when a rate-limited (429) or turned-away (503) caller
// may come back: whole seconds, rounded up, at least 1. Every 429 and 503,
// API or console, uses it.
func SetRetryAfter(w http.ResponseWriter, d time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(d.Seconds())))))
}

// RedactPath hides the bearer credentials in hosted-UI paths, for logs: the
// session token of /sdk/{token} and the short code of /l/{code} (SPEC §3.4:
// neither ever appears in a log line). It goes by segments, not by a
// prefix, so that a path that only looks like a route — //sdk/T, /sdk//T,
// /L/S — is redacted too: after a first segment named sdk or l, in any
// case, the next non-empty segment is the credential. After such a segment
// further in (a base URL's prefix, /prefix/sdk/T), so is a next segment as
// long as a credential (16 characters and more: tokens and codes have 22
// and more), which keeps the page API's names (/api/v1/sdk/state).
func RedactPath(p string) string {
	if !hasCredentialSegment(p) {
		return p // nearly every path: no allocation
	}
	segs := strings.Split(p, "/")
	first := true // no non-empty segment before i
	for i := 0; i < len(segs); i++ {
		if segs[i] == "" {
			continue
		}
		atStart := first
		first = false
		name := "{token}"
		switch {
		case strings.EqualFold(segs[i], "sdk"):
		case strings.EqualFold(segs[i], "l"):
			name = "{code}"
		default:
			continue
		}
		j := i + 1
		for j < len(segs)-1 && segs[j] == "" {
			j++
		}
		if j < len(segs) && (atStart || len(segs[j]) >= minCredential) {
			segs[j] = name
		}
		// A dot or blank segment between the name and the credential
		// (/sdk/./T, /l/%2e/C, /sdk/T/../T) must not carry it into the
		// log: every later segment as long as a credential goes too.
		for k := j + 1; k < len(segs); k++ {
			if len(segs[k]) >= minCredential {
				segs[k] = name
			}
		}
		break
	}
	return strings.Join(segs, "/")
}

// minCredential is the length from which a path segment after sdk or l,
// not at the path's start, is taken for a credential.
const minCredential = 16

// hasCredentialSegment reports whether p has a segment named sdk or l, in
// any case.
func hasCredentialSegment(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		seg := p[i+1:]
		if k := strings.IndexByte(seg, '/'); k >= 0 {
			seg = seg[:k]
		}
		if strings.EqualFold(seg, "sdk") || strings.EqualFold(seg, "l") {
			return true
		}
	}
	return false
}
