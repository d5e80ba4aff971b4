package store

import (
	"fmt"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
)

// compactTxSize bounds the bytes copied per write transaction of Compact, so
// a large file never makes one huge transaction.
const compactTxSize = 64 << 20

// Compact writes a compacted copy of the db at src to dst (bbolt's
// compaction: every bucket rewritten with full pages, free pages dropped).
// src must not be in use; dst must not exist. Returns ENOTFOUND when src
// does not exist.
func Compact(src, dst string) (err error) {
	defer damaged(src, &err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	from, err := openReadOnly(src)
	if err != nil {
		return err
	}
	defer from.Close()
	to, err := bolt.Open(dst, 0o600, &bolt.Options{Timeout: time.Second, NoSync: true})
	if err != nil {
		return fmt.Errorf("open %s: %w", dst, err)
	}
	if err := bolt.Compact(to, from, compactTxSize); err != nil {
		to.Close()
		return fmt.Errorf("compact %s: %w", src, err)
	}
	if err := to.Sync(); err != nil {
		to.Close()
		return err
	}
	return to.Close()
}
