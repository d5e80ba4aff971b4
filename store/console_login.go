package store

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"
)

// The operator console (SPEC 3.9): named operator accounts (see
// console_users.go), each password kept as a bcrypt hash, server-side
// sessions and a sliding window of login attempts per
// client address. They live in the meta bucket's nested "console" bucket:
//
//	password           -> bcrypt hash of earlier versions (migrated to user:admin)
//	user:<name>        -> an operator account
//	session:<sha256>   -> ConsoleSession (keyed by the hash of the cookie value)
//	attempts:<client>  -> login attempt times within the window
//
// Logins, failed logins, logouts and console actions are internal history
// events of the subject "console" in every environment the session spans
// (logins) or the one it acted on (actions).

// Console limits.
const (
	ConsoleSessionTTL    = 12 * time.Hour // a session's lifetime from login
	ConsoleLoginLimit    = 5              // attempts per client within the window
	ConsoleLoginWindow   = time.Minute    // the sliding window of ConsoleLoginLimit
	ConsolePasswordMin   = 8              // characters
	ConsolePasswordMax   = 72             // bytes, bcrypt's limit
	consoleSubject       = "console"      // history subject of console events
	consoleBucket        = "console"      // nested in the meta bucket
	consoleKeyPassword   = "password"     // -> bcrypt hash
	consoleSessionPrefix = "session:"     // + hex sha256 of the session id
	consoleAttemptPrefix = "attempts:"    // + client address
	consoleHistoryLimit  = MaxLimit       // console events shown at most
	consoleSessionIDLen  = 32             // random bytes of a session id (256 bits)
	consoleCSRFLen       = 32             // random bytes of a CSRF token
	consoleSessionSweep  = 64             // expired sessions removed per login at most
)

// ConsoleSession is an operator's console session. ID is the cookie value:
// it is only known to the caller of ConsoleLogin; the db keeps its hash.
type ConsoleSession struct {
	ID        string `json:"-"`
	Operator  string `json:"operator"` // the account's name
	Role      string `json:"role"`     // the account's role now (read from the account)
	CSRF      string `json:"csrf"`
	Env       Env    `json:"env"` // the environment the console shows
	Client    string `json:"client"`
	CreatedAt Time   `json:"createdAt"`
	ExpiresAt Time   `json:"expiresAt"`
}

func consoleSessionKey(id string) []byte {
	h := sha256.Sum256([]byte(id))
	return []byte(consoleSessionPrefix + hex.EncodeToString(h[:]))
}

// consoleRead returns the console bucket in a read transaction, nil before
// the first console write.
func (t *txn) consoleRead() *bolt.Bucket { return t.Bucket(bucketMeta).Bucket([]byte(consoleBucket)) }

// consoleWrite returns the console bucket, creating it.
func (t *txn) consoleWrite() (*bolt.Bucket, error) {
	return t.Bucket(bucketMeta).CreateBucketIfNotExists([]byte(consoleBucket))
}

// consoleEvent records an internal console event in each of envs.
func (t *txn) consoleEvent(envs []Env, eventType string, details map[string]any) error {
	for _, env := range envs {
		d := make(map[string]any, len(details))
		for k, v := range details {
			d[k] = v
		}
		// Each environment's history on its own clock: the sandbox's
		// activity (clock moves, decisions, logins) in one time order.
		h := HistoryEntry{EventType: eventType, ActorType: ActorOperator, Details: d, Internal: true, AtUtc: At(t.nowIn(env))}
		if err := t.appendHistory(env, consoleSubject, h); err != nil {
			return err
		}
	}
	return nil
}

// ConsolePasswordSet reports whether an operator can log in: an account
// exists (or the single password of earlier versions, not yet migrated).
func (s *Store) ConsolePasswordSet() (bool, error) {
	var set bool
	err := s.view(func(t *txn) error {
		b := t.consoleRead()
		if b == nil {
			return nil
		}
		k, _ := b.Cursor().Seek([]byte(consoleUserPrefix))
		set = b.Get([]byte(consoleKeyPassword)) != nil || k != nil && bytes.HasPrefix(k, []byte(consoleUserPrefix))
		return nil
	})
	return set, err
}

// IsAdmin reports whether the session's operator has the admin role.
func (cs ConsoleSession) IsAdmin() bool { return cs.Role == ConsoleAdmin }

