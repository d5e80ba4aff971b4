package store

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
)

// The in-flight index of each environment ("inflight") names every record
// that waits for scheduled work, with the schedule key of that work, so
// that start-up checks the schedule for exactly those and decodes only the
// records whose work is missing, whatever the size of the file:
//
//	"chain|" + transaction id   -> its simulator step's key (empty: none);
//	                               a transaction not in a terminal status,
//	                               written while the simulator runs
//	"review|" + externalUserId  -> its sandbox review job's key
//
// It is kept by putTransactionBytes and putApplicant, in the transaction
// that changes the record.
//
// While the simulator is off no transaction waits for a step, so new
// transactions get no "chain|" entry (one B+tree fewer in every commit of
// a hand-driven sandbox's writes). Instead the first start with it off
// notes in the meta bucket the first sequence of the transactions it left
// untracked (untrackedKey); the next start with it on finds those still in
// flight through the transactions' status index, from that sequence on,
// gives each its step and clears the note.
const bucketInflight = "inflight"

// untrackedKey is the meta entry that holds the first sequence of env's
// transactions created while the simulator was off (see bucketInflight).
func untrackedKey(env Env) []byte { return []byte("untracked:" + string(env)) }

const (
	inflightChain  = "chain|"
	inflightReview = "review|"
)

// trackTransaction keeps x's entry in the in-flight index.
func (t *txn) trackTransaction(env Env, x diskTransaction) error {
	b := t.env(env, bucketInflight)
	if b == nil {
		return nil // before Open made the index
	}
	k := []byte(inflightChain + x.TransactionID)
	if x.Final || terminal(x.Status) {
		return b.Delete(k)
	}
	if !t.s.settings.Chain.AutoAdvance {
		// Untracked (the note of untrackedKey covers it). An entry made
		// while the simulator ran keeps its key; the next start with it on
		// finds that key gone from the schedule and reads the record.
		return nil
	}
	return b.Put(k, x.ChainKey)
}

// trackReview keeps a's entry in the in-flight index.
func (t *txn) trackReview(env Env, a *diskApplicant) error {
	b := t.env(env, bucketInflight)
	if b == nil {
		return nil
	}
	k := []byte(inflightReview + a.ExternalID)
	if a.ReviewJob == nil {
		return b.Delete(k)
	}
	return b.Put(k, a.ReviewJob)
}

// reconcile makes the schedule hold the work every record in flight waits
// for, reading only the in-flight index: a transaction that is not final
// gets a simulator step when the simulator runs and its step is missing
// (never scheduled while the simulator was off, or lost), and an applicant
// whose sandbox review job is missing gets one again. It builds the index
// once, on the first start of a file that has none.
func (s *Store) reconcile() error {
	return s.update(func(t *txn) error {
		for _, env := range Envs() {
			t.enter(env)
			sched := t.schedOf(env)
			if err := t.buildInflight(env); err != nil {
				return err
			}
			// Work that is still scheduled needs no look at its record.
			// Transactions wait for a simulator step only while the
			// simulator runs: with it off their entries are not read at
			// all ("chain|" sorts before "review|"), so a file holding
			// many transactions moved by hand starts without touching them.
			var keys []string
			c := t.env(env, bucketInflight).Cursor()
			k, v := c.First()
			if !t.s.settings.Chain.AutoAdvance {
				k, v = c.Seek([]byte(inflightReview))
			}
			for ; k != nil; k, v = c.Next() {
				s.stats.inflightReads.Add(1)
				if len(v) > 0 && sched.Get(v) != nil {
					continue
				}
				keys = append(keys, string(k))
			}
			done := map[string]bool{}
			for _, k := range keys {
				s.stats.openReads.Add(1)
				var err error
				if id, ok := strings.CutPrefix(k, inflightChain); ok {
					done[id] = true
					err = t.reconcileTransaction(env, id, sched.Get)
				} else if id, ok := strings.CutPrefix(k, inflightReview); ok {
					err = t.reconcileReview(env, id, sched.Get)
				}
				if err != nil {
					return err
				}
			}
			if err := t.reconcileUntracked(env, done, sched.Get); err != nil {
				return err
			}
		}
		return nil
	})
}

// reconcileUntracked keeps the note of untrackedKey: with the simulator off
// it notes where env's untracked transactions start, unless a note stands;
// with it on it gives a step to each transaction since the note that is
// still in flight (done: those the in-flight index had), then clears it.
func (t *txn) reconcileUntracked(env Env, done map[string]bool, scheduled func([]byte) []byte) error {
	meta := t.Bucket(bucketMeta)
	note := meta.Get(untrackedKey(env))
	if !t.s.settings.Chain.AutoAdvance {
		if note != nil {
			return nil
		}
		return meta.Put(untrackedKey(env), itob(t.env(env, "transactions_idx").Sequence()+1))
	}
	if len(note) != 8 {
		return nil
	}
	ids, err := t.transactionsInFlight(env, btoi(note))
	if err != nil {
		return err
	}
	for _, id := range ids {
		if done[id] {
			continue
		}
		t.s.stats.openReads.Add(1)
		if err := t.reconcileTransaction(env, id, scheduled); err != nil {
			return err
		}
	}
	return meta.Delete(untrackedKey(env))
}

