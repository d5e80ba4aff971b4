package store

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/complybox/complybox/store/decimal"
)

// Transaction types.
const (
	TxDeposit          = "Deposit"
	TxWithdrawal       = "Withdrawal"
	TxInternalTransfer = "InternalTransfer"
)

// Transaction statuses.
const (
	StatusSubmitted        = "Submitted"
	StatusPendingSignature = "PendingSignature"
	StatusBroadcasting     = "Broadcasting"
	StatusConfirming       = "Confirming"
	StatusCompleted        = "Completed"
	StatusFailed           = "Failed"
	StatusCancelled        = "Cancelled"
)

// TransactionStatuses lists every status in path order.
func TransactionStatuses() []string {
	return []string{StatusSubmitted, StatusPendingSignature, StatusBroadcasting, StatusConfirming, StatusCompleted, StatusFailed, StatusCancelled}
}

// TransactionTypes lists every transaction type.
func TransactionTypes() []string { return []string{TxDeposit, TxWithdrawal, TxInternalTransfer} }

func terminal(status string) bool {
	return status == StatusCompleted || status == StatusFailed || status == StatusCancelled
}

// Transaction is the full record of GET /transactions/{id}: every field of
// transaction.created plus previousStatus, failureReason, completedAt and
// updatedAt. Nullable fields are pointers and encode as null.
type Transaction struct {
	TransactionID       string  `json:"transactionId"`
	Type                string  `json:"type"`
	Status              string  `json:"status"`
	PreviousStatus      *string `json:"previousStatus"`
	VaultID             string  `json:"vaultId"`
	VaultExternalID     string  `json:"vaultExternalId"`
	VaultName           string  `json:"vaultName"`
	AssetID             string  `json:"assetId"`
	AssetSymbol         string  `json:"assetSymbol"`
	AssetNetwork        string  `json:"assetNetwork"`
	SourceWalletID      *string `json:"sourceWalletId"`
	DestinationWalletID *string `json:"destinationWalletId"`
	Amount              string  `json:"amount"`
	SourceAddress       string  `json:"sourceAddress"`
	DestinationAddress  string  `json:"destinationAddress"`
	DestinationTag      *string `json:"destinationTag"`
	TxHash              *string `json:"txHash"`
	NetworkFee          *string `json:"networkFee"`
	FeeCurrency         *string `json:"feeCurrency"`
	AmountUSD           *string `json:"amountUSD"`
	FeeUSD              *string `json:"feeUSD"`
	Note                *string `json:"note"`
	FailureReason       *string `json:"failureReason"`
	CreatedAt           Time    `json:"createdAt"`
	UpdatedAt           Time    `json:"updatedAt"`
	CompletedAt         Time    `json:"completedAt"`
}

// diskTransaction is a transaction with its ledger bookkeeping. Records
// are kept in creation order: transactions_idx maps a sequence to the exact
// bytes GET /transactions/{id} answers, so creations append to dense pages
// and lists read one bucket; transactions maps the id to that sequence and
// the bookkeeping.
type diskTransaction struct {
	Transaction
	txLedger
	seq     uint64 // 0 until first written
	indexed []fkey // the filter-index keys as stored; nil until first written
}

// Filter-index fields of transactions (transactions_bits, see list_filter.go).
const (
	fTxVault  byte = 'v'
	fTxWallet byte = 'w' // source and credited wallet: one key each
	fTxStatus byte = 's'
	fTxType   byte = 't'
)

// filterKeys returns the filter-index keys of x as it is now.
func (x *diskTransaction) filterKeys() []fkey {
	keys := []fkey{{fTxVault, x.VaultID}, {fTxStatus, x.Status}, {fTxType, x.Type}}
	if x.SourceWalletID != nil {
		keys = append(keys, fkey{fTxWallet, *x.SourceWalletID})
	}
	if w := x.CreditWalletID; w != "" && (x.SourceWalletID == nil || *x.SourceWalletID != w) {
		keys = append(keys, fkey{fTxWallet, w})
	}
	return keys
}

type txLedger struct {
	Debit          string `json:"debit,omitempty"`          // base units reserved from the source wallet: amount + fee
	Credit         string `json:"credit,omitempty"`         // base units credited on completion
	CreditWalletID string `json:"creditWalletId,omitempty"` // the wallet credited: deposit target or transfer destination
	ChainKey       []byte `json:"chainKey,omitempty"`       // schedule key of the pending simulator step
	Final          bool   `json:"final,omitempty"`          // in a terminal status: no step will ever be due
}

