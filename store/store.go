// Package store owns complybox's records and every change to them. Each
// exported method is one business operation and one bbolt transaction that
// writes the record, its history entry and its outbox event together.
//
// Files are named by domain: kyc_, kyb_, custody_, outbox_, hostedui_ and
// console_, with the transaction, schedule and error machinery unprefixed.
// Pure helpers that never touch a transaction are leaf packages under
// store that never import it: imagecheck (uploads), imagequality (the
// hosted UI's photo checks, run on images imagecheck decoded), decimal
// (amounts), screening (sanctions list, age) and urlpolicy (webhook
// destinations, also used by dispatch). Their field errors become EINVALID
// here.
//
// Besides the dispatcher's loop, a store runs one goroutine of its own: the
// fold that moves the filter indexes' logs into the indexes
// (list_filter_log.go), started by Open and stopped by Close.
package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/complybox/complybox/store/imagecheck"
	"github.com/complybox/complybox/store/screening"
)

// Env is a data partition: every record lives in exactly one environment.
type Env string

// The two environments.
const (
	Sandbox    Env = "sandbox"
	Production Env = "production"
)

// Other is the environment that is not e.
func (e Env) Other() Env {
	if e == Production {
		return Sandbox
	}
	return Production
}

// Valid reports whether e names an environment.
func (e Env) Valid() bool { return e == Sandbox || e == Production }

// Envs lists the environments.
func Envs() []Env { return []Env{Sandbox, Production} }

// Options configure a Store. Zero values take defaults.
type Options struct {
	// Now is the clock; time.Now when nil. Tests inject their own.
	Now func() time.Time
	// Logger receives the store's warnings; slog.Default when nil.
	Logger *slog.Logger
	// OpenTimeout bounds the wait for the file lock (default 1s), so a second
	// process gets an error instead of hanging.
	OpenTimeout time.Duration
	// Settings holds the business settings that live outside the db.
	Settings Settings
	// PasswordCost is the bcrypt cost of the console password; 0 means
	// bcrypt.DefaultCost. Tests set bcrypt.MinCost.
	PasswordCost int

	// NoSync skips the fsync of every commit, for bulk generators only: the
	// file is durable once Close returns, and a crash before that can lose
	// it whole.
	NoSync bool

	// FoldDelay is how long after a change the background fold moves the
	// write-behind filter indexes' logs into the indexes
	// (list_filter_log.go); 0 means foldDelay (20 ms), a negative value no
	// background fold (tests: the logs are then folded when they outgrow
	// foldMax, by retention, at Open and by FoldIndexes).
	FoldDelay time.Duration
}

// Store is the handle on one bbolt file.
type Store struct {
	db        *bolt.DB
	now       func() time.Time
	log       *slog.Logger
	settings  Settings
	pwCost    int // bcrypt cost of the console password; 0: bcrypt.DefaultCost
	commit    committer
	sanctions *screening.SanctionsList // production screening list; nil when none is configured

	mu      sync.Mutex
	waiters []func() // called after a commit that enqueued work

	creds     credentialCache                  // Authenticate's cache of stored credentials
	webhooks  webhookCache                     // the custody webhook configurations, decoded (outbox_webhooks.go)
	callbacks atomic.Pointer[decodedCallback]  // the KYC callback, likewise
	fresh     atomic.Pointer[func([]Job) bool] // OnFresh's fn (outbox_fresh.go)

	// Records every withdrawal reads, kept decoded (decoded.go).
	wallets decoded[diskWallet]
	vaults  decoded[diskVault]
	assets  decoded[Asset]
	// The levels CreateApplicant reads, likewise (sharedLevel).
	levels decoded[diskLevel]

	sandboxOffset atomic.Int64 // the sandbox test clock's lead over now, in ns (sandbox_clock.go)
	clockMu       sync.Mutex   // serialises moves of the sandbox clock

	listDecodes atomic.Int64        // records decoded by lists; tests read it (export_test.go)
	decodes     *imagecheck.Limiter // bounds the memory of concurrent image decodes

	beforeApply func() // tests: runs between an operation's reads and its write: an upload's checks, a transaction's draft (export_test.go)

	stats stats // what operations read, for tests that bound it

	folder folder // the background fold of the filter index logs (list_filter_log.go)

	followed followed // entity queues with a first attempt behind their head (schedule.go)

	emitted emitted // the last event's timestamp per environment (emit)
}

