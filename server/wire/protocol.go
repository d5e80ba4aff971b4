package wire

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// ProtocolErrors wraps ln so that the answers Go's HTTP server writes by
// itself, before any handler runs, to a request it cannot read come out
// like every other answer (SPEC §2: errors are JSON, every response has
// X-Request-Id) instead of as plain text: a malformed request line or
// header, or an unreadable Content-Length (400 bad_request), a header
// block over the server's limit (431 header_too_large), a
// Transfer-Encoding it does not implement (400
// unsupported_transfer_encoding, where net/http says 501: bad input is
// never a 5xx) and an Expect other than 100-continue (417
// expectation_failed). Every other write passes through unchanged.
// answered, if not nil, is told the status and request id of each such
// answer before it is written, for the access log and the metrics: no
// handler sees the request.
func ProtocolErrors(ln net.Listener, answered func(status int, requestID string)) net.Listener {
	return protocolListener{ln, answered}
}

type protocolListener struct {
	net.Listener
	answered func(status int, requestID string)
}

// Accept implements net.Listener.
func (l protocolListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return protocolConn{c, l.answered}, nil
}

type protocolConn struct {
	net.Conn
	answered func(status int, requestID string)
}

// Write implements net.Conn, answering net/http's own error answers anew.
func (c protocolConn) Write(b []byte) (int, error) {
	if e, ok := ownAnswer(b); ok {
		answer, id := e.answer()
		if c.answered != nil {
			c.answered(e.Status, id) // before it leaves: logged by the time it is read
		}
		if _, err := c.Conn.Write(answer); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return c.Conn.Write(b)
}

// CloseWrite passes a half-close through (net/http half-closes after its
// 431 answer), when the connection has one.
func (c protocolConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// maxOwnAnswer bounds the length of an answer net/http writes by itself.
const maxOwnAnswer = 512

// ownHeaders follows the status line of each error answer net/http writes
// by itself, in one write, before the plain-text body.
const ownHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// protocolError is how complybox answers a request net/http could not
// read: the status, and the code and message of the error body.
type protocolError struct {
	Status          int
	Reason, Message string
}

// ownAnswer recognises an answer net/http wrote by itself in b and says
// how complybox answers instead. complybox's handlers never write these:
// their answers carry an X-Request-Id and a Date header between the status
// line and the body, and no handler answers 417. Each is short and whole
// in one write (a status line, fixed headers, a line of text or none), so
// no chunk of a longer answer's body is taken for one.
func ownAnswer(b []byte) (protocolError, bool) {
	rest, ok := bytes.CutPrefix(b, []byte("HTTP/1.1 "))
	if !ok || len(rest) < 4 || rest[3] != ' ' || len(b) > maxOwnAnswer {
		return protocolError{}, false
	}
	status := 0
	for _, c := range rest[:3] {
		if c < '0' || c > '9' {
			return protocolError{}, false
		}
		status = status*10 + int(c-'0')
	}
	if status < 400 {
		return protocolError{}, false // every answer of a handler that went well
	}
	if bytes.HasPrefix(rest, []byte("417 Expectation Failed\r\n")) {
		// net/http's answer to an Expect it does not know: headers only.
		if !bytes.HasSuffix(b, []byte("\r\n\r\n")) || bytes.Contains(b, []byte("X-Request-Id")) {
			return protocolError{}, false
		}
		return protocolError{Status: status, Reason: "expectation_failed",
			Message: "the Expect header can only ask for 100-continue"}, true
	}
	line, _, found := bytes.Cut(rest, []byte("\r\n"))
	if !found || !bytes.HasPrefix(rest[len(line):], []byte(ownHeaders)) ||
		bytes.ContainsAny(rest[len(line)+len(ownHeaders):], "\r\n{") {
		return protocolError{}, false
	}
	switch status {
	case http.StatusRequestHeaderFieldsTooLarge:
		return protocolError{Status: status, Reason: "header_too_large",
			Message: "the request's header is over the server's limit"}, true
	case http.StatusNotImplemented:
		return protocolError{Status: http.StatusBadRequest, Reason: "unsupported_transfer_encoding",
			Message: "the request's Transfer-Encoding is not one this server implements (chunked)"}, true
	case http.StatusHTTPVersionNotSupported:
		// Bad input, never a 5xx: a request line naming another version.
		return protocolError{Status: http.StatusBadRequest, Reason: "bad_request",
			Message: "the request could not be read: its request line names an HTTP version other than 1.x"}, true
	case http.StatusBadRequest:
		message := "the request could not be read: a malformed request line or header"
		if _, detail, ok := bytes.Cut(line, []byte(": ")); ok {
			message = "the request could not be read: " + string(detail)
		}
		return protocolError{Status: status, Reason: "bad_request", Message: message}, true
	}
	return protocolError{}, false
}

// answer is the whole HTTP answer, status line to body, that replaces one
// of net/http's own: Error's body with a request id of its own (the
// request was never read, so no caller's id is adopted), the connection
// closed after it as net/http does; and that request id.
func (e protocolError) answer() ([]byte, string) {
	id := uuid.Must(uuid.NewV7()).String()
	body, _ := json.Marshal(errorBody{Error: errorDetail{Code: e.Reason, Message: e.Message, RequestID: id}})
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 " + strconv.Itoa(e.Status) + " " + http.StatusText(e.Status))
	b.WriteString("\r\nContent-Type: application/json\r\nCache-Control: no-store\r\nX-Request-Id: " + id)
	b.WriteString("\r\nDate: " + time.Now().UTC().Format(http.TimeFormat))
	b.WriteString("\r\nContent-Length: " + strconv.Itoa(len(body)+1))
	b.WriteString("\r\nConnection: close\r\n\r\n")
	b.Write(body)
	b.WriteByte('\n')
	return b.Bytes(), id
}
