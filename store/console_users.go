package store

import (
	"bytes"
	"encoding/json"
	"regexp"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"
)

// Operators of the console are named accounts, each with a role. They live
// in the console bucket beside the sessions:
//
//	user:<name> -> diskConsoleUser (bcrypt hash, role, times)
//
// The single operator password of earlier versions (key "password")
// becomes the account ConsoleFirstAdmin with the admin role, the same
// hash, at the first console write after the upgrade (a login, an account
// command); sessions opened before that name no operator and end.

// Console roles.
const (
	ConsoleReviewer   = "reviewer" // decisions, delivery retries, everything read-only
	ConsoleAdmin      = "admin"    // also settings, credentials, levels and operator accounts
	ConsoleFirstAdmin = "admin"    // the account the single password of earlier versions becomes
	// ConsoleCLIActor names the command line as the actor of account
	// changes made with `complybox console …` (no account can be named so).
	ConsoleCLIActor   = "(command line)"
	consoleUserPrefix = "user:"
)

var consoleUserName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// ConsoleUser is an operator account as listed (never its hash).
type ConsoleUser struct {
	Name      string `json:"name"`
	Role      string `json:"role"`
	CreatedAt Time   `json:"createdAt"`
	UpdatedAt Time   `json:"updatedAt"`
}

type diskConsoleUser struct {
	ConsoleUser
	Hash []byte `json:"hash"`
}

// ValidConsoleRole reports whether role is reviewer or admin.
func ValidConsoleRole(role string) bool { return role == ConsoleReviewer || role == ConsoleAdmin }

func checkConsoleUserName(name string) error {
	if !consoleUserName.MatchString(name) {
		return Invalid("name", "an operator name is 1 to 64 lower-case letters, digits, dots, dashes or underscores, starting with a letter or digit")
	}
	return nil
}

func checkConsolePassword(password string) error {
	if len([]rune(password)) < ConsolePasswordMin {
		return Invalid("password", "the console password must have at least %d characters", ConsolePasswordMin)
	}
	if len(password) > ConsolePasswordMax {
		return Invalid("password", "the console password must be at most %d bytes", ConsolePasswordMax)
	}
	return nil
}

func consoleUserKey(name string) []byte { return []byte(consoleUserPrefix + name) }

// getConsoleUser reads an account from b (nil: none).
func getConsoleUser(b *bolt.Bucket, name string) (*diskConsoleUser, error) {
	if b == nil {
		return nil, nil
	}
	v := b.Get(consoleUserKey(name))
	if v == nil {
		return nil, nil
	}
	var u diskConsoleUser
	if err := json.Unmarshal(v, &u); err != nil {
		return nil, err
	}
	return &u, nil
}

func putConsoleUser(b *bolt.Bucket, u *diskConsoleUser) error {
	v, err := json.Marshal(u)
	if err != nil {
		return err
	}
	return b.Put(consoleUserKey(u.Name), v)
}

// migrateConsolePassword turns the single password of earlier versions
// into the account ConsoleFirstAdmin, once.
func (t *txn) migrateConsolePassword(b *bolt.Bucket) error {
	hash := b.Get([]byte(consoleKeyPassword))
	if hash == nil {
		return nil
	}
	hash = append([]byte(nil), hash...)
	if err := b.Delete([]byte(consoleKeyPassword)); err != nil {
		return err
	}
	if u, err := getConsoleUser(b, ConsoleFirstAdmin); err != nil || u != nil {
		return err
	}
	u := &diskConsoleUser{ConsoleUser: ConsoleUser{Name: ConsoleFirstAdmin, Role: ConsoleAdmin, CreatedAt: At(t.now), UpdatedAt: At(t.now)}, Hash: hash}
	if err := putConsoleUser(b, u); err != nil {
		return err
	}
	return t.consoleEvent(Envs(), "console.password_migrated", map[string]any{"name": ConsoleFirstAdmin, "role": ConsoleAdmin})
}

