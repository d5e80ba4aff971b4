// Package urlpolicy decides which webhook destinations complybox may call:
// the store applies it when a URL is configured and the dispatcher again to
// every address it connects to, so a name cannot be rebound to a private
// address after it was accepted. Its errors are *fielderr.Error naming the
// offending field.
package urlpolicy

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/complybox/complybox/store/fielderr"
)

// MaxLength bounds the length of a webhook URL.
const MaxLength = 2048

// Policy is the webhook URL policy of one instance.
type Policy struct {
	// AllowHTTP says when plain http is allowed: "always", "loopback"
	// (loopback hosts only) or "never", which also refuses loopback hosts.
	// Anything else refuses plain http.
	AllowHTTP string
	// AllowPrivateNetworks lets a URL reach every address that is not
	// public (isPrivate): private, link-local, shared, ULA and reserved
	// addresses, and NAT64 or 6to4 addresses standing for one of them.
	AllowPrivateNetworks bool
}

// invalid returns a *fielderr.Error naming field.
func invalid(field, format string, args ...any) *fielderr.Error {
	return fielderr.New(field, format, args...)
}

// Check applies the policy to raw, the URL given in field: http(s) only,
// http only as AllowHTTP says, loopback only unless AllowHTTP is "never",
// private networks only when allowed. A host that does not resolve now is
// taken as public. Returns a *fielderr.Error naming field.
func (p Policy) Check(ctx context.Context, field, raw string) error {
	if raw == "" {
		return invalid(field, "%s is required", field)
	}
	if len(raw) > MaxLength {
		return invalid(field, "%s must be at most %d characters", field, MaxLength)
	}
	if strings.IndexFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		// It would go raw into the request line, which no receiver reads.
		return invalid(field, "%s must not contain spaces or control characters (percent-encode them)", field)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || !u.IsAbs() {
		return invalid(field, "%s must be an absolute https URL", field)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return invalid(field, "%s must use https", field)
	}
	if u.User != nil {
		return invalid(field, "%s must not carry credentials", field)
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
			return invalid(field, "%s has port %s; a port is 1 to 65535", field, port)
		}
	}
	// A host that does not resolve now (an offline appliance, a name not
	// yet published) is taken as public: the dispatcher checks every
	// address again when it connects.
	ips, _ := resolve(ctx, u.Hostname())
	loopback := len(ips) > 0
	for _, ip := range ips {
		switch {
		case ip.IsLoopback():
			if p.AllowHTTP == "never" {
				return invalid(field, "%s resolves to a loopback address, which allow_http = \"never\" forbids", field)
			}
		case isPrivate(ip):
			loopback = false
			if !p.AllowPrivateNetworks {
				return invalid(field, "%s resolves to a private network address", field)
			}
		default:
			loopback = false
		}
	}
	if u.Scheme == "http" {
		switch p.AllowHTTP {
		case "always":
		case "loopback":
			if !loopback {
				return invalid(field, "%s must use https (plain http is allowed only for loopback)", field)
			}
		default:
			return invalid(field, "%s must use https", field)
		}
	}
	return nil
}

// Connect applies the whole policy to one connection about to be made for a
// URL of scheme ("http" or "https") to ip, whatever the URL's host resolved
// to when it was saved: plain http only as AllowHTTP says (with "loopback",
// only to a loopback address), and no private or, under "never", loopback
// address. The dispatcher calls it for every address it dials.
func (p Policy) Connect(scheme string, ip netip.Addr) error {
	ip = ip.Unmap()
	if p.Disallowed(ip) {
		return fmt.Errorf("address %s is not allowed for webhooks", ip)
	}
	if scheme == "https" {
		return nil
	}
	switch {
	case scheme != "http":
		return fmt.Errorf("scheme %q is not allowed for webhooks", scheme)
	case p.AllowHTTP == "always":
		return nil
	case p.AllowHTTP == "loopback" && ip.IsLoopback():
		return nil
	case p.AllowHTTP == "loopback":
		return fmt.Errorf("plain http to %s is not allowed: allow_http = \"loopback\" allows it to loopback addresses only", ip)
	}
	return fmt.Errorf("plain http to %s is not allowed (allow_http = %q)", ip, p.AllowHTTP)
}

