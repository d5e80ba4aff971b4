package store_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// TestSimulatorFollowsAutoAdvance: a step scheduled while the simulator was
// on does nothing once it is off, and ResumeSimulator schedules a step for
// every transaction in flight that has none once it is on again.
func TestSimulatorFollowsAutoAdvance(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	clock := store.NewManualClock(testStart)
	open := func(auto bool) *store.Store {
		t.Helper()
		s, _ := mustOpen(t, path, store.Options{Now: clock.Now,
			Settings: store.Settings{Chain: store.ChainSettings{AutoAdvance: auto, StepDelay: 3 * time.Second}}})
		return s
	}
	runDue := func(s *store.Store) {
		t.Helper()
		jobs, _, err := s.Due(clock.Now(), 100, func([]byte) bool { return false })
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			if j.Kind == store.JobChainStep {
				if err := s.RunJob(j); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	status := func(s *store.Store, id string) string {
		t.Helper()
		x, err := s.Transaction(store.Sandbox, id)
		if err != nil {
			t.Fatal(err)
		}
		return x.Status
	}

	s := open(true)
	v, err := s.CreateVault(store.Sandbox, store.VaultInput{Name: ptr("v")}, store.Idem{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.CreateWallet(store.Sandbox, v.VaultID, store.WalletInput{AssetSymbol: ptr("BTC")}, store.Idem{})
	if err != nil {
		t.Fatal(err)
	}
	scheduled, err := s.CreateDeposit(store.Sandbox, store.DepositInput{WalletID: &w.WalletID, Amount: ptr("1")}, store.Idem{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = open(false)
	clock.Advance(time.Minute)
	runDue(s)
	if got := status(s, scheduled.TransactionID); got != "Submitted" {
		t.Fatalf("%s with the simulator off: a step scheduled earlier moved it", got)
	}
	stalled, err := s.CreateDeposit(store.Sandbox, store.DepositInput{WalletID: &w.WalletID, Amount: ptr("2")}, store.Idem{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ResumeSimulator(); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	runDue(s)
	if got := status(s, stalled.TransactionID); got != "Submitted" {
		t.Fatalf("%s: ResumeSimulator scheduled a step while the simulator is off", got)
	}
	s.Close()

	s = open(true)
	if err := s.ResumeSimulator(); err != nil {
		t.Fatal(err)
	}
	clock.Advance(3 * time.Second)
	runDue(s)
	for _, id := range []string{scheduled.TransactionID, stalled.TransactionID} {
		if got := status(s, id); got != "Confirming" {
			t.Errorf("%s after resuming, want Confirming", got)
		}
	}
	clock.Advance(3 * time.Second)
	runDue(s)
	if got := status(s, stalled.TransactionID); got != "Completed" {
		t.Errorf("%s two steps after resuming, want Completed", got)
	}
	if err := s.ResumeSimulator(); err != nil { // nothing left in flight
		t.Fatal(err)
	}
	if jobs, _, _ := s.Due(clock.Now().Add(time.Hour), 100, func([]byte) bool { return false }); len(jobs) != 0 {
		t.Errorf("%d jobs due after every transaction completed", len(jobs))
	}
}
