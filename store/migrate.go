package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The layout of the file is versioned under the meta key "layout". A db
// written before a version gets that version's derived records (indexes)
// built once, at the first Open that knows it:
//
//	1: every record without filter indexes (the layout until issue 8)
//	2: filter indexes of applicants, transactions, wallets and deliveries
//	   (list_filter.go) and the retention index (retention.go)
//	3: one schedule per environment: the sandbox's jobs move out of
//	   "schedule" into "schedule_sandbox" (splitSchedule, schedule.go)
//	4: applicant views rendered again, so that every applicant body has
//	   consentGivenAtUtc and every document country (issue 11), not only
//	   those written since
//	5: deliveries written in a binary form (outbox_codec.go); nothing is
//	   walked: JSON records decode as before and take the new form at
//	   their next change. Versions before it cannot read the new form,
//	   so the number is what tells them apart.
//	6: deliveries_by and transactions_by written behind
//	   (list_filter_log.go): the logs start empty, nothing is walked.
//	   Versions before it would read the indexes without their logs,
//	   so, again, the number is what tells them apart.
//	7: the written-behind indexes as bitmaps (list_filter_bits.go):
//	   deliveries_by, transactions_by and applicants_by, one entry per
//	   record, become deliveries_bits, transactions_bits and
//	   applicants_bits, one entry per block of records; their logs are
//	   folded into the new buckets (migrateBits). This walks those three
//	   indexes once.
//	8: levels_idx (kyc_levels.go), the levels in creation order, so that
//	   GET /v1/levels lists them newest first (SPEC §2): built from each
//	   environment's levels, a handful of records.
//	9: a new delivery's event stored after the delivery's id in its
//	   sequence entry (deliveries_idx: seq -> id + envelope) instead of
//	   in the events bucket, so that the two append to one B+tree
//	   (outbox_deliveries.go); nothing is walked: deliveries whose event
//	   is in the events bucket keep reading it there. Versions before it
//	   would take an entry's envelope for part of the id. From this
//	   layout on, transactions made while the simulator is off have no
//	   in-flight entry (schedule_reconcile.go), which versions before it
//	   would miss.
//	10: applicant views rendered again, so that every applicant body has
//	   its questionnaire answers (null when none), not only those
//	   written since.
//
// A file of a later layout than this version knows is refused at Open
// (newer versions may store what this one cannot read); going back to an
// older complybox needs the file it wrote, from a backup.
//
// The upgrade walks each list once, at upgrade only, in transactions of at
// most migrateBatch records so it never holds one huge transaction. It only
// adds entries (a Put of an entry that exists changes nothing), so a run
// stopped half way is simply done again at the next Open; the version is
// written last. A fresh db has nothing to walk and starts at the current
// version. Building lazily instead would leave lists answering wrong pages
// until a record happened to be touched, so the one-time walk is the
// simple, correct choice; it costs one pass over the file, once.
const layoutVersion = 10

var keyLayout = []byte("layout")

// migrateBatch is the most records one upgrade transaction touches.
const migrateBatch = 10000

// fileLayout returns the layout the file was written in: 0 for a file
// without one (a new file, or one from before layouts were numbered).
func fileLayout(db *bolt.DB) (uint64, error) {
	var v uint64
	err := db.View(func(tx *bolt.Tx) error {
		if meta := tx.Bucket(bucketMeta); meta != nil {
			if b := meta.Get(keyLayout); len(b) == 8 {
				v = btoi(b)
			}
		}
		return nil
	})
	return v, err
}

// newerLayout returns the error for a file of layout v when v is later
// than this version knows, nil otherwise. Open asks it before it writes
// anything.
func newerLayout(v uint64) error {
	if v <= layoutVersion {
		return nil
	}
	return fmt.Errorf("the file was written by a newer complybox (layout %d; this version knows layouts up to %d): run that version, or restore a backup this version wrote", v, layoutVersion)
}

