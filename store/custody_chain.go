package store

import (
	"encoding/hex"
	"math/big"
	"strings"

	"github.com/complybox/complybox/store/decimal"
)

// nextStatus returns the status after x's current one on its happy path:
// Submitted → PendingSignature → Broadcasting → Confirming → Completed, and
// Submitted → Confirming → Completed for a deposit (already on chain).
func nextStatus(x Transaction) string {
	switch x.Status {
	case StatusSubmitted:
		if x.Type == TxDeposit {
			return StatusConfirming
		}
		return StatusPendingSignature
	case StatusPendingSignature:
		return StatusBroadcasting
	case StatusBroadcasting:
		return StatusConfirming
	case StatusConfirming:
		return StatusCompleted
	}
	return ""
}

// scheduleStep replaces x's pending simulator step: none once x is terminal
// or when the simulator does not advance by itself, else one due after the
// step delay. The caller saves x.
func (t *txn) scheduleStep(env Env, x *diskTransaction) error {
	if err := t.unschedule(x.ChainKey); err != nil {
		return err
	}
	x.ChainKey = nil
	chain := t.s.settings.Chain
	if terminal(x.Status) || !chain.AutoAdvance {
		return nil
	}
	var err error
	x.ChainKey, err = t.schedule(t.now.Add(chain.StepDelay), JobChainStep, env, x.TransactionID)
	return err
}

// move takes x to status, the one place statuses change: it moves the
// balances, emits transaction.status.updated (then balance.updated for each
// wallet whose total or available changed), reschedules the simulator and
// saves x. Returns ECONFLICT invalid_transition for a move the state machine
// does not allow.
func (t *txn) move(env Env, x diskTransaction, status, reason string) (Transaction, error) {
	ok := false
	switch status {
	case StatusFailed:
		ok = !terminal(x.Status)
	case StatusCancelled:
		ok = x.Status == StatusSubmitted || x.Status == StatusPendingSignature
	default:
		ok = status != "" && status == nextStatus(x.Transaction)
	}
	if !ok {
		if terminal(x.Status) {
			return Transaction{}, Conflict("invalid_transition", "transaction %s is %s, a final status", x.TransactionID, x.Status)
		}
		return Transaction{}, Conflict("invalid_transition", "a %s cannot move from %s to %s", x.Type, x.Status, status)
	}
	a, err := t.asset(env, x.AssetID)
	if err != nil {
		return Transaction{}, err
	}
	prev := x.Status
	x.PreviousStatus, x.Status, x.UpdatedAt = &prev, status, At(t.now)
	if status == StatusBroadcasting {
		x.TxHash = strp(newTxHash(a.Network))
	}
	if status == StatusFailed {
		x.FailureReason = &reason
	}
	if terminal(status) {
		x.CompletedAt, x.Final = At(t.now), true
	}
	x.priceUSD(a)
	if err := t.enqueue(env, DestCustody, "transaction.status.updated", "transaction", x.TransactionID, x.statusData()); err != nil {
		return Transaction{}, err
	}
	if terminal(status) {
		if err := t.settle(env, x, status == StatusCompleted); err != nil {
			return Transaction{}, err
		}
	}
	if err := t.scheduleStep(env, &x); err != nil {
		return Transaction{}, err
	}
	return x.Transaction, t.putTransaction(env, x)
}

