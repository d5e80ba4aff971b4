package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

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

// readBanner reads lines until the listening line, within 20 s.
func readBanner(t *testing.T, lines <-chan string, failed <-chan error) banner {
	t.Helper()
	reListening := regexp.MustCompile(`^complybox listening on (http://\S+)$`)
	reKey := regexp.MustCompile(`X-Api-Key:\s+(\S+)`)
	reSecret := regexp.MustCompile(`X-Api-Secret:\s+(\S+)`)
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
// a goroutine with an empty environment and waits until it listens. It is
// stopped in cleanup.
func startServe(t *testing.T, db string, extra ...string) *served {
	t.Helper()
	return startServeEnv(t, nil, db, extra...)
}

// startServeEnv is startServe with environ (KEY=VALUE pairs) as the
// environment.
func startServeEnv(t *testing.T, environ []string, db string, extra ...string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := newLineWriter()
	logs := newSyncBuffer()
	done := make(chan error, 1)
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--db", db}, extra...)
	go func() {
		if code := run(ctx, args, strings.NewReader(""), out, logs, environ); code != 0 {
			done <- fmt.Errorf("exit code %d", code)
			return
		}
		done <- nil
	}()
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

// result is what one run of the command line left: its output, its error
// output and its exit code.
type result struct {
	stdout, stderr string
	code           int
}

// err is nil after exit code 0, else an error whose text is the error
// output, for wantErr.
func (r result) err() error {
	if r.code == 0 {
		return nil
	}
	return fmt.Errorf("exit code %d: %s", r.code, strings.TrimSpace(r.stderr))
}

// runCmd runs the command line in this process through run, with an empty
// stdin and an empty environment.
func runCmd(t *testing.T, args ...string) result {
	t.Helper()
	return runWith(t, "", nil, args...)
}

// runWith runs the command line in this process through run, with stdin and
// environ (KEY=VALUE pairs).
func runWith(t *testing.T, stdin string, environ []string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errOut, environ)
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

// mustRun is runCmd that fails the test unless the exit code is 0.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	r := runCmd(t, args...)
	if r.code != 0 {
		t.Fatalf("complybox %s: exit code %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stdout
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
