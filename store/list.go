package store

import (
	"encoding/base64"
	"encoding/binary"

	bolt "go.etcd.io/bbolt"
)

// Page selects one page of a list: newest first, Limit items after Cursor.
type Page struct {
	Limit  int    // 1..200; 0 means 50
	Cursor string // opaque, from a previous page's NextCursor
}

// DefaultLimit and MaxLimit bound list pages.
const (
	DefaultLimit = 50
	MaxLimit     = 200
)

func encodeCursor(seq uint64) string {
	return base64.RawURLEncoding.EncodeToString(itob(seq))
}

func decodeCursor(s string) (uint64, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 8 {
		return 0, Invalid("cursor", "cursor is not one this service returned")
	}
	return binary.BigEndian.Uint64(b), nil
}

// scanIndex walks idx (sequence -> id) from newest to oldest, starting after
// the page's cursor, and calls visit with each id until visit has accepted
// the page's limit. It returns the cursor of the next page, or nil.
func scanIndex(idx *bolt.Bucket, p Page, visit func(id []byte) (bool, error)) (*string, error) {
	limit := p.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	c := idx.Cursor()
	var k, v []byte
	if p.Cursor != "" {
		seq, err := decodeCursor(p.Cursor)
		if err != nil {
			return nil, err
		}
		k, v = c.Seek(itob(seq))
		if k != nil && btoi(k) >= seq {
			k, v = c.Prev()
		} else if k == nil {
			k, v = c.Last()
		}
	} else {
		k, v = c.Last()
	}
	n := 0
	for ; k != nil; k, v = c.Prev() {
		if n == limit {
			next := encodeCursor(btoi(k) + 1)
			return &next, nil
		}
		ok, err := visit(v)
		if err != nil {
			return nil, err
		}
		if ok {
			n++
		}
	}
	return nil, nil
}

// index appends id to idx under a fresh sequence and returns the sequence.
func index(idx *bolt.Bucket, id string) (uint64, error) {
	seq, err := idx.NextSequence()
	if err != nil {
		return 0, err
	}
	return seq, idx.Put(itob(seq), []byte(id))
}