// txCreatedData is the data of transaction.created (seed 001 §6).
type txCreatedData struct {
	TransactionID       string  `json:"transactionId"`
	Type                string  `json:"type"`
	Status              string  `json:"status"`
	VaultID             string  `json:"vaultId"`
	VaultExternalID     string  `json:"vaultExternalId"`
	VaultName           string  `json:"vaultName"`
	AssetID             string  `json:"assetId"`
	AssetSymbol         string  `json:"assetSymbol"`
	AssetNetwork        string  `json:"assetNetwork"`
	SourceWalletID      *string `json:"sourceWalletId"`
	DestinationWalletID *string `json:"destinationWalletId"`
	Amount              string  `json:"amount"`
	SourceAddress       string  `json:"sourceAddress"`
	DestinationAddress  string  `json:"destinationAddress"`
	DestinationTag      *string `json:"destinationTag"`
	TxHash              *string `json:"txHash"`
	NetworkFee          *string `json:"networkFee"`
	FeeCurrency         *string `json:"feeCurrency"`
	AmountUSD           *string `json:"amountUSD"`
	FeeUSD              *string `json:"feeUSD"`
	Note                *string `json:"note"`
	CreatedAt           Time    `json:"createdAt"`
}

// txStatusData is the data of transaction.status.updated (seed 001 §6).
type txStatusData struct {
	TransactionID   string  `json:"transactionId"`
	Type            string  `json:"type"`
	Status          string  `json:"status"`
	PreviousStatus  *string `json:"previousStatus"`
	VaultID         string  `json:"vaultId"`
	VaultExternalID string  `json:"vaultExternalId"`
	VaultName       string  `json:"vaultName"`
	AssetID         string  `json:"assetId"`
	AssetSymbol     string  `json:"assetSymbol"`
	AssetNetwork    string  `json:"assetNetwork"`
	SourceWalletID  *string `json:"sourceWalletId"`
	Amount          string  `json:"amount"`
	SourceAddress   string  `json:"sourceAddress"`
	DestinationAddr string  `json:"destinationAddress"`
	TxHash          *string `json:"txHash"`
	NetworkFee      *string `json:"networkFee"`
	FeeCurrency     *string `json:"feeCurrency"`
	AmountUSD       *string `json:"amountUSD"`
	FeeUSD          *string `json:"feeUSD"`
	FailureReason   *string `json:"failureReason"`
	CompletedAt     Time    `json:"completedAt"`
}

func (x Transaction) createdData() txCreatedData {
	return txCreatedData{
		TransactionID: x.TransactionID, Type: x.Type, Status: x.Status, VaultID: x.VaultID,
		VaultExternalID: x.VaultExternalID, VaultName: x.VaultName, AssetID: x.AssetID,
		AssetSymbol: x.AssetSymbol, AssetNetwork: x.AssetNetwork, SourceWalletID: x.SourceWalletID,
		DestinationWalletID: x.DestinationWalletID, Amount: x.Amount, SourceAddress: x.SourceAddress,
		DestinationAddress: x.DestinationAddress, DestinationTag: x.DestinationTag, TxHash: x.TxHash,
		NetworkFee: x.NetworkFee, FeeCurrency: x.FeeCurrency, AmountUSD: x.AmountUSD, FeeUSD: x.FeeUSD,
		Note: x.Note, CreatedAt: x.CreatedAt,
	}
}

func (x Transaction) statusData() txStatusData {
	return txStatusData{
		TransactionID: x.TransactionID, Type: x.Type, Status: x.Status, PreviousStatus: x.PreviousStatus,
		VaultID: x.VaultID, VaultExternalID: x.VaultExternalID, VaultName: x.VaultName, AssetID: x.AssetID,
		AssetSymbol: x.AssetSymbol, AssetNetwork: x.AssetNetwork, SourceWalletID: x.SourceWalletID,
		Amount: x.Amount, SourceAddress: x.SourceAddress, DestinationAddr: x.DestinationAddress,
		TxHash: x.TxHash, NetworkFee: x.NetworkFee, FeeCurrency: x.FeeCurrency, AmountUSD: x.AmountUSD,
		FeeUSD: x.FeeUSD, FailureReason: x.FailureReason, CompletedAt: x.CompletedAt,
	}
}

