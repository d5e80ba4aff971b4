package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/complybox/complybox/dispatch"
	"github.com/complybox/complybox/store"
)

func TestServe(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "complybox.db")
	s := startServe(t, db)
	if s.Key == "" || s.Secret == "" {
		t.Fatalf("no first-run credential printed: %q", s.Lines)
	}
	if !strings.Contains(strings.Join(s.Lines, "\n"), "KYC callback signing secret") {
		t.Errorf("no generated KYC callback secret printed: %q", s.Lines)
	}

	t.Run("Healthz", func(t *testing.T) {
		status, body := call(t, "GET", s.URL+"/healthz", "", "", nil)
		if status != 200 || strings.TrimSpace(string(body)) != `{"status":"ok"}` {
			t.Fatalf("GET /healthz: %d %s", status, body)
		}
	})
	t.Run("OpenAPI", func(t *testing.T) {
		status, body := call(t, "GET", s.URL+"/openapi.json", "", "", nil)
		var doc map[string]any
		if status != 200 || json.Unmarshal(body, &doc) != nil || doc["openapi"] == nil {
			t.Fatalf("GET /openapi.json: %d %.200s", status, body)
		}
	})
	t.Run("FirstRunCredential", func(t *testing.T) {
		status, body := call(t, "GET", s.URL+"/webhooks/outbound", s.Key, s.Secret, nil)
		if status != 200 || !strings.Contains(string(body), `"isConfigured":false`) {
			t.Fatalf("GET /webhooks/outbound: %d %s", status, body)
		}
		if status, _ := call(t, "GET", s.URL+"/webhooks/outbound", s.Key, s.Secret+"x", nil); status != 401 {
			t.Fatalf("wrong secret: status %d, want 401", status)
		}
	})
	t.Run("UnreadableRequest", func(t *testing.T) {
		// Refused by net/http before any handler, yet answered as every
		// error is (SPEC §2): JSON with an X-Request-Id (wire.ProtocolErrors).
		c, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nContent-Length: abc\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("X-Request-Id") == "" ||
			!strings.Contains(string(body), `"code":"bad_request"`) {
			t.Fatalf("%d %v %s", resp.StatusCode, resp.Header, body)
		}
	})
	t.Run("OptionsAsterisk", func(t *testing.T) {
		// OPTIONS * asks what the server supports (RFC 9110 §9.3.7);
		// net/http would answer it itself, without the X-Request-Id every
		// response carries (SPEC §2).
		c, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, "OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || resp.Header.Get("X-Request-Id") == "" || !strings.Contains(resp.Header.Get("Allow"), "OPTIONS") || len(body) != 0 {
			t.Fatalf("OPTIONS *: %d %v %q", resp.StatusCode, resp.Header, body)
		}
	})
	t.Run("PublicURLFromListen", func(t *testing.T) {
		if !strings.Contains(s.logs.String(), "publicUrl="+s.URL) {
			t.Fatalf("public URL not derived from the bound address %s; logs:\n%s", s.URL, s.logs.String())
		}
	})

	if err := s.stop(); err != nil {
		t.Fatalf("run returned %v after cancel, want nil", err)
	}
	if !strings.Contains(s.logs.String(), "shutting down") {
		t.Errorf("no shutdown log:\n%s", s.logs.String())
	}
	if _, err := http.Get(s.URL + "/healthz"); err == nil {
		t.Errorf("the server still answers after shutdown")
	}

	// The db is closed: it opens again, and a restart prints no new secrets.
	st, err := store.Open(db, store.Options{OpenTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("reopen after shutdown: %v", err)
	}
	creds, err := st.Credentials()
	st.Close()
	if err != nil || len(creds) != 1 || creds[0].Key != s.Key {
		t.Fatalf("credentials after restart: %+v, %v", creds, err)
	}
	again := startServe(t, db)
	if again.Key != "" || strings.Contains(strings.Join(again.Lines, "\n"), "KYC callback") {
		t.Fatalf("a restart printed secrets again: %q", again.Lines)
	}
	if status, _ := call(t, "GET", again.URL+"/webhooks/outbound", s.Key, s.Secret, nil); status != 200 {
		t.Fatalf("first-run credential after restart: %d", status)
	}
}