// transactionsInFlight returns the ids of env's transactions from sequence
// lo on whose status is not terminal, read from the status index.
func (t *txn) transactionsInFlight(env Env, lo uint64) ([]string, error) {
	var ids []string
	for _, status := range TransactionStatuses() {
		if terminal(status) {
			continue
		}
		scan := listScan{seqs: t.env(env, "transactions_idx"), filters: t.env(env, "transactions_bits"),
			log: t.logOf(env, "transactions_bits"), keys: []fkey{{fTxStatus, status}}, lo: lo}
		_, err := scan.run(Page{Limit: math.MaxInt}, func(_ uint64, rec []byte) (bool, error) {
			var x struct {
				ID string `json:"transactionId"`
			}
			if err := json.Unmarshal(rec, &x); err != nil {
				return false, err
			}
			ids = append(ids, x.ID)
			return true, nil
		})
		if err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// reconcileTransaction gives transaction id its simulator step if it is in
// flight and has none in the schedule.
func (t *txn) reconcileTransaction(env Env, id string, scheduled func([]byte) []byte) error {
	x, err := t.transaction(env, id)
	if ErrorCode(err) == ENOTFOUND {
		return t.env(env, bucketInflight).Delete([]byte(inflightChain + id))
	}
	if err != nil {
		return err
	}
	if x.Final || terminal(x.Status) {
		return t.trackTransaction(env, x)
	}
	if !t.s.settings.Chain.AutoAdvance {
		return nil
	}
	if x.ChainKey != nil && scheduled(x.ChainKey) != nil {
		return t.trackTransaction(env, x) // index entries of older files lack the key
	}
	if x.ChainKey != nil {
		t.s.log.Warn("schedule: a transaction's simulator step was lost; scheduled again", "env", env, "transaction", id)
	}
	if err := t.scheduleStep(env, &x); err != nil {
		return err
	}
	return t.putTransaction(env, x)
}

// reconcileReview gives applicant extID its sandbox review job again if the
// job it records is gone from the schedule, due when it was (or now).
func (t *txn) reconcileReview(env Env, extID string, scheduled func([]byte) []byte) error {
	a, err := t.getApplicant(env, extID)
	if ErrorCode(err) == ENOTFOUND {
		return t.env(env, bucketInflight).Delete([]byte(inflightReview + extID))
	}
	if err != nil {
		return err
	}
	if a.ReviewJob != nil && scheduled(a.ReviewJob) != nil {
		return t.trackReview(env, a) // index entries of older files lack the key
	}
	if a.ReviewJob == nil || !a.InReview || a.erased() {
		a.ReviewJob = nil
		return t.putApplicant(env, a)
	}
	t.s.log.Warn("schedule: an applicant's sandbox review was lost; scheduled again", "env", env, "applicant", extID)
	due := a.SubmittedAt.Add(t.s.settings.KYC.ReviewDelay)
	if due.Before(t.now) {
		due = t.now
	}
	if a.ReviewJob, err = t.schedule(due, JobReview, env, extID); err != nil {
		return err
	}
	return t.putApplicant(env, a)
}

// buildInflight creates env's in-flight index if the file has none, filling
// it from the records once: the only walk over them, on the first start
// after an upgrade.
func (t *txn) buildInflight(env Env) error {
	root := t.Bucket([]byte("env:" + string(env)))
	if root.Bucket([]byte(bucketInflight)) != nil {
		return nil
	}
	idx, err := root.CreateBucket([]byte(bucketInflight))
	if err != nil {
		return err
	}
	err = t.env(env, "transactions").ForEach(func(id, v []byte) error {
		if len(v) < 8 {
			return nil
		}
		var l txLedger
		if err := json.Unmarshal(v[8:], &l); err != nil {
			return err
		}
		if l.Final {
			return nil
		}
		x, err := t.transaction(env, string(id))
		if err != nil || terminal(x.Status) {
			return err
		}
		return idx.Put(append([]byte(inflightChain), id...), nil)
	})
	if err != nil {
		return err
	}
	return t.env(env, "applicants").ForEach(func(id, v []byte) error {
		if !bytes.Contains(v, []byte(`"reviewJob"`)) {
			return nil // omitempty: no review job
		}
		var a diskApplicant
		if err := json.Unmarshal(v, &a); err != nil {
			return err
		}
		if a.ReviewJob == nil {
			return nil
		}
		return idx.Put(append([]byte(inflightReview), id...), nil)
	})
}
