package store

import (
	"fmt"
	"os"
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
	var used int64
	if err := to.View(func(tx *bolt.Tx) error { used = tx.Size(); return nil }); err != nil {
		to.Close()
		return err
	}
	if err := to.Close(); err != nil {
		return err
	}
	return trim(dst, used)
}

// trim cuts the file at path to size and syncs it: bbolt grows a file in
// steps (to a power of two, then 16 MiB at a time), so a fresh compacted
// copy ends in up to 16 MiB of pages it never used, which a compaction is
// run to give back.
func trim(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
