package store

import (
	"bytes"
	"encoding/json"
	"time"
)

// Idem carries a request's Idempotency-Key and a hash of its body. A zero
// Idem disables the check.
type Idem struct {
	Key      string
	BodyHash string
}

// idempotencyWindow is how long a key is remembered.
const idempotencyWindow = 24 * time.Hour

type idemRecord struct {
	BodyHash  string          `json:"bodyHash"`
	Response  json.RawMessage `json:"response"`
	CreatedAt time.Time       `json:"createdAt"`
}

func idemKey(scope, key string) []byte { return []byte(scope + "\x00" + key) }

// replay looks up idem under scope. When the key was used in the last 24 h
// with the same body it decodes the first response into out and returns true;
// with another body it returns EIDEMPOTENCY.
func (t *txn) replay(env Env, scope string, idem Idem, out any) (bool, error) {
	if idem.Key == "" {
		return false, nil
	}
	b := t.env(env, "idempotency").Get(idemKey(scope, idem.Key))
	if b == nil {
		return false, nil
	}
	var r idemRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return false, err
	}
	if t.now.Sub(r.CreatedAt) > idempotencyWindow {
		return false, nil
	}
	if r.BodyHash != idem.BodyHash {
		// A conflict, not a validation error: no field (SPEC §2).
		return false, &Error{Code: EIDEMPOTENCY, Reason: "idempotency_key_reused",
			Message: "this Idempotency-Key was used with a different request body"}
	}
	return true, json.Unmarshal(r.Response, out)
}

// remember stores response as the first response for idem under scope.
func (t *txn) remember(env Env, scope string, idem Idem, response any) error {
	if idem.Key == "" {
		return nil
	}
	body, err := json.Marshal(response)
	if err != nil {
		return err
	}
	v, err := json.Marshal(idemRecord{BodyHash: idem.BodyHash, Response: body, CreatedAt: t.now})
	if err != nil {
		return err
	}
	if err := t.env(env, "idempotency").Put(idemKey(scope, idem.Key), v); err != nil {
		return err
	}
	return t.expire(env, expiryIdempotency, t.now, idemKey(scope, idem.Key)) // removed by retention after 24 h
}

// forget removes every response remembered under scope: an erased
// applicant's routes, whose first answers hold its personal data (a replay
// then runs afresh and meets the erasure). Retention's entry for a removed
// key finds nothing and moves on.
func (t *txn) forget(env Env, scope string) error {
	b := t.env(env, "idempotency")
	prefix := idemKey(scope, "")
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