// Disallowed reports whether a connection to ip must be refused under the
// policy (guards against DNS rebinding after validation).
func (p Policy) Disallowed(ip netip.Addr) bool {
	ip = ip.Unmap()
	if ip.IsLoopback() {
		return p.AllowHTTP == "never"
	}
	return isPrivate(ip) && !p.AllowPrivateNetworks
}

// isPrivate reports addresses a webhook must not reach unless allowed
// (loopback aside, which allow_http governs): private ranges, link-local,
// unspecified, multicast, shared and ULA space, "this network", reserved
// and discard-only space, the limited broadcast, the benchmarking ranges
// (198.18/15, 2001:2::/48: not globally reachable, and networks use them
// inside, for proxies among others), Teredo (2001::/32) and SRv6 segment
// identifiers (5f00::/16), and IPv6 addresses that stand for one of these
// or loopback through NAT64 (64:ff9b::/96), 6to4 (2002::/16), SIIT's
// IPv4-translated form (::ffff:0:0/96) or the deprecated IPv4-compatible
// form (::/96). The documentation ranges
// (192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32) are not refused:
// they are never routed, and integrators use them as example public
// addresses.
func isPrivate(ip netip.Addr) bool {
	ip = ip.Unmap()
	if ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() {
		return true
	}
	if v4, ok := embeddedIPv4(ip); ok {
		return v4.IsLoopback() || isPrivate(v4)
	}
	for _, p := range [...]string{
		"0.0.0.0/8",      // "this network"
		"100.64.0.0/10",  // shared address space (carrier-grade NAT)
		"198.18.0.0/15",  // benchmarking (RFC 2544)
		"2001:2::/48",    // benchmarking (RFC 5180)
		"192.0.0.0/24",   // IETF protocol assignments
		"240.0.0.0/4",    // reserved, and the limited broadcast 255.255.255.255
		"64:ff9b:1::/48", // local-use NAT64
		"2001::/32",      // Teredo: its client address is obfuscated inside, relays reach it (RFC 4380)
		"5f00::/16",      // SRv6 segment identifiers (RFC 9602): not globally reachable
		"100::/64",       // discard-only
		"fec0::/10",      // site-local (deprecated)
	} {
		if netip.MustParsePrefix(p).Contains(ip) {
			return true
		}
	}
	return false
}

// embeddedIPv4 returns the IPv4 address that an IPv6 address of the NAT64
// well-known prefix (64:ff9b::/96, RFC 6052), of 6to4 (2002::/16, RFC
// 3056), of SIIT's IPv4-translated form (::ffff:0:a.b.c.d, RFC 2765) or
// of the deprecated IPv4-compatible form (::a.b.c.d, RFC 4291; not :: and
// ::1) stands for: a connection to it may reach that IPv4 address.
func embeddedIPv4(ip netip.Addr) (netip.Addr, bool) {
	if !ip.Is6() {
		return netip.Addr{}, false
	}
	b := ip.As16()
	switch {
	case b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && [8]byte(b[4:12]) == [8]byte{}:
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case b[0] == 0x20 && b[1] == 0x02:
		return netip.AddrFrom4([4]byte(b[2:6])), true
	case [8]byte(b[0:8]) == [8]byte{} && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0:
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case [12]byte(b[0:12]) == [12]byte{} && !ip.IsUnspecified() && !ip.IsLoopback():
		return netip.AddrFrom4([4]byte(b[12:16])), true
	}
	return netip.Addr{}, false
}

// resolve returns the addresses of host: the address itself for an IP
// literal, 127.0.0.1 for localhost, else a DNS lookup bounded to 3 s.
func resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{ip}, nil
	}
	if strings.EqualFold(host, "localhost") {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, err
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if ip, ok := netip.AddrFromSlice(a.IP); ok {
			out = append(out, ip)
		}
	}
	return out, nil
}
