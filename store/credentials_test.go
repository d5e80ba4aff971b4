package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/complybox/complybox/store"
)

func TestAuthenticate(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{})
	c, secret, err := s.CreateCredential(store.Production, store.RoleAdmin, "ops")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("OK", func(t *testing.T) {
		got, err := s.Authenticate(c.Key, secret)
		if err != nil {
			t.Fatal(err)
		}
		if got.Environment != store.Production || got.Role != store.RoleAdmin {
			t.Errorf("credential %+v", got)
		}
	})
	t.Run("ErrUnauthorized", func(t *testing.T) {
		for _, tc := range [][2]string{{c.Key, secret + "x"}, {c.Key, ""}, {"", secret}, {"nope", secret}} {
			if _, err := s.Authenticate(tc[0], tc[1]); store.ErrorCode(err) != store.EUNAUTHORIZED {
				t.Errorf("Authenticate(%q, %q) = %v, want EUNAUTHORIZED", tc[0], tc[1], err)
			}
		}
	})
	t.Run("RevokedAfterCached", func(t *testing.T) {
		if _, err := s.Authenticate(c.Key, secret); err != nil {
			t.Fatal(err)
		}
		if err := s.RevokeCredential(c.Key); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Authenticate(c.Key, secret); store.ErrorCode(err) != store.EUNAUTHORIZED {
			t.Errorf("revoked credential: err %v, want EUNAUTHORIZED", err)
		}
	})
	t.Run("ConfiguredSecretChanges", func(t *testing.T) {
		if _, err := s.EnsureCredential("cfg_key", "one", store.Sandbox, "", "cfg"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Authenticate("cfg_key", "one"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.EnsureCredential("cfg_key", "two", store.Sandbox, "", "cfg"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Authenticate("cfg_key", "one"); store.ErrorCode(err) != store.EUNAUTHORIZED {
			t.Errorf("old secret still accepted: %v", err)
		}
		if _, err := s.Authenticate("cfg_key", "two"); err != nil {
			t.Errorf("new secret refused: %v", err)
		}
	})
	t.Run("ConfiguredStaysRevoked", func(t *testing.T) {
		if err := s.RevokeCredential("cfg_key"); err != nil {
			t.Fatal(err)
		}
		// The next start applies the same configuration, then a new secret.
		for _, secret := range []string{"two", "three"} {
			revoked, err := s.EnsureCredential("cfg_key", secret, store.Sandbox, "", "cfg")
			if err != nil || !revoked {
				t.Fatalf("EnsureCredential after revoke: revoked %v, err %v", revoked, err)
			}
			if _, err := s.Authenticate("cfg_key", secret); store.ErrorCode(err) != store.EUNAUTHORIZED {
				t.Errorf("a revoked configured key authenticates again with %q: %v", secret, err)
			}
		}
	})
}

func TestDeleteCredential(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{})
	t.Run("OK", func(t *testing.T) {
		c, secret, err := s.CreateCredential(store.Sandbox, "", "first-run")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Authenticate(c.Key, secret); err != nil { // cached
			t.Fatal(err)
		}
		if err := s.DeleteCredential(c.Key); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Authenticate(c.Key, secret); store.ErrorCode(err) != store.EUNAUTHORIZED {
			t.Errorf("deleted credential: err %v, want EUNAUTHORIZED", err)
		}
		if creds, err := s.Credentials(); err != nil || len(creds) != 0 {
			t.Errorf("Credentials() = %v, %v; want none", creds, err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		if err := s.DeleteCredential("sbx_key_nope"); store.ErrorCode(err) != store.ENOTFOUND {
			t.Errorf("err %v, want ENOTFOUND", err)
		}
	})
}

func TestDiscardCallbackSecret(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{})
	generated, err := s.InitCallback()
	if err != nil || generated == "" {
		t.Fatalf("InitCallback() = %q, %v; want a generated secret", generated, err)
	}
	// Another secret is not the one to discard: it stays.
	if err := s.DiscardCallbackSecret("other"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.CallbackSecret(); err != nil || got != generated {
		t.Fatalf("CallbackSecret() = %q, %v; want %q", got, err, generated)
	}
	if err := s.DiscardCallbackSecret(generated); err != nil {
		t.Fatal(err)
	}
	again, err := s.InitCallback()
	if err != nil || again == "" || again == generated {
		t.Fatalf("InitCallback() after discarding = %q, %v; want a new secret", again, err)
	}
}

func TestCreateCredentialNameCountsCharacters(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{})
	if _, _, err := s.CreateCredential(store.Sandbox, "", strings.Repeat("é", 100)); err != nil {
		t.Fatalf("100-character name: %v", err)
	}
	_, _, err := s.CreateCredential(store.Sandbox, "", strings.Repeat("é", 101))
	var e *store.Error
	if !errors.As(err, &e) || e.Code != store.EINVALID || e.Field != "name" {
		t.Fatalf("101-character name: %v, want EINVALID naming name", err)
	}
}
