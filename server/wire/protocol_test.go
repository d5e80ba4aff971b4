package wire

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestProtocolErrors sends, over TCP, requests Go's HTTP server refuses
// before any handler runs, to a server on a ProtocolErrors listener: each
// answer is the JSON error body with an X-Request-Id, never plain text,
// never a 5xx. A request it can read reaches the handler unchanged.
func TestProtocolErrors(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Request-Id", "from-the-handler")
			http.Error(w, "plain text from a handler", http.StatusBadRequest)
		}),
		MaxHeaderBytes: 4 << 10,
	}
	// Each answer is told with its status and request id (the access log
	// and metrics of serve).
	var mu sync.Mutex
	told := map[string]int{}
	go srv.Serve(ProtocolErrors(ln, func(status int, id string) {
		mu.Lock()
		told[id] = status
		mu.Unlock()
	}))
	t.Cleanup(func() { srv.Close() })

	send := func(t *testing.T, raw string) *http.Response {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, raw); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body = io.NopCloser(strings.NewReader(string(body)))
		return resp
	}

	for _, c := range []struct {
		name, raw string
		status    int
		code      string
	}{
		{"MalformedRequestLine", "GARBAGE\r\n\r\n", 400, "bad_request"},
		{"MissingHost", "GET / HTTP/1.1\r\n\r\n", 400, "bad_request"},
		{"BadContentLength", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400, "bad_request"},
		{"HeaderLineWithoutColon", "GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n", 400, "bad_request"},
		{"HeaderTooLarge", "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 16<<10) + "\r\n\r\n", 431, "header_too_large"},
		{"UnsupportedTransferEncoding", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 400, "unsupported_transfer_encoding"},
		{"UnsupportedExpect", "GET / HTTP/1.1\r\nHost: x\r\nExpect: tea\r\n\r\n", 417, "expectation_failed"},
		// net/http answers 505: bad input, never a 5xx here.
		{"HTTP2RequestLine", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", 400, "bad_request"},
		{"HTTP09RequestLine", "GET / HTTP/0.9\r\nHost: x\r\n\r\n", 400, "bad_request"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := send(t, c.raw)
			var body struct {
				Error struct{ Code, Message, RequestID string }
			}
			raw, _ := io.ReadAll(resp.Body)
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Fatalf("body %q is not JSON: %v", raw, err)
			}
			id := resp.Header.Get("X-Request-Id")
			if resp.StatusCode != c.status || body.Error.Code != c.code || body.Error.Message == "" ||
				id == "" || body.Error.RequestID != id || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%d %s X-Request-Id %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), id, raw)
			}
			mu.Lock()
			status, ok := told[id]
			mu.Unlock()
			if !ok || status != c.status {
				t.Errorf("answer %s told as %d %v, want %d", id, status, ok, c.status)
			}
			if got := resp.Header.Get("Cache-Control"); got != "no-store" {
				t.Errorf("Cache-Control %q, want no-store as every JSON answer", got)
			}
			if !resp.Close || resp.Header.Get("Date") == "" {
				t.Errorf("close %v, Date %q: the connection closes after the answer, which is dated", resp.Close, resp.Header.Get("Date"))
			}
		})
	}
	t.Run("LookalikesPassThrough", func(t *testing.T) {
		// Writes that start like net/http's own answers but are not
		// whole ones of them (a longer write, a body with JSON in it, a
		// 417 a handler wrote) reach the connection unchanged.
		canned := "HTTP/1.1 400 Bad Request" + ownHeaders + "400 Bad Request"
		for _, b := range []string{
			canned + strings.Repeat(" ", maxOwnAnswer),
			"HTTP/1.1 400 Bad Request" + ownHeaders + `{"error":1}`,
			"HTTP/1.1 417 Expectation Failed\r\nX-Request-Id: x\r\n\r\n",
			"HTTP/1.1 417 Expectation Failed\r\nContent-Length: 5\r\n\r\nhello",
		} {
			if _, ok := ownAnswer([]byte(b)); ok {
				t.Errorf("%q taken for net/http's own answer", b)
			}
		}
		if _, ok := ownAnswer([]byte(canned)); !ok {
			t.Errorf("%q not recognised", canned)
		}
	})
	t.Run("HandlerAnswersPassThrough", func(t *testing.T) {
		resp := send(t, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 400 || resp.Header.Get("X-Request-Id") != "from-the-handler" || string(raw) != "plain text from a handler\n" {
			t.Errorf("a handler's own answer changed: %d %v %q", resp.StatusCode, resp.Header, raw)
		}
	})
}