func (t *txn) transaction(env Env, id string) (diskTransaction, error) {
	var x diskTransaction
	v := t.env(env, "transactions").Get([]byte(id))
	if len(v) < 8 {
		return x, NotFound("transaction", id)
	}
	x.seq = btoi(v[:8])
	if err := json.Unmarshal(v[8:], &x.txLedger); err != nil {
		return x, err
	}
	rec := t.env(env, "transactions_idx").Get(v[:8])
	if rec == nil {
		return x, fmt.Errorf("transaction %s: record %d is missing", id, x.seq)
	}
	if err := json.Unmarshal(rec, &x.Transaction); err != nil {
		return x, err
	}
	x.indexed = x.filterKeys()
	return x, nil
}

// putTransaction writes x's record and bookkeeping, giving a new record the
// next sequence.
func (t *txn) putTransaction(env Env, x diskTransaction) error {
	rec, err := json.Marshal(x.Transaction)
	if err != nil {
		return err
	}
	return t.putTransactionBytes(env, x, rec)
}

// putTransactionBytes is putTransaction with the record already encoded.
func (t *txn) putTransactionBytes(env Env, x diskTransaction, rec []byte) error {
	idx := t.env(env, "transactions_idx")
	if x.seq == 0 {
		var err error
		if x.seq, err = idx.NextSequence(); err != nil {
			return err
		}
	}
	if err := idx.Put(itob(x.seq), rec); err != nil {
		return err
	}
	if err := t.reindex(env, "transactions_bits", x.seq, x.indexed, x.filterKeys()); err != nil {
		return err
	}
	l, err := json.Marshal(x.txLedger)
	if err != nil {
		return err
	}
	if err := t.env(env, "transactions").Put([]byte(x.TransactionID), append(itob(x.seq), l...)); err != nil {
		return err
	}
	return t.trackTransaction(env, x) // in-flight index (schedule_reconcile.go)
}

// TransactionInput is the body of POST /transactions.
type TransactionInput struct {
	Type                *string `json:"type"`
	SourceWalletID      *string `json:"sourceWalletId"`
	DestinationWalletID *string `json:"destinationWalletId"`
	DestinationAddress  *string `json:"destinationAddress"`
	DestinationTag      *string `json:"destinationTag"`
	Amount              *string `json:"amount"`
	Note                *string `json:"note"`
}

func (in TransactionInput) validate() error {
	switch {
	case in.Type == nil:
		return Invalid("type", "type is required: Withdrawal or InternalTransfer")
	case *in.Type == TxDeposit:
		return Invalid("type", "deposits are detected, not submitted; in the sandbox use POST /sandbox/deposits")
	case *in.Type != TxWithdrawal && *in.Type != TxInternalTransfer:
		return Invalid("type", "type must be Withdrawal or InternalTransfer, not %q", *in.Type)
	case in.SourceWalletID == nil || *in.SourceWalletID == "":
		return Invalid("sourceWalletId", "sourceWalletId is required")
	case in.Amount == nil:
		return Invalid("amount", "amount is required")
	}
	if *in.Type == TxWithdrawal {
		if in.DestinationWalletID != nil {
			return Invalid("destinationWalletId", "a Withdrawal goes to destinationAddress; use InternalTransfer to move funds to a wallet")
		}
		if in.DestinationAddress == nil || *in.DestinationAddress == "" {
			return Invalid("destinationAddress", "destinationAddress is required for a Withdrawal")
		}
		if err := checkAddress("destinationAddress", *in.DestinationAddress); err != nil {
			return err
		}
	} else {
		if in.DestinationAddress != nil {
			return Invalid("destinationAddress", "an InternalTransfer goes to destinationWalletId, not to an address")
		}
		if in.DestinationWalletID == nil || *in.DestinationWalletID == "" {
			return Invalid("destinationWalletId", "destinationWalletId is required for an InternalTransfer")
		}
		if *in.DestinationWalletID == *in.SourceWalletID {
			return Invalid("destinationWalletId", "destinationWalletId must differ from sourceWalletId")
		}
		if in.DestinationTag != nil {
			return Invalid("destinationTag", "an InternalTransfer uses the destination wallet's own deposit tag")
		}
	}
	if in.DestinationTag != nil {
		if err := checkTag("destinationTag", *in.DestinationTag); err != nil {
			return err
		}
	}
	if in.Note != nil {
		return checkText("note", *in.Note, 1000)
	}
	return nil
}

