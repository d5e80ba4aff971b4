package store_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/complybox/complybox/store"
)

const testBucket = "group-commit-test"

func TestGroupCommit(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{})
	if err := s.Commit(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte(testBucket)); return err }); err != nil {
		t.Fatal(err)
	}
	const writers = 64
	errBoom := errors.New("boom")
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Commit(func(tx *bolt.Tx) error {
				if err := tx.Bucket([]byte(testBucket)).Put([]byte(fmt.Sprint(i)), []byte("v")); err != nil {
					return err
				}
				switch i {
				case 7:
					return errBoom // fails after writing: its write must not stay
				case 11:
					panic("bad operation")
				}
				return nil
			})
		}()
	}
	wg.Wait()
	err := s.Commit(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(testBucket))
		for i := range writers {
			got := b.Get([]byte(fmt.Sprint(i))) != nil
			if want := i != 7 && i != 11; got != want {
				t.Errorf("writer %d: committed %v, want %v", i, got, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, err := range errs {
		switch i {
		case 7:
			if !errors.Is(err, errBoom) {
				t.Errorf("writer 7: %v, want its own error", err)
			}
		case 11:
			if err == nil {
				t.Error("writer 11 panicked without an error")
			}
		default:
			if err != nil {
				t.Errorf("writer %d: %v", i, err)
			}
		}
	}
}

// TestGroupCommitShares: writers arriving while a commit is in flight share
// the next one, so many writers need far fewer commits than writes.
func TestGroupCommitShares(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{})
	if err := s.Commit(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte(testBucket)); return err }); err != nil {
		t.Fatal(err)
	}
	const writers = 200
	var mu sync.Mutex
	txs := map[int]bool{}
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Commit(func(tx *bolt.Tx) error {
				mu.Lock()
				txs[tx.ID()] = true
				mu.Unlock()
				return tx.Bucket([]byte(testBucket)).Put([]byte(fmt.Sprint(i)), []byte("v"))
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if len(txs) >= writers {
		t.Errorf("%d writers used %d transactions: no grouping", writers, len(txs))
	}
	t.Logf("%d writers, %d transactions", writers, len(txs))
}
