package urlpolicy_test

import (
	"net/netip"
	"testing"

	"github.com/complybox/complybox/store/urlpolicy"
)

// TestConnect: the connect-time check applies scheme × address, so a name
// accepted for plain http while it resolved to loopback cannot be used for
// plain http once it resolves to a public address.
func TestConnect(t *testing.T) {
	loop, public, private := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("10.1.2.3")
	mapped := netip.MustParseAddr("::ffff:93.184.215.14")
	for _, c := range []struct {
		allowHTTP string
		private   bool
		scheme    string
		ip        netip.Addr
		ok        bool
	}{
		{"loopback", false, "http", loop, true},
		{"loopback", false, "http", public, false},
		{"loopback", false, "http", mapped, false},
		{"loopback", false, "https", public, true},
		{"loopback", false, "https", loop, true},
		{"loopback", false, "https", private, false},
		{"loopback", true, "https", private, true},
		{"loopback", true, "http", private, false},
		{"never", false, "http", loop, false},
		{"never", false, "https", loop, false},
		{"never", false, "https", public, true},
		{"always", false, "http", public, true},
		{"always", false, "http", private, false},
		{"always", false, "ftp", public, false},
		{"", false, "http", loop, false},
	} {
		p := urlpolicy.Policy{AllowHTTP: c.allowHTTP, AllowPrivateNetworks: c.private}
		if err := p.Connect(c.scheme, c.ip); (err == nil) != c.ok {
			t.Errorf("allow_http=%q private=%v %s to %s: %v, want ok=%v", c.allowHTTP, c.private, c.scheme, c.ip, err, c.ok)
		}
	}
}