// checkAddress accepts any plausible on-chain address: 1 to 128 printable
// characters without spaces. Networks differ too much to check more.
func checkAddress(field, s string) error {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return Invalid(field, "%s must not contain spaces or non-ASCII characters", field)
		}
	}
	if s == "" || len(s) > 128 { // ASCII: a byte is a character
		return Invalid(field, "%s must be 1 to 128 characters", field)
	}
	return nil
}

// checkTag accepts a memo or destination tag of 1 to 64 printable characters.
func checkTag(field, s string) error {
	if s == "" {
		return Invalid(field, "%s must not be empty; omit it instead", field)
	}
	return checkText(field, s, 64)
}

// DepositInput is the body of POST /sandbox/deposits.
type DepositInput struct {
	WalletID      *string `json:"walletId"`
	Amount        *string `json:"amount"`
	SourceAddress *string `json:"sourceAddress"`
}

func (in DepositInput) validate() error {
	switch {
	case in.WalletID == nil || *in.WalletID == "":
		return Invalid("walletId", "walletId is required")
	case in.Amount == nil:
		return Invalid("amount", "amount is required")
	case in.SourceAddress != nil:
		return checkAddress("sourceAddress", *in.SourceAddress)
	}
	return nil
}

func strp(s string) *string { return &s }

// newTransaction fills the fields every type shares from the wallet whose
// vault owns the transaction. The id and times are set when it is written.
func (t *txn) newTransaction(env Env, typ string, w diskWallet, a Asset, amount *big.Int) (diskTransaction, error) {
	v, err := t.vault(env, w.VaultID)
	if err != nil {
		return diskTransaction{}, err
	}
	return diskTransaction{Transaction: Transaction{
		Type: typ, Status: StatusSubmitted,
		VaultID: v.VaultID, VaultExternalID: v.ExternalID, VaultName: v.Name,
		AssetID: a.ID, AssetSymbol: a.Symbol, AssetNetwork: a.Network,
		Amount: decimal.FormatUnits(amount, a.Decimals),
	}}, nil
}

// priceUSD sets amountUSD and feeUSD from the prices in force.
func (x *diskTransaction) priceUSD(a Asset) {
	amount, err := decimal.ParseUnits("amount", x.Amount, a.Decimals)
	if err != nil {
		return
	}
	x.AmountUSD = decimal.USDValue(amount, a.Decimals, a.USDPrice)
	x.FeeUSD = nil
	if x.NetworkFee != nil {
		if fee, err := decimal.ParseUnits("networkFee", *x.NetworkFee, a.Decimals); err == nil {
			x.FeeUSD = decimal.USDValue(fee, a.Decimals, a.USDPrice)
		}
	}
}

// draft is a new transaction prepared from records that never change once
// written (wallets, vaults, assets). It is read before the write
// transaction, so the serial part of a group commit stays short.
type draft struct {
	x      diskTransaction
	from   *diskWallet // debited: reserved now, paid on completion
	to     *diskWallet // credited on completion, pending until then
	debit  *big.Int
	credit *big.Int

	decimals int // of the asset

	record  []byte // the record's JSON
	created Event  // transaction.created, its envelope encoded
	debited *Event // balance.updated of the debited wallet, likewise; nil when none is
}

// seal mints the draft's id, stamps its creation time (the time the request
// was taken in) and encodes the record, its transaction.created event and
// the debited wallet's balance.updated, of that same time, so none of that
// work waits in the write transaction.
func (d *draft) seal(now time.Time) error {
	d.x.TransactionID, d.x.CreatedAt, d.x.UpdatedAt = newID(), At(now), At(now)
	var err error
	d.record = d.x.Transaction.appendJSON(make([]byte, 0, 1024))
	if d.created, err = newEvent("transaction.created", "transaction", d.x.TransactionID, now, d.x.createdData()); err != nil {
		return err
	}
	if d.from != nil {
		ev, err := balanceEvent(*d.from, now)
		if err != nil {
			return err
		}
		d.debited = &ev
	}
	return nil
}

