package dispatch

import (
	"bufio"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
	"github.com/complybox/complybox/store/urlpolicy"
)

func testSender(policy urlpolicy.Policy) *sender {
	return newSender(Config{AttemptTimeout: 2 * time.Second, Concurrency: 2, Now: time.Now}.withDefaults(), policy)
}

func testTask(url string) *store.DeliveryTask {
	return &store.DeliveryTask{DeliveryID: "d1", EventID: "e1", EventType: "wallet.created", Destination: store.DestCustody,
		Payload: []byte(`{"id":"e1"}`), Attempt: 1, URL: url, Secret: "c2VjcmV0"}
}

// TestAttemptsKeepConnections: attempts to one receiver go over one
// kept-alive connection, whatever the shape of its answers (empty, chunked,
// longer than what is kept); an answer too long to read to its end, or one
// that asks to close, closes the connection.
func TestAttemptsKeepConnections(t *testing.T) {
	var mu sync.Mutex
	conns := map[string]int{}
	answers := []string{"", "chunked", "long", "", "huge", "", "close", ""} // by request number
	n := 0
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns[r.RemoteAddr]++
		answer := answers[n%len(answers)]
		n++
		mu.Unlock()
		switch answer {
		case "chunked":
			w.Write([]byte("part one, "))
			w.(http.Flusher).Flush()
			w.Write([]byte("part two"))
		case "long":
			w.Write([]byte(strings.Repeat("x", 10<<10)))
		case "huge":
			w.Write([]byte(strings.Repeat("y", 200<<10)))
		case "close":
			w.Header().Set("Connection", "close")
		}
	}))
	defer rc.Close()
	s := testSender(urlpolicy.Policy{AllowHTTP: "loopback"})
	send := func() result {
		t.Helper()
		res := s.send(store.Sandbox, testTask(rc.URL+"/hook"))
		if !res.Success {
			t.Fatalf("%+v", res)
		}
		return res
	}
	distinct := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(conns)
	}

	send()
	if res := send(); *res.ResponseBody != "part one, part two" {
		t.Errorf("chunked answer kept as %q", *res.ResponseBody)
	}
	if res := send(); len(*res.ResponseBody) != maxResponseBody {
		t.Errorf("a 10 KiB answer kept %d bytes, want %d", len(*res.ResponseBody), maxResponseBody)
	}
	send()
	if n := distinct(); n != 1 {
		t.Fatalf("%d connections for 4 attempts in a row, want 1", n)
	}
	send() // 200 KiB, not read to its end: the connection is closed
	send()
	if n := distinct(); n != 2 {
		t.Fatalf("%d connections after an answer too long to drain, want 2", n)
	}
	send() // Connection: close
	send()
	if n := distinct(); n != 3 {
		t.Fatalf("%d connections after an answer with Connection: close, want 3", n)
	}
}

// rawReceiver answers the nth request on the cth connection it accepted
// (both from 0) with the text answer returns, then closes the connection
// when answer says so.
func rawReceiver(t *testing.T, answer func(conn, n int) (string, bool)) (url string, requests func() int, closed <-chan struct{}) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	total := 0
	done := make(chan struct{}, 100)
	go func() {
		for c := 0; ; c++ {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c int, nc net.Conn) {
				defer nc.Close()
				br := bufio.NewReader(nc)
				for n := 0; ; n++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					req.Body.Close()
					mu.Lock()
					total++
					mu.Unlock()
					text, closeAfter := answer(c, n)
					nc.Write([]byte(text))
					if closeAfter {
						nc.Close()
						done <- struct{}{}
						return
					}
				}
			}(c, nc)
		}
	}()
	return "http://" + ln.Addr().String() + "/hook", func() int {
		mu.Lock()
		defer mu.Unlock()
		return total
	}, done
}

// TestAttemptOnClosedIdleConnection: a receiver that closes a kept-alive
// connection while it is idle (without saying so) costs nothing: the next
// attempt sees it closed and connects afresh, and the receiver sees each
// attempt once.
func TestAttemptOnClosedIdleConnection(t *testing.T) {
	const ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	url, requests, closed := rawReceiver(t, func(int, int) (string, bool) { return ok, true })
	s := testSender(urlpolicy.Policy{AllowHTTP: "loopback"})
	for i := range 3 {
		if res := s.send(store.Sandbox, testTask(url)); !res.Success || *res.ResponseBody != "ok" {
			t.Fatalf("attempt %d: %+v", i+1, res)
		}
		<-closed // the receiver has closed the connection, idle on this side
	}
	if n := requests(); n != 3 {
		t.Errorf("the receiver read %d requests for 3 attempts, want 3", n)
	}
}

