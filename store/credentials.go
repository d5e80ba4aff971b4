package store

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// Credential roles.
const (
	RolePartner = "partner"
	RoleAdmin   = "admin"
)

// Credential is an API key pair. The secret is kept only as a SHA-256 hash:
// secrets are random and long, so a slow hash adds nothing.
type Credential struct {
	Key         string `json:"key"`
	Name        string `json:"name"`
	Environment Env    `json:"environment"`
	Role        string `json:"role"`
	CreatedAt   Time   `json:"createdAt"`
	RevokedAt   Time   `json:"revokedAt"`
	// Configured: the credential came from the configuration's
	// [[credentials]] (EnsureCredential), not from create.
	Configured bool   `json:"configured,omitempty"`
	SecretHash string `json:"-"`
}

type diskCredential struct {
	Credential
	SecretHash string `json:"secretHash"`
}

func marshalCredential(c Credential) ([]byte, error) {
	return json.Marshal(diskCredential{Credential: c, SecretHash: c.SecretHash})
}

func unmarshalCredential(b []byte) (Credential, error) {
	var d diskCredential
	err := json.Unmarshal(b, &d)
	d.Credential.SecretHash = d.SecretHash
	return d.Credential, err
}

func hashSecret(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

func validCredential(env Env, role string) error {
	if !env.Valid() {
		return Invalid("environment", "environment must be sandbox or production")
	}
	if role != RolePartner && role != RoleAdmin {
		return Invalid("role", "role must be partner or admin")
	}
	return nil
}

// CheckCredentialName checks a credential's name (also a configured one's,
// before anything is written): at most 100 characters,
// no control character. The name is a column of `credentials list` and of
// the console's table: a line break or a tab in it would forge rows there.
func CheckCredentialName(name string) error {
	if longerThan(name, 100) {
		return Invalid("name", "name must be at most 100 characters")
	}
	return checkControl("name", name, false)
}

// CreateCredential mints a credential and returns it with its secret, which
// is never stored and cannot be read again. Returns EINVALID for a bad
// environment or role, or a name over 100 characters or with a control
// character.
func (s *Store) CreateCredential(env Env, role, name string) (Credential, string, error) {
	if role == "" {
		role = RolePartner
	}
	if err := validCredential(env, role); err != nil {
		return Credential{}, "", err
	}
	if err := CheckCredentialName(name); err != nil {
		return Credential{}, "", err
	}
	prefix := "sbx"
	if env == Production {
		prefix = "prd"
	}
	secret := randomToken(32)
	c := Credential{Key: prefix + "_key_" + randomHex(12), Name: name, Environment: env, Role: role, SecretHash: hashSecret(secret)}
	err := s.update(func(t *txn) error {
		c.CreatedAt = At(t.now)
		return t.putCredential(c, "credential.created")
	})
	s.creds.invalidate()
	return c, secret, err
}

// EnsureCredential stores a credential named in the configuration, replacing
// a stored one with the same key. A revoked key stays revoked, whatever the
// configuration says (revoked reports it): revocation is how a leaked key
// is shut out, and restarting with the same file must not let it back in.
// Returns EINVALID for bad values.
func (s *Store) EnsureCredential(key, secret string, env Env, role, name string) (revoked bool, err error) {
	if role == "" {
		role = RolePartner
	}
	if err := validCredential(env, role); err != nil {
		return false, err
	}
	if key == "" || secret == "" {
		return false, Invalid("key", "credential key and secret are required")
	}
	if err := CheckCredentialName(name); err != nil {
		return false, err
	}
	defer s.creds.invalidate()
	err = s.update(func(t *txn) error {
		c := Credential{Key: key, Name: name, Environment: env, Role: role, SecretHash: hashSecret(secret), CreatedAt: At(t.now), Configured: true}
		if b := t.Bucket(bucketCredentials).Get([]byte(key)); b != nil {
			old, err := unmarshalCredential(b)
			if err != nil {
				return err
			}
			revoked = !old.RevokedAt.IsZero()
			if old.SecretHash == c.SecretHash && old.Role == role && old.Environment == env && old.Configured {
				return nil
			}
			c.CreatedAt, c.RevokedAt = old.CreatedAt, old.RevokedAt
		}
		return t.putCredential(c, "credential.configured")
	})
	return revoked, err
}

func (t *txn) putCredential(c Credential, eventType string) error {
	b, err := marshalCredential(c)
	if err != nil {
		return err
	}
	if err := t.Bucket(bucketCredentials).Put([]byte(c.Key), b); err != nil {
		return err
	}
	return t.appendInternal(c.Environment, "credential:"+c.Key, eventType, map[string]any{"key": c.Key, "role": c.Role})
}

// credential reads the credential key. Returns ENOTFOUND for an unknown
// key.
func (t *txn) credential(key string) (Credential, error) {
	b := t.Bucket(bucketCredentials).Get([]byte(key))
	if b == nil {
		return Credential{}, NotFound("credential", key)
	}
	return unmarshalCredential(b)
}

// RevokeCredential revokes key. Returns ENOTFOUND for an unknown key.
func (s *Store) RevokeCredential(key string) error {
	defer s.creds.invalidate()
	return s.update(func(t *txn) error {
		c, err := t.credential(key)
		if err != nil {
			return err
		}
		if !c.RevokedAt.IsZero() {
			return nil
		}
		c.RevokedAt = At(t.now)
		return t.putCredential(c, "credential.revoked")
	})
}

// DeleteCredential removes key, a credential whose secret could not be
// shown (printing it failed): kept, it would be live with a secret nobody
// has, and would stop serve from making a first-run credential. Returns
// ENOTFOUND for an unknown key.
func (s *Store) DeleteCredential(key string) error {
	defer s.creds.invalidate()
	return s.update(func(t *txn) error {
		c, err := t.credential(key)
		if err != nil {
			return err
		}
		if err := t.Bucket(bucketCredentials).Delete([]byte(key)); err != nil {
			return err
		}
		return t.appendInternal(c.Environment, "credential:"+key, "credential.deleted", map[string]any{"key": key, "role": c.Role})
	})
}

// Credentials lists every credential, oldest first.
func (s *Store) Credentials() ([]Credential, error) {
	var out []Credential
	err := s.view(func(t *txn) error {
		return t.Bucket(bucketCredentials).ForEach(func(k, v []byte) error {
			c, err := unmarshalCredential(v)
			if err != nil {
				return err
			}
			out = append(out, c)
			return nil
		})
	})
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt.Time) {
			return out[i].CreatedAt.Before(out[j].CreatedAt.Time)
		}
		return out[i].Key < out[j].Key
	})
	return out, err
}

