// Package requestlog keeps the last API requests of each environment in
// memory for partners to look back at (SPEC §7): method, path, query,
// status, duration, request id, credential key and the first 4 KiB of both
// bodies. It is lost at restart. Entries keep the bytes as they went over
// the wire; every reader gets them through Redact, so images (base64
// strings, data: URLs, file parts, binary bodies) and secrets never leave
// the log. Recording costs a lock and an append: redaction is paid only by
// whoever reads.
package requestlog

import (
	"crypto/rand"
	"encoding/base64"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/complybox/complybox/store"
)

// Defaults of the log.
const (
	Capacity = 10000   // entries kept per environment
	MaxBody  = 4 << 10 // bytes kept of each body
)

// Entry is one request as recorded.
type Entry struct {
	RequestID           string
	At                  time.Time // when it arrived (the store's clock)
	Method              string
	Path                string
	Query               string // raw query, without "?"
	Status              int
	Duration            time.Duration
	CredentialKey       string
	RequestContentType  string
	RequestBody         []byte // the first MaxBody bytes
	RequestBodySize     int64  // bytes read in all
	ResponseContentType string
	ResponseBody        []byte // the first MaxBody bytes
	ResponseBodySize    int64  // bytes written in all
	Forgotten           bool   // both bodies dropped by Forget
	// Began is the real time the call began, which tells a call in
	// flight at an erasure from one that began after it (Forget); zero:
	// the time it is recorded, less Duration.
	Began time.Time
}

// View is an entry as GET /v1/requests and the console show it: bodies
// truncated and redacted.
type View struct {
	RequestID             string     `json:"requestId"`
	At                    store.Time `json:"at"`
	Method                string     `json:"method"`
	Path                  string     `json:"path"`
	Query                 string     `json:"query"`
	Status                int        `json:"status"`
	DurationMs            float64    `json:"durationMs"`
	CredentialKey         string     `json:"credentialKey"`
	RequestBody           *string    `json:"requestBody"`
	RequestBodyBytes      int64      `json:"requestBodyBytes"`
	RequestBodyTruncated  bool       `json:"requestBodyTruncated"`
	ResponseBody          *string    `json:"responseBody"`
	ResponseBodyBytes     int64      `json:"responseBodyBytes"`
	ResponseBodyTruncated bool       `json:"responseBodyTruncated"`
}

// Log is the request log of every environment. The zero value is not
// usable; see New.
type Log struct {
	envs map[store.Env]*ring
	run  string // tells this start's cursors from an earlier one's
}

// ring is one environment's entries: entry number n is at buf[n%cap].
type ring struct {
	mu   sync.Mutex
	buf  []Entry
	size int
	next uint64 // number of the next entry; entries next-len(buf) .. next-1 exist
	// forgetting are the rules of recent Forget calls, applied to entries
	// recorded after them too: a call in flight at the erasure (a list
	// that read the applicant before it) is recorded when it ends.
	forgetting []forgetRule
}

// forgetRule is a Forget applied to the entries recorded after it of
// calls that began before it (at), until until.
type forgetRule struct {
	mentions  func(e *Entry) bool
	at, until time.Time // real time
}

// forgetFor is how long a Forget also applies to calls recorded after it
// that began before it: longer than any call can be in flight.
const forgetFor = 10 * time.Minute

// New returns an empty log keeping capacity entries per environment.
func New(capacity int) *Log {
	l := &Log{envs: map[store.Env]*ring{}, run: rand.Text()[:8]}
	for _, env := range store.Envs() {
		l.envs[env] = &ring{size: capacity}
	}
	return l
}

// Record adds e to env's log, dropping the oldest entry when it is full.
// The bodies are kept as given: the caller hands over slices it no longer
// writes to.
func (l *Log) Record(env store.Env, e Entry) {
	r := l.envs[env]
	if r == nil {
		return
	}
	if e.Began.IsZero() {
		e.Began = time.Now().Add(-e.Duration)
	}
	r.mu.Lock()
	i := int(r.next % uint64(r.size))
	if len(r.buf) < r.size {
		r.buf = append(r.buf, e)
	} else {
		r.buf[i] = e
	}
	r.next++
	if len(r.forgetting) > 0 {
		// On the entry in the log, not on e: taking e's address would
		// move every recorded entry to the heap.
		r.forgotten(&r.buf[i], time.Now())
	}
	r.mu.Unlock()
}