// draftTransfer prepares a Withdrawal or an InternalTransfer.
func (t *txn) draftTransfer(env Env, in TransactionInput) (draft, error) {
	src, err := t.wallet(env, *in.SourceWalletID)
	if err != nil {
		return draft{}, err
	}
	a, err := t.asset(env, src.AssetID)
	if err != nil {
		return draft{}, err
	}
	amount, err := decimal.ParseAmount("amount", *in.Amount, a.Decimals)
	if err != nil {
		return draft{}, fieldError(err)
	}
	d := draft{from: &src, debit: new(big.Int).Set(amount), decimals: a.Decimals}
	if *in.Type == TxInternalTransfer {
		dst, err := t.wallet(env, *in.DestinationWalletID)
		if err != nil {
			return draft{}, err
		}
		if dst.AssetID != src.AssetID {
			return draft{}, Invalid("destinationWalletId", "the destination wallet holds another asset than the source wallet")
		}
		d.to, d.credit = &dst, amount
	} else if in.DestinationTag != nil && !a.NeedsMemo {
		return draft{}, Invalid("destinationTag", "%s needs no destination tag", a.Symbol)
	}
	if d.x, err = t.newTransaction(env, *in.Type, src, a, amount); err != nil {
		return draft{}, err
	}
	x := &d.x
	x.SourceWalletID, x.SourceAddress, x.Note = &src.WalletID, src.DepositAddress, in.Note
	if d.to == nil {
		x.DestinationAddress, x.DestinationTag = *in.DestinationAddress, in.DestinationTag
		if a.NetworkFee != "" {
			fee, err := decimal.ParseUnits("networkFee", a.NetworkFee, a.Decimals)
			if err != nil {
				return draft{}, Errorf(EINTERNAL, "internal_error", "asset %s has a bad networkFee: %v", a.Symbol, fieldError(err))
			}
			if fee.Sign() > 0 { // a network that charges none: no fee fields (seed 001)
				d.debit.Add(d.debit, fee)
				x.NetworkFee, x.FeeCurrency = strp(decimal.FormatUnits(fee, a.Decimals)), strp(a.Symbol)
			}
		}
	} else {
		x.DestinationWalletID, x.DestinationAddress, x.DestinationTag = &d.to.WalletID, d.to.DepositAddress, d.to.DepositTag
		x.Credit, x.CreditWalletID = d.credit.String(), d.to.WalletID
	}
	x.Debit = d.debit.String()
	x.priceUSD(a)
	return d, nil
}

// draftDeposit prepares a deposit.
func (t *txn) draftDeposit(env Env, in DepositInput) (draft, error) {
	w, err := t.wallet(env, *in.WalletID)
	if err != nil {
		return draft{}, err
	}
	a, err := t.asset(env, w.AssetID)
	if err != nil {
		return draft{}, err
	}
	amount, err := decimal.ParseAmount("amount", *in.Amount, a.Decimals)
	if err != nil {
		return draft{}, fieldError(err)
	}
	d := draft{to: &w, credit: amount, decimals: a.Decimals}
	if d.x, err = t.newTransaction(env, TxDeposit, w, a, amount); err != nil {
		return draft{}, err
	}
	x := &d.x
	x.SourceAddress = newAddress(a.Network)
	if in.SourceAddress != nil {
		x.SourceAddress = *in.SourceAddress
	}
	x.DestinationAddress, x.DestinationTag = w.DepositAddress, w.DepositTag
	x.TxHash = strp(newTxHash(a.Network)) // detected on chain: the hash is known
	x.Credit, x.CreditWalletID = amount.String(), w.WalletID
	x.priceUSD(a)
	return d, nil
}

