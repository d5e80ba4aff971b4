package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/complybox/complybox/dispatch"
	"github.com/complybox/complybox/store"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// syncBuffer is a bytes.Buffer safe for concurrent writers (loggers) that
// can wait for a text to appear.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written chan struct{} // signalled after each write
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{written: make(chan struct{}, 1)} }

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case s.written <- struct{}{}:
	default:
	}
	return s.b.Write(p)
}

// waitFor waits until the buffer contains text, failing the test after 10 s.
func (s *syncBuffer) waitFor(t *testing.T, text string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !strings.Contains(s.String(), text) {
		select {
		case <-s.written:
		case <-deadline:
			t.Fatalf("%q did not appear within 10s in:\n%s", text, s.String())
		}
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// lineWriter hands every complete line written to it to a channel.
type lineWriter struct {
	mu    sync.Mutex
	buf   []byte
	lines chan string
}

func newLineWriter() *lineWriter { return &lineWriter{lines: make(chan string, 100)} }

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.lines <- string(l.buf[:i])
		l.buf = l.buf[i+1:]
	}
}

// banner is what serve prints before it is ready.
type banner struct {
	URL    string   // from "complybox listening on http://ADDR"
	Key    string   // first-run credential, "" when none was printed
	Secret string   //
	Lines  []string // every line up to the listening line
}

var (
	reListening = regexp.MustCompile(`^complybox listening on (http://\S+)$`)
	reKey       = regexp.MustCompile(`X-Api-Key:\s+(\S+)`)
	reSecret    = regexp.MustCompile(`X-Api-Secret:\s+(\S+)`)
)

// readBanner reads lines until the listening line, within 20 s.
func readBanner(t *testing.T, lines <-chan string, failed <-chan error) banner {
	t.Helper()
	var b banner
	deadline := time.After(20 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("serve ended its output before listening; got %q", b.Lines)
			}
			b.Lines = append(b.Lines, line)
			if m := reKey.FindStringSubmatch(line); m != nil {
				b.Key = m[1]
			}
			if m := reSecret.FindStringSubmatch(line); m != nil {
				b.Secret = m[1]
			}
			if m := reListening.FindStringSubmatch(line); m != nil {
				b.URL = m[1]
				return b
			}
		case err := <-failed:
			t.Fatalf("serve returned before listening: %v; output %q", err, b.Lines)
		case <-deadline:
			t.Fatalf("serve did not print its address within 20s; output %q", b.Lines)
		}
	}
}

// served is a `complybox serve` running in this process through run.
type served struct {
	banner
	stop func() error // cancels the context and returns run's result
	logs *syncBuffer
}

// startServe runs `complybox serve --listen 127.0.0.1:0 --db db extra...` in
// a goroutine and waits until it listens. It is stopped in cleanup.
func startServe(t *testing.T, db string, extra ...string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := newLineWriter()
	logs := newSyncBuffer()
	done := make(chan error, 1)
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--db", db}, extra...)
	go func() { done <- run(ctx, args, out, logs) }()
	s := &served{banner: readBanner(t, out.lines, done), logs: logs}
	var once sync.Once
	var result error
	s.stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case result = <-done:
			case <-time.After(20 * time.Second):
				result = fmt.Errorf("serve did not stop within 20s")
			}
		})
		return result
	}
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("serve: %v\nlogs:\n%s", err, logs.String())
		}
	})
	return s
}

// call sends a request with key and secret (when not empty) and returns the
// status and body.
func call(t *testing.T, method, url, key, secret string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-Api-Key", key)
		req.Header.Set("X-Api-Secret", secret)
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
	return resp.StatusCode, b
}

// runCmd runs the command line in this process and returns stdout.
func runCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, &out, &errOut)
	return out.String(), err
}

