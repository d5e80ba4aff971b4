package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/complybox/complybox/store"
)

// JSON writes v as JSON with status. A value that does not encode is
// logged to log and answered 500.
func JSON(w http.ResponseWriter, log *slog.Logger, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		log.Error("encode response", "err", err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	RawJSON(w, status, b)
}

// RawJSON writes JSON bytes already rendered (by the store) with status, as
// JSON would. No cache may keep an answer (Cache-Control: no-store): API
// answers carry signing secrets, session URLs and personal data.
func RawJSON(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// ReadBody reads the whole request body within its limit. Returns ETOOLARGE
// past the limit.
func ReadBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		if e := TooLarge(err); e != nil {
			return nil, e
		}
		return nil, store.Errorf(store.EINVALID, "bad_request", "could not read the request body")
	}
	return b, nil
}

// TooLarge is ETOOLARGE when err is a read past the body limit (see
// http.MaxBytesReader), else nil.
func TooLarge(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return store.Errorf(store.ETOOLARGE, "body_too_large", "request body is over the %d byte limit", tooLarge.Limit)
	}
	return nil
}

// Decode reads a JSON object from the body into v. An empty body decodes as
// {}. Returns EINVALID for malformed JSON or a value of the wrong type,
// naming the field, and ETOOLARGE past the body limit.
func Decode(r *http.Request, v any) error {
	b, err := ReadBody(r)
	if err != nil {
		return err
	}
	return DecodeBytes(b, v)
}

// DecodeBytes is Decode for a body already read. A member that names a
// struct field of v only when case is ignored, and a field given twice in
// one object, are EINVALID naming it (checkKeys).
func DecodeBytes(b []byte, v any) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		b = []byte("{}")
	}
	if b[0] != '{' {
		return store.Errorf(store.EINVALID, "malformed_json", "request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	for whole := 0; ; whole++ {
		err := dec.Decode(v)
		if err == nil {
			break
		}
		// An integer written with a fraction or an exponent (3600.0, 3.6e3)
		// is that integer, as JSON Schema's "integer" says: it is written
		// as one and the body decoded again, a few times at most.
		nb, ok := wholeNumber(b, err)
		if !ok || whole == maxWholeNumbers {
			return jsonError(b, err)
		}
		b = nb
		dec = json.NewDecoder(bytes.NewReader(b))
	}
	if dec.More() {
		return store.Errorf(store.EINVALID, "malformed_json", "request body has data after the JSON object")
	}
	if end, bad := badText(b); bad {
		const why = "JSON text is UTF-8 (RFC 8259), and this would be stored changed"
		if path := pathAt(b, end); path != "" {
			return store.Invalid(path, "%s holds bytes that are not UTF-8, or half of a \\u surrogate pair: %s", path, why)
		}
		return store.Errorf(store.EINVALID, "malformed_json", "request body holds bytes that are not UTF-8, or half of a \\u surrogate pair: %s", why)
	}
	return checkKeys(b, reflect.TypeOf(v))
}

// badText returns the offset just past the first string of JSON text b
// that holds bytes that are not UTF-8, or a \u escape of half a surrogate
// pair, and true; false when every string is text. encoding/json decodes
// either as U+FFFD without a word. The common body (valid UTF-8 without
// \u escapes) costs one pass of utf8.Valid.
func badText(b []byte) (int, bool) {
	if utf8.Valid(b) && !bytes.Contains(b, []byte(`\u`)) {
		return 0, false
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		bad := false
		j := i + 1
		for j < len(b) && b[j] != '"' {
			switch c := b[j]; {
			case c == '\\' && j+1 < len(b) && b[j+1] == 'u':
				r := hex4(b[j+2:])
				if utf16.IsSurrogate(r) {
					// A high half followed by an escaped low half is a
					// pair; any other surrogate escape is half of one.
					if r >= 0xdc00 || j+11 >= len(b) || b[j+6] != '\\' || b[j+7] != 'u' || hex4(b[j+8:]) < 0xdc00 || hex4(b[j+8:]) > 0xdfff {
						bad = true
					} else {
						j += 6
					}
				}
				j += 6
			case c == '\\':
				j += 2
			case c < utf8.RuneSelf:
				j++
			default:
				r, n := utf8.DecodeRune(b[j:])
				bad = bad || r == utf8.RuneError && n == 1
				j += n
			}
		}
		if bad {
			return j + 1, true
		}
		i = j
	}
	return 0, false
}

// hex4 is the value of the four hex digits that start b, or -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	v, err := strconv.ParseUint(string(b[:4]), 16, 16)
	if err != nil {
		return -1
	}
	return rune(v)
}

