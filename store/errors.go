package store

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/complybox/complybox/store/fielderr"
	"github.com/complybox/complybox/store/imagecheck"
)

// Error codes. Each names a class of failure; the server maps a class to an
// HTTP status in one table. Reason carries the finer machine-readable code
// that the API returns in the error body ("applicant_not_found").
const (
	EINVALID      = "invalid"      // bad input: 400
	EUNAUTHORIZED = "unauthorized" // missing or wrong credentials: 401
	EFORBIDDEN    = "forbidden"    // wrong role, environment or sandbox-only: 403
	ENOTFOUND     = "not_found"    // unknown record: 404
	ECONFLICT     = "conflict"     // state conflict: 409
	EGONE         = "gone"         // expired token or link: 410
	ETOOLARGE     = "too_large"    // body over the limit: 413
	ERATELIMIT    = "rate_limited" // too many calls: 429
	EINTERNAL     = "internal"     // anything else: 500, logged
	EUNAVAILABLE  = "unavailable"  // shutting down: 503
	EMETHOD       = "method"       // method not allowed: 405
	ELOCKED       = "field_locked" // a locked field changed through the hosted UI: 409
	EIDEMPOTENCY  = "idempotency"  // idempotency key reused with another body: 409
	ECANCELED     = "canceled"     // the client went away while the request waited: 499, nobody reads it
)

// Error is the one error type of complybox. Every failure a caller can act on
// is an *Error; anything else is EINTERNAL.
type Error struct {
	Code       string        // class, one of the E* constants
	Reason     string        // machine code for the API body, e.g. "applicant_not_found"
	Message    string        // human-readable
	Field      string        // the offending input field, for validation errors
	RetryAfter time.Duration // for ERATELIMIT
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s (field %s)", e.Reason, e.Message, e.Field)
	}
	return fmt.Sprintf("%s: %s", e.Reason, e.Message)
}

// Errorf returns an *Error of class code with the given reason and message.
func Errorf(code, reason, format string, args ...any) *Error {
	return &Error{Code: code, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns an EINVALID error naming field.
func Invalid(field, format string, args ...any) *Error {
	return &Error{Code: EINVALID, Reason: "validation_failed", Field: field, Message: fmt.Sprintf(format, args...)}
}

// Within returns err naming its field inside prefix ("ubos[1].",
// "questionnaire."): the field of a value decoded or checked on its own is
// named by its path in the request, in the field and at the start of the
// message when the message begins with it. Errors without a field, and
// errors of other types, are returned as they are.
func Within(prefix string, err error) error {
	var e *Error
	if prefix == "" || !errors.As(err, &e) || e.Field == "" {
		return err
	}
	in := *e
	in.Field = prefix + e.Field
	if rest, ok := strings.CutPrefix(e.Message, e.Field); ok {
		in.Message = in.Field + rest
	}
	return &in
}

// fieldError turns the field error of a leaf package (an image, a decimal, a
// webhook URL) into EINVALID naming the same field with the same message,
// and a busy image decoder into EUNAVAILABLE with a Retry-After; any other
// error, and nil, is returned as is.
func fieldError(err error) error {
	var fe *fielderr.Error
	switch {
	case errors.Is(err, imagecheck.ErrBusy):
		return &Error{Code: EUNAVAILABLE, Reason: "decoder_busy", Message: "too many images are being checked right now; retry shortly", RetryAfter: time.Second}
	case errors.As(err, &fe):
		return Invalid(fe.Field, "%s", fe.Message)
	}
	return err
}

// NotFound returns an ENOTFOUND error with reason "<what>_not_found".
func NotFound(what, id string) *Error {
	return &Error{Code: ENOTFOUND, Reason: what + "_not_found", Message: fmt.Sprintf("%s %q not found", what, id)}
}

// Conflict returns an ECONFLICT error with the given reason.
func Conflict(reason, format string, args ...any) *Error {
	return &Error{Code: ECONFLICT, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the class of err: its code if it is an *Error, EINTERNAL
// otherwise, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// AsError returns err as an *Error, wrapping foreign errors as EINTERNAL with
// a generic message.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: EINTERNAL, Reason: "internal_error", Message: "internal error"}
}