// stats counts records read where a test must prove a bound without timing.
type stats struct {
	scheduleReads atomic.Int64 // schedule entries Due read
	openReads     atomic.Int64 // records Open read beyond the fixed configuration
	inflightReads atomic.Int64 // in-flight index entries Open read
	queueReads    atomic.Int64 // entity queues NextFirst read
}

// Open opens (creating if needed) the db at path and prepares its buckets.
// Leases of deliveries claimed by a previous process are void: everything due
// is due again.
func Open(path string, opt Options) (_ *Store, err error) {
	var db *bolt.DB
	// A file this Open creates and cannot finish (a full disk, a failed
	// start) is removed: left behind, it would be refused at every later
	// start as a damaged db with nothing in it to restore. created is set
	// only when this Open made the file itself (createNew), so a file
	// another process made meanwhile is never removed; it is removed
	// while bbolt's lock on it is still held.
	created, err := createNew(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil && created != "" && !errors.Is(err, errInUse) {
			os.Remove(created)
		}
		if err != nil && db != nil {
			db.Close() // a no-op when closed already; else its lock stays held
		}
	}()
	defer func() {
		// bbolt panics on a damaged file (and, with SetPanicOnFault,
		// faults reading past the end of a truncated one), but so would
		// a bug of the upgrade below: the message says both, and the
		// stack is logged at debug level.
		if p := recover(); p != nil {
			if opt.Logger != nil {
				opt.Logger.Debug("open: panic", "path", path, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			}
			err = fmt.Errorf("open %s: %v: the file may be damaged (restore it from a backup), or this is a bug (log level debug shows its stack)", path, p)
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if opt.OpenTimeout == 0 {
		opt.OpenTimeout = time.Second
	}
	// The freelist is synced (NoFreelistSync false, the array type), so Open
	// reads the meta and freelist pages instead of walking every page of the
	// file. Measured on a 954 MB seeded file (40k applicants, 40k deposits,
	// 201k deliveries; 6.7k free pages) on 2 shared cores with a throwaway
	// program (open, then 2,000 commits of 8 puts and 4 deletes): open
	// 0.3-0.5 ms and 3.3 MB resident, against 350-925 ms and 930 MB (the
	// whole file) when the freelist is rebuilt at open; a commit costs
	// 420 µs before its fsync against 260-316 µs, since it writes the
	// freelist (8 bytes per free page), and 4-5.6 ms either way with the
	// fsync. The map type was slower in every case (synced: open 1.0-1.5 ms,
	// commit 580-640 µs). complybox serve on that file: /healthz after
	// 0.014-0.057 s with 16 MB resident, against 0.5-1.0 s and 939 MB. A
	// file written without a synced freelist is walked once, at its first
	// open (2.5 s for that file).
	if created == "" && emptyFile(path, opt.OpenTimeout) {
		return nil, errEmpty(path)
	}
	if err := shortFile(path); err != nil {
		return nil, err
	}
	db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: opt.OpenTimeout, FreelistType: bolt.FreelistArrayType})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("open %s: %w", path, errInUse)
		}
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			return nil, err // "open PATH: no such file or directory" names the path already
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.NoSync = opt.NoSync
	s := &Store{db: db, now: opt.Now, log: opt.Logger, settings: opt.Settings.withDefaults(), pwCost: opt.PasswordCost}
	s.commit.db = db
	s.commit.afterCommit = s.handFresh
	s.decodes = imagecheck.NewLimiter(decodeBudget, 4*runtime.GOMAXPROCS(0))
	if f := s.settings.KYC.SanctionsFile; f != "" {
		s.sanctions = screening.NewSanctionsList(f)
	}
	// A file of a later layout is refused before a byte of it is written.
	layout, err := fileLayout(db)
	if err == nil {
		err = newerLayout(layout)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: upgrade: %w", path, err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		if err := initBuckets(tx); err != nil {
			return err
		}
		return migrateQueue(tx)
	}); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := s.loadClock(); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := s.migrate(layout); err != nil {
		return nil, fmt.Errorf("open %s: upgrade: %w", path, err)
	}
	if err := s.ensureDepth(); err != nil {
		return nil, fmt.Errorf("open %s: counting deliveries: %w", path, err)
	}
	if err := s.update(func(t *txn) error { return t.seed() }); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := s.ResumeSimulator(); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if opt.FoldDelay == 0 {
		opt.FoldDelay = foldDelay
	}
	if opt.FoldDelay > 0 {
		s.startFolder(opt.FoldDelay)
	}
	return s, nil
}

