package dispatch

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// The attempts' HTTP client. Each attempt writes its request and reads the
// answer on one HTTP/1.1 connection in the attempt's own goroutine, and
// keeps the connection for the next attempt to the same scheme and address.
// net/http's Transport hands every request to a writing and a reading
// goroutine of the connection and back; those hand-offs and its per-request
// bookkeeping were a third of an attempt's HTTP work, and an attempt needs
// none of what they buy (HTTP/2, proxies, compression, pipelining a body
// while the answer arrives).

// maxIdleTime is how long an idle connection is kept. Receivers close idle
// connections on their own schedule; get finds those closed meanwhile.
const maxIdleTime = 30 * time.Second

// maxAnswerHead bounds the status line and header of an answer, as
// net/http's Transport bounds them (its default is 10 MiB; no receiver
// needs more than this).
const maxAnswerHead = 1 << 20

// conn is one HTTP/1.1 connection to a receiver.
type conn struct {
	net.Conn
	raw    net.Conn         // the TCP connection under TLS
	limit  io.LimitedReader // what br may still read of this exchange's answer
	br     *bufio.Reader
	bw     *bufio.Writer
	idleAt time.Time
}

// conns keeps idle connections by scheme and address.
type conns struct {
	mu   sync.Mutex
	idle map[string][]*conn // most recently used last
	max  int                // idle connections kept per key
}

func newConns(max int) *conns { return &conns{idle: map[string][]*conn{}, max: max} }

// get takes the most recently used idle connection of key that is still
// open, closing those idle too long or closed by the receiver; nil when
// none.
func (p *conns) get(key string, now time.Time) *conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	list := p.idle[key]
	for len(list) > 0 {
		c := list[len(list)-1]
		list = list[:len(list)-1]
		p.idle[key] = list
		if now.Sub(c.idleAt) < maxIdleTime && c.br.Buffered() == 0 && alive(c.raw) {
			return c
		}
		c.Close()
	}
	return nil
}

// put keeps c for the next attempt to key, or closes it when key already
// has max idle connections.
func (p *conns) put(key string, c *conn, now time.Time) {
	c.idleAt = now
	p.mu.Lock()
	list := p.idle[key]
	if len(list) < p.max {
		p.idle[key] = append(list, c)
		c = nil
	}
	p.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// closeIdle closes every idle connection.
func (p *conns) closeIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle = map[string][]*conn{}
	p.mu.Unlock()
	for _, list := range idle {
		for _, c := range list {
			c.Close()
		}
	}
}

// exchange sends req and returns the answer with the connection its body
// is read from; the caller reads it and calls finish, never Body.Close. A
// request that asks to close its connection goes on a new one. A
// kept-alive connection is checked before reuse (alive), so one the
// receiver closed while idle costs nothing; a request is never sent twice,
// as with net/http.
func (s *sender) exchange(req *request, deadline time.Time) (*http.Response, *conn, error) {
	u := req.url
	var c *conn
	if !req.close {
		c = s.conns.get(u.Scheme+"://"+u.Host, time.Now())
	}
	if c == nil {
		var err error
		if c, err = s.connect(u, deadline); err != nil {
			return nil, nil, err
		}
	}
	c.SetDeadline(deadline)
	resp, err := c.roundTrip(req)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return resp, c, nil
}

// finish ends an attempt's exchange: it keeps c for the next attempt when
// resp's body was read to its end and neither side asked to close, and
// otherwise closes c without reading further (closing the body would read
// all the rest of it, however long).
func (s *sender) finish(u *url.URL, c *conn, resp *http.Response, drained bool) {
	if !drained || resp.Close || resp.Request.Close {
		c.Close()
		return
	}
	resp.Body.Close()
	c.SetDeadline(time.Time{})
	s.conns.put(u.Scheme+"://"+u.Host, c, time.Now())
}

// request is one attempt's POST.
type request struct {
	url    *url.URL
	header [][2]string // canonical names and values, written in this order
	body   []byte
	close  bool // ask the receiver to close the connection once it answered
}

// write writes r in HTTP/1.1, as net/http would but for the order of the
// header fields and without its formatting and sorting. Values with
// control characters are refused: they would split the header.
func (r *request) write(w *bufio.Writer) error {
	for _, h := range r.header {
		for i := 0; i < len(h[1]); i++ {
			if b := h[1][i]; b < ' ' && b != '\t' || b == 0x7f {
				return fmt.Errorf("header %s: control character in its value", h[0])
			}
		}
	}
	w.WriteString("POST ")
	w.WriteString(r.url.RequestURI())
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(r.url.Host)
	w.WriteString("\r\nContent-Length: ")
	w.WriteString(strconv.Itoa(len(r.body)))
	for _, h := range r.header {
		w.WriteString("\r\n")
		w.WriteString(h[0])
		w.WriteString(": ")
		w.WriteString(h[1])
	}
	if r.close {
		w.WriteString("\r\nConnection: close")
	}
	w.WriteString("\r\n\r\n")
	w.Write(r.body)
	return w.Flush()
}

// roundTrip writes req and reads the head of its answer, skipping
// informational (1xx) answers.
func (c *conn) roundTrip(req *request) (*http.Response, error) {
	if err := req.write(c.bw); err != nil {
		return nil, err
	}
	// An answer is read up to its head's bound and then as much of its
	// body as an attempt reads (send): a receiver cannot make an attempt
	// read or hold more, however much it sends.
	c.limit.N = maxAnswerHead + maxResponseBody + maxDrain
	head := &http.Request{Method: http.MethodPost, URL: req.url, Close: req.close}
	for {
		resp, err := http.ReadResponse(c.br, head)
		if err != nil && c.limit.N <= maxResponseBody+maxDrain {
			return nil, fmt.Errorf("the answer's status line and header are longer than %d KiB", maxAnswerHead>>10)
		}
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, nil
		}
	}
}

// connect dials u's host through the URL policy (dial) and, for https,
// completes a TLS handshake that verifies the host's certificate, both
// before deadline.
func (s *sender) connect(u *url.URL, deadline time.Time) (*conn, error) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	raw, err := s.dial(ctx, u.Scheme, net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return nil, err
	}
	c := &conn{Conn: raw, raw: raw}
	if u.Scheme == "https" {
		cfg := &tls.Config{ServerName: u.Hostname()}
		if s.rootCAs != nil {
			cfg.RootCAs = s.rootCAs
		}
		tc := tls.Client(raw, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, err
		}
		c.Conn = tc
	}
	c.limit.R = c.Conn
	c.br, c.bw = bufio.NewReaderSize(&c.limit, 4<<10), bufio.NewWriterSize(c.Conn, 4<<10)
	return c, nil
}