// submitTransaction writes a drafted transaction: it reserves the debit (ECONFLICT
// insufficient_funds when available is short), marks the credit pending,
// emits transaction.created and balance.updated, and schedules the first
// simulator step.
func (t *txn) submitTransaction(env Env, d draft) (Transaction, error) {
	x := d.x // a fresh copy on every run of the operation
	var from *ledger
	if d.from != nil {
		var err error
		if from, err = t.ledgerOf(env, *d.from); err != nil {
			return Transaction{}, err
		}
		if d.debit.Cmp(from.available) > 0 {
			return Transaction{}, Conflict("insufficient_funds", "amount plus fee is %s %s but only %s %s is available",
				decimal.FormatUnits(d.debit, d.decimals), x.AssetSymbol, decimal.FormatUnits(from.available, d.decimals), x.AssetSymbol)
		}
	}
	if err := t.enqueueEvent(env, DestCustody, d.created); err != nil {
		return Transaction{}, err
	}
	if from != nil {
		if err := t.changeAnnouncing(env, from, nil, new(big.Int).Neg(d.debit), nil, d.debited); err != nil {
			return Transaction{}, err
		}
	}
	if d.to != nil {
		to, err := t.ledgerOf(env, *d.to)
		if err != nil {
			return Transaction{}, err
		}
		if err := t.change(env, to, nil, nil, d.credit); err != nil {
			return Transaction{}, err
		}
	}
	if err := t.scheduleStep(env, &x); err != nil {
		return Transaction{}, err
	}
	return x.Transaction, t.putTransactionBytes(env, x, d.record)
}

// CreateTransaction submits a Withdrawal or an InternalTransfer, reserving
// amount plus fee from the source wallet's available balance, and emits
// transaction.created and balance.updated. With an Idempotency-Key seen
// before with the same body it returns the first transaction. Returns
// EINVALID for a bad body, ENOTFOUND wallet_not_found, ECONFLICT
// insufficient_funds and EIDEMPOTENCY for a key reused with another body.
func (s *Store) CreateTransaction(env Env, in TransactionInput, idem Idem) (Transaction, error) {
	x, _, err := s.CreateTransactionJSON(env, in, idem)
	return x, err
}

// CreateTransactionJSON is CreateTransaction that also returns the JSON
// bytes of the new record, which GET /transactions/{id} answers, for a
// caller that passes them on unchanged; nil for an idempotent replay.
func (s *Store) CreateTransactionJSON(env Env, in TransactionInput, idem Idem) (Transaction, []byte, error) {
	if err := in.validate(); err != nil {
		return Transaction{}, nil, err
	}
	return s.create(env, "POST /transactions", idem, func(t *txn) (draft, error) { return t.draftTransfer(env, in) })
}

// CreateDeposit simulates the detection of an inbound deposit to a wallet
// (sandbox only: the server checks the environment). The amount is pending
// until the deposit completes. With an Idempotency-Key seen before with the
// same body it returns the first deposit. Returns EINVALID for a bad body,
// ENOTFOUND wallet_not_found and EIDEMPOTENCY.
func (s *Store) CreateDeposit(env Env, in DepositInput, idem Idem) (Transaction, error) {
	x, _, err := s.CreateDepositJSON(env, in, idem)
	return x, err
}

// CreateDepositJSON is CreateDeposit that also returns the JSON bytes of
// the new record, as CreateTransactionJSON does.
func (s *Store) CreateDepositJSON(env Env, in DepositInput, idem Idem) (Transaction, []byte, error) {
	if err := in.validate(); err != nil {
		return Transaction{}, nil, err
	}
	return s.create(env, "POST /sandbox/deposits", idem, func(t *txn) (draft, error) { return t.draftDeposit(env, in) })
}

// create drafts a transaction in a read transaction, then submits it in one
// business operation, answering an idempotent replay first. It returns the
// record's JSON bytes too, those of the draft, which the write stores
// unchanged; nil for a replay.
func (s *Store) create(env Env, scope string, idem Idem, prepare func(t *txn) (draft, error)) (Transaction, []byte, error) {
	var d draft
	var replayed bool
	var out Transaction
	err := s.viewIn(env, func(t *txn) (err error) {
		if replayed, err = t.replay(env, scope, idem, &out); replayed || err != nil {
			return err
		}
		if d, err = prepare(t); err != nil {
			return err
		}
		return d.seal(t.now)
	})
	if err != nil || replayed {
		return out, nil, err
	}
	if s.beforeApply != nil {
		s.beforeApply()
	}
	var rec []byte
	err = s.updateIn(env, func(t *txn) error {
		rec = nil
		if ok, err := t.replay(env, scope, idem, &out); ok || err != nil {
			return err
		}
		var err error
		if out, err = t.submitTransaction(env, d); err != nil {
			return err
		}
		rec = d.record
		return t.remember(env, scope, idem, out)
	})
	if err != nil {
		return out, nil, err
	}
	return out, rec, nil
}