// TestGracefulShutdown checks that a request in flight when the server is
// told to stop still gets its answer, and that run then returns nil.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	s := startServe(t, filepath.Join(t.TempDir(), "complybox.db"))
	// With Expect: 100-continue the client sends the body only once the
	// handler reads it, so "100 Continue" proves the request is in flight.
	body, w := io.Pipe()
	inFlight := make(chan struct{})
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		Got100Continue: func() { close(inFlight) },
	})
	req, err := http.NewRequestWithContext(ctx, "PUT", s.URL+"/webhooks/outbound", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Expect", "100-continue")
	req.Header.Set("X-Api-Key", s.Key)
	req.Header.Set("X-Api-Secret", s.Secret)
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: time.Minute}}
	type answer struct {
		status int
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := client.Do(req)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		resp.Body.Close()
		answered <- answer{status: resp.StatusCode}
	}()
	select {
	case <-inFlight:
	case a := <-answered:
		t.Fatalf("answered before the body was sent: %+v", a)
	case <-time.After(10 * time.Second):
		t.Fatal("no 100 Continue within 10s")
	}

	stopped := make(chan error, 1)
	go func() { stopped <- s.stop() }()
	s.logs.waitFor(t, "shutting down")
	select {
	case err := <-stopped:
		t.Fatalf("run returned (%v) with a request in flight", err)
	default:
	}
	if _, err := io.WriteString(w, `{"url":"http://127.0.0.1:9/hook"}`); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if a := <-answered; a.err != nil || a.status != 200 {
		t.Fatalf("in-flight request: status %d, err %v; want 200", a.status, a.err)
	}
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatalf("run returned %v, want nil", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return within 20s of the last answer")
	}
	if _, err := http.Get(s.URL + "/healthz"); err == nil {
		t.Fatal("a new request was served after shutdown")
	}
}

// TestServeEnvironment hands run COMPLYBOX_ variables of its own: they set
// keys, and one that names no key is a warning.
func TestServeEnvironment(t *testing.T) {
	t.Parallel()
	environ := []string{
		"COMPLYBOX_PUBLIC_URL=https://kyc.example.com",
		"COMPLYBOX_LOG_FORMAT=json",
		"COMPLYBOX_DISPATCH_POLL=1s",
		"PATH=/usr/bin",
	}
	s := startServeEnv(t, environ, filepath.Join(t.TempDir(), "complybox.db"))
	if status, _ := call(t, "GET", s.URL+"/healthz", "", "", nil); status != 200 {
		t.Fatalf("healthz: %d", status)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	var warned, listening bool
	for _, line := range strings.Split(strings.TrimSpace(s.logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if rec["level"] == "WARN" && strings.Contains(fmt.Sprint(rec["msg"]), "COMPLYBOX_DISPATCH_POLL") {
			warned = true
		}
		if rec["msg"] == "listening" && rec["publicUrl"] == "https://kyc.example.com" {
			listening = true
		}
	}
	if !warned || !listening {
		t.Fatalf("warned about COMPLYBOX_DISPATCH_POLL: %v; public_url from the environment: %v; logs:\n%s", warned, listening, s.logs.String())
	}
}

func TestServeErrors(t *testing.T) {
	t.Parallel()
	t.Run("DBInUse", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "complybox.db")
		startServe(t, db)
		r := runCmd(t, "serve", "--listen", "127.0.0.1:0", "--db", db)
		wantErr(t, r.err(), "in use")
	})
	t.Run("ListenTaken", func(t *testing.T) {
		t.Parallel()
		s := startServe(t, filepath.Join(t.TempDir(), "a.db"))
		addr := strings.TrimPrefix(s.URL, "http://")
		r := runCmd(t, "serve", "--listen", addr, "--db", filepath.Join(t.TempDir(), "b.db"))
		wantErr(t, r.err(), "listen")
	})
	t.Run("BadConfig", func(t *testing.T) {
		t.Parallel()
		r := runCmd(t, "serve", "--config", writeConfig(t, "[dispatch]\nmax_attempts = 0\n"), "--db", filepath.Join(t.TempDir(), "c.db"))
		wantErr(t, r.err(), "dispatch.max_attempts")
		if r.code != 1 {
			t.Errorf("exit code %d, want 1", r.code)
		}
	})
}