// TestAttemptSkipsInformationalAnswers: a 100 Continue before the answer is
// skipped; the attempt's status is the final one.
func TestAttemptSkipsInformationalAnswers(t *testing.T) {
	url, _, _ := rawReceiver(t, func(int, int) (string, bool) {
		return "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Service Unavailable\r\nRetry-After: 120\r\nContent-Length: 4\r\n\r\nbusy", false
	})
	s := testSender(urlpolicy.Policy{AllowHTTP: "loopback"})
	res := s.send(store.Sandbox, testTask(url))
	if res.Success || res.StatusCode != 503 || *res.ResponseBody != "busy" || res.retryAfter != 2*time.Minute {
		t.Fatalf("got %+v (retry after %s), want a 503 with its body and Retry-After", res, res.retryAfter)
	}
}

// TestAttemptMalformedAnswer: an answer that is not HTTP fails the attempt
// with an error, and the connection is not reused.
func TestAttemptMalformedAnswer(t *testing.T) {
	url, requests, _ := rawReceiver(t, func(c, _ int) (string, bool) {
		if c == 0 {
			return "SMTP ready\r\n\r\n", false
		}
		return "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false
	})
	s := testSender(urlpolicy.Policy{AllowHTTP: "loopback"})
	if res := s.send(store.Sandbox, testTask(url)); res.Success || res.Error == "" {
		t.Fatalf("a malformed answer: %+v", res)
	}
	if res := s.send(store.Sandbox, testTask(url)); !res.Success {
		t.Fatalf("the next attempt on a new connection: %+v", res)
	}
	if n := requests(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

// TestAttemptVerifiesCertificates: https attempts check the receiver's
// certificate; one no trusted authority signed fails the attempt.
func TestAttemptVerifiesCertificates(t *testing.T) {
	rc := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer rc.Close()
	s := testSender(urlpolicy.Policy{AllowHTTP: "loopback"})
	res := s.send(store.Sandbox, testTask(rc.URL+"/hook"))
	if res.Success || !strings.Contains(res.Error, "certificate") {
		t.Fatalf("https to a self-signed receiver: %+v", res)
	}
}

// TestAttemptRequestOnTheWire: the request an attempt writes is the one
// net/http would write: POST to the URL's path and query, its Host, the
// body's length, every header of SPEC §5, the exact body; a value that
// would split the header is refused before anything is sent.
func TestAttemptRequestOnTheWire(t *testing.T) {
	got := make(chan *http.Request, 2)
	bodies := make(chan string, 2)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- r
		bodies <- string(b)
	}))
	defer rc.Close()
	s := testSender(urlpolicy.Policy{AllowHTTP: "loopback"})
	task := testTask(rc.URL + "/hooks/in?tenant=a%20b")
	task.Test = true
	if res := s.send(store.Sandbox, task); !res.Success {
		t.Fatalf("%+v", res)
	}
	r, body := <-got, <-bodies
	host := strings.TrimPrefix(rc.URL, "http://")
	if r.Method != "POST" || r.RequestURI != "/hooks/in?tenant=a%20b" || r.Host != host || r.ContentLength != int64(len(task.Payload)) || body != string(task.Payload) {
		t.Errorf("got %s %s Host %s length %d body %q", r.Method, r.RequestURI, r.Host, r.ContentLength, body)
	}
	for name, want := range map[string]string{
		"Content-Type": "application/json", "User-Agent": "complybox-webhooks/dev",
		"X-Webhook-Signature": Sign(task.Secret, task.Payload), "X-Webhook-Id": "d1",
		"X-Webhook-Event-Type": "wallet.created", "X-Webhook-Attempt": "1", "X-Webhook-Test": "true",
		"Webhook-Id": "e1",
	} {
		if v := r.Header.Values(name); len(v) != 1 || v[0] != want {
			t.Errorf("%s: %q, want %q", name, v, want)
		}
	}
	ts, err := strconv.ParseInt(r.Header.Get("Webhook-Timestamp"), 10, 64)
	if err != nil || r.Header.Get("Webhook-Signature") != SignStandard(task.Secret, "e1", ts, task.Payload) {
		t.Errorf("standard webhook headers: %q %q", r.Header.Get("Webhook-Timestamp"), r.Header.Get("Webhook-Signature"))
	}

	task.EventType = "wallet.created\r\nX-Injected: 1"
	if res := s.send(store.Sandbox, task); res.Success || !strings.Contains(res.Error, "control character") {
		t.Errorf("a header value with CR LF: %+v", res)
	}
	select {
	case r := <-got:
		t.Errorf("the receiver got a request with %v", r.Header)
	default:
	}
}

