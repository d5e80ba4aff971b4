package store

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Write-behind filter indexes. The indexes that every withdrawal and every
// new applicant change, deliveries_bits, transactions_bits and
// applicants_bits, are not written by the operation that changes a record.
// The operation appends one entry to the index's log instead, in the same
// transaction as the record:
//
//	<index>_log: log sequence (8 bytes) -> record seq (8) | change ...
//	change:      '+' or '-' | field (1) | len(value) (2) | value
//
// and the fold moves the oldest entries of the log into the index, many
// operations at a time: a background goroutine folds what has gathered
// foldDelay after the first entry, and an operation that finds more than
// foldMax entries folds foldMax of them itself, so the log stays short
// whatever the load. A filtered list reads the index and the log together
// (unfolded), so it answers exactly what an index written in place would.
//
// Why: an index entry is one leaf of a B+tree region per filter value, and
// a commit rewrites every leaf and branch page it touched. With the entries
// written in place, every commit of complyperf's withdrawals rewrote about
// 35 pages of the delivery and transaction indexes (of 82); the log appends
// to one page, and a fold touches each region once for hundreds of
// operations. A key added and removed within one batch (the status
// "pending" of a delivery delivered a few milliseconds later) never
// reaches the index at all.
// Measured under complyperf's write phase: bbolt page writes 35k -> 27k per
// second at the same throughput (docs/performance.md). Under its applicant
// phase the applicant index was 6.8 of the ~50 pages a commit wrote, the
// most of any bucket; with its log, 2.3 for the two.
const (
	foldDelay = 20 * time.Millisecond
	foldMax   = 2048
)

// loggedIndexes lists the filter indexes written behind.
func loggedIndexes() []string {
	return []string{"deliveries_bits", "transactions_bits", "applicants_bits"}
}

// logged reports whether the filter index named list is written behind.
func logged(list string) bool { return slices.Contains(loggedIndexes(), list) }

// logOf returns the log of env's write-behind filter index list.
func (t *txn) logOf(env Env, list string) *bolt.Bucket { return t.env(env, list+"_log") }

// logChange appends to log the changes that move the record at seq from old
// to cur (as reindex would write them); an unchanged record appends
// nothing.
func logChange(log *bolt.Bucket, seq uint64, old, cur []fkey) (bool, error) {
	v := binary.BigEndian.AppendUint64(make([]byte, 0, 128), seq)
	n := len(v)
	for _, k := range old {
		if !hasKey(cur, k) {
			v = appendChange(v, '-', k)
		}
	}
	for _, k := range cur {
		if len(k.value) <= maxIndexedValue && !hasKey(old, k) {
			v = appendChange(v, '+', k)
		}
	}
	if len(v) == n {
		return false, nil
	}
	ls, err := log.NextSequence()
	if err != nil {
		return false, err
	}
	return true, log.Put(itob(ls), v)
}

func appendChange(v []byte, op byte, k fkey) []byte {
	v = append(v, op, k.field)
	v = binary.BigEndian.AppendUint16(v, uint16(len(k.value)))
	return append(v, k.value...)
}

// eachChange calls fn with every change of a log entry: the record's
// sequence, whether the change adds the key, and the key's prefix (field |
// len | value). It stops at a malformed change.
func eachChange(v []byte, fn func(seq uint64, add bool, prefix []byte)) {
	if len(v) < 8 {
		return
	}
	seq, v := btoi(v[:8]), v[8:]
	for len(v) >= 4 {
		n := 4 + int(binary.BigEndian.Uint16(v[2:4]))
		if len(v) < n {
			return
		}
		fn(seq, v[0] == '+', v[1:n])
		v = v[n:]
	}
}

// logLen is how many entries log holds.
func logLen(log *bolt.Bucket) uint64 {
	k, _ := log.Cursor().First()
	if k == nil {
		return 0
	}
	return log.Sequence() - btoi(k) + 1
}

