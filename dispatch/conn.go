package dispatch

import (
	"bufio"
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// The attempts' HTTP client. Each attempt writes its request and reads the
// answer on one HTTP/1.1 connection in the attempt's own goroutine, and
// keeps the connection for the next attempt to the same scheme and address.
// net/http's Transport hands every request to a writing and a reading
// goroutine of the connection and back; those hand-offs and its per-request
// bookkeeping were a quarter of an attempt's CPU, and an attempt needs none
// of what they buy (HTTP/2, proxies, compression, pipelining a body while
// the answer arrives).

// maxIdleTime is how long an idle connection is kept. Receivers close idle
// connections on their own schedule; get finds those closed meanwhile.
const maxIdleTime = 30 * time.Second

// conn is one HTTP/1.1 connection to a receiver.
type conn struct {
	net.Conn
	raw    net.Conn // the TCP connection under TLS
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

// exchange sends req to u and returns the answer with the connection its
// body is read from; the caller reads it and calls finish. fresh forbids
// reusing a kept-alive connection. A kept-alive connection is checked
// before reuse (alive), so one the receiver closed while idle costs
// nothing; the request is never sent twice, as with net/http.
func (s *sender) exchange(req *http.Request, u *url.URL, deadline time.Time, fresh bool) (*http.Response, *conn, error) {
	var c *conn
	if !fresh {
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

// finish keeps c for the next attempt when resp's body was read to its end
// and neither side asked to close; otherwise it closes c.
func (s *sender) finish(u *url.URL, c *conn, resp *http.Response, drained bool) {
	if !drained || resp.Close || resp.Request.Close {
		c.Close()
		return
	}
	c.SetDeadline(time.Time{})
	s.conns.put(u.Scheme+"://"+u.Host, c, time.Now())
}

// roundTrip writes req and reads the head of its answer, skipping
// informational (1xx) answers.
func (c *conn) roundTrip(req *http.Request) (*http.Response, error) {
	if err := req.Write(c.bw); err != nil {
		return nil, err
	}
	if err := c.bw.Flush(); err != nil {
		return nil, err
	}
	for {
		resp, err := http.ReadResponse(c.br, req)
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
		tc := tls.Client(raw, &tls.Config{ServerName: u.Hostname()})
		if err := tc.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, err
		}
		c.Conn = tc
	}
	c.br, c.bw = bufio.NewReaderSize(c.Conn, 4<<10), bufio.NewWriterSize(c.Conn, 4<<10)
	return c, nil
}