// jsonError turns a encoding/json error in decoding body b into EINVALID
// naming the field.
func jsonError(b []byte, err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		if path := pathAt(b, int(typeErr.Offset)); path != "" {
			// With indexes and map keys: "steps[1].optional", where
			// encoding/json says "steps.optional".
			typeErr.Field = path
		}
		return typeError(typeErr)
	}
	var e *store.Error
	if errors.As(err, &e) {
		return e
	}
	return store.Errorf(store.EINVALID, "malformed_json", "malformed JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// typeError is EINVALID naming the field of a value of the wrong type: a
// fraction or out-of-range number for an integer, a string that is not a
// timestamp, or a value of another JSON type.
func typeError(e *json.UnmarshalTypeError) error {
	field := e.Field
	if field == "" {
		field = "body"
	}
	got := e.Value
	t := target(e)
	switch {
	case t == reflect.TypeFor[store.Time]():
		if v, ok := strings.CutPrefix(got, "string "); ok {
			got = strconv.Quote(v)
		}
		return store.Invalid(field, "%s must be an ISO 8601 timestamp such as \"2026-11-21T05:17:44.123Z\", not %s", field, got)
	case strings.HasPrefix(got, "number ") && isInteger(t.Kind()):
		n := strings.TrimPrefix(got, "number ")
		if _, whole := integral(n); !whole {
			return store.Invalid(field, "%s must be an integer, not %s", field, n)
		}
		return store.Invalid(field, "%s is out of range for an integer: %s", field, n)
	}
	return store.Invalid(field, "%s must be of type %s, not %s", field, jsonType(t.Kind()), got)
}

// target is the type e's value was to be decoded into, pointers followed.
func target(e *json.UnmarshalTypeError) reflect.Type {
	t := e.Type
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// maxWholeNumbers bounds how many integers written with a fraction or an
// exponent one body may hold: each costs decoding the body again.
const maxWholeNumbers = 16

// wholeNumber returns body b with the number that err (from decoding b)
// refused for an integer field written as an integer, and true, when its
// value is one ("3600.0", "3.6e3", "-1E2"); else false.
func wholeNumber(b []byte, err error) ([]byte, bool) {
	var e *json.UnmarshalTypeError
	if !errors.As(err, &e) {
		return nil, false
	}
	t := target(e)
	n, ok := strings.CutPrefix(e.Value, "number ")
	if !ok || !isInteger(t.Kind()) || !strings.ContainsAny(n, ".eE") {
		return nil, false
	}
	end := int(e.Offset) // just past the number
	if end > len(b) || end < len(n) || string(b[end-len(n):end]) != n {
		return nil, false
	}
	w, ok := integral(n)
	if !ok || !fits64(w) {
		return nil, false // typeError says which
	}
	return slices.Concat(b[:end-len(n)], []byte(w), b[end:]), true
}

// integral returns JSON number n written as an integer when its value is
// one, and true; false for a fraction, and for an exponent beyond ±400 (no
// integer field holds such a number, and its digits would be many).
func integral(n string) (string, bool) {
	neg := strings.HasPrefix(n, "-")
	n = strings.TrimPrefix(n, "-")
	exp := 0
	if i := strings.IndexAny(n, "eE"); i >= 0 {
		e, err := strconv.Atoi(n[i+1:])
		if err != nil || e < -400 || e > 400 {
			return "", false
		}
		n, exp = n[:i], e
	}
	ip, fp, _ := strings.Cut(n, ".")
	digits := ip + fp
	point := len(ip) + exp // how many of digits stand before the point
	var whole, frac string
	switch {
	case point <= 0:
		frac = digits
	case point >= len(digits):
		whole = digits + strings.Repeat("0", point-len(digits))
	default:
		whole, frac = digits[:point], digits[point:]
	}
	if strings.Trim(frac, "0") != "" {
		return "", false
	}
	whole = strings.TrimLeft(whole, "0")
	switch {
	case whole == "":
		return "0", true
	case neg:
		return "-" + whole, true
	}
	return whole, true
}

// fits64 reports whether decimal integer w fits an int64 or a uint64.
func fits64(w string) bool {
	_, err := strconv.ParseInt(w, 10, 64)
	if err != nil {
		_, err = strconv.ParseUint(w, 10, 64)
	}
	return err == nil
}

func isInteger(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// jsonType names the JSON type a Go kind decodes from.
func jsonType(k reflect.Kind) string {
	switch {
	case k == reflect.String:
		return "string"
	case k == reflect.Bool:
		return "boolean"
	case k == reflect.Slice || k == reflect.Array:
		return "array"
	case k == reflect.Map || k == reflect.Struct || k == reflect.Interface:
		return "object"
	case isInteger(k):
		return "integer"
	}
	return "number"
}

// Page reads ?limit= (1..200, default 50) and ?cursor=. Returns EINVALID
// naming the parameter, also one that is not valid URL encoding (which
// r.URL.Query drops: cursor=%%% would read the first page) and any
// parameter of the query given twice (a list's filters too).
func Page(r *http.Request) (store.Page, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return store.Page{}, badQuery(r.URL.RawQuery)
	}
	// A list reads one value of each parameter: a second one (limit=1&
	// limit=500, status=a&status=b) would be dropped silently, so it is
	// refused, as a JSON member given twice is.
	for name, values := range q {
		if len(values) > 1 {
			return store.Page{}, store.Invalid(name, "%s is given twice", name)
		}
	}
	p := store.Page{Limit: store.DefaultLimit, Cursor: q.Get("cursor")}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > store.MaxLimit {
			return p, store.Invalid("limit", "limit must be an integer from 1 to %d", store.MaxLimit)
		}
		p.Limit = n
	}
	return p, nil
}

// badQuery returns EINVALID naming the first parameter of raw that is not
// valid URL encoding.
func badQuery(raw string) error {
	for pair := range strings.SplitSeq(raw, "&") {
		key, value, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(key)
		if err != nil {
			name = key
		}
		if _, verr := url.QueryUnescape(value); err != nil || verr != nil {
			return store.Invalid(name, "query parameter %q is not valid URL encoding", name)
		}
	}
	return store.Invalid("query", "the query string is not valid URL encoding")
}