// ConsoleLogin checks the password of the operator name for a login from
// client (the client's address) and opens a session in the sandbox
// environment. An unknown name is a wrong password (a hash is compared all
// the same, so the answer's time does not tell names apart). Every
// failed attempt counts towards ConsoleLoginLimit per ConsoleLoginWindow
// per client, whichever name it tried, and a login that succeeds does not
// clear the others; each login and failed login is an internal history
// event.
// Returns ERATELIMIT with RetryAfter past the limit, ECONFLICT
// console_password_not_set before any account exists, and EUNAUTHORIZED
// for a wrong name or password.
func (s *Store) ConsoleLogin(name, password, client string) (ConsoleSession, error) {
	var hash []byte
	var anyAccount bool
	var role string
	var attempt Time // this attempt's entry in the client's window
	err := s.update(func(t *txn) error {
		hash, anyAccount = nil, false
		b, err := t.consoleUsersWrite()
		if err != nil {
			return err
		}
		cutoff := t.now.Add(-ConsoleLoginWindow)
		if err := sweepConsoleAttempts(b, cutoff); err != nil {
			return err
		}
		key := []byte(consoleAttemptPrefix + client)
		var times []Time
		if v := b.Get(key); v != nil {
			if err := json.Unmarshal(v, &times); err != nil {
				return err
			}
		}
		kept := times[:0]
		for _, at := range times {
			if at.After(cutoff) {
				kept = append(kept, at)
			}
		}
		if len(kept) >= ConsoleLoginLimit {
			e := Errorf(ERATELIMIT, "too_many_login_attempts", "too many login attempts; try again in a minute")
			e.RetryAfter = kept[0].Add(ConsoleLoginWindow).Sub(t.now)
			return e
		}
		attempt = At(t.now)
		v, err := json.Marshal(append(kept, attempt))
		if err != nil {
			return err
		}
		if err := b.Put(key, v); err != nil {
			return err
		}
		k, _ := b.Cursor().Seek([]byte(consoleUserPrefix))
		anyAccount = k != nil && bytes.HasPrefix(k, []byte(consoleUserPrefix))
		u, err := getConsoleUser(b, name)
		if err != nil {
			return err
		}
		if u != nil {
			hash = u.Hash
			role = u.Role
		}
		return nil
	})
	if err != nil {
		return ConsoleSession{}, err
	}
	if !anyAccount {
		return ConsoleSession{}, Conflict("console_password_not_set", "no console operator exists; run `complybox console set-password` or `complybox console user add NAME`")
	}
	ok := hash != nil && bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil
	if hash == nil {
		// About the same work as comparing with a known name's hash.
		_, _ = bcrypt.GenerateFromPassword([]byte(password), s.pwCost)
	}
	var out ConsoleSession
	err = s.update(func(t *txn) error {
		if !ok {
			// The name only when an operator has it: anything else is
			// anyone's input, of any length (history is never pruned),
			// and often a password typed into the wrong box.
			details := map[string]any{"client": client, "name": name}
			if hash == nil {
				details = map[string]any{"client": client, "unknownName": true}
			}
			return t.consoleEvent(Envs(), "console.login_failed", details)
		}
		b, err := t.consoleWrite()
		if err != nil {
			return err
		}
		if err := sweepConsoleSessions(b, t.now); err != nil {
			return err
		}
		out = ConsoleSession{ID: randomToken(consoleSessionIDLen), Operator: name, Role: role, CSRF: randomToken(consoleCSRFLen), Env: Sandbox,
			Client: client, CreatedAt: At(t.now), ExpiresAt: At(t.now.Add(ConsoleSessionTTL))}
		v, err := json.Marshal(out)
		if err != nil {
			return err
		}
		if err := b.Put(consoleSessionKey(out.ID), v); err != nil {
			return err
		}
		// Only failed attempts hold an operator back: the right password
		// takes this attempt out of the client's window, and no other (a
		// reviewer's login must not wipe the failed guesses at an admin's
		// password from the same address).
		if err := dropConsoleAttempt(b, client, attempt); err != nil {
			return err
		}
		return t.consoleEvent(Envs(), "console.login", map[string]any{"client": client, "operator": name})
	})
	if err != nil {
		return ConsoleSession{}, err
	}
	if !ok {
		return ConsoleSession{}, Errorf(EUNAUTHORIZED, "wrong_password", "the password is not correct")
	}
	return out, nil
}