// migrate brings the derived records of a file of layout v (read by Open,
// never later than layoutVersion) to layoutVersion. An upgrade of a file
// that holds records is logged at its start and end: it is all an
// operator sees while the one-time pass runs (seconds on a large file).
func (s *Store) migrate(v uint64) error {
	if v == layoutVersion {
		return nil
	}
	logged := v > 0 || s.holdsRecords()
	if logged {
		s.log.Info("upgrading the db file: a one-time pass over its lists", "fromLayout", v, "toLayout", layoutVersion)
	}
	start := time.Now()
	if err := s.migrateFrom(v); err != nil {
		return err
	}
	if logged {
		s.log.Info("upgraded the db file", "layout", layoutVersion, "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// holdsRecords reports whether any environment holds an applicant, a vault
// or a webhook delivery: a file of layout 0 without one is new.
func (s *Store) holdsRecords() bool {
	held := false
	_ = s.db.View(func(tx *bolt.Tx) error {
		for _, env := range Envs() {
			for _, name := range []string{"applicants_idx", "vaults_idx", "deliveries_idx"} {
				if b := envBucket(tx, env, name); b != nil {
					if k, _ := b.Cursor().First(); k != nil {
						held = true
					}
				}
			}
		}
		return nil
	})
	return held
}

// migrateFrom brings a file of layout v to layoutVersion.
func (s *Store) migrateFrom(v uint64) error {
	if v < 2 {
		for _, env := range Envs() {
			for _, step := range []struct {
				seqs string
				do   func(t *txn, seq uint64, v []byte) error
			}{
				{"applicants_idx", func(t *txn, _ uint64, v []byte) error {
					a, err := t.getApplicant(env, string(v))
					if err != nil {
						return err
					}
					return indexBits(t.env(env, "applicants_bits"), a.Seq, a.filterKeys())
				}},
				{"transactions_idx", func(t *txn, seq uint64, v []byte) error {
					var x diskTransaction
					if err := json.Unmarshal(v, &x.Transaction); err != nil {
						return err
					}
					l, err := t.ledgerOfTransaction(env, x.TransactionID)
					if err != nil {
						return err
					}
					x.txLedger = l
					return indexBits(t.env(env, "transactions_bits"), seq, x.filterKeys())
				}},
				{"wallets_idx", func(t *txn, seq uint64, v []byte) error {
					w, err := t.wallet(env, string(v))
					if err != nil {
						return err
					}
					return reindex(t.env(env, "wallets_by"), seq, nil, w.filterKeys())
				}},
				{"deliveries_idx", func(t *txn, seq uint64, v []byte) error {
					id, _ := splitSeqEntry(v)
					d, err := t.getDelivery(env, string(id))
					if err != nil {
						return err
					}
					return indexBits(t.env(env, "deliveries_bits"), seq, d.filterKeys())
				}},
			} {
				if err := s.migrateEach(env, step.seqs, step.do); err != nil {
					return err
				}
			}
			if err := s.migrateRetention(env); err != nil {
				return err
			}
		}
	}
	if v < 3 {
		if err := s.splitSchedule(); err != nil {
			return err
		}
	}
	if v < 10 {
		// Layouts 4 and 10 both render every applicant view again.
		for _, env := range Envs() {
			err := s.migrateEach(env, "applicants_idx", func(t *txn, _ uint64, v []byte) error {
				a, err := t.getApplicant(env, string(v))
				if err != nil {
					return err
				}
				b, err := json.Marshal(a.view())
				if err != nil {
					return err
				}
				return t.env(env, "applicant_views").Put([]byte(a.ExternalID), b)
			})
			if err != nil {
				return err
			}
		}
	}
	if v >= 2 && v < 7 {
		// From layout 2 (the indexes built by the step above are bitmaps
		// already).
		if err := s.migrateBits(); err != nil {
			return err
		}
	}
	if v < 8 {
		for _, env := range Envs() {
			err := s.migrateKeys(env, "levels", func(t *txn, _, v []byte) error {
				var d diskLevel
				if err := json.Unmarshal(v, &d); err != nil {
					return err
				}
				return t.env(env, "levels_idx").Put(levelKey(d.Level), []byte(d.Name))
			})
			if err != nil {
				return err
			}
		}
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyLayout, itob(layoutVersion))
	})
}

// migrateBits moves the written-behind indexes of layouts 2 to 6, one key
// per record (field | len | value | seq), into their bitmap buckets
// (layout 7), then folds their logs into the new buckets and drops the old
// ones. Each transaction moves at most migrateBatch keys and deletes them
// from the old bucket, so a run stopped half way goes on where it stopped.
func (s *Store) migrateBits() error {
	for _, env := range Envs() {
		for _, list := range loggedIndexes() {
			old := strings.TrimSuffix(list, "_bits") + "_by"
			for done := false; !done; {
				err := s.db.Update(func(tx *bolt.Tx) error {
					root := tx.Bucket([]byte("env:" + string(env)))
					from, to := root.Bucket([]byte(old)), root.Bucket([]byte(list))
					if from == nil {
						done = true
						return nil
					}
					var moved [][]byte
					c := from.Cursor()
					for k, _ := c.First(); k != nil && len(moved) < migrateBatch; k, _ = c.Next() {
						moved = append(moved, k)
					}
					for _, k := range moved {
						if len(k) >= 8 {
							seq := btoi(k[len(k)-8:])
							if err := applyBits(to, blockKey(k[:len(k)-8], seq), []bitChange{{seq % blockBits, true}}); err != nil {
								return err
							}
						}
						if err := from.Delete(k); err != nil {
							return err
						}
					}
					if len(moved) > 0 {
						return nil
					}
					// The old index is empty: its log's changes go onto the
					// bitmaps, then both old buckets go.
					if log := root.Bucket([]byte(old + "_log")); log != nil {
						n, err := fold(to, log, migrateBatch)
						if err != nil || n > 0 {
							return err
						}
						if err := root.DeleteBucket([]byte(old + "_log")); err != nil {
							return err
						}
					}
					done = true
					return root.DeleteBucket([]byte(old))
				})
				if err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// migrateEach calls do with every entry of env's bucket name, oldest first,
// in transactions of at most migrateBatch entries.
func (s *Store) migrateEach(env Env, name string, do func(t *txn, k uint64, v []byte) error) error {
	return s.migrateKeys(env, name, func(t *txn, k, v []byte) error { return do(t, btoi(k), v) })
}

// migrateKeys is migrateEach with raw keys.
func (s *Store) migrateKeys(env Env, name string, do func(t *txn, k, v []byte) error) error {
	var after []byte
	for {
		done := false
		err := s.db.Update(func(tx *bolt.Tx) error {
			t := s.newTxn(tx, env)
			c := t.env(env, name).Cursor()
			var k, v []byte
			if after == nil {
				k, v = c.First()
			} else if k, v = c.Seek(after); k != nil && string(k) == string(after) {
				k, v = c.Next()
			}
			for n := 0; n < migrateBatch; n++ {
				if k == nil {
					done = true
					return nil
				}
				if err := do(t, k, v); err != nil {
					return err
				}
				after = append(after[:0:0], k...)
				k, v = c.Next()
			}
			done = k == nil
			return nil
		})
		if err != nil || done {
			return err
		}
	}
}
