package server_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// kitReceiver is one receiver of testdata/receivers running as a process.
type kitReceiver struct {
	URL   string
	lines chan string
}

// runKitReceiver starts argv with WEBHOOK_SECRET=secret and a free port,
// waits for its "listening on URL" line and stops it in cleanup.
func runKitReceiver(t *testing.T, secret string, env []string, argv ...string) *kitReceiver {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(append(os.Environ(), "WEBHOOK_SECRET="+secret, "PORT=0", "LISTEN=127.0.0.1:0"), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case l, ok := <-lines:
		u, found := strings.CutPrefix(l, "listening on ")
		if !ok || !found {
			t.Fatalf("%v: first line %q; stderr: %s", argv, l, stderr.String())
		}
		return &kitReceiver{URL: u, lines: lines}
	case <-time.After(20 * time.Second):
		t.Fatalf("%v did not start; stderr: %s", argv, stderr.String())
	}
	return nil
}

// expectLine waits for the receiver's next output line and checks its
// prefix.
func (k *kitReceiver) expectLine(t *testing.T, prefix string) string {
	t.Helper()
	select {
	case l := <-k.lines:
		if !strings.HasPrefix(l, prefix) {
			t.Fatalf("receiver printed %q, want %q…", l, prefix)
		}
		return l
	case <-time.After(10 * time.Second):
		t.Fatalf("receiver printed no %q line", prefix)
	}
	return ""
}

// replay POSTs a captured delivery's headers with body to the receiver.
func (k *kitReceiver) replay(t *testing.T, got received, body []byte) int {
	t.Helper()
	code, err := k.send(got, body)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// send POSTs got's headers with body to the receiver and returns its
// status; 502 when it cannot be reached.
func (k *kitReceiver) send(got received, body []byte) (int, error) {
	req, err := http.NewRequest("POST", k.URL+"/hook", bytes.NewReader(body))
	if err != nil {
		return http.StatusBadGateway, err
	}
	req.Header = got.Header.Clone()
	req.Header.Del("Content-Length")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return http.StatusBadGateway, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// delivery reads a delivery record.
func (in *instance) delivery(id string) delivery {
	in.t.Helper()
	var d delivery
	in.expect(200, "GET", "/webhooks/deliveries/"+id, nil).json(in.t, &d)
	return d
}

// needTool finds name on PATH; without it the test is skipped with the
// install command, or fails under CI=true.
func needTool(t *testing.T, name, install string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI needs %s: %s", name, install)
		}
		t.Skipf("%s not found; install it: %s", name, install)
	}
	return p
}

// TestReceiverKit runs each receiver of testdata/receivers (Go on the
// standard library, Node on the standardwebhooks package, Python on the
// standard library's hmac) against a live instance: it accepts a real
// delivery (the delivery is delivered and the receiver handles the event
// once), takes a replay of it as a duplicate (2xx, not handled again),
// rejects the delivery with a tampered body (401), and rejects deliveries
// signed with another secret (the server records 401).
func TestReceiverKit(t *testing.T) {
	t.Parallel()
	goBin := filepath.Join(t.TempDir(), "receiver")
	if out, err := exec.Command("go", "build", "-o", goBin, "../testdata/receivers/go").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	kits := []struct {
		name string
		argv func(t *testing.T) ([]string, []string)
	}{
		{"go", func(t *testing.T) ([]string, []string) { return []string{goBin}, nil }},
		{"node", func(t *testing.T) ([]string, []string) {
			node := needTool(t, "node", "apt-get install -y nodejs npm")
			modules := os.Getenv("COMPLYBOX_NODE_MODULES")
			if modules == "" {
				if os.Getenv("CI") == "true" {
					t.Fatal("CI needs COMPLYBOX_NODE_MODULES holding standardwebhooks (set by .ci/run)")
				}
				t.Skip("set COMPLYBOX_NODE_MODULES to a node_modules holding standardwebhooks@1.1.1 (npm install --prefix DIR standardwebhooks@1.1.1)")
			}
			return []string{node, "../testdata/receivers/node/receiver.js"}, []string{"NODE_PATH=" + modules}
		}},
		{"python", func(t *testing.T) ([]string, []string) {
			return []string{needTool(t, "python3", "apt-get install -y python3"), "../testdata/receivers/python/receiver.py"}, nil
		}},
	}
	for _, kit := range kits {
		t.Run(kit.name, func(t *testing.T) {
			t.Parallel()
			argv, env := kit.argv(t)
			// The Standard Webhooks libraries refuse timestamps more than 5
			// minutes from their clock, so this instance runs on the real one.
			in := boot(t, func(o *bootOptions) { o.now = time.Now }).instance
			// The webhook URL stays a forwarder's: a new URL would rotate
			// the secret, which the receivers take at start.
			var mu sync.Mutex
			var target *kitReceiver
			front := &receiver{got: make(chan received, 100)}
			front.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				got := received{Header: r.Header.Clone(), Body: b}
				mu.Lock()
				to := target
				mu.Unlock()
				code, err := to.send(got, b)
				if err != nil {
					t.Errorf("forwarding to the receiver: %v", err)
				}
				w.WriteHeader(code)
				front.got <- got
			}))
			t.Cleanup(front.Close)
			secret := in.configureWebhook(front)
			mu.Lock()
			target = runKitReceiver(t, secret, env, argv...)
			rc := target
			mu.Unlock()

			// A real delivery, live: delivered, handled once.
			id := in.testEvent()
			in.waitDelivery(id, "delivered", 1)
			rc.expectLine(t, "received "+in.delivery(id).EventID)
			got := front.next(t)
			// The same delivery again (at least once): 2xx, not handled twice.
			if code := rc.replay(t, got, got.Body); code/100 != 2 {
				t.Fatalf("the delivery again: %d", code)
			}
			rc.expectLine(t, "duplicate ")
			// A tampered body: 401.
			tampered := bytes.Replace(got.Body, []byte(`"message":"`), []byte(`"message":"x`), 1)
			if bytes.Equal(tampered, got.Body) {
				t.Fatalf("nothing to tamper with in %s", got.Body)
			}
			if code := rc.replay(t, got, tampered); code != 401 {
				t.Errorf("a tampered body: %d, want 401", code)
			}
			// Another secret: the server's deliveries are refused with 401.
			wrong := runKitReceiver(t, "c2VjcmV0LXRoYXQtaXMtbm90LXRoZS1zZXJ2ZXJzLW9uZQ==", env, argv...)
			mu.Lock()
			target = wrong
			mu.Unlock()
			id = in.testEvent()
			deadline := time.Now().Add(10 * time.Second)
			for {
				d := in.delivery(id)
				if len(d.Attempts) > 0 {
					if c := d.Attempts[0].HTTPStatusCode; c == nil || *c != 401 || d.Status == "delivered" {
						t.Errorf("signed with another secret: attempt %+v, status %s; want 401", d.Attempts[0], d.Status)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("no attempt within 10s")
				}
				runtimeYield()
			}
			select {
			case l := <-wrong.lines:
				t.Errorf("the receiver with the wrong secret handled an event: %s", l)
			default:
			}
		})
	}
}
