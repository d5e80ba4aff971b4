package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/complybox/complybox/server"
	"github.com/complybox/complybox/server/hostedui"
	"github.com/complybox/complybox/store/imagequality"

	"github.com/complybox/complybox/dispatch"
	"github.com/complybox/complybox/store"
)

// testStart is the manual clock's starting time in every test.
var testStart = time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)

// instance is one complybox wired as `serve` wires it: store, dispatcher and
// HTTP server on 127.0.0.1:0, on a temp db, with a manual clock.
type instance struct {
	t      testing.TB
	URL    string
	Path   string
	Store  *store.Store
	Disp   *dispatch.Dispatcher
	Clock  *store.ManualClock
	Key    string // sandbox partner credential
	Secret string

	stop func()
}

// options tune an instance before it starts.
type options struct {
	path     string
	settings store.Settings
	dispatch dispatch.Config
	clock    *store.ManualClock
	listener net.Listener // serve on it (its address in PublicURL) instead of a fresh port
	branding hostedui.Branding
	quality  imagequality.Thresholds // zero: no photo checks (the test images are small)
}

// start starts an instance and stops it in cleanup. mods edit the options.
func start(t testing.TB, mods ...func(*options)) *instance {
	t.Helper()
	return boot(t, func(o *bootOptions) {
		for _, m := range mods {
			m(&o.options)
		}
	}).instance
}

// credential makes another credential and returns its key and secret.
func (in *instance) credential(env store.Env, role string) (string, string) {
	in.t.Helper()
	c, secret, err := in.Store.CreateCredential(env, role, "test")
	if err != nil {
		in.t.Fatal(err)
	}
	return c.Key, secret
}

// advance moves the clock and wakes the dispatcher.
func (in *instance) advance(d time.Duration) {
	in.Clock.Advance(d)
	in.Disp.Wake()
}

// response is an API answer.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// json decodes the body into v, failing the test on error.
func (r *response) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// m decodes the body as a JSON object.
func (r *response) m(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	r.json(t, &v)
	return v
}

// do sends a request with the instance's sandbox credential. body is sent as
// JSON unless it is a string or []byte; headers are name, value pairs and
// override the credential headers.
func (in *instance) do(method, path string, body any, headers ...string) *response {
	in.t.Helper()
	h := []string{"X-Api-Key", in.Key, "X-Api-Secret", in.Secret}
	return doRequest(in.t, method, in.URL+path, body, append(h, headers...)...)
}

// expect is do that fails the test unless the status is want.
func (in *instance) expect(want int, method, path string, body any, headers ...string) *response {
	in.t.Helper()
	r := in.do(method, path, body, headers...)
	if r.Status != want {
		in.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, r.Status, want, r.Body)
	}
	return r
}

func doRequest(t testing.TB, method, url string, body any, headers ...string) *response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// received is one request a receiver got.
type received struct {
	Header http.Header
	Body   []byte
	At     time.Time // the instance clock when it arrived
}

// receiver is a webhook receiver on 127.0.0.1 (see newReceiver and
// handlerReceiver).
type receiver struct {
	*httptest.Server
	got chan received

	mu sync.Mutex
	n  int
}

// newReceiver returns a receiver that answers with status(n) for its n-th
// request (1-based); 200 when status is nil.
func newReceiver(t testing.TB, clock *store.ManualClock, status func(n int) int) *receiver {
	return handlerReceiver(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		code := http.StatusOK
		if status != nil {
			code = status(n)
		}
		w.WriteHeader(code)
	})
}

// next waits for the receiver's next request.
func (rc *receiver) next(t testing.TB) received {
	t.Helper()
	select {
	case r := <-rc.got:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook arrived within 10s")
		return received{}
	}
}

// none asserts that nothing arrives within a short grace period.
func (rc *receiver) none(t testing.TB, grace time.Duration) {
	t.Helper()
	select {
	case r := <-rc.got:
		t.Fatalf("unexpected webhook: %s", r.Body)
	case <-time.After(grace):
	}
}

// nextOfType waits for the next request of eventType, skipping others.
func (rc *receiver) nextOfType(t testing.TB, eventType string) received {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case r := <-rc.got:
			if r.Header.Get("X-Webhook-Event-Type") == eventType {
				return r
			}
		case <-deadline:
			t.Fatalf("no %s webhook arrived within 10s", eventType)
		}
	}
}

// configureWebhook points the instance's custody webhook at rc and returns
// the signing secret.
func (in *instance) configureWebhook(rc *receiver, types ...string) string {
	in.t.Helper()
	body := map[string]any{"url": rc.URL}
	if types != nil {
		body["subscribedEventTypes"] = types
	}
	var out struct{ SigningSecret *string }
	in.expect(200, "PUT", "/webhooks/outbound", body).json(in.t, &out)
	if out.SigningSecret == nil {
		in.t.Fatal("no signing secret on first configuration")
	}
	return *out.SigningSecret
}

// bootOptions says how boot starts an instance; start's defaults apply.
type bootOptions struct {
	options
	parked bool             // do not run the dispatcher
	now    func() time.Time // overrides the manual clock (benchmarks)
	// unchecked serves without contractCheck even under -contract (for the
	// test of contractCheck itself, and for a test that posts to paths the
	// document does not have, on purpose).
	unchecked bool
	// wrap, when set, wraps the server's handler (a test that watches
	// what leaves it).
	wrap func(http.Handler) http.Handler
}