func TestServeConfigCredentials(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeConfig(t, `
[[credentials]]
key = "adm_key_1"
secret = "adm_secret_1"
environment = "production"
role = "admin"

[[credentials]]
key = "sbx_key_1"
secret = "sbx_secret_1"
`)
	s := startServe(t, filepath.Join(dir, "complybox.db"), "--config", cfg)
	if s.Key != "" {
		t.Fatalf("a first-run credential was printed although the config names some: %q", s.Lines)
	}
	if status, _ := call(t, "GET", s.URL+"/webhooks/outbound", "sbx_key_1", "sbx_secret_1", nil); status != 200 {
		t.Fatalf("configured sandbox credential: %d", status)
	}
	if status, _ := call(t, "GET", s.URL+"/v1/admin/backup", "sbx_key_1", "sbx_secret_1", nil); status != 403 {
		t.Fatalf("partner credential on /v1/admin/backup: %d, want 403", status)
	}
	status, body := call(t, "GET", s.URL+"/v1/admin/backup", "adm_key_1", "adm_secret_1", nil)
	if status != 200 {
		t.Fatalf("GET /v1/admin/backup: %d %s", status, body)
	}
	backup := filepath.Join(dir, "backup.db")
	if err := os.WriteFile(backup, body, 0o600); err != nil {
		t.Fatal(err)
	}
	assertCredentials(t, backup, "adm_key_1", "sbx_key_1")
}

// assertCredentials opens db and checks that it holds exactly keys.
func assertCredentials(t *testing.T, db string, keys ...string) []store.Credential {
	t.Helper()
	st, err := store.Open(db, store.Options{OpenTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("open %s: %v", db, err)
	}
	defer st.Close()
	if err := st.Check(); err != nil {
		t.Fatalf("check %s: %v", db, err)
	}
	creds, err := st.Credentials()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range creds {
		got = append(got, c.Key)
	}
	if strings.Join(got, ",") != strings.Join(keys, ",") {
		t.Fatalf("%s holds credentials %q, want %q", db, got, keys)
	}
	return creds
}

// TestKill9 kills a server with SIGKILL while its webhook receiver is down
// and checks that the restarted server delivers every acknowledged event.
func TestKill9(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	db := filepath.Join(t.TempDir(), "complybox.db")
	env := []string{
		"COMPLYBOX_DISPATCH_RETRY_DELAYS=100ms",
		"COMPLYBOX_DISPATCH_MAX_ATTEMPTS=1000",
		"COMPLYBOX_DISPATCH_ATTEMPT_TIMEOUT=500ms",
		"COMPLYBOX_DISPATCH_POLL_INTERVAL=200ms",
	}

	// The receiver's port is reserved now, but it accepts nothing until it
	// starts after the kill.
	var mu sync.Mutex
	got := map[string][]byte{} // delivery id -> body
	sigs := map[string]string{}
	rc := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got[r.Header.Get("X-Webhook-Id")] = b
		sigs[r.Header.Get("X-Webhook-Id")] = r.Header.Get("X-Webhook-Signature")
		mu.Unlock()
	}))
	defer rc.Close()

	p := startProcess(t, bin, db, env...)
	p.dumpLogs(t)
	if p.Key == "" {
		t.Fatalf("no first-run credential: %q", p.Lines)
	}
	status, body := call(t, "PUT", p.URL+"/webhooks/outbound", p.Key, p.Secret, map[string]any{"url": "http://" + rc.Listener.Addr().String() + "/hook"})
	if status != 200 {
		t.Fatalf("PUT /webhooks/outbound: %d %s", status, body)
	}
	var hook struct{ SigningSecret string }
	if err := json.Unmarshal(body, &hook); err != nil || hook.SigningSecret == "" {
		t.Fatalf("no signing secret: %s", body)
	}
	const n = 20
	var ids []string
	for range n {
		status, body := call(t, "POST", p.URL+"/webhooks/outbound/test", p.Key, p.Secret, nil)
		var out struct{ DeliveryID string }
		if status != 202 || json.Unmarshal(body, &out) != nil || out.DeliveryID == "" {
			t.Fatalf("POST /webhooks/outbound/test: %d %s", status, body)
		}
		ids = append(ids, out.DeliveryID)
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()

	rc.Start()
	key, secret := p.Key, p.Secret
	p = startProcess(t, bin, db, env...)
	p.dumpLogs(t)
	if p.Key != "" {
		t.Fatalf("the restart printed a new credential")
	}

	// The restart makes everything due at once: all n are delivered.
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body := call(t, "GET", p.URL+"/webhooks/deliveries?status=delivered&limit=200", key, secret, nil)
		var list struct{ Items []struct{ ID string } }
		if status != 200 || json.Unmarshal(body, &list) != nil {
			t.Fatalf("GET /webhooks/deliveries: %d %s", status, body)
		}
		if len(list.Items) == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d deliveries delivered 30s after the restart", len(list.Items), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	for _, id := range ids {
		if got[id] == nil {
			t.Errorf("delivery %s never reached the receiver", id)
		} else if !dispatch.Verify(hook.SigningSecret, got[id], sigs[id]) {
			t.Errorf("delivery %s: bad signature", id)
		}
	}
	mu.Unlock()

	// SIGTERM stops it gracefully with exit code 0.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- p.cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("after SIGTERM: %v, want exit 0", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not exit within 20s of SIGTERM")
	}
	if st, err := store.Open(db, store.Options{OpenTimeout: 100 * time.Millisecond}); err != nil {
		t.Fatalf("db after SIGTERM: %v", err)
	} else {
		st.Close()
	}
}