// Forget drops both bodies of every entry of env that mentions reports
// true for, keeping the rest of the entry (its sizes say there were
// bodies), and of every such entry recorded later of a call that began
// before it (in flight now; for forgetFor). Returns how many entries it
// changed. It walks the whole log: it is for erasures, which are rare.
func (l *Log) Forget(env store.Env, mentions func(e *Entry) bool) int {
	r := l.envs[env]
	if r == nil {
		return 0
	}
	now := time.Now() // before the lock: a call recorded while this waits for it began before now
	r.mu.Lock()
	defer r.mu.Unlock()
	r.forgetting = append(r.forgetting, forgetRule{mentions: mentions, at: now, until: now.Add(forgetFor)})
	n := 0
	for i := range r.buf {
		if e := &r.buf[i]; (e.RequestBody != nil || e.ResponseBody != nil) && mentions(e) {
			e.RequestBody, e.ResponseBody, e.Forgotten = nil, nil, true
			n++
		}
	}
	return n
}

// forgotten applies the live forget rules to e, an entry being recorded
// at now, and drops the rules that have run out: a rule applies to a call
// that began before it (a call that begins after the erasure cannot have
// read the applicant). Called with r.mu held.
func (r *ring) forgotten(e *Entry, now time.Time) {
	live := r.forgetting[:0]
	for _, f := range r.forgetting {
		if now.Before(f.until) {
			live = append(live, f)
		}
	}
	clear(r.forgetting[len(live):])
	r.forgetting = live
	for _, f := range live {
		if e.Began.Before(f.at) && (e.RequestBody != nil || e.ResponseBody != nil) && f.mentions(e) {
			e.RequestBody, e.ResponseBody, e.Forgotten = nil, nil, true
		}
	}
}

// Filter selects entries; empty fields select everything.
type Filter struct {
	Status     string // a class ("4xx") or a code ("404")
	PathPrefix string
	Method     string
	RequestID  string
}

// CheckFilter returns EINVALID naming the parameter of a bad filter value.
func CheckFilter(f Filter) error {
	if f.Status != "" {
		if _, _, ok := statusRange(f.Status); !ok {
			return store.Invalid("status", "status must be a class such as 4xx or a code such as 404")
		}
	}
	return nil
}

// statusRange is the inclusive range of codes a status filter selects.
func statusRange(s string) (lo, hi int, ok bool) {
	if len(s) == 3 && s[1:] == "xx" && s[0] >= '1' && s[0] <= '5' {
		lo = int(s[0]-'0') * 100
		return lo, lo + 99, true
	}
	if n, err := strconv.Atoi(s); err == nil && len(s) == 3 && n >= 100 && n <= 599 {
		return n, n, true
	}
	return 0, 0, false
}

func (f Filter) match(e *Entry, lo, hi int) bool {
	return (f.Status == "" || e.Status >= lo && e.Status <= hi) &&
		(f.PathPrefix == "" || strings.HasPrefix(e.Path, f.PathPrefix)) &&
		(f.Method == "" || strings.EqualFold(e.Method, f.Method)) &&
		(f.RequestID == "" || e.RequestID == f.RequestID)
}

// cursorPrefix marks a page cursor of env's request log in this run of the
// service, followed by an entry's number. A cursor names its environment
// and its run so that the other environment and a later start refuse it
// (SPEC §2 "Lists"): the log is in memory, and the entry a cursor of an
// earlier start points at is gone.
func (l *Log) cursorPrefix(env store.Env) string {
	return "requests." + string(env) + "." + l.run + ":"
}