// decodeBudget is the memory all image decodes of a process may take at
// once: the largest single decode allowed (see imagecheck), so that a
// burst of uploads queues instead of exhausting memory.
const decodeBudget = 256 << 20

// Close closes the db, first syncing it when it was opened with NoSync.
func (s *Store) Close() error {
	s.stopFolder()
	if s.db.NoSync {
		if err := s.db.Sync(); err != nil {
			s.db.Close()
			return err
		}
	}
	return s.db.Close()
}

// Now returns the store's current time in UTC: the production clock, and
// the base of the sandbox test clock.
func (s *Store) Now() time.Time { return s.now().UTC() }

// NowIn returns environment env's current time in UTC: Now, plus the
// sandbox test clock's offset in the sandbox.
func (s *Store) NowIn(env Env) time.Time {
	if env == Sandbox {
		return s.Now().Add(time.Duration(s.sandboxOffset.Load()))
	}
	return s.Now()
}

// OnWork registers fn to be called after every commit that enqueued an event
// or scheduled work, so the dispatcher wakes at once; not for first
// attempts the OnFresh function took.
func (s *Store) OnWork(fn func()) {
	s.mu.Lock()
	s.waiters = append(s.waiters, fn)
	s.mu.Unlock()
}

// OnCommit makes fn be told, after every bbolt commit of the group commit,
// how many operations it carried, how long it took (function runs, page
// writes and fsync) and how many pages it wrote. fn runs on the committing
// goroutine: it must be quick. A later call replaces fn.
func (s *Store) OnCommit(fn func(CommitStats)) { s.commit.observe.Store(&fn) }

func (s *Store) wake() {
	s.mu.Lock()
	ws := s.waiters
	s.mu.Unlock()
	for _, fn := range ws {
		fn()
	}
}