// TestServeLogsConsoleURL: serve's start-up log names the console's
// address, so an operator knows where to log in.
func TestServeLogsConsoleURL(t *testing.T) {
	t.Parallel()
	s := startServe(t, filepath.Join(t.TempDir(), "complybox.db"))
	s.logs.waitFor(t, "consoleUrl="+s.banner.URL+"/console")
}

// TestServeLogsUnreadRequests: a request net/http cannot read gets the
// JSON error with an X-Request-Id (wire.ProtocolErrors), and that id is in
// the access log, as every answer's is, and the answer in the metrics.
func TestServeLogsUnreadRequests(t *testing.T) {
	t.Parallel()
	s := startServe(t, filepath.Join(t.TempDir(), "complybox.db"))
	c, err := net.Dial("tcp", strings.TrimPrefix(s.banner.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	id := resp.Header.Get("X-Request-Id")
	if resp.StatusCode != 400 || id == "" {
		t.Fatalf("a header name with a space: %d, X-Request-Id %q", resp.StatusCode, id)
	}
	s.logs.waitFor(t, "requestId="+id)
	if _, body := call(t, "GET", s.URL+"/metrics", "", "", nil); !strings.Contains(string(body), `complybox_http_requests_total{method="other",route="unmatched",status="4xx"} 1`) {
		t.Errorf("the answer is not in the metrics:\n%s", body)
	}
}

// TestServeCPUProfile: --cpuprofile writes a gzipped pprof profile of the run
// when serve stops (how default.pgo is made), and a path it cannot create
// stops the start with the flag named.
func TestServeCPUProfile(t *testing.T) {
	if f := flag.Lookup("test.cpuprofile"); f != nil && f.Value.String() != "" {
		t.Skip("go test -cpuprofile holds the process's one CPU profiler")
	}
	dir := t.TempDir()
	prof := filepath.Join(dir, "cpu.pprof")
	s := startServe(t, filepath.Join(dir, "complybox.db"), "--cpuprofile", prof)
	for range 50 {
		if status, _ := call(t, "GET", s.URL+"/webhooks/outbound", s.Key, s.Secret, nil); status != 200 {
			t.Fatalf("GET /webhooks/outbound: %d", status)
		}
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(prof)
	if err != nil {
		t.Fatalf("no profile written: %v", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f) // pprof's protobuf is gzipped
	if err != nil {
		t.Fatalf("profile is not gzipped: %v", err)
	}
	body, err := io.ReadAll(zr)
	if err != nil || len(body) == 0 || !bytes.Contains(body, []byte("samples")) {
		t.Fatalf("profile: %d bytes, err %v; want a pprof profile (sample type \"samples\")", len(body), err)
	}

	r := runCmd(t, "serve", "--listen", "127.0.0.1:0", "--db", filepath.Join(dir, "b.db"), "--cpuprofile", filepath.Join(dir, "missing", "cpu.pprof"))
	if r.code != 1 || !strings.Contains(r.stderr, "--cpuprofile") {
		t.Fatalf("unwritable --cpuprofile: exit %d, stderr %q; want 1 naming the flag", r.code, r.stderr)
	}

	// A profile that cannot be written when serve stops (a full disk:
	// /dev/full takes no byte) fails the run, naming the flag, rather
	// than leaving an empty profile that looks written.
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full here to stand for a full disk")
	}
	s = startServe(t, filepath.Join(dir, "c.db"), "--cpuprofile", "/dev/full")
	call(t, "GET", s.URL+"/healthz", "", "", nil)
	if err := s.stop(); err == nil || !strings.Contains(s.logs.String(), "--cpuprofile: writing /dev/full") {
		t.Fatalf("a profile written to a full disk: %v; stderr %s", err, s.logs.String())
	}
	s.stop = func() error { return nil } // its failure was the point
}

// failingWriter is an output that takes nothing, like a full disk.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// runFailingStdout runs the command line with an output that fails every
// write and returns its exit code and error output.
func runFailingStdout(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), failingWriter{}, &errOut, nil)
	return code, errOut.String()
}

// TestServeSecretUnprinted: a secret whose printing fails is not kept, so
// the next start creates and prints another (SPEC §1: printed once).
func TestServeSecretUnprinted(t *testing.T) {
	t.Parallel()
	t.Run("FirstRunCredential", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "complybox.db")
		code, stderr := runFailingStdout(t, "serve", "--listen", "127.0.0.1:0", "--db", db)
		if code != 1 || !strings.Contains(stderr, "printing the first-run credential") {
			t.Fatalf("exit code %d, stderr %q; want 1 naming the first-run credential", code, stderr)
		}
		assertCredentials(t, db)
		s := startServe(t, db)
		if s.Key == "" {
			t.Fatalf("the next start printed no credential: %q", s.Lines)
		}
		if status, body := call(t, "GET", s.URL+"/webhooks/outbound", s.Key, s.Secret, nil); status != 200 {
			t.Fatalf("printed credential: %d %s", status, body)
		}
	})
	t.Run("CallbackSecret", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "complybox.db")
		cfg := writeConfig(t, "[[credentials]]\nkey = \"sbx_key_1\"\nsecret = \"sbx_secret_1\"\n")
		code, stderr := runFailingStdout(t, "serve", "--listen", "127.0.0.1:0", "--db", db, "--config", cfg)
		if code != 1 || !strings.Contains(stderr, "printing the generated KYC callback secret") {
			t.Fatalf("exit code %d, stderr %q; want 1 naming the KYC callback secret", code, stderr)
		}
		st, err := store.Open(db, store.Options{OpenTimeout: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		secret, err := st.CallbackSecret()
		if cerr := st.Close(); err == nil {
			err = cerr
		}
		if err != nil || secret != "" {
			t.Fatalf("stored callback secret %q (%v) nobody saw; want none", secret, err)
		}
		s := startServe(t, db, "--config", cfg)
		if !strings.Contains(strings.Join(s.Lines, "\n"), "KYC callback signing secret (generated, shown once): ") {
			t.Fatalf("the next start printed no callback secret: %q", s.Lines)
		}
	})
}

// TestSecretClosedPipe: stdout a pipe nobody reads (`complybox … | true`)
// is a failed printing like a full disk, not a SIGPIPE death that keeps
// the secret nobody saw: exit 1 naming it, and nothing kept.
func TestSecretClosedPipe(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	run := func(db string, args ...string) (int, string) {
		t.Helper()
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		defer w.Close()
		var stderr bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = w, &stderr
		err = cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), stderr.String()
	}
	db := filepath.Join(t.TempDir(), "complybox.db")
	if code, stderr := run(db, "credentials", "create", "--db", db, "--env", "sandbox", "--name", "closed"); code != 1 || !strings.Contains(stderr, "broken pipe") {
		t.Errorf("credentials create: exit code %d, stderr %q; want 1 naming the broken pipe", code, stderr)
	}
	assertCredentials(t, db)
	db2 := filepath.Join(t.TempDir(), "complybox.db")
	if code, stderr := run(db2, "serve", "--listen", "127.0.0.1:0", "--db", db2); code != 1 || !strings.Contains(stderr, "printing the first-run credential") {
		t.Errorf("serve: exit code %d, stderr %q; want 1 naming the first-run credential", code, stderr)
	}
	assertCredentials(t, db2)
}
