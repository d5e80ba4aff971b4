package store

import (
	"encoding/json"
	"sync"
)

// decoded keeps JSON records decoded, keyed by the exact bytes they were
// decoded from, for kinds read far more often than written: every
// withdrawal reads its wallet, the wallet's vault and its asset, which
// change rarely or never. A transaction that reads other bytes (the record
// changed) decodes them, so the cache never answers for a version of a
// record the transaction does not see. Values are shared: a reader may
// assign the fields of its copy but must not write through its pointers.
type decoded[T any] struct {
	mu sync.Mutex
	m  map[string]T
}

// decodedMax bounds the records one cache holds; a full cache starts over.
const decodedMax = 4096

// decode sets *v to the record b encodes.
func (c *decoded[T]) decode(b []byte, v *T) error {
	c.mu.Lock()
	x, ok := c.m[string(b)]
	c.mu.Unlock()
	if ok {
		*v = x
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return err
	}
	c.mu.Lock()
	if len(c.m) >= decodedMax || c.m == nil {
		c.m = make(map[string]T)
	}
	c.m[string(b)] = *v
	c.mu.Unlock()
	return nil
}
