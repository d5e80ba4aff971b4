package dispatch

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
	"github.com/complybox/complybox/store/urlpolicy"
)

// fakeDNS answers lookups from a table the test changes.
type fakeDNS struct {
	mu    sync.Mutex
	addrs map[string]netip.Addr
}

func (f *fakeDNS) set(host, ip string) {
	f.mu.Lock()
	f.addrs[host] = netip.MustParseAddr(ip)
	f.mu.Unlock()
}

func (f *fakeDNS) lookup(_ context.Context, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ip, ok := f.addrs[host]; ok {
		return []netip.Addr{ip}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestPlainHTTPAfterDNSChange: allow_http = "loopback" is enforced when
// connecting, not only when the URL is saved: a name that resolved to
// 127.0.0.1 is delivered to over plain http, and once it resolves to a
// public address the next attempt is refused before any byte is sent —
// no kept-alive connection carries it either. No real DNS is involved.
func TestPlainHTTPAfterDNSChange(t *testing.T) {
	var hits atomic.Int32
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer rc.Close()
	port := rc.Listener.Addr().(*net.TCPAddr).Port
	dns := &fakeDNS{addrs: map[string]netip.Addr{}}
	dns.set("hooks.partner.test", "127.0.0.1")
	s := newSender(Config{AttemptTimeout: 2 * time.Second, Concurrency: 2, Now: time.Now}.withDefaults(),
		urlpolicy.Policy{AllowHTTP: "loopback"})
	s.lookup = dns.lookup
	task := &store.DeliveryTask{DeliveryID: "d1", Destination: store.DestCustody, Payload: []byte("{}"), Attempt: 1,
		URL: "http://hooks.partner.test:" + itoa(port) + "/hook"}
	for range 3 {
		if res := s.send(store.Sandbox, task); !res.Success {
			t.Fatalf("plain http to a loopback name: %+v", res)
		}
	}
	dns.set("hooks.partner.test", "93.184.215.14") // public: refused before connecting
	res := s.send(store.Sandbox, task)
	if res.Success || !strings.Contains(res.Error, "plain http") {
		t.Fatalf("plain http after the name moved to a public address: %+v", res)
	}
	if n := hits.Load(); n != 3 {
		t.Errorf("the receiver got %d requests, want 3", n)
	}

	// https to the same public address passes the policy (the dial itself
	// is not attempted here); a private address is refused for https too.
	dns.set("hooks.partner.test", "10.0.0.8")
	task.URL = "https://hooks.partner.test:" + itoa(port) + "/hook"
	if res := s.send(store.Sandbox, task); res.Success || !strings.Contains(res.Error, "not allowed") {
		t.Fatalf("https to a private address: %+v", res)
	}
}

// TestURLChangeDropsIdleConnections: when a destination's URL changes, no
// connection kept alive for the old one is reused.
func TestURLChangeDropsIdleConnections(t *testing.T) {
	var mu sync.Mutex
	conns := map[string]bool{}
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns[r.RemoteAddr] = true
		mu.Unlock()
	}))
	defer rc.Close()
	s := newSender(Config{AttemptTimeout: 2 * time.Second, Concurrency: 2, Now: time.Now}.withDefaults(),
		urlpolicy.Policy{AllowHTTP: "loopback"})
	task := &store.DeliveryTask{DeliveryID: "d1", Destination: store.DestCustody, Payload: []byte("{}"), Attempt: 1, URL: rc.URL + "/a"}
	for _, path := range []string{"/a", "/a", "/b", "/b"} {
		task.URL = rc.URL + path
		if res := s.send(store.Sandbox, task); !res.Success {
			t.Fatalf("%s: %+v", path, res)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(conns) != 2 {
		t.Errorf("%d connections for 2 URLs (each kept alive for its own), want 2", len(conns))
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