// mustRun is runCmd that fails the test on error.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := runCmd(t, args...)
	if err != nil {
		t.Fatalf("complybox %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func TestServe(t *testing.T) {
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

// TestServeEnvironment sets COMPLYBOX_ variables for the process, so it does
// not run in parallel.
func TestServeEnvironment(t *testing.T) {
	t.Setenv("COMPLYBOX_PUBLIC_URL", "https://kyc.example.com")
	t.Setenv("COMPLYBOX_LOG_FORMAT", "json")
	t.Setenv("COMPLYBOX_DISPATCH_POLL", "1s")
	s := startServe(t, filepath.Join(t.TempDir(), "complybox.db"))
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
	t.Run("DBInUse", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "complybox.db")
		startServe(t, db)
		_, err := runCmd(t, "serve", "--listen", "127.0.0.1:0", "--db", db)
		wantErr(t, err, "in use")
	})
	t.Run("ListenTaken", func(t *testing.T) {
		s := startServe(t, filepath.Join(t.TempDir(), "a.db"))
		addr := strings.TrimPrefix(s.URL, "http://")
		_, err := runCmd(t, "serve", "--listen", addr, "--db", filepath.Join(t.TempDir(), "b.db"))
		wantErr(t, err, "listen")
	})
	t.Run("BadConfig", func(t *testing.T) {
		_, err := runCmd(t, "serve", "--config", writeConfig(t, "[dispatch]\nmax_attempts = 0\n"), "--db", filepath.Join(t.TempDir(), "c.db"))
		wantErr(t, err, "dispatch.max_attempts")
		if exitCode(err) != 1 {
			t.Errorf("exit code %d, want 1", exitCode(err))
		}
	})
}

func TestServeConfigCredentials(t *testing.T) {
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

func TestCredentialsCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "complybox.db")
	out := mustRun(t, "credentials", "create", "--db", db, "--env", "sandbox", "--name", "ci")
	key := regexp.MustCompile(`(?m)^key\s+(\S+)$`).FindStringSubmatch(out)
	secret := regexp.MustCompile(`(?m)^secret\s+(\S+)$`).FindStringSubmatch(out)
	if key == nil || secret == nil || !strings.HasPrefix(key[1], "sbx_key_") {
		t.Fatalf("credentials create printed:\n%s", out)
	}
	adminOut := mustRun(t, "credentials", "create", "--db", db, "--env", "production", "--role", "admin")
	if !strings.Contains(adminOut, "prd_key_") || !regexp.MustCompile(`(?m)^role\s+admin$`).MatchString(adminOut) {
		t.Fatalf("credentials create --role admin printed:\n%s", adminOut)
	}

	list := mustRun(t, "credentials", "list", "--db", db)
	rows := strings.Split(strings.TrimSpace(list), "\n")
	if len(rows) != 3 || !strings.HasPrefix(rows[0], "KEY") || !strings.Contains(rows[1], key[1]) || !strings.Contains(rows[1], "ci") {
		t.Fatalf("credentials list:\n%s", list)
	}
	if strings.Contains(list, secret[1]) {
		t.Fatal("credentials list shows a secret")
	}

	// The credential works against a server on that db...
	s := startServe(t, db)
	if s.Key != "" {
		t.Fatalf("first-run credential printed although the db holds some")
	}
	if status, body := call(t, "GET", s.URL+"/webhooks/outbound", key[1], secret[1], nil); status != 200 {
		t.Fatalf("created credential: %d %s", status, body)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}

	// ...and gets 401 once revoked.
	if out := mustRun(t, "credentials", "revoke", "--db", db, key[1]); !strings.Contains(out, "revoked "+key[1]) {
		t.Fatalf("revoke printed %q", out)
	}
	list = mustRun(t, "credentials", "list", "--db", db)
	if row := strings.Split(list, "\n")[1]; strings.HasSuffix(strings.TrimSpace(row), "-") {
		t.Fatalf("revoked credential listed without a revocation time: %q", row)
	}
	s = startServe(t, db)
	if status, _ := call(t, "GET", s.URL+"/webhooks/outbound", key[1], secret[1], nil); status != 401 {
		t.Fatalf("revoked credential: status %d, want 401", status)
	}

	t.Run("ErrInUse", func(t *testing.T) {
		_, err := runCmd(t, "credentials", "list", "--db", db)
		wantErr(t, err, "in use")
	})
	t.Run("ErrUsage", func(t *testing.T) {
		_, err := runCmd(t, "credentials", "create", "--db", db)
		wantErr(t, err, "--env")
		if exitCode(err) != 2 {
			t.Fatalf("exit code %d, want 2", exitCode(err))
		}
		_, err = runCmd(t, "credentials", "revoke", "--db", db)
		if exitCode(err) != 2 {
			t.Fatalf("revoke without KEY: %v (exit %d), want a usage error", err, exitCode(err))
		}
	})
	s.stop()
	t.Run("ErrBadValues", func(t *testing.T) {
		_, err := runCmd(t, "credentials", "create", "--db", db, "--env", "staging")
		wantErr(t, err, "environment")
		_, err = runCmd(t, "credentials", "create", "--db", db, "--env", "sandbox", "--role", "root")
		wantErr(t, err, "role")
		_, err = runCmd(t, "credentials", "revoke", "--db", db, "sbx_key_nope")
		wantErr(t, err, "sbx_key_nope")
	})
}