// boot starts an instance as start does, but it can leave the dispatcher
// parked, run on the real clock, reopen an existing db path, and be killed
// (kill) without draining, as a crash would leave it.
func boot(t testing.TB, mods ...func(*bootOptions)) *node {
	t.Helper()
	o := &bootOptions{options: options{
		path: filepath.Join(t.TempDir(), "complybox.db"),
		settings: store.Settings{
			PublicURL: "http://127.0.0.1:8080",
			KYC:       store.KYCSettings{ReviewDelay: 2 * time.Second},
			Chain:     store.ChainSettings{AutoAdvance: true, StepDelay: 3 * time.Second},
		},
		dispatch: dispatch.Config{
			PollInterval:   5 * time.Second,
			AttemptTimeout: 2 * time.Second,
			RetryDelays:    []time.Duration{10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute, 15 * time.Minute},
			MaxAttempts:    5,
			Concurrency:    16,
			Jitter:         func() float64 { return 0 },
		},
	}}
	for _, m := range mods {
		m(o)
	}
	now := o.now
	if now == nil {
		if o.clock == nil {
			o.clock = store.NewManualClock(testStart)
		}
		now = o.clock.Now
	}
	logger := slog.New(slog.DiscardHandler)
	st, err := store.Open(o.path, store.Options{Now: now, Logger: logger, Settings: o.settings, PasswordCost: bcrypt.MinCost})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	if _, err := st.InitCallback(); err != nil {
		t.Fatalf("init callback: %v", err)
	}
	o.dispatch.Now = now
	d := dispatch.New(st, o.dispatch, logger)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	if !o.parked {
		wg.Add(1)
		go func() { defer wg.Done(); d.Run(ctx) }()
		// As serve does, hand the instance over only once the loop runs, so
		// /healthz answers 200 from the first request.
		for deadline := time.Now().Add(10 * time.Second); !d.Running(); runtime.Gosched() {
			if time.Now().After(deadline) {
				t.Fatal("the dispatcher did not start within 10s")
			}
		}
	}
	var h http.Handler = server.New(st, d, server.Config{PublicURL: o.settings.PublicURL, Version: "test", Branding: o.branding, Quality: o.quality}, logger)
	if o.wrap != nil {
		h = o.wrap(h)
	}
	if *contractFlag && !o.unchecked {
		h = contractCheck(t, h)
	}
	srv := httptest.NewUnstartedServer(h)
	if o.listener != nil {
		srv.Listener.Close()
		srv.Listener = o.listener
	}
	srv.Start()
	in := &instance{t: t, URL: srv.URL, Path: o.path, Store: st, Disp: d, Clock: o.clock}
	c, secret, err := st.CreateCredential(store.Sandbox, store.RolePartner, "test")
	if err != nil {
		t.Fatal(err)
	}
	in.Key, in.Secret = c.Key, secret
	var once sync.Once
	in.stop = func() {
		once.Do(func() {
			srv.Close()
			cancel()
			wg.Wait()
			if err := st.Check(); err != nil {
				t.Errorf("db check: %v", err)
			}
			st.Close()
		})
	}
	t.Cleanup(in.stop)
	return &node{instance: in, kill: func() {
		once.Do(func() {
			cancel() // the loop stops; attempts in flight are neither waited for nor recorded
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			srv.CloseClientConnections()
		})
	}}
}

// node is an instance from boot.
type node struct {
	*instance
	// kill drops the instance the way a crash does: the db closes under the
	// dispatcher and nothing in flight is waited for or recorded.
	kill func()
}

// handlerReceiver is a receiver whose answers h writes; n is the 1-based
// number of the request.
func handlerReceiver(t testing.TB, clock *store.ManualClock, h func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	rc := &receiver{got: make(chan received, 10000)}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.n++
		n := rc.n
		rc.mu.Unlock()
		at := time.Now()
		if clock != nil {
			at = clock.Now()
		}
		rc.got <- received{Header: r.Header.Clone(), Body: b, At: at}
		h(n, w, r)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// delivery is a delivery record as GET /webhooks/deliveries/{id} shows it.
type delivery struct {
	ID            string
	EventID       string
	EventType     string
	EntityType    string
	EntityID      string
	Destination   string
	Status        string
	AttemptCount  int
	LastAttemptAt *string
	LastError     *string
	CreatedAt     string
	DeliveredAt   *string
	NextAttemptAt *string
	Payload       *string
	Attempts      []struct {
		ID             string
		AttemptNumber  int
		RequestURL     string
		HTTPStatusCode *int
		ResponseBody   *string
		ErrorMessage   *string
		DurationMs     int64
		AttemptedAt    string
		Success        bool
	}
}

// waitDelivery polls the delivery until its status is want and its attempt
// count at least attempts (the dispatcher records an attempt just after the
// receiver answers), failing after 10s.
func (in *instance) waitDelivery(id, want string, attempts int) delivery {
	in.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var d delivery
		in.expect(200, "GET", "/webhooks/deliveries/"+id, nil).json(in.t, &d)
		if d.Status == want && d.AttemptCount >= attempts {
			return d
		}
		if time.Now().After(deadline) {
			in.t.Fatalf("delivery %s is %s after %d attempts, want %s after %d", id, d.Status, d.AttemptCount, want, attempts)
		}
		runtimeYield()
	}
}

// testEvent fires POST /webhooks/outbound/test and returns the delivery id.
func (in *instance) testEvent() string {
	in.t.Helper()
	var out struct{ DeliveryID string }
	in.expect(202, "POST", "/webhooks/outbound/test", nil).json(in.t, &out)
	return out.DeliveryID
}

// runtimeYield lets other goroutines run between polls.
func runtimeYield() { runtime.Gosched() }