// Authenticate returns the live credential for key and secret. The secret is
// compared in constant time. Returns EUNAUTHORIZED otherwise.
func (s *Store) Authenticate(key, secret string) (Credential, error) {
	unauthorized := Errorf(EUNAUTHORIZED, "unauthorized", "missing or invalid X-Api-Key / X-Api-Secret")
	if key == "" || secret == "" {
		return Credential{}, unauthorized
	}
	c, found, err := s.credential(key)
	if err != nil {
		return Credential{}, err
	}
	want := c.SecretHash
	if !found {
		want = strings.Repeat("0", 64)
	}
	got := hashSecret(secret)
	if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 || !found || !c.RevokedAt.IsZero() {
		return Credential{}, unauthorized
	}
	return c, nil
}

// credential returns the stored credential for key, from the cache when it
// holds it.
func (s *Store) credential(key string) (Credential, bool, error) {
	if c, found, ok := s.creds.get(key); ok {
		return c, found, nil
	}
	gen := s.creds.generation()
	var c Credential
	var found bool
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCredentials).Get([]byte(key))
		if b == nil {
			return nil
		}
		var err error
		c, err = unmarshalCredential(b)
		found = err == nil
		return err
	})
	if err == nil {
		s.creds.put(gen, key, c, found)
	}
	return c, found, err
}

// credentialCache keeps credentials read by Authenticate, so a request does
// not decode its credential from the db. Every change to a credential
// invalidates the whole cache; a read that raced with a change is not
// cached, because its generation is stale.
type credentialCache struct {
	mu    sync.RWMutex
	gen   uint64
	items map[string]cachedCredential
}

type cachedCredential struct {
	c     Credential
	found bool
}

// maxCachedCredentials bounds the cache against floods of unknown keys.
const maxCachedCredentials = 10000

func (cc *credentialCache) get(key string) (Credential, bool, bool) {
	cc.mu.RLock()
	defer cc.mu.RUnlock()
	it, ok := cc.items[key]
	return it.c, it.found, ok
}

func (cc *credentialCache) generation() uint64 {
	cc.mu.RLock()
	defer cc.mu.RUnlock()
	return cc.gen
}

func (cc *credentialCache) put(gen uint64, key string, c Credential, found bool) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if gen != cc.gen {
		return
	}
	if cc.items == nil || len(cc.items) >= maxCachedCredentials {
		cc.items = map[string]cachedCredential{}
	}
	cc.items[key] = cachedCredential{c: c, found: found}
}

func (cc *credentialCache) invalidate() {
	cc.mu.Lock()
	cc.gen++
	cc.items = nil
	cc.mu.Unlock()
}
