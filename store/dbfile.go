package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Db files opened outside a running store: read-only copies (backup,
// compact) and damaged files, which fail in one line naming the file.

// BackupFile writes a consistent copy of the db at path to w (bbolt's
// Tx.WriteTo), opening it read-only: the file is copied as it is, never
// upgraded or otherwise written first, so a backup taken before an upgrade
// is of the old layout. path must not be in use. Returns ENOTFOUND when it
// does not exist.
func BackupFile(path string, w io.Writer) error {
	return readOnlyDB(path, func(db *bolt.DB) error {
		return db.View(func(tx *bolt.Tx) error {
			_, err := tx.WriteTo(w)
			return err
		})
	})
}

// ReadOnly runs fn on the db file at path opened read-only: fn may only
// read (Credentials, ConsoleUsers). A listing then never writes the file
// nor upgrades its layout, so a kept backup stays as it was and one on
// read-only media can be listed. Returns ENOTFOUND when path does not
// exist; a file of a later layout is refused as Open refuses it.
func ReadOnly(path string, fn func(s *Store) error) error {
	return readOnlyDB(path, func(db *bolt.DB) error {
		layout, err := fileLayout(db)
		if err == nil {
			err = newerLayout(layout)
		}
		if err != nil {
			return fmt.Errorf("open %s: %w", path, err)
		}
		return fn(&Store{db: db, now: time.Now, log: slog.Default()})
	})
}

// readOnlyDB runs fn on the db file at path opened read-only (openReadOnly),
// a fault on a damaged file turned into an error naming it.
func readOnlyDB(path string, fn func(db *bolt.DB) error) (err error) {
	defer damaged(path, &err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	db, err := openReadOnly(path)
	if err != nil {
		return err
	}
	defer db.Close()
	return fn(db)
}

// InUse returns an error naming path when another process holds the db
// file there open (a running server holds its lock), nil otherwise: also
// for a file that does not exist or that opening it would refuse for
// another reason, which that open then reports. A command asks it before
// prompting for input it could not store.
func InUse(path string) (err error) {
	defer func() {
		if recover() != nil { // a damaged file: the command's own open says so
			err = nil
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	db, err := openReadOnly(path)
	if err != nil {
		if errors.Is(err, errInUse) {
			return err
		}
		return nil
	}
	return db.Close()
}

// errInUse is Open's and openReadOnly's error for a file another process
// holds.
var errInUse = errors.New("the file is in use by another process (one process at a time: stop the server first, or copy a running server's db with GET /v1/admin/backup)")

// openReadOnly opens an existing db file read-only. Returns ENOTFOUND when
// it does not exist.
func openReadOnly(path string) (*bolt.DB, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, NotFound("db", path)
		}
		return nil, err
	}
	if fi.Size() == 0 {
		return nil, errEmpty(path)
	}
	if err := shortFile(path); err != nil {
		return nil, err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("open %s: %w", path, errInUse)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// damaged turns a panic of bbolt on a damaged file (a page that does not
// say what it should; with debug.SetPanicOnFault, a read past the end of a
// truncated copy) into *err, so that a command fails with one line naming
// the file instead of a stack trace. It must be deferred directly.
func damaged(path string, err *error) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("open %s: the file is damaged (%v); restore it from a backup", path, p)
	}
}

// errEmpty is the error of opening path, an existing file of no bytes.
// bbolt would write a new db into it: a failed copy (a backup redirected
// into a file while the db was in use) would turn into an empty service
// without a word, and a read-only open cannot write ("bad file
// descriptor"). Only a file that does not exist becomes a new db.
func errEmpty(path string) error {
	return fmt.Errorf("open %s: the file is empty, not a complybox db (a failed copy?): remove it to start a new db there, or restore a backup", path)
}

// shortFile returns an error naming path for a file shorter than its
// newest valid meta page says its pages reach (a partial copy), before
// bbolt opens it: bbolt's Open itself reads past the end of such a file
// (its freelist), which faults, and a fault inside Open leaves the file
// locked; later reads would fault too. A file with no meta page that
// reads as bbolt's is left to bbolt's own checks.
func shortFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	// A meta page: a 16-byte page header, then magic, version, page size,
	// flags (4 bytes each), the root bucket (16), the freelist's page (8),
	// the high-water page id (8), the txid (8) and an FNV-64a checksum of
	// what comes before it.
	const header, metaSize, magic = 16, 64, 0xED0CDAED
	read := func(off int64) (pageSize uint32, need, txid uint64, ok bool) {
		var b [header + metaSize]byte
		if _, err := f.ReadAt(b[:], off); err != nil {
			return 0, 0, 0, false
		}
		m := b[header:]
		h := fnv.New64a()
		h.Write(m[:56])
		if binary.LittleEndian.Uint32(m[0:]) != magic || h.Sum64() != binary.LittleEndian.Uint64(m[56:]) {
			return 0, 0, 0, false
		}
		pageSize = binary.LittleEndian.Uint32(m[8:])
		return pageSize, binary.LittleEndian.Uint64(m[40:]) * uint64(pageSize), binary.LittleEndian.Uint64(m[48:]), true
	}
	// bbolt takes the valid meta page of the higher txid; the second
	// sits one page in (the default page size when the first is bad).
	pageSize, need, txid, ok := read(0)
	if !ok {
		pageSize = uint32(os.Getpagesize())
	}
	if _, need1, txid1, ok1 := read(int64(pageSize)); ok1 && (!ok || txid1 > txid) {
		need, ok = need1, true
	}
	if ok && uint64(fi.Size()) < need {
		return fmt.Errorf("open %s: the file is damaged (truncated: %d bytes of %d); restore it from a backup", path, fi.Size(), need)
	}
	return nil
}

// createNew makes the db file at path when none exists, empty, for bbolt
// to lay out, and returns the path it made (a symbolic link's target when
// path is a link to nothing yet); "" when a file exists, or another
// process made it first (an exclusive create: only one can make it).
// Errors other than "exists" are left to bbolt to report.
func createNew(path string) (string, error) {
	target := path
	for range 8 { // follow a chain of links, as the kernel does, a few deep
		fi, err := os.Lstat(target)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				return "", nil
			}
			break
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return "", nil // exists
		}
		dest, err := os.Readlink(target)
		if err != nil {
			return "", nil
		}
		if !filepath.IsAbs(dest) {
			// Not filepath.Join, which cleans "sub/.." away before sub is
			// followed: the kernel follows it first.
			dest = filepath.Dir(target) + string(filepath.Separator) + dest
		}
		// The directory as the kernel reaches it (links and .. in order),
		// then the name in it.
		dir, name := filepath.Split(dest)
		if dir, err = filepath.EvalSymlinks(dir); err != nil {
			return "", nil // a missing directory: bbolt says so
		}
		target = filepath.Join(dir, name)
	}
	f, err := os.OpenFile(target, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", nil
	}
	if err := f.Close(); err != nil {
		os.Remove(target)
		return "", err
	}
	return target, nil
}

// emptyFile reports whether path is a regular file that stays empty for
// wait: one just made by another process that is laying it out (two
// first starts at once) has its pages within milliseconds and is no
// damaged copy; bbolt's lock then waits for that process.
func emptyFile(path string, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for {
		fi, err := os.Stat(path)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > 0 {
			return false
		}
		if time.Now().After(deadline) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
}