// List returns env's entries matching f, newest first, a page at a time.
// A page scans at most the whole ring (Capacity entries, in memory), never
// more, whatever has been served. Returns EINVALID for a bad filter or
// cursor.
func (l *Log) List(env store.Env, f Filter, p store.Page) ([]View, *string, error) {
	if err := CheckFilter(f); err != nil {
		return nil, nil, err
	}
	lo, hi, _ := statusRange(f.Status)
	r := l.envs[env]
	if r == nil {
		return []View{}, nil, nil
	}
	var from uint64 // entries numbered below from
	hasCursor := p.Cursor != ""
	if hasCursor {
		b, err := base64.RawURLEncoding.DecodeString(p.Cursor)
		n, ok := strings.CutPrefix(string(b), l.cursorPrefix(env))
		switch other := l.cursorPrefix(env.Other()); {
		case ok:
		case strings.HasPrefix(string(b), other):
			return nil, nil, store.Invalid("cursor", "cursor was returned by the request log of the other environment: a cursor pages only the list that returned it")
		case strings.HasPrefix(string(b), "requests"):
			// An earlier start's, or one of a release before cursors named
			// their run ("requests:N").
			return nil, nil, store.Invalid("cursor", "cursor was returned before complybox last started; the request log is kept in memory and starts afresh with each start: start again from the first page")
		}
		v, perr := strconv.ParseUint(n, 10, 64)
		if err != nil || !ok || perr != nil {
			return nil, nil, store.Invalid("cursor", "cursor is not one this service returned")
		}
		from = v
	}
	limit := p.Limit
	if limit <= 0 {
		limit = store.DefaultLimit
	}
	var picked []Entry
	var last uint64
	more := false
	r.mu.Lock()
	oldest := r.next - uint64(len(r.buf))
	n := r.next
	if hasCursor && from < n {
		n = from
	}
	for n > oldest {
		n--
		e := &r.buf[n%uint64(r.size)]
		if !f.match(e, lo, hi) {
			continue
		}
		if len(picked) == limit {
			more = true
			break
		}
		picked = append(picked, *e)
		last = n
	}
	r.mu.Unlock()
	out := make([]View, len(picked))
	for i := range picked {
		out[i] = view(&picked[i])
	}
	if !more {
		return out, nil, nil
	}
	cur := base64.RawURLEncoding.EncodeToString([]byte(l.cursorPrefix(env) + strconv.FormatUint(last, 10)))
	return out, &cur, nil
}

// Get returns env's newest entry with the request id. Returns ENOTFOUND.
func (l *Log) Get(env store.Env, requestID string) (View, error) {
	items, _, err := l.List(env, Filter{RequestID: requestID}, store.Page{Limit: 1})
	if err != nil {
		return View{}, err
	}
	if len(items) == 0 {
		return View{}, store.Errorf(store.ENOTFOUND, "request_not_found", "no request %q in the request log (it keeps the last %d requests, in memory)", requestID, Capacity)
	}
	return items[0], nil
}

// view redacts an entry for reading.
func view(e *Entry) View {
	v := View{
		RequestID: e.RequestID, At: store.At(e.At), Method: e.Method, Path: e.Path, Query: RedactQuery(e.Query),
		Status: e.Status, DurationMs: float64(e.Duration.Microseconds()) / 1000, CredentialKey: e.CredentialKey,
		RequestBodyBytes: e.RequestBodySize, RequestBodyTruncated: !e.Forgotten && e.RequestBodySize > int64(len(e.RequestBody)),
		ResponseBodyBytes: e.ResponseBodySize, ResponseBodyTruncated: !e.Forgotten && e.ResponseBodySize > int64(len(e.ResponseBody)),
	}
	if len(e.RequestBody) > 0 {
		s := shown(Redact(e.RequestContentType, e.RequestBody))
		v.RequestBody = &s
	}
	if len(e.ResponseBody) > 0 {
		s := shown(Redact(e.ResponseContentType, e.ResponseBody))
		v.ResponseBody = &s
	}
	return v
}

// shown is a redacted body as it is read: valid UTF-8, each run of invalid
// bytes one U+FFFD, so that the console's page (UTF-8 by its charset)
// shows what GET /v1/requests answers; then clipped to MaxBody.
func shown(s string) string {
	return clip(strings.ToValidUTF8(s, "\uFFFD"))
}

// clip cuts a redacted body back to MaxBody bytes, at a character boundary:
// redaction can lengthen it (a short secret becomes "[redacted]", a string
// cut short gets its closing quote), and what is shown stays within 4 KiB.
// A character the 4 KiB cut split is dropped whole.
func clip(s string) string {
	if len(s) > MaxBody {
		n := MaxBody
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	for i := 0; i < utf8.UTFMax-1 && len(s) > 0; i++ {
		if r, size := utf8.DecodeLastRuneInString(s); r != utf8.RuneError || size != 1 {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}
