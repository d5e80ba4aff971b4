package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/complybox/complybox/dispatch"
	"github.com/complybox/complybox/server"
	"github.com/complybox/complybox/store"
)

// bootOptions says how boot starts an instance; start's defaults apply.
type bootOptions struct {
	options
	parked bool             // do not run the dispatcher
	now    func() time.Time // overrides the manual clock (benchmarks)
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
	srv := httptest.NewServer(server.New(st, d, server.Config{PublicURL: o.settings.PublicURL, Version: "test"}, logger))
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
