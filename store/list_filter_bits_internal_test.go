package store

import (
	"encoding/binary"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestBitmapIndexMatchesModel folds random adds and removes of two values'
// records, spread over many blocks, into a bitmap index through a log, and
// checks after every fold that the largest sequence at or below random
// bounds is what a plain set of sequences says, that every block holds at
// least one record, and that the records read back are exactly the set.
func TestBitmapIndexMatchesModel(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "bits.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rng := rand.New(rand.NewPCG(27, 1))
	keys := []fkey{{'s', "pending"}, {'s', "delivered"}}
	model := []map[uint64]bool{{}, {}}
	const span = 20 * blockBits
	for round := range 40 {
		err := db.Update(func(tx *bolt.Tx) error {
			idx, err := tx.CreateBucketIfNotExists([]byte("idx"))
			if err != nil {
				return err
			}
			log, err := tx.CreateBucketIfNotExists([]byte("log"))
			if err != nil {
				return err
			}
			for range 300 {
				i := rng.IntN(len(keys))
				seq := rng.Uint64N(span)
				if round%10 == 9 {
					seq = uint64(rng.IntN(3)) * blockBits // block edges
				}
				var cur []fkey
				if !model[i][seq] {
					cur = []fkey{keys[i]}
				}
				var old []fkey
				if model[i][seq] {
					old = []fkey{keys[i]}
				}
				if _, err := logChange(log, seq, old, cur); err != nil {
					return err
				}
				model[i][seq] = !model[i][seq]
			}
			_, err = fold(idx, log, foldMax)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		err = db.View(func(tx *bolt.Tx) error {
			idx := tx.Bucket([]byte("idx"))
			if n := tx.Bucket([]byte("log")).Stats().KeyN; n != 0 {
				t.Fatalf("round %d: %d log entries left after the fold", round, n)
			}
			for i, k := range keys {
				want := slices.Sorted(func(yield func(uint64) bool) {
					for s, on := range model[i] {
						if on && !yield(s) {
							return
						}
					}
				})
				var got []uint64
				prefix := k.prefix()
				c := idx.Cursor()
				for bk, v := c.Seek(prefix); bk != nil && len(bk) == len(prefix)+8 && string(bk[:len(prefix)]) == string(prefix); bk, v = c.Next() {
					if _, ok := lowestBit(v); !ok {
						t.Fatalf("round %d: block %d of %q stored with no record", round, binary.BigEndian.Uint64(bk[len(prefix):]), k.value)
					}
					eachBit(bk, v, func(seq uint64) bool { got = append(got, seq); return true })
				}
				if !slices.Equal(got, want) {
					t.Fatalf("round %d, %q: read %d records, want %d", round, k.value, len(got), len(want))
				}
				for range 200 {
					bound := rng.Uint64N(span + blockBits)
					j, _ := slices.BinarySearch(want, bound+1)
					s, ok := bitsSeekLE(idx.Cursor(), prefix, bound)
					if wantOK := j > 0; ok != wantOK || (ok && s != want[j-1]) {
						t.Fatalf("round %d, %q: seekLE(%d) = %d, %v; want the record before index %d of %v", round, k.value, bound, s, ok, j, len(want))
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestBitmapBits checks the bit helpers at the edges of a block.
func TestBitmapBits(t *testing.T) {
	var m bitmap
	for _, i := range []uint64{0, 7, 8, 63, 500, blockBits - 1} {
		m.set(i, true)
	}
	v := m.stored()
	if len(v) != blockBytes {
		t.Fatalf("stored %d bytes, want %d", len(v), blockBytes)
	}
	for _, c := range []struct{ upTo, want uint64 }{{blockBits - 1, blockBits - 1}, {blockBits - 2, 500}, {499, 63}, {63, 63}, {62, 8}, {8, 8}, {7, 7}, {6, 0}, {0, 0}} {
		if got, ok := highestBit(v, c.upTo); !ok || got != c.want {
			t.Errorf("highestBit(upTo %d) = %d, %v; want %d", c.upTo, got, ok, c.want)
		}
	}
	m.set(0, false)
	m.set(blockBits-1, false)
	m.set(500, false)
	if v := m.stored(); len(v) != 8 {
		t.Errorf("stored %d bytes after clearing the high bits, want 8", len(v))
	}
	if got, ok := lowestBit(m.stored()); !ok || got != 7 {
		t.Errorf("lowestBit = %d, %v; want 7", got, ok)
	}
	if _, ok := highestBit(m.stored(), 6); ok {
		t.Error("highestBit(upTo 6) found a bit below 7")
	}
}
