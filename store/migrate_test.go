package store_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/complybox/complybox/store"
)

// TestUpgradeBuildsIndexes opens a db written before layout 2 (made here by
// dropping what layout 2 derives: the filter indexes, the retention index
// and the retention job) and checks that Open rebuilds all of it: the same
// filtered lists, the same index entries, and retention still removes what
// it should.
func TestUpgradeBuildsIndexes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	clock := store.NewManualClock(testStart)
	opts := store.Options{Now: clock.Now}
	s, _ := mustOpen(t, path, opts)
	env := store.Sandbox
	mustCompany(t, s, "co", 1)
	if _, err := s.CreateSession(env, "co", store.SessionInput{}, store.Idem{}); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		mustCompany(t, s, fmt.Sprintf("co-%d", i), 0)
		if i%3 == 0 {
			if _, err := s.Blocklist(env, fmt.Sprintf("co-%d", i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	v, err := s.CreateVault(env, store.VaultInput{Name: ptr("v")}, store.Idem{Key: "k", BodyHash: "h"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetWebhook(context.Background(), env, "http://127.0.0.1:9/hook", nil); err != nil {
		t.Fatal(err)
	}
	var wallets []string
	for range 3 {
		w, err := s.CreateWallet(env, v.VaultID, store.WalletInput{AssetSymbol: ptr("ETH")}, store.Idem{})
		if err != nil {
			t.Fatal(err)
		}
		wallets = append(wallets, w.WalletID)
		for range 4 {
			if _, err := s.CreateDeposit(env, store.DepositInput{WalletID: &w.WalletID, Amount: ptr("1")}, store.Idem{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	jobs, _, err := s.Due(clock.Now(), 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Kind == store.JobDelivery {
			if _, err := s.RecordAttempt(j, store.AttemptResult{StatusCode: 500, Error: "HTTP 500", At: clock.Now()}); err != nil {
				t.Fatal(err)
			}
		}
	}

	type snapshot struct{ lists, counts string }
	take := func(s *store.Store) snapshot {
		var out snapshot
		for _, f := range []store.ApplicantFilter{{Status: store.StatusBlocklisted}, {Type: "company", ReviewStatus: store.ReviewPending}, {Type: "individual"}} {
			items, _, err := s.Applicants(env, f, store.Page{Limit: 200})
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range items {
				out.lists += a.ExternalUserID + " "
			}
			out.lists += "| "
		}
		for _, f := range []store.TransactionFilter{{WalletID: wallets[1]}, {VaultID: v.VaultID, Status: store.StatusSubmitted}} {
			items, _, err := s.Transactions(env, f, store.Page{Limit: 200})
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range items {
				out.lists += x.TransactionID + " "
			}
			out.lists += "| "
		}
		for _, f := range []store.DeliveryFilter{{Status: store.DeliveryDead}, {EventType: "wallet.created"}, {Since: testStart}} {
			items, _, err := s.Deliveries(env, f, store.Page{Limit: 200})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range items {
				out.lists += d.ID + " "
			}
			out.lists += "| "
		}
		items, _, err := s.VaultWallets(env, v.VaultID, store.Page{})
		if err != nil || len(items) != 3 {
			t.Fatalf("wallets: %d, %v", len(items), err)
		}
		if err := s.FoldIndexes(); err != nil {
			t.Fatal(err)
		}
		for _, b := range []string{"applicants_bits", "transactions_bits", "deliveries_bits"} {
			out.counts += fmt.Sprintf("%s=%d/%d ", b, s.IndexEntries(env, b), s.Count(env, b))
		}
		out.counts += fmt.Sprintf("wallets_by=%d", s.Count(env, "wallets_by"))
		return out
	}
	before, expiry := take(s), s.Count(env, "expiry")
	if len(before.lists) < 200 {
		t.Fatalf("fixture lists too small: %q", before.lists)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Back to the old layout.
	rewriteFile(t, path, toUnnumbered)

	// The one-time pass says so in the log, which is all an operator sees
	// while it runs (seconds on a large file).
	var log bytes.Buffer
	opts.Logger = slog.New(slog.NewTextHandler(&log, nil))
	s, _ = mustOpen(t, path, opts)
	if after := take(s); after != before {
		t.Errorf("after the upgrade:\n%+v\nbefore:\n%+v", after, before)
	}
	for _, want := range []string{"upgrading the db file", "fromLayout=0", "upgraded the db file", "layout=" + fmt.Sprint(store.LayoutVersion)} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log of the upgrading Open lacks %q:\n%s", want, log.String())
		}
	}
	// A new file has nothing to upgrade and says nothing of it.
	log.Reset()
	if s2, _ := mustOpen(t, filepath.Join(t.TempDir(), "new.db"), opts); strings.Contains(log.String(), "upgrad") {
		t.Errorf("a new file's Open logged an upgrade:\n%s", log.String())
	} else {
		s2.Close()
	}
	// The upgrade marks every session for retention, also the one whose
	// expiry job has not run yet (that job marks it in layout 2).
	if n := s.Count(env, "expiry"); n != expiry+1 {
		t.Errorf("%d retention entries after the upgrade, want %d", n, expiry+1)
	}
	// The rebuilt retention index works: past the windows the session,
	// the idempotency record and the dead deliveries go.
	clock.Advance(721 * time.Hour)
	runJobs(t, s, clock)
	for _, b := range []string{"sessions", "idempotency"} {
		if n := s.Count(env, b); n != 0 {
			t.Errorf("%s: %d left after retention", b, n)
		}
	}
	if items, _, _ := s.Deliveries(env, store.DeliveryFilter{Status: store.DeliveryDead}, store.Page{}); len(items) != 0 {
		t.Errorf("%d dead deliveries left after retention", len(items))
	}
}

// toUnnumbered takes a file back to a layout from before layouts were
// numbered: without the filter indexes, the retention index and its job,
// and the layout number, which the upgrade builds again.
func toUnnumbered(tx *bolt.Tx) error {
	for _, e := range store.Envs() {
		root := tx.Bucket([]byte("env:" + string(e)))
		for _, b := range []string{"applicants_bits", "transactions_bits", "wallets_by", "deliveries_bits", "expiry"} {
			if err := root.DeleteBucket([]byte(b)); err != nil {
				return err
			}
		}
	}
	meta := tx.Bucket([]byte("meta"))
	if k := meta.Get([]byte("retention-job")); k != nil {
		if err := tx.Bucket([]byte("schedule")).Delete(k); err != nil {
			return err
		}
	}
	if err := meta.Delete([]byte("retention-job")); err != nil {
		return err
	}
	return meta.Delete([]byte("layout"))
}

// rewriteFile changes the stopped db at path in one bbolt transaction, as
// an older complybox would have left it.
func rewriteFile(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(fn)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestUpgradeRendersApplicantViews: a db written before layout 3 holds
// applicant bodies without consentGivenAtUtc and without a document's
// country; Open renders them again, so every body has both fields.
func TestUpgradeRendersApplicantViews(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	clock := store.NewManualClock(testStart)
	opts := store.Options{Now: clock.Now}
	s, _ := mustOpen(t, path, opts)
	mustCompany(t, s, "old-view", 0)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	old := []byte(`{"externalUserId":"old-view","documents":[]}`) // a body of layout 2, cut short
	rewriteFile(t, path, func(tx *bolt.Tx) error {
		views := tx.Bucket([]byte("env:" + string(store.Sandbox))).Bucket([]byte("applicant_views"))
		if err := views.Put([]byte("old-view"), old); err != nil {
			return err
		}
		return tx.Bucket([]byte("meta")).Put([]byte("layout"), []byte{0, 0, 0, 0, 0, 0, 0, 2})
	})
	s, _ = mustOpen(t, path, opts)
	b, err := s.ApplicantJSON(store.Sandbox, "old-view")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"consentGivenAtUtc":null`) || !strings.Contains(string(b), `"createdAtUtc"`) {
		t.Errorf("after the upgrade the body is %s", b)
	}
}

// TestUpgradeShowsQuestionnaireAnswers: a db written before layout 10
// holds applicant bodies without their questionnaire answers; Open
// renders them again, so an applicant answered before the upgrade shows
// its answers, and one without shows null.
func TestUpgradeShowsQuestionnaireAnswers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	clock := store.NewManualClock(testStart)
	opts := store.Options{Now: clock.Now}
	s, _ := mustOpen(t, path, opts)
	if _, err := s.CreateLevel(store.Sandbox, store.Level{Name: "survey", ApplicantType: store.TypeIndividual,
		Steps: []store.LevelStep{{Kind: store.StepQuestionnaire}, {Kind: store.StepAML}}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"answered", "silent"} {
		in := store.ApplicantInput{"externalUserId": json.RawMessage(`"` + id + `"`), "verificationLevelName": json.RawMessage(`"survey"`)}
		if _, _, err := s.CreateApplicant(store.Sandbox, in); err != nil {
			t.Fatal(err)
		}
	}
	answers := map[string]json.RawMessage{"pep": json.RawMessage(`false`), "sourceOfFunds": json.RawMessage(`"salary"`)}
	if _, err := s.Verify(store.Sandbox, "answered", store.VerifyInput{Questionnaire: answers}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rewriteFile(t, path, func(tx *bolt.Tx) error {
		views := tx.Bucket([]byte("env:" + string(store.Sandbox))).Bucket([]byte("applicant_views"))
		for _, id := range []string{"answered", "silent"} {
			var v map[string]json.RawMessage
			if err := json.Unmarshal(views.Get([]byte(id)), &v); err != nil {
				return err
			}
			delete(v, "questionnaire") // the body of layout 9
			b, _ := json.Marshal(v)
			if err := views.Put([]byte(id), b); err != nil {
				return err
			}
		}
		return tx.Bucket([]byte("meta")).Put([]byte("layout"), binary.BigEndian.AppendUint64(nil, 9))
	})
	s, _ = mustOpen(t, path, opts)
	for id, want := range map[string]string{"answered": `{"pep":false,"sourceOfFunds":"salary"}`, "silent": "null"} {
		b, err := s.ApplicantJSON(store.Sandbox, id)
		if err != nil {
			t.Fatal(err)
		}
		var v struct{ Questionnaire json.RawMessage }
		if err := json.Unmarshal(b, &v); err != nil || string(v.Questionnaire) != want {
			t.Errorf("%s after the upgrade: questionnaire %s (%v), want %s", id, v.Questionnaire, err, want)
		}
	}
}

// TestUpgradeIndexesLevels: a db of layout 7 has no levels_idx; Open
// builds it, so GET /v1/levels lists the levels newest first (SPEC §2),
// the ones created later before the built-in ones.
func TestUpgradeIndexesLevels(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	clock := store.NewManualClock(testStart)
	opts := store.Options{Now: clock.Now}
	s, _ := mustOpen(t, path, opts)
	for _, name := range []string{"zz-level", "aa-level"} {
		clock.Advance(time.Second)
		if _, err := s.CreateLevel(store.Sandbox, store.Level{Name: name, ApplicantType: store.TypeIndividual,
			Steps: []store.LevelStep{{Kind: store.StepSelfie}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rewriteFile(t, path, func(tx *bolt.Tx) error {
		for _, e := range store.Envs() {
			if err := tx.Bucket([]byte("env:" + string(e))).DeleteBucket([]byte("levels_idx")); err != nil {
				return err
			}
		}
		return tx.Bucket([]byte("meta")).Put([]byte("layout"), binary.BigEndian.AppendUint64(nil, 7))
	})
	s, _ = mustOpen(t, path, opts)
	var names []string
	for cursor := ""; ; {
		page, next, err := s.LevelPage(store.Sandbox, store.Page{Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range page {
			names = append(names, l.Name)
		}
		if next == nil {
			break
		}
		cursor = *next
	}
	if want := []string{"aa-level", "zz-level", "kyb-level", "full-kyc-level", "basic-kyc-level"}; !slices.Equal(names, want) {
		t.Fatalf("levels after the upgrade: %v, want %v (newest first)", names, want)
	}
}

// TestOpenRefusesNewerLayout: a file a later complybox wrote (a layout this
// version does not know) is refused at Open with an error that says so, and
// left as it is, rather than read as if it were this version's.
func TestOpenRefusesNewerLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "newer.db")
	s, _ := mustOpen(t, path, store.Options{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	future := []byte{0, 0, 0, 0, 0, 0, 0, 99}
	setLayout := func(v []byte) []byte {
		db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var was []byte
		err = db.Update(func(tx *bolt.Tx) error {
			meta := tx.Bucket([]byte("meta"))
			was = bytes.Clone(meta.Get([]byte("layout")))
			if v == nil {
				return nil
			}
			return meta.Put([]byte("layout"), v)
		})
		if err != nil {
			t.Fatal(err)
		}
		return was
	}
	setLayout(future)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.Open(path, store.Options{})
	if err == nil || !strings.Contains(err.Error(), "newer complybox (layout 99") {
		t.Fatalf("Open of a layout 99 file: %v", err)
	}
	// Not one byte written: a later layout may keep what this version's
	// set-up would add or move (its buckets, the schedule) otherwise.
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, before) {
		t.Errorf("the refused Open changed the file (err %v)", err)
	}
	if got := setLayout(nil); !bytes.Equal(got, future) {
		t.Errorf("layout after the refused Open: %v, want %v", got, future)
	}
}

// TestUpgradeMovesIndexesToBitmaps opens a db of layout 6, whose
// written-behind indexes hold one key per record (field | len | value |
// seq) under deliveries_by, transactions_by and applicants_by, with
// changes still in their logs, and checks that Open moves them into the
// bitmap buckets of layout 7 (more keys than one upgrade transaction
// moves), folds the old logs in and drops the old buckets: every filtered
// list answers as before.
func TestUpgradeMovesIndexesToBitmaps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "six.db")
	opts := store.Options{FoldDelay: -1}
	s, clock := mustOpen(t, path, opts)
	opts.Now = clock.Now
	env := store.Sandbox
	if _, err := s.SetWebhook(context.Background(), env, "http://127.0.0.1:9/hook", nil); err != nil {
		t.Fatal(err)
	}
	const n = 2100 // five keys each: more than one upgrade batch
	parallel(t, n, func(i int) error {
		return s.Enqueue(env, store.DestCustody, []string{"balance.updated", "transaction.created"}[i%2], "balance", fmt.Sprint("e", i%7), nil)
	})
	for i := range 12 {
		mustCompany(t, s, fmt.Sprintf("co-%d", i), 0)
	}
	_, wallets := vaultOfWallets(t, s, env, 2)
	if err := s.FoldIndexes(); err != nil {
		t.Fatal(err)
	}
	// Changes left in the logs: attempts, new deposits, a blocklisting.
	jobs, _, err := s.Due(clock.Now(), 300, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, j := range jobs {
		if j.Kind == store.JobDelivery {
			r := store.AttemptResult{StatusCode: 200, At: clock.Now(), Success: true}
			if i%3 == 0 {
				r = store.AttemptResult{StatusCode: 500, Error: "HTTP 500", At: clock.Now()}
			}
			if _, err := s.RecordAttempt(j, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 6 {
		if _, err := s.CreateDeposit(env, store.DepositInput{WalletID: &wallets[i%2], Amount: ptr("1")}, store.Idem{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Blocklist(env, "co-3"); err != nil {
		t.Fatal(err)
	}
	lists := func(s *store.Store) string {
		var out string
		for _, f := range []store.DeliveryFilter{{Status: store.DeliveryDelivered}, {Status: store.DeliveryDead, EntityID: "e3"},
			{EventType: "transaction.created"}, {Status: store.DeliveryPending, Since: testStart}} {
			for p := (store.Page{Limit: 500}); ; {
				items, next, err := s.Deliveries(env, f, p)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range items {
					out += d.ID + " "
				}
				if next == nil {
					break
				}
				p.Cursor = *next
			}
			out += "| "
		}
		for _, f := range []store.TransactionFilter{{WalletID: wallets[1]}, {Status: store.StatusSubmitted}} {
			items, _, err := s.Transactions(env, f, store.Page{Limit: 200})
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range items {
				out += x.TransactionID + " "
			}
			out += "| "
		}
		for _, f := range []store.ApplicantFilter{{Status: store.StatusBlocklisted}, {Type: "company"}} {
			items, _, err := s.Applicants(env, f, store.Page{Limit: 200})
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range items {
				out += a.ExternalUserID + " "
			}
			out += "| "
		}
		return out
	}
	before := lists(s)
	if strings.Count(before, " ") < n {
		t.Fatalf("fixture lists too small: %d entries", strings.Count(before, " "))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Back to layout 6: each bitmap block becomes one key per record, each
	// log moves to its old name.
	oldKeys := 0
	rewriteFile(t, path, func(tx *bolt.Tx) error {
		for _, e := range store.Envs() {
			root := tx.Bucket([]byte("env:" + string(e)))
			for _, list := range []string{"deliveries", "transactions", "applicants"} {
				by, err := root.CreateBucket([]byte(list + "_by"))
				if err != nil {
					return err
				}
				err = root.Bucket([]byte(list + "_bits")).ForEach(func(k, v []byte) error {
					prefix, block := k[:len(k)-8], binary.BigEndian.Uint64(k[len(k)-8:])
					for i, b := range v {
						for bit := range 8 {
							if b&(1<<bit) != 0 {
								oldKeys++
								if err := by.Put(binary.BigEndian.AppendUint64(bytes.Clone(prefix), block*512+uint64(i*8+bit)), nil); err != nil {
									return err
								}
							}
						}
					}
					return nil
				})
				if err != nil {
					return err
				}
				log := root.Bucket([]byte(list + "_bits_log"))
				old, err := root.CreateBucket([]byte(list + "_by_log"))
				if err != nil {
					return err
				}
				if err := log.ForEach(func(k, v []byte) error { return old.Put(k, v) }); err != nil {
					return err
				}
				if err := old.SetSequence(log.Sequence()); err != nil {
					return err
				}
				for _, b := range []string{list + "_bits", list + "_bits_log"} {
					if err := root.DeleteBucket([]byte(b)); err != nil {
						return err
					}
				}
			}
		}
		return tx.Bucket([]byte("meta")).Put([]byte("layout"), binary.BigEndian.AppendUint64(nil, 6))
	})
	if oldKeys < 5*n {
		t.Fatalf("the layout 6 file has %d index keys, want at least %d", oldKeys, 5*n)
	}

	s, _ = mustOpen(t, path, opts)
	if after := lists(s); after != before {
		t.Errorf("after the upgrade the lists differ:\n%s\nbefore:\n%s", after, before)
	}
	for _, list := range []string{"deliveries", "transactions", "applicants"} {
		if got := s.Count(env, list+"_bits_log"); got != 0 {
			t.Errorf("%s_bits_log: %d entries after the upgrade", list, got)
		}
	}
	if got, want := s.IndexEntries(env, "deliveries_bits"), 5*n; got < want {
		t.Errorf("deliveries_bits holds %d records' keys, want at least %d", got, want)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		for _, e := range store.Envs() {
			for _, b := range []string{"deliveries_by", "deliveries_by_log", "transactions_by", "transactions_by_log", "applicants_by", "applicants_by_log"} {
				if tx.Bucket([]byte("env:"+string(e))).Bucket([]byte(b)) != nil {
					t.Errorf("%s: %s left after the upgrade", e, b)
				}
			}
		}
		if v := tx.Bucket([]byte("meta")).Get([]byte("layout")); binary.BigEndian.Uint64(v) != store.LayoutVersion {
			t.Errorf("layout %d after the upgrade, want %d", binary.BigEndian.Uint64(v), store.LayoutVersion)
		}
		return nil
	})
}

// TestOldLevelStaysEditable: a level stored before a question's id, text
// and options were checked (an id with a space, options given twice) keeps
// every other field editable; its questions are held to the checks only
// when they are sent again.
func TestOldLevelStaysEditable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	opts := store.Options{Now: store.NewManualClock(testStart).Now}
	s, _ := mustOpen(t, path, opts)
	if _, err := s.CreateLevel(store.Sandbox, store.Level{Name: "old-survey", ApplicantType: store.TypeIndividual,
		Steps:         []store.LevelStep{{Kind: store.StepQuestionnaire}},
		Questionnaire: []store.Question{{ID: "q1", Text: "Why?", Type: "choice", Options: []string{"a", "b"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rewriteFile(t, path, func(tx *bolt.Tx) error {
		levels := tx.Bucket([]byte("env:" + string(store.Sandbox))).Bucket([]byte("levels"))
		b := bytes.Replace(levels.Get([]byte("old-survey")), []byte(`"q1"`), []byte(`"q 1"`), 1)
		b = bytes.Replace(b, []byte(`["a","b"]`), []byte(`["a","a"]`), 1)
		return levels.Put([]byte("old-survey"), b)
	})
	s, _ = mustOpen(t, path, opts)
	fields := []string{"firstName", "lastName"}
	l, err := s.PatchLevel(store.Sandbox, "old-survey", store.LevelPatch{PersonalInfoFields: &fields})
	if err != nil || len(l.PersonalInfoFields) != 2 || l.Questionnaire[0].ID != "q 1" {
		t.Fatalf("PATCH of another field of an old level: %v %+v", err, l)
	}
	qs := l.Questionnaire
	if _, err := s.PatchLevel(store.Sandbox, "old-survey", store.LevelPatch{Questionnaire: &qs}); err == nil || !strings.Contains(err.Error(), "questionnaire[0].id") {
		t.Fatalf("its questions sent again as they are: %v, want the id refused", err)
	}
}

// TestUpgradeExpiresUnnumberedEvents: a file from before events were keyed
// by sequence keeps them under their id. Upgraded, an event its delivery
// names goes with that delivery; one that never had a delivery (no
// destination then) goes past the retention window like any such event
// (the first mend left it forever).
func TestUpgradeExpiresUnnumberedEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	clock := store.NewManualClock(testStart)
	opts := store.Options{Now: clock.Now}
	s, _ := mustOpen(t, path, opts)
	env := store.Sandbox
	if _, err := s.SetWebhook(context.Background(), env, "http://127.0.0.1:9/hook", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Enqueue(env, store.DestCustody, "wallet.created", "wallet", "w1", nil); err != nil {
		t.Fatal(err)
	}
	items, _, err := s.Deliveries(env, store.DeliveryFilter{}, store.Page{Limit: 10})
	if err != nil || len(items) != 1 {
		t.Fatalf("deliveries: %+v %v", items, err)
	}
	if err := s.StoreEventAsUnnumbered(env, items[0].ID, false); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	const lone = "0648c430-7d1e-4c1b-9c1a-2f1e5b6a7c8d"
	rewriteFile(t, path, func(tx *bolt.Tx) error {
		root := tx.Bucket([]byte("env:" + string(env)))
		if err := root.Bucket([]byte("events")).Put([]byte(lone), []byte(`{"id":"`+lone+`","eventType":"wallet.created","entityType":"wallet","entityId":"w2","timestamp":"2026-11-21T05:00:00.000Z","data":null}`)); err != nil {
			return err
		}
		return toUnnumbered(tx)
	})
	s, _ = mustOpen(t, path, opts)
	if n := s.Count(env, "events"); n != 2 {
		t.Fatalf("%d events after the upgrade, want the two keyed by id", n)
	}
	jobs, _, err := s.Due(clock.Now(), 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Kind == store.JobDelivery {
			if _, err := s.RecordAttempt(j, store.AttemptResult{StatusCode: 200, At: clock.Now(), Success: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Before the window the delivery reads its event; past it both go.
	if d, err := s.Delivery(env, items[0].ID); err != nil || d.Payload == "" {
		t.Fatalf("the upgraded delivery: %+v %v", d, err)
	}
	clock.Advance(721 * time.Hour)
	runJobs(t, s, clock)
	if n := s.Count(env, "events"); n != 0 {
		t.Errorf("%d events past the retention window, want none", n)
	}
}