// settle moves the balances of a transaction that reached a final status.
// Completed: the source's total drops by what was reserved and the credited
// wallet's total and available rise by the amount. Failed or Cancelled: the
// reservation goes back to available and the pending credit is dropped.
func (t *txn) settle(env Env, x diskTransaction, completed bool) error {
	if x.SourceWalletID != nil {
		debit, err := decimal.ParseBaseUnits(x.Debit)
		if err != nil {
			return err
		}
		w, err := t.wallet(env, *x.SourceWalletID)
		if err != nil {
			return err
		}
		l, err := t.ledgerOf(env, w)
		if err != nil {
			return err
		}
		if completed {
			err = t.change(env, l, new(big.Int).Neg(debit), nil, nil)
		} else {
			err = t.change(env, l, nil, debit, nil)
		}
		if err != nil {
			return err
		}
	}
	if x.CreditWalletID != "" {
		credit, err := decimal.ParseBaseUnits(x.Credit)
		if err != nil {
			return err
		}
		w, err := t.wallet(env, x.CreditWalletID)
		if err != nil {
			return err
		}
		l, err := t.ledgerOf(env, w)
		if err != nil {
			return err
		}
		if completed {
			err = t.change(env, l, credit, credit, new(big.Int).Neg(credit))
		} else {
			err = t.change(env, l, nil, nil, new(big.Int).Neg(credit))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// chainStep advances a transaction one step of the chain simulator. A step
// that is no longer the transaction's pending one (a manual move replaced it)
// does nothing.
func (t *txn) chainStep(j Job) error {
	x, err := t.transaction(j.Env, j.ID)
	if err != nil {
		return nil // gone: nothing to advance
	}
	if string(x.ChainKey) != string(j.Key) || terminal(x.Status) {
		return nil
	}
	if !t.s.settings.Chain.AutoAdvance { // scheduled before the simulator was turned off
		x.ChainKey = nil
		return t.putTransaction(j.Env, x)
	}
	_, err = t.move(j.Env, x, nextStatus(x.Transaction), "")
	return err
}

// ResumeSimulator reconciles the schedule with the records in flight, as
// Open does at start-up: every transaction that is not final gets a
// simulator step due after the step delay if its step is missing from the
// schedule (created while the simulator was off, or lost), so turning
// auto_advance on and restarting moves them; every applicant waiting for a
// sandbox review whose job is gone gets it again. It reads the in-flight
// index, not every record, and after a start with the simulator off the
// status index from the first transaction that start left untracked
// (schedule_reconcile.go). Transactions are left alone while the simulator
// is off.
func (s *Store) ResumeSimulator() error { return s.reconcile() }

// AdvanceTransaction moves a transaction one step along its path, as the
// simulator would. Returns ENOTFOUND transaction_not_found and ECONFLICT
// invalid_transition for a final transaction.
func (s *Store) AdvanceTransaction(env Env, id string) (Transaction, error) {
	return s.moveTransaction(env, id, func(x Transaction) (string, string) { return nextStatus(x), "" })
}

// FailTransaction moves a transaction that is not final to Failed with
// reason (nil: "Failed on request"), releasing its reservation. Returns
// EINVALID naming reason (blank, over 500 characters or with a control
// character: it goes into the record and its webhook), ENOTFOUND
// transaction_not_found and ECONFLICT invalid_transition.
func (s *Store) FailTransaction(env Env, id string, reason *string) (Transaction, error) {
	why := "Failed on request"
	if reason != nil {
		if strings.TrimSpace(*reason) == "" {
			return Transaction{}, Invalid("reason", "reason must not be blank; omit it for %q", why)
		}
		if err := checkText("reason", *reason, 500); err != nil {
			return Transaction{}, err
		}
		why = *reason
	}
	return s.moveTransaction(env, id, func(Transaction) (string, string) { return StatusFailed, why })
}

// CancelTransaction cancels a transaction in Submitted or PendingSignature,
// releasing its reservation. Returns ENOTFOUND transaction_not_found and
// ECONFLICT invalid_transition.
func (s *Store) CancelTransaction(env Env, id string) (Transaction, error) {
	return s.moveTransaction(env, id, func(Transaction) (string, string) { return StatusCancelled, "" })
}

func (s *Store) moveTransaction(env Env, id string, to func(Transaction) (status, reason string)) (Transaction, error) {
	var out Transaction
	err := s.updateIn(env, func(t *txn) error {
		x, err := t.transaction(env, id)
		if err != nil {
			return err
		}
		status, reason := to(x.Transaction)
		out, err = t.move(env, x, status, reason)
		return err
	})
	return out, err
}

// newTxHash returns a random transaction hash shaped like the network's.
func newTxHash(network string) string {
	h := hex.EncodeToString(randomBytes(32))
	switch network {
	case NetworkBitcoin, NetworkLitecoin:
		return h
	case NetworkRipple:
		return strings.ToUpper(h)
	case NetworkSolana:
		return base58(randomBytes(64), base58Chars) // a signature: 64 bytes
	}
	return "0x" + h
}
