package store

import (
	"bytes"
	"encoding/binary"
	"math"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Filter indexes (SPEC §2 "Lists": every filter a list accepts is served by
// an index, a page costs O(limit) whatever the data size).
//
// Each list has a sequence index (seq -> id, or the record itself for
// transactions) in creation order, and a filter index bucket beside it whose
// keys are
//
//	field (1 byte) | len(value) (2 bytes, big-endian) | value | seq (8 bytes, big-endian)
//
// with empty values. The length makes every (field, value) prefix
// unambiguous whatever bytes the value holds, so a prefix scan of one value
// never strays into another, and the trailing sequence orders each value's
// entries like the list itself: newest last.
//
// The entries are written in the same transaction as the record, on every
// create and every change of an indexed value (old key removed, new key
// added): the record types keep the keys they were read with (their
// unexported indexed field) and reindex writes the difference. For the
// busiest indexes, deliveries_bits, transactions_bits and applicants_bits,
// the difference goes to the index's log in that transaction and reaches
// the index a little later, in batches; lists read both
// (list_filter_log.go). Those indexes keep a bitmap per (field, value) and
// block of sequences instead of a key per record (list_filter_bits.go).
//
// A filtered page walks the sequences that carry every requested key, newest
// first. With one filter that is a reverse prefix scan; with several it is a
// zig-zag join: each step seeks one index to the largest sequence not above
// the current candidate and makes that the candidate, until every index
// agrees. So no record that fails an equality filter is ever read and no
// per-value counters are needed to pick the "most selective" index: the
// join skips through the sparsest one by itself. Lists still check the
// whole filter on each decoded record, so an index can never make a list
// answer a record that does not match.
type fkey struct {
	field byte
	value string
}

// maxIndexedValue bounds an indexed value (its length is stored in 2 bytes).
// Stored values are ids, enums and externalUserIds, far shorter; a filter
// value longer than this matches nothing.
const maxIndexedValue = math.MaxUint16

// prefix is the key prefix of every entry of (field, value).
func (k fkey) prefix() []byte {
	b := make([]byte, 0, 3+len(k.value)+8)
	b = append(b, k.field)
	b = binary.BigEndian.AppendUint16(b, uint16(len(k.value)))
	return append(b, k.value...)
}

// at is the entry of (field, value) for the record at seq.
func (k fkey) at(seq uint64) []byte { return binary.BigEndian.AppendUint64(k.prefix(), seq) }

// timeValue is the value of a time-ordered key: Unix milliseconds,
// big-endian, so keys sort by time.
func timeValue(t time.Time) string { return string(itob(uint64(t.UnixMilli()))) }

// msCeil is t in Unix milliseconds rounded up: a millisecond timestamp m is
// at or after t exactly when m >= msCeil(t), and before t exactly when
// m < msCeil(t).
func msCeil(t time.Time) uint64 {
	ms := t.UnixMilli()
	if t.Sub(time.UnixMilli(ms)) > 0 {
		ms++
	}
	return uint64(ms)
}

// reindex moves the entries of the record at seq in b from old (the keys it
// was read with; nil for a new record) to cur: it deletes what only old has
// and adds what only cur has, so an unchanged record writes nothing.
func reindex(b *bolt.Bucket, seq uint64, old, cur []fkey) error {
	for _, k := range old {
		if !hasKey(cur, k) {
			if err := b.Delete(k.at(seq)); err != nil {
				return err
			}
		}
	}
	for _, k := range cur {
		if len(k.value) > maxIndexedValue {
			continue // never produced by the record types; a lookup of it matches nothing
		}
		if !hasKey(old, k) {
			if err := b.Put(k.at(seq), nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// reindex is reindex on the filter index bucket of env named list, or on
// its log when the index is written behind (list_filter_log.go). Within
// one operation the keys it last wrote for a record win over old, so two
// copies of one record read in the same operation cannot leave an entry
// behind.
func (t *txn) reindex(env Env, list string, seq uint64, old, cur []fkey) error {
	id := string(env) + "|" + list + "|" + string(itob(seq))
	if w, ok := t.indexed[id]; ok {
		old = w
	}
	if logged(list) {
		log := t.logOf(env, list)
		wrote, err := logChange(log, seq, old, cur)
		if err != nil {
			return err
		}
		t.logged = t.logged || wrote
		if wrote && log.Sequence()%64 == 0 && logLen(log) > foldMax {
			if _, err := fold(t.env(env, list), log, foldMax); err != nil {
				return err
			}
		}
	} else if err := reindex(t.env(env, list), seq, old, cur); err != nil {
		return err
	}
	if list == "deliveries_bits" {
		if err := t.countDelivery(env, old, cur); err != nil {
			return err
		}
	}
	if t.indexed == nil {
		t.indexed = map[string][]fkey{}
	}
	t.indexed[id] = cur
	return nil
}

func hasKey(keys []fkey, k fkey) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

// listScan is one walk over a list, newest first.
type listScan struct {
	seqs    *bolt.Bucket // the list's sequence index: seq -> id or record
	filters *bolt.Bucket // the list's filter index
	log     *bolt.Bucket // its log when it is written behind (list_filter_log.go), else nil
	kind    cursorKind   // the list and environment its cursors name
	keys    []fkey       // equality filters; every one must hold
	lo, hi  uint64       // sequence bounds, inclusive; hi 0 means none
	// budget bounds the records visited in one call (0: no bound). A walk
	// that runs out of budget before the page is full returns the page so
	// far with a cursor to continue (bounded slices for search).
	budget int
}

// run walks the list from the page's cursor and calls visit with the
// sequence and the sequence index's value of every candidate, until visit
// has accepted the page's limit. It returns the cursor of the next page, or
// nil when no candidate is left. The cursor is the next candidate's
// sequence + 1 under the scan's kind, the same form whatever the filter, so
// cursors stay opaque and stable across pages.
func (l listScan) run(p Page, visit func(seq uint64, v []byte) (bool, error)) (*string, error) {
	limit := p.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	bound := uint64(math.MaxUint64)
	if l.hi != 0 {
		bound = l.hi
	}
	if p.Cursor != "" {
		seq, err := decodeCursor(l.kind, p.Cursor)
		if err != nil {
			return nil, err
		}
		if seq == 0 {
			return nil, nil
		}
		bound = min(bound, seq-1)
	}
	for _, k := range l.keys {
		if len(k.value) > maxIndexedValue {
			return nil, nil
		}
	}
	next := l.seeker()
	n, visited := 0, 0
	for {
		seq, ok := next(bound)
		if !ok {
			return nil, nil
		}
		if n == limit || (l.budget > 0 && visited == l.budget) {
			c := encodeCursor(l.kind, seq+1)
			return &c, nil
		}
		if v := l.seqs.Get(itob(seq)); v != nil {
			visited++
			ok, err := visit(seq, v)
			if err != nil {
				return nil, err
			}
			if ok {
				n++
			}
		}
		if seq == 0 {
			return nil, nil
		}
		bound = seq - 1
	}
}

// seeker returns a function that finds the largest sequence at or below
// bound (and at or above lo) that carries every key.
func (l listScan) seeker() func(bound uint64) (uint64, bool) {
	if len(l.keys) == 0 {
		c := l.seqs.Cursor()
		return func(bound uint64) (uint64, bool) {
			k, _ := c.Seek(itob(bound))
			if k == nil {
				k, _ = c.Last()
			} else if btoi(k) > bound {
				k, _ = c.Prev()
			}
			if k == nil || btoi(k) < l.lo {
				return 0, false
			}
			return btoi(k), true
		}
	}
	cursors := make([]*bolt.Cursor, len(l.keys))
	prefixes := make([][]byte, len(l.keys))
	for i, k := range l.keys {
		cursors[i], prefixes[i] = l.filters.Cursor(), k.prefix()
	}
	seek := func(i int, bound uint64) (uint64, bool) { return seekLE(cursors[i], prefixes[i], bound) }
	if l.log != nil {
		// A written-behind index: bitmaps, and the log's changes on top.
		seek = func(i int, bound uint64) (uint64, bool) { return bitsSeekLE(cursors[i], prefixes[i], bound) }
		if u := readLog(l.log, prefixes); u != nil {
			seek = func(i int, bound uint64) (uint64, bool) { return u.seekLE(i, cursors[i], prefixes[i], bound) }
		}
	}
	return func(bound uint64) (uint64, bool) {
		cand, agreed := bound, 0
		for i := 0; ; i = (i + 1) % len(cursors) {
			s, ok := seek(i, cand)
			if !ok || s < l.lo {
				return 0, false
			}
			if s == cand {
				agreed++
			} else {
				cand, agreed = s, 1
			}
			if agreed == len(cursors) {
				return cand, true
			}
		}
	}
}

// seekLE returns the largest sequence at or below bound among the entries
// under prefix.
func seekLE(c *bolt.Cursor, prefix []byte, bound uint64) (uint64, bool) {
	target := binary.BigEndian.AppendUint64(append(make([]byte, 0, len(prefix)+8), prefix...), bound)
	k, _ := c.Seek(target)
	if k != nil && bytes.Equal(k, target) {
		return bound, true
	}
	if k, _ = entryBefore(c, k, prefix); k == nil {
		return 0, false
	}
	return btoi(k[len(prefix):]), true
}

// entryBefore moves c, just sought to k (nil past the end), to the entry
// before it, and returns that entry when it is one of prefix (its key is
// prefix and 8 bytes); nil otherwise.
func entryBefore(c *bolt.Cursor, k, prefix []byte) ([]byte, []byte) {
	var v []byte
	if k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	if k == nil || len(k) != len(prefix)+8 || !bytes.HasPrefix(k, prefix) {
		return nil, nil
	}
	return k, v
}

// timeBounds turns a [since, until) range of a time-ordered field into
// sequence bounds: lo is the sequence of the first entry at or after since,
// hi that of the last entry before until, in the index b and its log (nil
// for none). Records are created in sequence and time order together (the
// sequence and the timestamp are taken in the same transaction), so the
// range of sequences holds exactly the records of the time range; lists
// re-check the time on each record all the same, which also makes an entry
// of a removed record that the log has not yet folded a harmless, wider
// bound. empty reports that no record falls in the range.
func timeBounds(b, log *bolt.Bucket, field byte, since, until time.Time) (lo, hi uint64, empty bool) {
	fp := fkey{field: field, value: "12345678"}.prefix()[:3] // field | len 8
	c := b.Cursor()
	// entrySeq is the lowest (or highest) sequence of a block of the
	// field's bitmap index (list_filter_bits.go).
	entrySeq := func(k, v []byte, lowest bool) (uint64, bool) {
		if k == nil || len(k) != 3+8+8 || !bytes.HasPrefix(k, fp) {
			return 0, false
		}
		i, ok := lowestBit(v)
		if !lowest {
			i, ok = highestBit(v, blockBits-1)
		}
		return btoi(k[11:])*blockBits + i, ok
	}
	logged := loggedTimes(log, field) // (value, seq)
	if !since.IsZero() {
		from := msCeil(since)
		k, v := c.Seek(append(bytes.Clone(fp), itob(from)...))
		s, ok := entrySeq(k, v, true)
		for _, e := range logged {
			if e[0] >= from && (!ok || e[1] < s) {
				s, ok = e[1], true
			}
		}
		if !ok {
			return 0, 0, true
		}
		lo = s
	}
	if !until.IsZero() {
		to := msCeil(until)
		var v []byte
		k, _ := c.Seek(append(bytes.Clone(fp), itob(to)...))
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
		s, ok := entrySeq(k, v, false)
		for _, e := range logged {
			if e[0] < to && (!ok || e[1] > s) {
				s, ok = e[1], true
			}
		}
		if !ok {
			return 0, 0, true
		}
		hi = s
		if hi == 0 || hi < lo {
			return 0, 0, true
		}
	}
	return lo, hi, false
}