// sweepConsoleSessions removes a bounded number of expired sessions.
func sweepConsoleSessions(b *bolt.Bucket, now time.Time) error {
	var expired [][]byte
	c := b.Cursor()
	prefix := []byte(consoleSessionPrefix)
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(expired) < consoleSessionSweep; k, v = c.Next() {
		var cs ConsoleSession
		if err := json.Unmarshal(v, &cs); err != nil || !cs.ExpiresAt.After(now) {
			expired = append(expired, append([]byte(nil), k...))
		}
	}
	for _, k := range expired {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// dropConsoleAttempt removes the attempt at from client's window.
func dropConsoleAttempt(b *bolt.Bucket, client string, at Time) error {
	key := []byte(consoleAttemptPrefix + client)
	var times []Time
	if v := b.Get(key); v != nil {
		if err := json.Unmarshal(v, &times); err != nil {
			return err
		}
	}
	for i := len(times) - 1; i >= 0; i-- {
		if times[i].Equal(at.Time) {
			times = append(times[:i], times[i+1:]...)
			break
		}
	}
	if len(times) == 0 {
		return b.Delete(key)
	}
	v, err := json.Marshal(times)
	if err != nil {
		return err
	}
	return b.Put(key, v)
}

// sweepConsoleAttempts removes a bounded number of attempt windows whose
// newest attempt is before cutoff, so addresses that stopped trying leave
// nothing behind.
func sweepConsoleAttempts(b *bolt.Bucket, cutoff time.Time) error {
	var stale [][]byte
	c := b.Cursor()
	prefix := []byte(consoleAttemptPrefix)
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(stale) < consoleSessionSweep; k, v = c.Next() {
		var times []Time
		if err := json.Unmarshal(v, &times); err != nil || len(times) == 0 || !times[len(times)-1].After(cutoff) {
			stale = append(stale, append([]byte(nil), k...))
		}
	}
	for _, k := range stale {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// consoleSession reads the live session id.
func (t *txn) consoleSession(id string) (ConsoleSession, error) {
	var cs ConsoleSession
	b := t.consoleRead()
	if id == "" || b == nil {
		return cs, Errorf(EUNAUTHORIZED, "not_logged_in", "log in to the console first")
	}
	v := b.Get(consoleSessionKey(id))
	if v == nil {
		return cs, Errorf(EUNAUTHORIZED, "not_logged_in", "log in to the console first")
	}
	if err := json.Unmarshal(v, &cs); err != nil {
		return cs, err
	}
	if !cs.ExpiresAt.After(t.now) {
		return cs, Errorf(EUNAUTHORIZED, "session_expired", "the console session expired; log in again")
	}
	// A session of the single password of earlier versions names no
	// operator; a removed operator's sessions are deleted with it.
	u, err := getConsoleUser(b, cs.Operator)
	if err != nil {
		return cs, err
	}
	if cs.Operator == "" || u == nil {
		return cs, Errorf(EUNAUTHORIZED, "session_expired", "the console session ended; log in again")
	}
	cs.ID, cs.Role = id, u.Role
	return cs, nil
}

// ConsoleSessionByID returns the live session whose cookie value is id.
// Returns EUNAUTHORIZED for an unknown or expired session.
func (s *Store) ConsoleSessionByID(id string) (ConsoleSession, error) {
	var out ConsoleSession
	err := s.view(func(t *txn) error {
		var err error
		out, err = t.consoleSession(id)
		return err
	})
	return out, err
}

// CheckCSRF reports whether token is the session's CSRF token, in constant
// time.
func (cs ConsoleSession) CheckCSRF(token string) bool {
	return cs.CSRF != "" && subtle.ConstantTimeCompare([]byte(cs.CSRF), []byte(token)) == 1
}

// SetConsoleEnv switches the environment a console session shows. Returns
// EINVALID for an unknown environment and EUNAUTHORIZED for a dead session.
func (s *Store) SetConsoleEnv(id string, env Env) (ConsoleSession, error) {
	if !env.Valid() {
		return ConsoleSession{}, Invalid("env", "env must be sandbox or production")
	}
	var out ConsoleSession
	err := s.update(func(t *txn) error {
		cs, err := t.consoleSession(id)
		if err != nil {
			return err
		}
		cs.Env = env
		v, err := json.Marshal(cs)
		if err != nil {
			return err
		}
		b, err := t.consoleWrite()
		if err != nil {
			return err
		}
		out = cs
		return b.Put(consoleSessionKey(id), v)
	})
	return out, err
}

// ConsoleLogout ends a console session; an unknown one is already ended.
func (s *Store) ConsoleLogout(id string) error {
	return s.update(func(t *txn) error {
		cs, err := t.consoleSession(id)
		if err != nil {
			return nil
		}
		b, err := t.consoleWrite()
		if err != nil {
			return err
		}
		if err := b.Delete(consoleSessionKey(id)); err != nil {
			return err
		}
		return t.consoleEvent(Envs(), "console.logout", map[string]any{"client": cs.Client, "operator": cs.Operator})
	})
}
