package store_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// TestOpenReadsOnlyStalled: with hundreds of transactions in the file, Open
// reads only the few in flight that wait for a simulator step (created while
// it was off, which tracks none of them), gives each a step, and reads
// nothing on the next open.
func TestOpenReadsOnlyStalled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	clock := store.NewManualClock(testStart)
	open := func(auto bool) *store.Store {
		t.Helper()
		s, _ := mustOpen(t, path, store.Options{Now: clock.Now,
			Settings: store.Settings{Chain: store.ChainSettings{AutoAdvance: auto, StepDelay: 3 * time.Second}}})
		return s
	}
	deposits := func(s *store.Store, n int) []string {
		t.Helper()
		v, err := s.CreateVault(store.Sandbox, store.VaultInput{Name: ptr("v")}, store.Idem{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := s.CreateWallet(store.Sandbox, v.VaultID, store.WalletInput{AssetSymbol: ptr("BTC")}, store.Idem{})
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, n)
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				x, err := s.CreateDeposit(store.Sandbox, store.DepositInput{WalletID: &w.WalletID, Amount: ptr("1")}, store.Idem{})
				ids[i] = x.TransactionID
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		return ids
	}

	s := open(true)
	scheduled := deposits(s, 400) // each has its simulator step
	for _, id := range scheduled[:100] {
		if _, err := s.FailTransaction(store.Sandbox, id, ptr("test")); err != nil { // final
			t.Fatal(err)
		}
	}
	s.Close()
	s = open(false)
	entries := s.Count(store.Sandbox, "inflight")
	made := deposits(s, 5)
	// One moved by hand and still in flight, one final: the simulator
	// will owe a step to the first, none to the second.
	if x, err := s.AdvanceTransaction(store.Sandbox, made[3]); err != nil || x.Status == "Completed" {
		t.Fatalf("advance: %+v %v", x, err)
	}
	if _, err := s.FailTransaction(store.Sandbox, made[4], ptr("test")); err != nil {
		t.Fatal(err)
	}
	stalled := made[:4]
	// With the simulator off no step is owed: nothing is tracked.
	if n := s.Count(store.Sandbox, "inflight"); n != entries {
		t.Errorf("in-flight entries went from %d to %d with the simulator off", entries, n)
	}
	s.Close()

	s = open(true)
	if got := s.OpenReads(); got != int64(len(stalled)) {
		t.Errorf("open read %d records, want the %d stalled transactions", got, len(stalled))
	}
	clock.Advance(3 * time.Second)
	jobs, _, err := s.Due(clock.Now(), 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	steps := map[string]bool{}
	for _, j := range jobs {
		if j.Kind == store.JobChainStep {
			steps[j.ID] = true
		}
	}
	for _, id := range append(stalled, scheduled[100:]...) {
		if !steps[id] {
			t.Fatalf("transaction %s in flight has no simulator step", id)
		}
	}
	if len(steps) != 304 {
		t.Errorf("%d simulator steps, want 304", len(steps))
	}
	s.Close()

	s = open(true)
	if got := s.OpenReads(); got != 0 {
		t.Errorf("second open read %d records, want 0", got)
	}
	if got := s.InflightReads(); got != 304 {
		t.Errorf("second open read %d in-flight entries, want the 304 transactions in flight", got)
	}
	s.Close()

	// With the simulator off nothing waits for a step: the transactions'
	// entries are not read at all, however many there are.
	s = open(false)
	if got := s.InflightReads(); got != 0 {
		t.Errorf("open with the simulator off read %d in-flight entries, want 0", got)
	}
}

// TestOpenErrorNamesPathOnce: a file that cannot be created is reported
// with its path once, as the operating system's error has it.
func TestOpenErrorNamesPathOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "x.db")
	_, err := store.Open(path, store.Options{})
	if err == nil {
		t.Fatal("opened a file in a directory that does not exist")
	}
	if n := strings.Count(err.Error(), path); n != 1 {
		t.Errorf("error names the path %d times: %v", n, err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error does not wrap fs.ErrNotExist: %v", err)
	}
}
