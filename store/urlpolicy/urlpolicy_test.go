package urlpolicy_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/complybox/complybox/store/fielderr"
	"github.com/complybox/complybox/store/urlpolicy"
)

// Only IP literals and localhost: the tests never resolve a name.
func TestCheck(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		policy urlpolicy.Policy
		url    string
		want   string // part of the message; "" when accepted
	}{
		{"HTTPS", urlpolicy.Policy{AllowHTTP: "loopback"}, "https://93.184.215.14/hook", ""},
		{"LoopbackHTTP", urlpolicy.Policy{AllowHTTP: "loopback"}, "http://localhost:8080/hook", ""},
		{"PublicHTTP", urlpolicy.Policy{AllowHTTP: "loopback"}, "http://93.184.215.14/hook", "allowed only for loopback"},
		{"AlwaysHTTP", urlpolicy.Policy{AllowHTTP: "always"}, "http://93.184.215.14/hook", ""},
		{"NeverLoopback", urlpolicy.Policy{AllowHTTP: "never"}, "https://127.0.0.1/hook", "allow_http = \"never\" forbids"},
		{"Private", urlpolicy.Policy{AllowHTTP: "loopback"}, "https://10.1.2.3/hook", "private network address"},
		{"PrivateAllowed", urlpolicy.Policy{AllowHTTP: "loopback", AllowPrivateNetworks: true}, "https://[fd00::1]/hook", ""},
		{"SharedSpace", urlpolicy.Policy{AllowHTTP: "loopback"}, "https://100.64.0.1/hook", "private network address"},
		{"Empty", urlpolicy.Policy{}, "", "url is required"},
		{"TooLong", urlpolicy.Policy{}, "https://93.184.215.14/" + strings.Repeat("a", urlpolicy.MaxLength), "at most 2048 characters"},
		{"Relative", urlpolicy.Policy{}, "/hook", "absolute https URL"},
		{"Scheme", urlpolicy.Policy{}, "ftp://93.184.215.14/", "must use https"},
		{"Credentials", urlpolicy.Policy{}, "https://u:p@93.184.215.14/", "must not carry credentials"},
		{"Space", urlpolicy.Policy{}, "https://93.184.215.14/?a=b c", "must not contain spaces"},
		{"Tab", urlpolicy.Policy{}, "https://93.184.215.14/\thook", "must not contain spaces"},
		{"PortTooLarge", urlpolicy.Policy{}, "https://93.184.215.14:99999/", "a port is 1 to 65535"},
		{"PortZero", urlpolicy.Policy{}, "https://93.184.215.14:0/", "a port is 1 to 65535"},
		{"PortLast", urlpolicy.Policy{}, "https://93.184.215.14:65535/", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.policy.Check(ctx, "url", c.url)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var e *fielderr.Error
			if !errors.As(err, &e) || e.Field != "url" || !strings.Contains(e.Message, c.want) {
				t.Fatalf("error %v, want a fielderr.Error naming url containing %q", err, c.want)
			}
		})
	}
}

