package store

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Vault is a vault account: the container of a partner customer's wallets.
type Vault struct {
	VaultID string `json:"vaultId"`
	Name    string `json:"name"`
	// ExternalID is the partner's reference, "" when none was given: the
	// seed types vaultExternalId as a string, never null.
	ExternalID string `json:"externalId"`
	CreatedAt  Time   `json:"createdAt"`
}

type diskVault struct {
	Vault
	Seq uint64 `json:"seq"`
}

// VaultInput is the body of POST /vaults.
type VaultInput struct {
	Name       *string `json:"name"`
	ExternalID *string `json:"externalId"`
}

func (in VaultInput) validate() error {
	if in.Name == nil || *in.Name == "" {
		return Invalid("name", "name is required")
	}
	if strings.TrimSpace(*in.Name) == "" {
		return Invalid("name", "name must not be blank")
	}
	if err := checkText("name", *in.Name, 200); err != nil {
		return err
	}
	if in.ExternalID != nil {
		if *in.ExternalID == "" {
			return Invalid("externalId", "externalId must not be empty; omit it or give a value")
		}
		return checkText("externalId", *in.ExternalID, 200)
	}
	return nil
}

// checkText rejects strings longer than max characters or with control
// characters.
func checkText(field, s string, max int) error {
	if utf8.RuneCountInString(s) > max {
		return Invalid(field, "%s is longer than %d characters", field, max)
	}
	return checkControl(field, s, false)
}

func (t *txn) vault(env Env, id string) (diskVault, error) {
	var v diskVault
	b := t.env(env, "vaults").Get([]byte(id))
	if b == nil {
		return v, NotFound("vault", id)
	}
	return v, t.s.vaults.decode(b, &v)
}

func (t *txn) putVault(env Env, v diskVault) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return t.env(env, "vaults").Put([]byte(v.VaultID), b)
}

// CreateVault creates a vault. With an Idempotency-Key seen before with the
// same body it returns the first vault. Returns EINVALID for a bad body and
// EIDEMPOTENCY for a key reused with another body.
func (s *Store) CreateVault(env Env, in VaultInput, idem Idem) (Vault, error) {
	if err := in.validate(); err != nil {
		return Vault{}, err
	}
	var out Vault
	err := s.updateIn(env, func(t *txn) error {
		if ok, err := t.replay(env, "POST /vaults", idem, &out); ok || err != nil {
			return err
		}
		v := diskVault{Vault: Vault{VaultID: newID(), Name: *in.Name, CreatedAt: At(t.now)}}
		if in.ExternalID != nil {
			v.ExternalID = *in.ExternalID
		}
		var err error
		if v.Seq, err = index(t.env(env, "vaults_idx"), v.VaultID); err != nil {
			return err
		}
		if err := t.putVault(env, v); err != nil {
			return err
		}
		out = v.Vault
		return t.remember(env, "POST /vaults", idem, out)
	})
	return out, err
}

// Vault returns a vault. Returns ENOTFOUND vault_not_found for an unknown id.
func (s *Store) Vault(env Env, id string) (Vault, error) {
	var out Vault
	err := s.viewIn(env, func(t *txn) error {
		v, err := t.vault(env, id)
		out = v.Vault
		return err
	})
	return out, err
}

// Vaults lists vaults newest first. Returns EINVALID for a bad cursor.
func (s *Store) Vaults(env Env, p Page) ([]Vault, *string, error) {
	out := []Vault{}
	var next *string
	err := s.viewIn(env, func(t *txn) error {
		var err error
		next, err = scanIndex(t.env(env, "vaults_idx"), cursorKind{listVaults, env}, p, func(id []byte) (bool, error) {
			v, err := t.vault(env, string(id))
			if err != nil {
				return false, err
			}
			out = append(out, v.Vault)
			return true, nil
		})
		return err
	})
	return out, next, err
}