func TestBackupCommand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "complybox.db")
	mustRun(t, "credentials", "create", "--db", db, "--env", "sandbox")
	mustRun(t, "credentials", "create", "--db", db, "--env", "production", "--role", "admin")

	out := filepath.Join(dir, "copy.db")
	if got := mustRun(t, "backup", "--db", db, out); !strings.Contains(got, out) {
		t.Fatalf("backup printed %q", got)
	}
	want := listKeys(t, db)
	if got := listKeys(t, out); got != want || want == "" {
		t.Fatalf("backup holds %q, want %q", got, want)
	}

	t.Run("Stdout", func(t *testing.T) {
		b := mustRun(t, "backup", "--db", db, "-")
		p := filepath.Join(t.TempDir(), "stdout.db")
		if err := os.WriteFile(p, []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := listKeys(t, p); got != want {
			t.Fatalf("stdout backup holds %q, want %q", got, want)
		}
	})
	t.Run("ErrMissingDB", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "missing.db")
		_, err := runCmd(t, "backup", "--db", missing, filepath.Join(t.TempDir(), "x.db"))
		wantErr(t, err, "missing.db")
		if _, err := os.Stat(missing); err == nil {
			t.Fatal("backup created the missing db")
		}
	})
	t.Run("ErrOutIsDB", func(t *testing.T) {
		_, err := runCmd(t, "backup", "--db", db, filepath.Join(dir, ".", "complybox.db"))
		wantErr(t, err, "the db itself")
		if got := listKeys(t, db); got != want {
			t.Fatalf("db holds %q after a refused backup, want %q", got, want)
		}
	})
	t.Run("ErrNoOut", func(t *testing.T) {
		_, err := runCmd(t, "backup", "--db", db)
		if exitCode(err) != 2 {
			t.Fatalf("backup without OUT: %v, want a usage error", err)
		}
	})
}

// listKeys returns the credential keys of db, comma-separated.
func listKeys(t *testing.T, db string) string {
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
	var keys []string
	for _, c := range creds {
		keys = append(keys, c.Key)
	}
	return strings.Join(keys, ",")
}

func TestVerifySignatureCommand(t *testing.T) {
	secret := "dGhpcyBpcyBhIDMyIGJ5dGUgc2lnbmluZyBzZWNyZXQ="
	body := []byte(`{"id":"7c9e6679-7425-40de-944b-e07fc1f90ae7","eventType":"webhook.test"}`)
	file := filepath.Join(t.TempDir(), "body.json")
	if err := os.WriteFile(file, body, 0o600); err != nil {
		t.Fatal(err)
	}
	sig := dispatch.Sign(secret, body)

	t.Run("OK", func(t *testing.T) {
		if out := mustRun(t, "verify-signature", "--secret", secret, "--signature", sig, file); !strings.Contains(out, "signature OK") {
			t.Fatalf("printed %q", out)
		}
	})
	t.Run("ErrMismatch", func(t *testing.T) {
		for _, args := range [][]string{
			{"--secret", secret + "x", "--signature", sig, file},
			{"--secret", secret, "--signature", strings.Repeat("0", 64), file},
			{"--secret", secret, "--signature", "not-hex", file},
		} {
			_, err := runCmd(t, append([]string{"verify-signature"}, args...)...)
			if exitCode(err) != 1 {
				t.Fatalf("%q: %v (exit %d), want exit 1", args, err, exitCode(err))
			}
		}
	})
	t.Run("StandardWebhooks", func(t *testing.T) {
		const id, ts = "msg_1", int64(1795000000)
		std := dispatch.SignStandard(secret, id, ts, body)
		stamp := fmt.Sprint(ts)
		mustRun(t, "verify-signature", "--secret", secret, "--signature", "v1,bm9wZQ== "+std, "--id", id, "--timestamp", stamp, file)
		for _, args := range [][]string{
			{"--signature", std, "--id", "msg_2", "--timestamp", stamp},
			{"--signature", std, "--id", id, "--timestamp", "1795000001"},
			{"--signature", "v1,bm9wZQ==", "--id", id, "--timestamp", stamp},
		} {
			_, err := runCmd(t, append(append([]string{"verify-signature", "--secret", secret}, args...), file)...)
			if exitCode(err) != 1 {
				t.Fatalf("%q: %v, want exit 1", args, err)
			}
		}
		_, err := runCmd(t, "verify-signature", "--secret", secret, "--signature", std, file)
		if exitCode(err) != 2 {
			t.Fatalf("v1 signature without --id: %v, want a usage error", err)
		}
	})
	t.Run("ErrUsage", func(t *testing.T) {
		_, err := runCmd(t, "verify-signature", "--signature", sig, file)
		if exitCode(err) != 2 {
			t.Fatalf("without --secret: %v (exit %d), want 2", err, exitCode(err))
		}
		_, err = runCmd(t, "verify-signature", "--secret", secret, "--signature", sig, "--nope")
		if exitCode(err) != 2 {
			t.Fatalf("unknown flag: %v (exit %d), want 2", err, exitCode(err))
		}
	})
	t.Run("Binary", func(t *testing.T) {
		bin := buildBinary(t)
		for _, tc := range []struct {
			name     string
			sig      string
			args     []string
			stdin    []byte
			wantExit int
		}{
			{"StdinOK", sig, nil, body, 0},
			{"StdinMismatch", sig, nil, append(body, ' '), 1},
			{"FileOK", sig, []string{file}, nil, 0},
			{"FileMismatch", dispatch.Sign("other", body), []string{file}, nil, 1},
		} {
			cmd := exec.Command(bin, append([]string{"verify-signature", "--secret", secret, "--signature", tc.sig}, tc.args...)...)
			cmd.Stdin = bytes.NewReader(tc.stdin)
			out, _ := cmd.CombinedOutput()
			if got := cmd.ProcessState.ExitCode(); got != tc.wantExit {
				t.Errorf("%s: exit %d, want %d; output %s", tc.name, got, tc.wantExit, out)
			}
		}
	})
}