// TestNonPublic: every address that is not public is refused (SPEC §5: "a
// URL resolving to a private network"), and allowed with
// allow_private_networks; IPv6 addresses that embed an IPv4 one (NAT64,
// 6to4) are judged by it. Loopback stays governed by allow_http alone.
func TestNonPublic(t *testing.T) {
	for _, c := range []struct {
		addr string
		want bool // refused without allow_private_networks
	}{
		{"10.0.0.1", true},
		{"172.16.0.1", true},
		{"192.168.1.1", true},
		{"100.64.0.1", true},
		{"169.254.169.254", true},
		{"0.0.0.0", true},
		{"0.1.2.3", true},                              // "this network", 0/8
		{"192.0.0.8", true},                            // IETF protocol assignments
		{"192.0.2.1", false},                           // TEST-NET-1: documentation, an example public address
		{"198.18.0.1", true},                           // benchmarking, 198.18/15: not globally reachable, and used inside networks
		{"198.19.255.254", true},                       // the same /15
		{"198.20.0.1", false},                          // just past it
		{"198.51.100.7", false},                        // TEST-NET-2
		{"203.0.113.7", false},                         // TEST-NET-3
		{"224.0.0.1", true},                            // multicast
		{"240.0.0.1", true},                            // reserved, 240/4
		{"255.255.255.255", true},                      // limited broadcast
		{"::", true},                                   // unspecified
		{"fd00::1", true},                              // ULA
		{"fe80::1", true},                              // link-local
		{"fec0::1", true},                              // site-local (deprecated)
		{"ff02::1", true},                              // multicast
		{"2001:db8::1", false},                         // documentation
		{"2001:2::1", true},                            // benchmarking, 2001:2::/48
		{"2001:3::1", false},                           // past it
		{"100::1", true},                               // discard-only
		{"::ffff:10.0.0.1", true},                      // IPv4-mapped
		{"64:ff9b::a00:1", true},                       // NAT64 of 10.0.0.1
		{"64:ff9b::7f00:1", true},                      // NAT64 of 127.0.0.1: not this host's loopback
		{"64:ff9b::c612:1", true},                      // NAT64 of 198.18.0.1
		{"64:ff9b::c000:201", false},                   // NAT64 of 192.0.2.1, documentation
		{"::ffff:198.18.0.1", true},                    // IPv4-mapped benchmarking
		{"2002:c612:1::", true},                        // 6to4 of 198.18.0.1
		{"::10.0.0.1", true},                           // IPv4-compatible (deprecated ::/96) of 10.0.0.1
		{"::c612:1", true},                             // IPv4-compatible of 198.18.0.1
		{"64:ff9b::ffff:ffff", true},                   // NAT64 of 255.255.255.255
		{"::ffff:0:a00:1", true},                       // SIIT IPv4-translated (::ffff:0:0/96) of 10.0.0.1
		{"::ffff:0:7f00:1", true},                      // SIIT of 127.0.0.1
		{"::ffff:0:c000:201", false},                   // SIIT of 192.0.2.1, documentation
		{"2001::1", true},                              // Teredo, 2001::/32
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", true}, // a Teredo address
		{"5f00::1", true},                              // SRv6 segment identifier, 5f00::/16
		{"64:ff9b:1::a00:1", true},                     // local-use NAT64 prefix
		{"2002:a00:1::", true},                         // 6to4 of 10.0.0.1
		{"2002:a9fe:a9fe::1", true},                    // 6to4 of 169.254.169.254
		{"2002:7f00:1::", true},                        // 6to4 of 127.0.0.1
		{"93.184.215.14", false},                       // public
		{"::ffff:93.184.215.14", false},
		{"64:ff9b::5db8:d70e", false}, // NAT64 of 93.184.215.14
		{"2002:5db8:d70e::1", false},  // 6to4 of 93.184.215.14
		{"2606:4700::1111", false},    // public IPv6
	} {
		ip := netip.MustParseAddr(c.addr)
		if got := (urlpolicy.Policy{AllowHTTP: "loopback"}).Disallowed(ip); got != c.want {
			t.Errorf("Disallowed(%s) = %v, want %v", c.addr, got, c.want)
		}
		if (urlpolicy.Policy{AllowHTTP: "loopback", AllowPrivateNetworks: true}).Disallowed(ip) {
			t.Errorf("Disallowed(%s) with allow_private_networks", c.addr)
		}
		err := (urlpolicy.Policy{AllowHTTP: "loopback"}).Check(context.Background(), "url", "https://"+netip.AddrPortFrom(ip, 443).String()+"/x")
		if refused := err != nil && strings.Contains(err.Error(), "private network address"); refused != c.want {
			t.Errorf("Check(%s): %v, want refused %v", c.addr, err, c.want)
		}
	}
	// Loopback is as before: allowed unless allow_http = "never", for
	// https and plain http alike, whatever allow_private_networks says.
	for _, addr := range []string{"127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"} {
		ip := netip.MustParseAddr(addr)
		for _, p := range []urlpolicy.Policy{{AllowHTTP: "loopback"}, {AllowHTTP: "always"}, {AllowHTTP: "loopback", AllowPrivateNetworks: true}} {
			if p.Disallowed(ip) {
				t.Errorf("%+v.Disallowed(%s)", p, addr)
			}
			if err := p.Check(context.Background(), "url", "http://"+netip.AddrPortFrom(ip, 80).String()+"/x"); err != nil {
				t.Errorf("%+v.Check(http://%s): %v", p, addr, err)
			}
		}
		if !(urlpolicy.Policy{AllowHTTP: "never"}).Disallowed(ip) {
			t.Errorf("allow_http = never: %s allowed", addr)
		}
	}
}

func TestDisallowed(t *testing.T) {
	for _, c := range []struct {
		policy urlpolicy.Policy
		addr   string
		want   bool
	}{
		{urlpolicy.Policy{AllowHTTP: "loopback"}, "127.0.0.1", false},
		{urlpolicy.Policy{AllowHTTP: "never"}, "127.0.0.1", true},
		{urlpolicy.Policy{AllowHTTP: "never"}, "::ffff:127.0.0.1", true},
		{urlpolicy.Policy{}, "192.168.1.1", true},
		{urlpolicy.Policy{AllowPrivateNetworks: true}, "192.168.1.1", false},
		{urlpolicy.Policy{}, "169.254.169.254", true},
		{urlpolicy.Policy{}, "0.0.0.0", true},
		{urlpolicy.Policy{}, "93.184.215.14", false},
		{urlpolicy.Policy{}, "2606:2800:21f:cb07:6820:80da:af6b:8b2c", false},
	} {
		if got := c.policy.Disallowed(netip.MustParseAddr(c.addr)); got != c.want {
			t.Errorf("%+v.Disallowed(%s) = %v, want %v", c.policy, c.addr, got, c.want)
		}
	}
}