// TestAttemptsKeepTLSConnections: https attempts keep their connection too
// (one handshake for many attempts), and a receiver that closes it while
// idle costs a new handshake, not an attempt.
func TestAttemptsKeepTLSConnections(t *testing.T) {
	var mu sync.Mutex
	conns := map[string]int{}
	rc := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns[r.RemoteAddr]++
		mu.Unlock()
	}))
	defer rc.Close()
	s := testSender(urlpolicy.Policy{AllowHTTP: "loopback"})
	s.rootCAs = x509.NewCertPool()
	s.rootCAs.AddCert(rc.Certificate())
	for i := range 4 {
		if res := s.send(store.Sandbox, testTask(rc.URL+"/hook")); !res.Success {
			t.Fatalf("attempt %d: %+v", i+1, res)
		}
	}
	rc.CloseClientConnections() // as a receiver's idle timeout would
	if res := s.send(store.Sandbox, testTask(rc.URL+"/hook")); !res.Success {
		t.Fatalf("after the receiver closed the idle connection: %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(conns) != 2 {
		t.Errorf("%d connections for 4 attempts, a close and 1 attempt: %v, want 2", len(conns), conns)
	}
}

// TestAttemptEndlessAnswer: an answer whose body never ends is read as far
// as an attempt reads (what it keeps, then what it would drain to reuse the
// connection) and the connection is closed there, not read on until the
// attempt's deadline.
func TestAttemptEndlessAnswer(t *testing.T) {
	written := make(chan int64, 1)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("z", 32<<10))
		var n int64
		for n < 1<<30 {
			if _, err := w.Write(chunk); err != nil {
				break
			}
			n += int64(len(chunk))
		}
		written <- n
	}))
	defer rc.Close()
	s := testSender(urlpolicy.Policy{AllowHTTP: "loopback"})
	s.cfg.AttemptTimeout = time.Minute // the deadline must not be what ends it
	res := s.send(store.Sandbox, testTask(rc.URL+"/hook"))
	if !res.Success || len(*res.ResponseBody) != maxResponseBody {
		t.Fatalf("%+v", res)
	}
	// The receiver's writes fail once the closed connection's buffers are
	// full: a few MiB on loopback, far from the 1 GiB it would send.
	if n := <-written; n >= 64<<20 {
		t.Errorf("the receiver wrote %d MiB before the connection closed", n>>20)
	}
}

// TestAttemptEndlessHead: an answer whose header never ends fails the
// attempt once the head passes its bound, saying so, instead of being read
// and held until the attempt's deadline.
func TestAttemptEndlessHead(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	written := make(chan int64, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		if _, err := http.ReadRequest(bufio.NewReader(nc)); err != nil {
			return
		}
		line := []byte("X-Padding: " + strings.Repeat("p", 1000) + "\r\n")
		n, _ := nc.Write([]byte("HTTP/1.1 200 OK\r\n"))
		total := int64(n)
		for total < 1<<30 {
			n, err := nc.Write(line)
			total += int64(n)
			if err != nil {
				break
			}
		}
		written <- total
	}()
	s := testSender(urlpolicy.Policy{AllowHTTP: "loopback"})
	s.cfg.AttemptTimeout = time.Minute // the deadline must not be what ends it
	res := s.send(store.Sandbox, testTask("http://"+ln.Addr().String()+"/hook"))
	if res.Success || !strings.Contains(res.Error, "longer than 1024 KiB") {
		t.Fatalf("%+v", res)
	}
	if n := <-written; n >= 64<<20 {
		t.Errorf("the receiver wrote %d MiB before the connection closed", n>>20)
	}
}