// consoleUsersWrite returns the console bucket with the old password
// migrated.
func (t *txn) consoleUsersWrite() (*bolt.Bucket, error) {
	b, err := t.consoleWrite()
	if err != nil {
		return nil, err
	}
	return b, t.migrateConsolePassword(b)
}

// endConsoleSessions deletes the sessions of the operator name ("" for
// every session) and returns how many.
func endConsoleSessions(b *bolt.Bucket, name string) (int, error) {
	var keys [][]byte
	c := b.Cursor()
	prefix := []byte(consoleSessionPrefix)
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var cs ConsoleSession
		if name != "" && json.Unmarshal(v, &cs) == nil && cs.Operator != name {
			continue
		}
		keys = append(keys, append([]byte(nil), k...))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}

// consoleAdmins counts the accounts with the admin role.
func consoleAdmins(b *bolt.Bucket) (int, error) {
	n := 0
	c := b.Cursor()
	prefix := []byte(consoleUserPrefix)
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var u diskConsoleUser
		if err := json.Unmarshal(v, &u); err != nil {
			return 0, err
		}
		if u.Role == ConsoleAdmin {
			n++
		}
	}
	return n, nil
}

// AddConsoleUser creates the operator account name with role and
// password; actor is who did it (an operator's name, or ConsoleCLIActor).
// Returns EINVALID naming the field and ECONFLICT operator_exists.
func (s *Store) AddConsoleUser(name, role, password, actor string) (ConsoleUser, error) {
	if err := checkConsoleUserName(name); err != nil {
		return ConsoleUser{}, err
	}
	if !ValidConsoleRole(role) {
		return ConsoleUser{}, Invalid("role", "role must be reviewer or admin")
	}
	if err := checkConsolePassword(password); err != nil {
		return ConsoleUser{}, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.pwCost)
	if err != nil {
		return ConsoleUser{}, err
	}
	var out ConsoleUser
	err = s.update(func(t *txn) error {
		b, err := t.consoleUsersWrite()
		if err != nil {
			return err
		}
		if u, err := getConsoleUser(b, name); err != nil {
			return err
		} else if u != nil {
			return Conflict("operator_exists", "an operator named %q exists already", name)
		}
		u := &diskConsoleUser{ConsoleUser: ConsoleUser{Name: name, Role: role, CreatedAt: At(t.now), UpdatedAt: At(t.now)}, Hash: hash}
		if err := putConsoleUser(b, u); err != nil {
			return err
		}
		out = u.ConsoleUser
		return t.consoleEvent(Envs(), "console.operator_added", map[string]any{"name": name, "role": role, "operator": actor})
	})
	return out, err
}

// SetConsoleUserPassword sets the password of the operator name and ends
// that operator's sessions. Returns EINVALID and ENOTFOUND.
func (s *Store) SetConsoleUserPassword(name, password, actor string) error {
	return s.setConsolePassword(name, password, actor, false)
}

// SetConsolePassword sets the password of the first admin
// (ConsoleFirstAdmin), creating the account with the admin role when it
// does not exist, and ends its sessions: `complybox console set-password`.
// Returns EINVALID for a password shorter than 8 characters or longer
// than 72 bytes.
func (s *Store) SetConsolePassword(password string) error {
	return s.setConsolePassword(ConsoleFirstAdmin, password, ConsoleCLIActor, true)
}

