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

// cursorList names the list a cursor pages: the first byte of its cursor.
// The values are control characters, which no text cursor of another list
// (levels:, history:, asset:, requests:) starts with.
type cursorList byte

// The lists whose cursors are a position in a sequence.
const (
	listApplicants   cursorList = 0x01
	listVaults       cursorList = 0x02
	listWallets      cursorList = 0x03
	listTransactions cursorList = 0x04
	listDeliveries   cursorList = 0x05
	listUbos         cursorList = 0x06
)

// String is the list's name in an error message; "" for a byte that names
// no list.
func (l cursorList) String() string {
	switch l {
	case listApplicants:
		return "applicants"
	case listVaults:
		return "vaults"
	case listWallets:
		return "wallets"
	case listTransactions:
		return "transactions"
	case listDeliveries:
		return "webhook deliveries"
	case listUbos:
		return "beneficial-owner rows"
	}
	return ""
}

// cursorKind is what a cursor belongs to: a list in an environment.
type cursorKind struct {
	list cursorList
	env  Env
}

// envByte is env in a cursor: 's' or 'p'.
func envByte(env Env) byte {
	if env == Production {
		return 'p'
	}
	return 's'
}

// encodeCursor is the cursor of position seq in the list of kind: base64url
// of list (1 byte) | environment (1 byte) | seq (8 bytes, big-endian), so a
// list can tell its own cursors from those of another list or environment
// (SPEC §2 "Lists"). The cursor is a position, not a query: the same list
// takes it with other filters.
func encodeCursor(k cursorKind, seq uint64) string {
	b := binary.BigEndian.AppendUint64([]byte{byte(k.list), envByte(k.env)}, seq)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor returns the position of a cursor of the list of kind.
// Returns EINVALID naming cursor for one this service did not return, one
// of another list and one of the same list in the other environment.
//
// Cursors handed out before cursors named their list are the bare 8-byte
// sequence. They are accepted on every list, for one upgrade, so that a
// client paging through the upgrade goes on; drop the legacy form in the
// release after.
func decodeCursor(k cursorKind, s string) (uint64, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	switch {
	case err == nil && len(b) == 8: // legacy
		return binary.BigEndian.Uint64(b), nil
	case err != nil || len(b) != 10 || cursorList(b[0]).String() == "" || (b[1] != 's' && b[1] != 'p'):
		return 0, Invalid("cursor", "cursor is not one this service returned")
	case cursorList(b[0]) != k.list:
		return 0, Invalid("cursor", "cursor was returned by the list of %s, not of %s: a cursor pages only the list that returned it", cursorList(b[0]), k.list)
	case b[1] != envByte(k.env):
		return 0, Invalid("cursor", "cursor was returned by the list of %s of the other environment: a cursor pages only the list that returned it", k.list)
	}
	return binary.BigEndian.Uint64(b[2:]), nil
}

// scanIndex walks idx (sequence -> id) from newest to oldest, starting after
// the page's cursor (one of kind), and calls visit with each id until visit
// has accepted the page's limit. It returns the cursor of the next page, or
// nil.
func scanIndex(idx *bolt.Bucket, kind cursorKind, p Page, visit func(id []byte) (bool, error)) (*string, error) {
	limit := p.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	c := idx.Cursor()
	var k, v []byte
	if p.Cursor != "" {
		seq, err := decodeCursor(kind, p.Cursor)
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
			next := encodeCursor(kind, btoi(k)+1)
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