// fold moves at most max of the oldest entries of log into the bitmap index
// idx (list_filter_bits.go) and returns how many it moved. Each block the
// entries change is read and written once, with its changes applied in log
// order; blocks are written in key order. The changes are grouped by a
// map of blocks and a counting sort, not by sorting every change: the fold
// runs in the serial section every write waits for.
func fold(idx, log *bolt.Bucket, max int) (int, error) {
	type change struct {
		block int // index in keys
		bitChange
	}
	var keys []string // the blocks' keys, in order of first change
	at := map[string]int{}
	var changes []change
	var key []byte
	var first, last uint64
	n := 0
	c := log.Cursor()
	for k, v := c.First(); k != nil && n < max; k, v = c.Next() {
		if n == 0 {
			first = btoi(k)
		}
		last = btoi(k)
		n++
		eachChange(v, func(seq uint64, add bool, prefix []byte) {
			key = binary.BigEndian.AppendUint64(append(key[:0], prefix...), seq/blockBits)
			b, ok := at[string(key)]
			if !ok {
				b = len(keys)
				keys = append(keys, string(key))
				at[keys[b]] = b
			}
			changes = append(changes, change{b, bitChange{seq % blockBits, add}})
		})
	}
	// Each block's changes, in log order, at [start[b], start[b+1]).
	start := make([]int, len(keys)+1)
	for _, ch := range changes {
		start[ch.block+1]++
	}
	for b := range keys {
		start[b+1] += start[b]
	}
	grouped := make([]bitChange, len(changes))
	next := slices.Clone(start[:len(keys)])
	for _, ch := range changes {
		grouped[next[ch.block]] = ch.bitChange
		next[ch.block]++
	}
	order := make([]int, len(keys))
	for b := range order {
		order[b] = b
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	for _, b := range order {
		if err := applyBits(idx, []byte(keys[b]), grouped[start[b]:start[b+1]]); err != nil {
			return 0, err
		}
	}
	// The log's keys are consecutive sequences from NextSequence, and only
	// the fold removes them, oldest first.
	var k [8]byte
	for ls := first; n > 0 && ls <= last; ls++ {
		binary.BigEndian.PutUint64(k[:], ls)
		if err := log.Delete(k[:]); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// unfolded is what one transaction sees of a log for some index keys: for
// the i-th key, the sequences whose last unfolded change adds it
// (ascending) and those whose last change removes it.
type unfolded struct {
	add [][]uint64
	del []map[uint64]bool
}

// readLog reads log for the keys with the given prefixes; nil when the log
// is empty or absent. It reads at most the log's length, which the fold
// keeps near foldMax at worst.
func readLog(log *bolt.Bucket, prefixes [][]byte) *unfolded {
	if log == nil {
		return nil
	}
	c := log.Cursor()
	k, v := c.First()
	if k == nil {
		return nil
	}
	type change struct {
		key int
		seq uint64
	}
	last := map[change]bool{}
	for ; k != nil; k, v = c.Next() {
		eachChange(v, func(seq uint64, add bool, prefix []byte) {
			for i, p := range prefixes {
				if bytes.Equal(p, prefix) {
					last[change{i, seq}] = add
				}
			}
		})
	}
	u := &unfolded{add: make([][]uint64, len(prefixes)), del: make([]map[uint64]bool, len(prefixes))}
	for ch, add := range last {
		if add {
			u.add[ch.key] = append(u.add[ch.key], ch.seq)
			continue
		}
		if u.del[ch.key] == nil {
			u.del[ch.key] = map[uint64]bool{}
		}
		u.del[ch.key][ch.seq] = true
	}
	for _, a := range u.add {
		slices.Sort(a)
	}
	return u
}

// seekLE is bitsSeekLE on the index merged with the log: the largest
// sequence at or below bound that carries the i-th key.
func (u *unfolded) seekLE(i int, c *bolt.Cursor, prefix []byte, bound uint64) (uint64, bool) {
	s, ok := bitsSeekLE(c, prefix, bound)
	for ok && u.del[i][s] {
		if s == 0 {
			ok = false
			break
		}
		s, ok = bitsSeekLE(c, prefix, s-1)
	}
	a := u.add[i]
	if j := sort.Search(len(a), func(j int) bool { return a[j] > bound }); j > 0 && (!ok || a[j-1] > s) {
		return a[j-1], true
	}
	return s, ok
}

// loggedTimes returns the (value, sequence) pairs of field's 8-byte values
// whose last unfolded change in log adds them.
func loggedTimes(log *bolt.Bucket, field byte) [][2]uint64 {
	if log == nil {
		return nil
	}
	last := map[[2]uint64]bool{}
	c := log.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		eachChange(v, func(seq uint64, add bool, prefix []byte) {
			if len(prefix) == 3+8 && prefix[0] == field {
				last[[2]uint64{btoi(prefix[3:]), seq}] = add
			}
		})
	}
	var out [][2]uint64
	for e, add := range last {
		if add {
			out = append(out, e)
		}
	}
	return out
}

// foldAll folds up to max entries of every log of every environment and
// reports whether any log still holds entries.
func (t *txn) foldAll(max int) (more bool, err error) {
	for _, env := range Envs() {
		for _, list := range loggedIndexes() {
			n, err := fold(t.env(env, list), t.logOf(env, list), max)
			if err != nil {
				return false, err
			}
			more = more || n == max
		}
	}
	return more, nil
}

// FoldIndexes folds every log into its index, foldMax entries per
// transaction. The background folder calls it; so can tests.
func (s *Store) FoldIndexes() error {
	for {
		var more bool
		err := s.update(func(t *txn) error {
			var err error
			more, err = t.foldAll(foldMax)
			return err
		})
		if err != nil || !more {
			return err
		}
	}
}

// folder is the background fold: it runs FoldIndexes delay after a commit
// that wrote to a log.
type folder struct {
	delay time.Duration
	kick  chan struct{} // nil when there is no background fold
	quit  chan struct{}
	done  chan struct{}
	stop  sync.Once
}

func (s *Store) startFolder(delay time.Duration) {
	f := &s.folder
	f.delay, f.kick, f.quit, f.done = delay, make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go s.foldLoop()
}

// foldSoon tells the folder that a log has new entries.
func (s *Store) foldSoon() {
	select {
	case s.folder.kick <- struct{}{}:
	default:
	}
}

func (s *Store) foldLoop() {
	f := &s.folder
	defer close(f.done)
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-f.quit:
			return false
		case <-t.C:
			return true
		}
	}
	for {
		select {
		case <-f.quit:
			return
		case <-f.kick:
		}
		if !wait(f.delay) {
			return
		}
		if err := s.FoldIndexes(); err != nil {
			// The entries stay in the log, where lists still read them;
			// try again a second later.
			s.log.Error("folding the filter indexes", "err", err)
			if !wait(time.Second) {
				return
			}
			s.foldSoon()
		}
	}
}

// stopFolder stops the background fold, waiting for one in progress.
func (s *Store) stopFolder() {
	f := &s.folder
	if f.quit == nil {
		return
	}
	f.stop.Do(func() { close(f.quit) })
	<-f.done
}