// Backup writes a consistent copy of the db to w (bbolt Tx.WriteTo). It
// calls size first with the number of bytes it will write. The copy is
// taken into a temporary file beside the db before a byte goes to w, so
// the read transaction lasts as long as a local copy takes, not as long as
// a client takes to read: bbolt grows the file only when no read
// transaction holds it, so a slow or stalled download would hold every
// commit. The file is unlinked at once where the system allows it.
func (s *Store) Backup(w io.Writer, size func(int64)) error {
	f, err := os.CreateTemp(filepath.Dir(s.db.Path()), ".complybox-backup-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	os.Remove(f.Name()) // no leftover after a crash; fails harmlessly where open files cannot go
	var n int64
	if err := s.db.View(func(tx *bolt.Tx) error {
		n = tx.Size()
		_, err := tx.WriteTo(f)
		return err
	}); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if size != nil {
		size(n)
	}
	_, err = io.Copy(w, f)
	return err
}

// Check runs bbolt's consistency check; tests call it in cleanup. It runs
// in a write transaction, rolled back, because bbolt's check reads the
// freelist, which a concurrent commit (the background fold) changes.
func (s *Store) Check() error {
	tx, err := s.db.Begin(true)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for err := range tx.Check() {
		return err
	}
	return nil
}

// txn is the state of one business operation inside a bbolt transaction.
type txn struct {
	*bolt.Tx
	s      *Store
	now    time.Time // the operation's environment's time, fixed for the whole operation
	woken  bool      // an event was enqueued or work scheduled
	logged bool      // a write-behind filter index log was written (list_filter_log.go)

	// grouped: the operation runs in a group commit, which writes the
	// counter changes it gathers in counts once it succeeds (addDepth).
	grouped bool
	counts  counterChanges

	fresh []Job // first attempts this operation made due, for the dispatcher (outbox_fresh.go)

	base   time.Time     // the store's clock when the operation began
	offset time.Duration // the sandbox clock's offset then

	indexed map[string][]fkey // filter-index keys written by this operation, by env | list | seq (list_filter.go)

	// opened remembers the first nOpened environment buckets this
	// operation opened (env), so each costs one lookup however often the
	// operation uses it.
	opened  [16]openedBucket
	nOpened int

	retag func(*HistoryEntry) // hosted-UI hook (hostedui_forms.go): rewrites the entries this operation appends
}

type openedBucket struct {
	env  Env
	name string
	b    *bolt.Bucket
}

// env returns the nested bucket name of environment e. A bucket is a
// pointer that stays valid for the whole bbolt transaction (no operation
// deletes an environment's bucket), so env opens each once per operation:
// the lookups were 3 % of the CPU of a withdrawal with its webhooks.
func (t *txn) env(e Env, name string) *bolt.Bucket {
	for i := range t.nOpened {
		if o := &t.opened[i]; o.name == name && o.env == e {
			return o.b
		}
	}
	b := envBucket(t.Tx, e, name)
	if b != nil && t.nOpened < len(t.opened) {
		t.opened[t.nOpened] = openedBucket{e, name, b}
		t.nOpened++
	}
	return b
}

func envBucket(tx *bolt.Tx, e Env, name string) *bolt.Bucket {
	root := tx.Bucket([]byte("env:" + string(e)))
	if root == nil {
		return nil
	}
	b := root.Bucket([]byte(name))
	if b != nil && appendFill(name) {
		b.FillPercent = appendFillPercent
	}
	return b
}

// appendFillPercent is how full bbolt packs the pages of buckets whose keys
// arrive in order (sequences, uuid v7 ids, time- or value-prefixed index
// keys). bbolt's default, 0.5, splits a page in the middle, which suits
// random keys; keys that append would leave every page half empty.
const appendFillPercent = 0.95

// appendFill reports whether the keys of bucket name arrive in key order
// (within each prefix for the filter and retention indexes).
func appendFill(name string) bool {
	switch name {
	case "events", "deliveries", "deliveries_idx", "deliveries_bits", "transactions", "transactions_idx", "transactions_bits",
		"deliveries_bits_log", "transactions_bits_log", "applicants_bits_log",
		"applicants_idx", "applicants_bits", "applicant_ids", "vaults", "vaults_idx", "wallets", "wallets_idx", "wallets_by",
		"history", "expiry":
		return true
	}
	return false
}

// update runs fn as one business operation outside the environments (the
// console, credentials) or whose environment it finds itself (t.enter),
// sharing a commit with concurrent callers (group commit). fn may run more
// than once: it must only write to the transaction and to variables it
// assigns afresh each run.
func (s *Store) update(fn func(t *txn) error) error { return s.updateIn(Production, fn) }

// updateIn is update for an operation of environment env: its now is
// env's clock.
func (s *Store) updateIn(env Env, fn func(t *txn) error) error {
	var woken, logged bool
	err := s.commit.run(func(tx *bolt.Tx) error {
		t := s.newTxn(tx, env)
		t.grouped = true
		if err := fn(t); err != nil {
			return err
		}
		woken, logged = t.woken, t.logged
		for _, c := range t.counts {
			s.commit.counts = s.commit.counts.add(c.key, c.n)
		}
		s.commit.fresh = append(s.commit.fresh, t.fresh...)
		return nil
	})
	if err == nil && woken {
		s.wake()
	}
	if err == nil && logged {
		s.foldSoon()
	}
	return err
}

// view runs fn in a read-only transaction (see update).
func (s *Store) view(fn func(t *txn) error) error { return s.viewIn(Production, fn) }

// viewIn runs fn in a read-only transaction of environment env.
func (s *Store) viewIn(env Env, fn func(t *txn) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		return fn(s.newTxn(tx, env))
	})
}

