package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"time"
)

// Deliveries are the records the dispatcher reads and rewrites on every
// attempt, so they are stored in a compact binary form rather than JSON:
// decoding JSON through reflection was a tenth of the CPU of a withdrawal
// with the webhook live. Records written before (JSON, whose first byte is
// '{') still decode; each is rewritten in this form at its next change.
//
// Layout (version deliveryCodecV1): the version byte, then every field of
// diskDelivery in declaration order. Strings and byte slices are a uvarint
// length and the bytes; integers are varints; a Time is a flag byte (0 for
// the zero time, 1 for one that follows) and its Unix milliseconds; a
// pointer is a flag byte (0 for nil) and its value; a bool is one byte.
const deliveryCodecV1 = 1

// errDeliveryRecord is the error of a stored delivery that does not decode.
func errDeliveryRecord() error { return errors.New("store: corrupt delivery record") }

// marshalDelivery encodes d in the binary form.
func marshalDelivery(d *diskDelivery) []byte {
	size := 64 + len(d.ID) + len(d.EventID) + len(d.EventType) + len(d.EntityType) + len(d.EntityID) +
		len(d.Destination) + len(d.Status) + len(d.ScheduleKey)
	if d.LastError != nil {
		size += len(*d.LastError)
	}
	for _, a := range d.Attempts {
		size += 48 + len(a.ID) + len(a.RequestURL)
		if a.ResponseBody != nil {
			size += len(*a.ResponseBody)
		}
		if a.ErrorMessage != nil {
			size += len(*a.ErrorMessage)
		}
	}
	w := codecWriter{b: make([]byte, 0, size)}
	w.b = append(w.b, deliveryCodecV1)
	for _, s := range [...]string{d.ID, d.EventID, d.EventType, d.EntityType, d.EntityID, d.Destination, d.Status} {
		w.str(s)
	}
	w.int(int64(d.AttemptCount))
	w.time(d.LastAttemptAt)
	w.strPtr(d.LastError)
	w.time(d.CreatedAt)
	w.time(d.DeliveredAt)
	w.time(d.NextAttemptAt)
	w.bool(d.Test)
	w.uint(uint64(len(d.Attempts)))
	for i := range d.Attempts {
		a := &d.Attempts[i]
		w.str(a.ID)
		w.int(int64(a.AttemptNumber))
		w.str(a.RequestURL)
		if a.HTTPStatusCode == nil {
			w.bool(false)
		} else {
			w.bool(true)
			w.int(int64(*a.HTTPStatusCode))
		}
		w.strPtr(a.ResponseBody)
		w.strPtr(a.ErrorMessage)
		w.int(a.DurationMs)
		w.time(a.AttemptedAt)
		w.bool(a.Success)
	}
	w.uint(d.Seq)
	w.uint(d.EventSeq)
	w.int(int64(d.RoundStart))
	w.str(string(d.ScheduleKey))
	return w.b
}

// unmarshalDelivery decodes a stored delivery in either form into d. It
// copies everything it keeps: b may be a bbolt value.
func unmarshalDelivery(b []byte, d *diskDelivery) error {
	if len(b) > 0 && b[0] == '{' {
		return json.Unmarshal(b, d)
	}
	if len(b) == 0 || b[0] != deliveryCodecV1 {
		return errDeliveryRecord()
	}
	r := codecReader{b: b[1:]}
	d.ID, d.EventID, d.EventType, d.EntityType = r.str(), r.str(), r.str(), r.str()
	d.EntityID, d.Destination, d.Status = r.str(), r.str(), r.str()
	d.AttemptCount = int(r.int())
	d.LastAttemptAt = r.time()
	d.LastError = r.strPtr()
	d.CreatedAt, d.DeliveredAt, d.NextAttemptAt = r.time(), r.time(), r.time()
	d.Test = r.bool()
	n := r.uint()
	if n > uint64(len(r.b)) { // every attempt takes more than a byte
		return errDeliveryRecord()
	}
	d.Attempts = nil
	if n > 0 {
		d.Attempts = make([]Attempt, n)
	}
	for i := range d.Attempts {
		a := &d.Attempts[i]
		a.ID = r.str()
		a.AttemptNumber = int(r.int())
		a.RequestURL = r.str()
		if r.bool() {
			code := int(r.int())
			a.HTTPStatusCode = &code
		}
		a.ResponseBody = r.strPtr()
		a.ErrorMessage = r.strPtr()
		a.DurationMs = r.int()
		a.AttemptedAt = r.time()
		a.Success = r.bool()
	}
	d.Seq, d.EventSeq = r.uint(), r.uint()
	d.RoundStart = int(r.int())
	d.ScheduleKey = nil
	if k := r.str(); k != "" {
		d.ScheduleKey = []byte(k)
	}
	if r.bad || len(r.b) != 0 {
		return errDeliveryRecord()
	}
	return nil
}

// codecWriter appends the binary form's fields.
type codecWriter struct{ b []byte }

func (w *codecWriter) uint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *codecWriter) int(v int64)   { w.b = binary.AppendVarint(w.b, v) }

func (w *codecWriter) str(s string) {
	w.uint(uint64(len(s)))
	w.b = append(w.b, s...)
}

func (w *codecWriter) bool(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

func (w *codecWriter) strPtr(s *string) {
	w.bool(s != nil)
	if s != nil {
		w.str(*s)
	}
}

func (w *codecWriter) time(t Time) {
	w.bool(!t.IsZero())
	if !t.IsZero() {
		w.int(t.UnixMilli())
	}
}

// codecReader reads the binary form's fields; past the first malformed one
// it sets bad and returns zero values.
type codecReader struct {
	b   []byte
	bad bool
}

func (r *codecReader) uint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.bad, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *codecReader) int() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.bad, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *codecReader) str() string {
	n := r.uint()
	if n > uint64(len(r.b)) {
		r.bad, r.b = true, nil
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *codecReader) bool() bool {
	if len(r.b) == 0 {
		r.bad = true
		return false
	}
	v := r.b[0]
	r.b = r.b[1:]
	if v > 1 {
		r.bad, r.b = true, nil
	}
	return v == 1
}

func (r *codecReader) strPtr() *string {
	if !r.bool() {
		return nil
	}
	s := r.str()
	return &s
}

func (r *codecReader) time() Time {
	if !r.bool() {
		return Time{}
	}
	return Time{time.UnixMilli(r.int()).UTC()}
}
