package store

import (
	"bytes"
	"encoding/binary"
	"math/bits"

	bolt "go.etcd.io/bbolt"
)

// Bitmap filter indexes. The written-behind indexes (list_filter_log.go)
// hold one entry per (field, value) and block of blockBits sequences, not
// one per record:
//
//	field (1) | len(value) (2) | value | block (8 bytes, big-endian) -> bitmap
//
// where block is seq / blockBits and bit seq % blockBits of the bitmap
// (byte i/8, bit i%8) is set when the record at seq carries the key. A
// bitmap is stored without its trailing zero bytes, and a block left with
// no bit set is deleted, so every stored block holds at least one record.
// The keys order like those of list_filter.go (a value's blocks ascend with
// its sequences), so a list seeks them the same way.
//
// Why: the fold writes each block once per batch instead of each record's
// key. Under complyperf's withdrawals a fold wrote about 1,700 index
// entries, most of them to a handful of values (a status, an event type,
// the destination, the wallet), each a B+tree search inside the serial
// commit; as bitmaps those are a few blocks per value. The fold went from
// 20 to 6 µs per withdrawal, and complyperf's write ratio from 0.435× to
// 0.475× (alternated four times, docs/performance.md, stop 27).
const (
	blockBits  = 512
	blockBytes = blockBits / 8
)

// blockKey is the entry of the block holding seq under prefix.
func blockKey(prefix []byte, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(append(make([]byte, 0, len(prefix)+8), prefix...), seq/blockBits)
}

// bitmap is one block's bits, decoded from an entry.
type bitmap [blockBytes]byte

func (m *bitmap) set(i uint64, on bool) {
	if on {
		m[i/8] |= 1 << (i % 8)
	} else {
		m[i/8] &^= 1 << (i % 8)
	}
}

// stored is m as an entry's value: without trailing zero bytes, empty when
// no bit is set.
func (m *bitmap) stored() []byte {
	n := blockBytes
	for n > 0 && m[n-1] == 0 {
		n--
	}
	return m[:n]
}

// highestBit returns the highest set bit of the stored bitmap v at or below
// upTo.
func highestBit(v []byte, upTo uint64) (uint64, bool) {
	last := min(uint64(len(v)), upTo/8+1)
	for i := last; i > 0; i-- {
		b := v[i-1]
		if i-1 == upTo/8 {
			b &= byte(uint16(2)<<(upTo%8) - 1)
		}
		if b != 0 {
			return (i-1)*8 + uint64(bits.Len8(b)) - 1, true
		}
	}
	return 0, false
}

// lowestBit returns the lowest set bit of the stored bitmap v.
func lowestBit(v []byte) (uint64, bool) {
	for i, b := range v {
		if b != 0 {
			return uint64(i)*8 + uint64(bits.TrailingZeros8(b)), true
		}
	}
	return 0, false
}

// eachBit calls fn with the sequence of every set bit of the block entry
// (k, v), in ascending order, until fn returns false.
func eachBit(k, v []byte, fn func(seq uint64) bool) bool {
	base := btoi(k[len(k)-8:]) * blockBits
	for i, b := range v {
		for b != 0 {
			j := uint64(bits.TrailingZeros8(b))
			if !fn(base + uint64(i)*8 + j) {
				return false
			}
			b &= b - 1
		}
	}
	return true
}

// bitsSeekLE is seekLE for a bitmap index: the largest sequence at or below
// bound among the blocks under prefix.
func bitsSeekLE(c *bolt.Cursor, prefix []byte, bound uint64) (uint64, bool) {
	target := blockKey(prefix, bound)
	k, v := c.Seek(target)
	if k != nil && bytes.Equal(k, target) {
		if i, ok := highestBit(v, bound%blockBits); ok {
			return bound/blockBits*blockBits + i, true
		}
	}
	if k, v = entryBefore(c, k, prefix); k == nil {
		return 0, false
	}
	i, ok := highestBit(v, blockBits-1)
	return btoi(k[len(prefix):])*blockBits + i, ok
}

// bitChange is one change of a block: its bit, set or cleared.
type bitChange struct {
	bit uint64
	on  bool
}

// applyBits applies changes, in order, to the block entry key of idx and
// writes the block back, or deletes it when no bit is left.
func applyBits(idx *bolt.Bucket, key []byte, changes []bitChange) error {
	var m bitmap
	old := idx.Get(key)
	copy(m[:], old)
	for _, ch := range changes {
		m.set(ch.bit, ch.on)
	}
	v := m.stored()
	switch {
	case bytes.Equal(v, old) && (len(v) > 0) == (old != nil):
		return nil // unchanged, or still absent
	case len(v) == 0:
		return idx.Delete(key)
	default:
		return idx.Put(key, bytes.Clone(v))
	}
}

// indexBits adds the record at seq under each of keys to the bitmap index
// idx, as an upgrade builds it (migrate.go); the writers go through the
// log.
func indexBits(idx *bolt.Bucket, seq uint64, keys []fkey) error {
	for _, k := range keys {
		if len(k.value) > maxIndexedValue {
			continue
		}
		if err := applyBits(idx, blockKey(k.prefix(), seq), []bitChange{{seq % blockBits, true}}); err != nil {
			return err
		}
	}
	return nil
}