func TestVersionCommand(t *testing.T) {
	out := mustRun(t, "version")
	if !regexp.MustCompile(`^complybox \S+\ncommit: \S+\ngo: go1\.\S+\n$`).MatchString(out) {
		t.Fatalf("version printed %q", out)
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{"nosuchcommand"}, {"credentials", "rotate"}, {"serve", "--bogus"}, {"version", "extra"}} {
		_, err := runCmd(t, args...)
		if exitCode(err) != 2 {
			t.Errorf("complybox %q: %v (exit %d), want a usage error (2)", args, err, exitCode(err))
		}
	}
}

// TestGolden compares version-free CLI output with testdata/*.golden; run
// `go test -run TestGolden -update` to rewrite them.
func TestGolden(t *testing.T) {
	db := filepath.Join(t.TempDir(), "empty.db")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"help", []string{"--help"}},
		{"serve-help", []string{"serve", "--help"}},
		{"credentials-help", []string{"credentials"}},
		{"credentials-create-help", []string{"credentials", "create", "--help"}},
		{"backup-help", []string{"backup", "--help"}},
		{"verify-signature-help", []string{"verify-signature", "--help"}},
		{"credentials-list-empty", []string{"credentials", "list", "--db", db}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mustRun(t, tc.args...)
			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Fatalf("complybox %s differs from %s (go test -update rewrites it):\n got:\n%s\nwant:\n%s", strings.Join(tc.args, " "), path, got, want)
			}
		})
	}
}

// buildBinary builds complybox into a temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "complybox")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// process is `complybox serve` running as a subprocess.
type process struct {
	banner
	cmd  *exec.Cmd
	logs string // stderr file
}

// startProcess starts bin serve on db with env added to the environment and
// waits until it listens. It is killed in cleanup if still running.
func startProcess(t *testing.T, bin, db string, env ...string) *process {
	t.Helper()
	logs := filepath.Join(t.TempDir(), "stderr.log")
	stderr, err := os.Create(logs)
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--db", db)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, logs: logs}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	p.banner = readBanner(t, lines, nil)
	return p
}

// dumpLogs prints the process's log when the test failed.
func (p *process) dumpLogs(t *testing.T) {
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(p.logs)
			t.Logf("serve stderr:\n%s", b)
		}
	})
}

// TestKill9 kills a server with SIGKILL while its webhook receiver is down
// and checks that the restarted server delivers every acknowledged event.
func TestKill9(t *testing.T) {
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
