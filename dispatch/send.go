package dispatch

import (
	"cmp"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/complybox/complybox/store"
	"github.com/complybox/complybox/store/urlpolicy"
)

// maxResponseBody is how much of a receiver's answer an attempt keeps.
const maxResponseBody = 4 << 10

// maxDrain is how much more of an answer an attempt reads, and discards,
// to keep its connection; a longer answer closes it.
const maxDrain = 64 << 10

// sender makes single HTTP attempts.
type sender struct {
	cfg    Config
	policy urlpolicy.Policy
	conns  *conns
	dialer *net.Dialer
	// lookup resolves a host name; tests replace it so that no real DNS is
	// needed.
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// rootCAs, when set (tests), replaces the system's certificate
	// authorities for https receivers.
	rootCAs *x509.CertPool

	mu   sync.Mutex
	urls map[string]string // env|destination -> the URL last sent to
}

type result struct {
	store.AttemptResult
	retryAfter time.Duration // from a 429 or 503 answer
}

func newSender(cfg Config, policy urlpolicy.Policy) *sender {
	s := &sender{cfg: cfg, policy: policy, urls: map[string]string{},
		dialer: &net.Dialer{Timeout: cfg.AttemptTimeout},
		lookup: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		},
	}
	s.conns = newConns(cfg.Concurrency * 2)
	return s
}

// dial connects to addr for a request whose URL has scheme, applying the
// whole URL policy (scheme × address) to the connection. It resolves the
// host itself so that the policy judges every address it connects to: a
// name accepted while it resolved to a public (or, for plain http, a
// loopback) address cannot be rebound to a private one, nor used for plain
// http once it resolves elsewhere.
func (s *sender) dial(ctx context.Context, scheme, addr string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("bad port in %s", addr)
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		ips = []netip.Addr{ip}
	} else if ips, err = s.lookup(ctx, host); err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("%s has no address", host)
	}
	var firstErr error
	for _, ip := range ips {
		if err := s.policy.Connect(scheme, ip); err != nil {
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		conn, err := s.dialer.DialContext(ctx, "tcp", netip.AddrPortFrom(ip.Unmap(), uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		firstErr = cmp.Or(firstErr, err)
	}
	return nil, firstErr
}

// forget closes idle connections when a destination's URL changed since the
// last attempt, so no kept-alive connection made under the old URL (and the
// address it resolved to then) carries the new one's deliveries.
func (s *sender) forget(env store.Env, task *store.DeliveryTask) {
	key := string(env) + "|" + task.Destination
	s.mu.Lock()
	prev, seen := s.urls[key]
	s.urls[key] = task.URL
	s.mu.Unlock()
	if seen && prev != task.URL {
		s.conns.closeIdle()
	}
}

// send makes one signed attempt of task, a delivery of environment env.
func (s *sender) send(env store.Env, task *store.DeliveryTask) (res result) {
	at := s.cfg.EnvNow(env).UTC()
	res = result{AttemptResult: store.AttemptResult{RequestURL: task.URL, At: at}}
	// The attempt is recorded at its start (At); its retry counts from its
	// end, read on the same clock: in the sandbox, the test clock runs on
	// while an attempt waits for its receiver, as real time does.
	defer func() { res.End = s.cfg.EnvNow(env).UTC() }()
	if task.URL == "" {
		res.Error = "no destination is configured for " + task.Destination + " events"
		return res
	}
	s.forget(env, task)
	u, err := url.Parse(task.URL)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	// One deadline bounds the whole attempt: connecting, writing, reading
	// the answer (conn.go). The attempt's duration is measured from the
	// same instant, so a timed-out attempt never reports less than the
	// timeout.
	start := time.Now()
	deadline := start.Add(s.cfg.AttemptTimeout)
	req := &request{url: u, body: task.Payload}
	if _, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err != nil && u.Scheme == "http" {
		// Plain http to a name: the policy depends on what the name resolves
		// to now, so every attempt connects afresh and is checked.
		req.close = true
	}
	// webhook-timestamp is the real time of the attempt, not the sandbox
	// clock's: receivers built on Standard Webhooks reject a timestamp more
	// than a few minutes from their own clock, and must verify unchanged
	// (SPEC §5) after a partner moved the test clock. The attempt's record
	// (attemptedAt) and the body's timestamp keep the environment's time.
	ts := s.cfg.Now().Unix()
	req.header = [][2]string{
		{"Content-Type", "application/json"},
		{"User-Agent", "complybox-webhooks/" + s.cfg.Version},
		{"X-Webhook-Signature", Sign(task.Secret, task.Payload)},
		{"X-Webhook-Id", task.DeliveryID},
		{"X-Webhook-Event-Type", task.EventType},
		{"X-Webhook-Attempt", strconv.Itoa(task.Attempt)},
		{"Webhook-Id", task.EventID},
		{"Webhook-Timestamp", strconv.FormatInt(ts, 10)},
		{"Webhook-Signature", SignStandard(task.Secret, task.EventID, ts, task.Payload)},
	}
	if task.Test {
		req.header = append(req.header, [2]string{"X-Webhook-Test", "true"})
	}

	resp, c, err := s.exchange(req, deadline)
	if err != nil {
		res.Duration = time.Since(start)
		res.Error = attemptError(&url.Error{Op: "Post", URL: task.URL, Err: err}, s.cfg.AttemptTimeout)
		return res
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	// Up to 64 KiB more is read so that the connection can be reused.
	rest, derr := io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	s.finish(u, c, resp, err == nil && derr == nil && rest < maxDrain)
	res.Duration = time.Since(start)
	res.StatusCode = resp.StatusCode
	text := strings.ToValidUTF8(string(body), "\uFFFD")
	res.ResponseBody = &text
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		res.Success = true
		return res
	}
	res.Error = "receiver answered HTTP " + strconv.Itoa(resp.StatusCode)
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		res.Error += " (redirects are not followed)"
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		// A date is of the receiver's clock, real time, as is the
		// webhook-timestamp: after the sandbox clock moved ahead, compared
		// with the sandbox's time it would lie in the past.
		res.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), s.cfg.Now())
	}
	return res
}

func attemptError(err error, timeout time.Duration) string {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Sprintf("timed out after %s", timeout)
	}
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner.Error()
		}
	}
	return err.Error()
}

// maxRetryAfter caps a receiver's Retry-After (SPEC §5).
const maxRetryAfter = time.Hour

// parseRetryAfter reads seconds or an HTTP date and returns a delay in
// [0, maxRetryAfter]: values past the cap, however large, saturate at it
// instead of overflowing; dates in the past and garbage count as 0.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if digits(v) {
		// Compare the seconds with the cap before multiplying: a number
		// too long for an int, or one whose nanoseconds overflow, is simply
		// more than an hour.
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n >= uint64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		// Sub saturates at the limits of time.Duration.
		return min(max(t.Sub(now), 0), maxRetryAfter)
	}
	return 0
}

// digits reports whether s is one or more ASCII digits.
func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