// setConsolePassword sets the password of operator name, creating it as an
// admin when create is set and it does not exist, and ends its sessions.
func (s *Store) setConsolePassword(name, password, actor string, create bool) error {
	if err := checkConsolePassword(password); err != nil {
		return err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.pwCost)
	if err != nil {
		return err
	}
	return s.update(func(t *txn) error {
		b, err := t.consoleUsersWrite()
		if err != nil {
			return err
		}
		u, err := getConsoleUser(b, name)
		if err != nil {
			return err
		}
		switch {
		case u == nil && create:
			u = &diskConsoleUser{ConsoleUser: ConsoleUser{Name: name, Role: ConsoleAdmin, CreatedAt: At(t.now)}}
		case u == nil:
			return NotFound("operator", name)
		}
		u.Hash, u.UpdatedAt = hash, At(t.now)
		if err := putConsoleUser(b, u); err != nil {
			return err
		}
		n, err := endConsoleSessions(b, name)
		if err != nil {
			return err
		}
		return t.consoleEvent(Envs(), "console.password_set", map[string]any{"name": name, "sessionsEnded": n, "operator": actor})
	})
}

// SetConsoleUserRole gives the operator name another role. The last admin
// keeps the admin role. Returns EINVALID, ENOTFOUND and ECONFLICT
// last_admin.
func (s *Store) SetConsoleUserRole(name, role, actor string) (ConsoleUser, error) {
	if !ValidConsoleRole(role) {
		return ConsoleUser{}, Invalid("role", "role must be reviewer or admin")
	}
	var out ConsoleUser
	err := s.update(func(t *txn) error {
		b, err := t.consoleUsersWrite()
		if err != nil {
			return err
		}
		u, err := getConsoleUser(b, name)
		if err != nil {
			return err
		}
		if u == nil {
			return NotFound("operator", name)
		}
		if u.Role == role {
			out = u.ConsoleUser
			return nil
		}
		if u.Role == ConsoleAdmin {
			if n, err := consoleAdmins(b); err != nil {
				return err
			} else if n <= 1 {
				return Conflict("last_admin", "%q is the last admin; make another operator admin first", name)
			}
		}
		previous := u.Role
		u.Role, u.UpdatedAt = role, At(t.now)
		if err := putConsoleUser(b, u); err != nil {
			return err
		}
		out = u.ConsoleUser
		return t.consoleEvent(Envs(), "console.operator_role_changed", map[string]any{"name": name, "role": role, "previousRole": previous, "operator": actor})
	})
	return out, err
}

// RemoveConsoleUser deletes the operator name and ends its sessions. The
// last admin stays. Returns ENOTFOUND and ECONFLICT last_admin.
func (s *Store) RemoveConsoleUser(name, actor string) error {
	return s.update(func(t *txn) error {
		b, err := t.consoleUsersWrite()
		if err != nil {
			return err
		}
		u, err := getConsoleUser(b, name)
		if err != nil {
			return err
		}
		if u == nil {
			return NotFound("operator", name)
		}
		if u.Role == ConsoleAdmin {
			if n, err := consoleAdmins(b); err != nil {
				return err
			} else if n <= 1 {
				return Conflict("last_admin", "%q is the last admin; make another operator admin first", name)
			}
		}
		if err := b.Delete(consoleUserKey(name)); err != nil {
			return err
		}
		n, err := endConsoleSessions(b, name)
		if err != nil {
			return err
		}
		return t.consoleEvent(Envs(), "console.operator_removed", map[string]any{"name": name, "sessionsEnded": n, "operator": actor})
	})
}

// ConsoleUsers lists the operator accounts by name (the single password
// of earlier versions, not yet migrated, as ConsoleFirstAdmin).
func (s *Store) ConsoleUsers() ([]ConsoleUser, error) {
	out := []ConsoleUser{}
	err := s.view(func(t *txn) error {
		b := t.consoleRead()
		if b == nil {
			return nil
		}
		if b.Get([]byte(consoleKeyPassword)) != nil && b.Get(consoleUserKey(ConsoleFirstAdmin)) == nil {
			out = append(out, ConsoleUser{Name: ConsoleFirstAdmin, Role: ConsoleAdmin})
		}
		c := b.Cursor()
		prefix := []byte(consoleUserPrefix)
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			var u diskConsoleUser
			if err := json.Unmarshal(v, &u); err != nil {
				return err
			}
			out = append(out, u.ConsoleUser)
		}
		return nil
	})
	return out, err
}
