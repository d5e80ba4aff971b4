package dispatch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/complybox/complybox/store"
)

// maxResponseBody is how much of a receiver's answer an attempt keeps.
const maxResponseBody = 4 << 10

// sender makes single HTTP attempts.
type sender struct {
	cfg    Config
	client *http.Client
}

type result struct {
	store.AttemptResult
	retryAfter time.Duration // from a 429 or 503 answer
}

func newSender(cfg Config, disallowed func(netip.Addr) bool) *sender {
	dialer := &net.Dialer{
		Timeout: cfg.AttemptTimeout,
		// Refuse addresses the webhook policy forbids at connect time too, so
		// a name that resolved to a public address at configuration cannot
		// be rebound to a private one.
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err == nil && disallowed(ap.Addr()) {
				return fmt.Errorf("address %s is not allowed for webhooks", ap.Addr())
			}
			return nil
		},
	}
	transport := &http.Transport{
		DialContext:         dialer.DialContext,
		MaxIdleConns:        cfg.Concurrency * 2,
		MaxIdleConnsPerHost: cfg.Concurrency * 2,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: cfg.AttemptTimeout,
	}
	return &sender{cfg: cfg, client: &http.Client{
		Transport: transport,
		Timeout:   cfg.AttemptTimeout,
		// A redirect is a failed attempt: the answer is not followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// send makes one signed attempt of task.
func (s *sender) send(task *store.DeliveryTask) result {
	at := s.cfg.Now().UTC()
	res := result{AttemptResult: store.AttemptResult{RequestURL: task.URL, At: at}}
	if task.URL == "" {
		res.Error = "no destination is configured for " + task.Destination + " events"
		return res
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, task.URL, bytes.NewReader(task.Payload))
	if err != nil {
		res.Error = err.Error()
		return res
	}
	ts := at.Unix()
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "complybox-webhooks/"+s.cfg.Version)
	h.Set("X-Webhook-Signature", Sign(task.Secret, task.Payload))
	h.Set("X-Webhook-Id", task.DeliveryID)
	h.Set("X-Webhook-Event-Type", task.EventType)
	h.Set("X-Webhook-Attempt", strconv.Itoa(task.Attempt))
	if task.Test {
		h.Set("X-Webhook-Test", "true")
	}
	h.Set("webhook-id", task.EventID)
	h.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	h.Set("webhook-signature", SignStandard(task.Secret, task.EventID, ts, task.Payload))

	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		res.Duration = time.Since(start)
		res.Error = attemptError(err, s.cfg.AttemptTimeout)
		return res
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
	resp.Body.Close()
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
		res.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), at)
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

// parseRetryAfter reads seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return t.Sub(now)
	}
	return 0
}