// Transaction returns a transaction. Returns ENOTFOUND transaction_not_found.
func (s *Store) Transaction(env Env, id string) (Transaction, error) {
	var out Transaction
	err := s.viewIn(env, func(t *txn) error {
		x, err := t.transaction(env, id)
		out = x.Transaction
		return err
	})
	return out, err
}

// TransactionJSON returns a transaction as the JSON bytes of its record, for
// readers that pass it on unchanged. Returns ENOTFOUND transaction_not_found.
func (s *Store) TransactionJSON(env Env, id string) ([]byte, error) {
	var out []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		root := tx.Bucket([]byte("env:" + string(env)))
		if root == nil {
			return NotFound("transaction", id)
		}
		v := root.Bucket([]byte("transactions")).Get([]byte(id))
		if len(v) < 8 {
			return NotFound("transaction", id)
		}
		b := root.Bucket([]byte("transactions_idx")).Get(v[:8])
		if b == nil {
			return fmt.Errorf("transaction %s: record is missing", id)
		}
		out = append(make([]byte, 0, len(b)+1), b...)
		return nil
	})
	return out, err
}

// TransactionFilter selects transactions; empty fields match everything.
type TransactionFilter struct {
	VaultID  string // the transaction's vault, or the vault it credits
	Status   string
	Type     string
	WalletID string // source or destination (the credited wallet of a deposit too)
}

// Validate returns EINVALID naming status or type when either is unknown.
func (f TransactionFilter) Validate() error {
	if f.Status != "" && !contains(TransactionStatuses(), f.Status) {
		return Invalid("status", "status must be one of %s", strings.Join(TransactionStatuses(), ", "))
	}
	if f.Type != "" && !contains(TransactionTypes(), f.Type) {
		return Invalid("type", "type must be one of %s", strings.Join(TransactionTypes(), ", "))
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// match reports whether x passes the filter; ledger reads x's bookkeeping,
// needed only to filter by wallet.
func (f TransactionFilter) match(x Transaction, ledger func() (txLedger, error)) (bool, error) {
	if (f.Status != "" && x.Status != f.Status) || (f.Type != "" && x.Type != f.Type) || (f.VaultID != "" && x.VaultID != f.VaultID) {
		return false, nil
	}
	if f.WalletID == "" || (x.SourceWalletID != nil && *x.SourceWalletID == f.WalletID) {
		return true, nil
	}
	l, err := ledger()
	if err != nil {
		return false, err
	}
	return l.CreditWalletID == f.WalletID, nil
}

// keys returns the filter-index keys the filter's fields select.
func (f TransactionFilter) keys() []fkey {
	var keys []fkey
	for _, k := range []fkey{{fTxWallet, f.WalletID}, {fTxVault, f.VaultID}, {fTxStatus, f.Status}, {fTxType, f.Type}} {
		if k.value != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// Transactions lists transactions newest first, reading the filter indexes
// (a page reads O(limit) records). Returns EINVALID for a bad filter or
// cursor.
func (s *Store) Transactions(env Env, f TransactionFilter, p Page) ([]Transaction, *string, error) {
	if err := f.Validate(); err != nil {
		return nil, nil, err
	}
	out := []Transaction{}
	var next *string
	err := s.viewIn(env, func(t *txn) error {
		scan := listScan{kind: cursorKind{listTransactions, env}, seqs: t.env(env, "transactions_idx"), filters: t.env(env, "transactions_bits"),
			log: t.logOf(env, "transactions_bits"), keys: f.keys()}
		var err error
		next, err = scan.run(p, func(_ uint64, rec []byte) (bool, error) {
			s.listDecodes.Add(1)
			var x Transaction
			if err := json.Unmarshal(rec, &x); err != nil {
				return false, err
			}
			ok, err := f.match(x, func() (txLedger, error) { return t.ledgerOfTransaction(env, x.TransactionID) })
			if ok {
				out = append(out, x)
			}
			return ok, err
		})
		return err
	})
	return out, next, err
}

// ledgerOfTransaction reads only the bookkeeping of transaction id.
func (t *txn) ledgerOfTransaction(env Env, id string) (txLedger, error) {
	var l txLedger
	v := t.env(env, "transactions").Get([]byte(id))
	if len(v) < 8 {
		return l, NotFound("transaction", id)
	}
	return l, json.Unmarshal(v[8:], &l)
}
