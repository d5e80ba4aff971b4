package urlpolicy_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

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
		{"HTTPS", urlpolicy.Policy{AllowHTTP: "loopback"}, "https://203.0.113.7/hook", ""},
		{"LoopbackHTTP", urlpolicy.Policy{AllowHTTP: "loopback"}, "http://localhost:8080/hook", ""},
		{"PublicHTTP", urlpolicy.Policy{AllowHTTP: "loopback"}, "http://203.0.113.7/hook", "allowed only for loopback"},
		{"AlwaysHTTP", urlpolicy.Policy{AllowHTTP: "always"}, "http://203.0.113.7/hook", ""},
		{"NeverLoopback", urlpolicy.Policy{AllowHTTP: "never"}, "https://127.0.0.1/hook", "allow_http = \"never\" forbids"},
		{"Private", urlpolicy.Policy{AllowHTTP: "loopback"}, "https://10.1.2.3/hook", "private network address"},
		{"PrivateAllowed", urlpolicy.Policy{AllowHTTP: "loopback", AllowPrivateNetworks: true}, "https://[fd00::1]/hook", ""},
		{"SharedSpace", urlpolicy.Policy{AllowHTTP: "loopback"}, "https://100.64.0.1/hook", "private network address"},
		{"Empty", urlpolicy.Policy{}, "", "url is required"},
		{"TooLong", urlpolicy.Policy{}, "https://203.0.113.7/" + strings.Repeat("a", urlpolicy.MaxLength), "at most 2048 characters"},
		{"Relative", urlpolicy.Policy{}, "/hook", "absolute https URL"},
		{"Scheme", urlpolicy.Policy{}, "ftp://203.0.113.7/", "must use https"},
		{"Credentials", urlpolicy.Policy{}, "https://u:p@203.0.113.7/", "must not carry credentials"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.policy.Check(ctx, "url", c.url)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var e *urlpolicy.FieldError
			if !errors.As(err, &e) || e.Field != "url" || !strings.Contains(e.Message, c.want) {
				t.Fatalf("error %v, want a FieldError naming url containing %q", err, c.want)
			}
		})
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
		{urlpolicy.Policy{}, "203.0.113.7", false},
	} {
		if got := c.policy.Disallowed(netip.MustParseAddr(c.addr)); got != c.want {
			t.Errorf("%+v.Disallowed(%s) = %v, want %v", c.policy, c.addr, got, c.want)
		}
	}
}
