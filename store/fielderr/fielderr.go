// Package fielderr is the one error of store's leaf packages (decimal,
// imagecheck, urlpolicy): an input field that fails a check. They cannot
// import store, which imports them; store turns an *Error into its API
// error, EINVALID naming the same field with the same message (SPEC §2).
package fielderr

import "fmt"

// Error reports an input field that fails a check. Message is
// human-readable and names the field.
type Error struct {
	Field   string
	Message string
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// New returns an *Error naming field.
func New(field, format string, args ...any) *Error {
	return &Error{Field: field, Message: fmt.Sprintf(format, args...)}
}
