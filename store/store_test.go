package store_test

import (
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/complybox/complybox/store"
)

// testStart is where the manual clock of mustOpen starts.
var testStart = time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)

// mustOpen opens a store with opts on the db at path, a new file under
// tb.TempDir() when path is "". Unless opts sets them, the store runs on a
// manual clock starting at testStart, which mustOpen returns (nil when opts
// sets Now), and logs nowhere. A test may close the store and open path
// again. In cleanup mustOpen closes the store, then runs bbolt's tx.Check()
// on the file and fails tb on every error it yields.
func mustOpen(tb testing.TB, path string, opts store.Options) (*store.Store, *store.ManualClock) {
	tb.Helper()
	if path == "" {
		path = filepath.Join(tb.TempDir(), "test.db")
	}
	var clock *store.ManualClock
	if opts.Now == nil {
		clock = store.NewManualClock(testStart)
		opts.Now = clock.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s, err := store.Open(path, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("close: %v", err)
		}
		db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
		if err != nil {
			tb.Errorf("db check: %v", err)
			return
		}
		defer db.Close()
		err = db.View(func(tx *bolt.Tx) error {
			for err := range tx.Check() {
				tb.Errorf("db check: %v", err)
			}
			return nil
		})
		if err != nil {
			tb.Errorf("db check: %v", err)
		}
	})
	return s, clock
}