func (s *Store) newTxn(tx *bolt.Tx, env Env) *txn {
	t := &txn{Tx: tx, s: s, base: s.Now(), offset: time.Duration(s.sandboxOffset.Load())}
	t.enter(env)
	return t
}

// enter makes env's clock the operation's now: for operations that find
// their environment from what they read (a session token, a job).
func (t *txn) enter(env Env) { t.now = t.nowIn(env) }

// nowIn is environment env's time for this operation.
func (t *txn) nowIn(env Env) time.Time {
	if env == Sandbox {
		return t.base.Add(t.offset)
	}
	return t.base
}

// Root buckets.
var (
	bucketMeta        = []byte("meta")
	bucketCredentials = []byte("credentials")
	bucketSchedule    = []byte("schedule")
	bucketQueue       = []byte("schedule_queue") // entity queue prefix | schedule sequence -> schedule key | entry (first attempts in event order)
)

// envBuckets lists the nested buckets of every environment, one per concept.
func envBuckets() []string {
	return []string{
		"events",                // sequence -> envelope bytes
		"deliveries",            // delivery id -> delivery
		"deliveries_idx",        // seq -> delivery id (newest last)
		"deliveries_bits",       // filter index: field | len | value | block -> bitmap (list_filter_bits.go)
		"deliveries_bits_log",   // its changes not yet folded in: log seq -> seq | changes (list_filter_log.go)
		"history",               // subject id | seq -> history entry
		"idempotency",           // route | key -> first response
		"ratelimits",            // limit key -> sliding window
		"settings",              // webhook configuration, callback url
		"assets",                // asset id -> asset (catalog copy)
		"vaults",                // vault id -> vault
		"vaults_idx",            // seq -> vault id
		"wallets",               // wallet id -> wallet
		"wallets_idx",           // seq -> wallet id
		"wallets_by",            // filter index: field | len | value | seq (list_filter.go)
		"addresses",             // deposit address -> wallet id
		"transactions",          // transaction id -> seq | its bookkeeping
		"transactions_idx",      // seq -> transaction record (creation order)
		"transactions_bits",     // filter index: field | len | value | block -> bitmap (list_filter_bits.go)
		"transactions_bits_log", // its changes not yet folded in: log seq -> seq | changes (list_filter_log.go)
		"balances",              // wallet id -> balance
		"levels",                // level name -> level
		"levels_idx",            // createdAt ms | level id -> level name (newest last; kyc_levels.go)
		"applicants",            // externalUserId -> applicant
		"applicants_idx",        // seq -> externalUserId
		"applicants_bits",       // filter index: field | len | value | block -> bitmap (list_filter_bits.go)
		"applicants_bits_log",   // its changes not yet folded in (list_filter_log.go)
		"applicant_ids",         // applicant id -> externalUserId
		"applicant_views",       // externalUserId -> the applicant as GET renders it (JSON)
		"sessions",              // token -> verification session
		"shortlinks",            // short code -> token
		"images",                // sha256 -> image bytes
		"image_owners",          // sha256 | applicant id -> kind (duplicate detection)
		"expiry",                // retention index: kind | time | record key (retention.go)
	}
}

func initBuckets(tx *bolt.Tx) error {
	for _, name := range [][]byte{bucketMeta, bucketCredentials, bucketSchedule, bucketScheduleSandbox, bucketQueue} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	for _, e := range Envs() {
		root, err := tx.CreateBucketIfNotExists([]byte("env:" + string(e)))
		if err != nil {
			return err
		}
		for _, name := range envBuckets() {
			if _, err := root.CreateBucketIfNotExists([]byte(name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// seed stores what the configuration defines in every environment — the
// levels and the asset catalog — once at start-up, so no business operation
// has to check for it.
func (t *txn) seed() error {
	for _, env := range Envs() {
		if err := t.ensureLevels(env); err != nil {
			return err
		}
		if _, _, err := t.assets(env); err != nil {
			return err
		}
	}
	// What a previous process left in the logs (at most about foldMax
	// entries each), so that retention reads complete indexes.
	if _, err := t.foldAll(math.MaxInt); err != nil {
		return err
	}
	return t.ensureRetention()
}
