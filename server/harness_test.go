package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/complybox/complybox/dispatch"
	"github.com/complybox/complybox/server"
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
}

// start starts an instance and stops it in cleanup. mods edit the options.
func start(t testing.TB, mods ...func(*options)) *instance {
	t.Helper()
	o := &options{
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
	}
	for _, m := range mods {
		m(o)
	}
	if o.clock == nil {
		o.clock = store.NewManualClock(testStart)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := store.Open(o.path, store.Options{Now: o.clock.Now, Logger: logger, Settings: o.settings})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	if _, err := st.InitCallback(); err != nil {
		t.Fatalf("init callback: %v", err)
	}
	o.dispatch.Now = o.clock.Now
	d := dispatch.New(st, o.dispatch, logger)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); d.Run(ctx) }()
	srv := httptest.NewServer(server.New(st, d, server.Config{PublicURL: o.settings.PublicURL, Version: "test"}, logger))
	in := &instance{t: t, URL: srv.URL, Path: o.path, Store: st, Disp: d, Clock: o.clock}
	_, in.Secret, err = st.CreateCredential(store.Sandbox, store.RolePartner, "test")
	if err != nil {
		t.Fatal(err)
	}
	creds, _ := st.Credentials()
	in.Key = creds[len(creds)-1].Key
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
	return in
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

// receiver is a webhook receiver on 127.0.0.1. It answers with status(n) for
// its n-th request (1-based); 200 when status is nil.
type receiver struct {
	*httptest.Server
	got chan received

	mu     sync.Mutex
	n      int
	status func(n int) int
}

func newReceiver(t testing.TB, clock *store.ManualClock, status func(n int) int) *receiver {
	rc := &receiver{got: make(chan received, 10000), status: status}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.n++
		n := rc.n
		rc.mu.Unlock()
		rc.got <- received{Header: r.Header.Clone(), Body: b, At: clock.Now()}
		code := http.StatusOK
		if rc.status != nil {
			code = rc.status(n)
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(rc.Close)
	return rc
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
