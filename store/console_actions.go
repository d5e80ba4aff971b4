package store

import (
	"encoding/json"
	"strings"

	"github.com/complybox/complybox/store/imagecheck"
)

// What the console reads and does beyond the partner API: its activity
// log, the parent of a spawned applicant, document images, and rotating
// the signing secrets of both webhook destinations.

// RecordConsoleAction records an operator's console action as an internal
// history event of env (never shown to partners).
func (s *Store) RecordConsoleAction(env Env, eventType string, details map[string]any) error {
	return s.updateIn(env, func(t *txn) error {
		return t.consoleEvent([]Env{env}, eventType, details)
	})
}

// ConsoleActivity returns the console's internal events of env, newest
// first, at most 200.
func (s *Store) ConsoleActivity(env Env) ([]HistoryEntry, error) {
	var out []HistoryEntry
	err := s.viewIn(env, func(t *txn) error {
		var err error
		out, err = t.history(env, consoleSubject)
		if len(out) > consoleHistoryLimit {
			out = out[:consoleHistoryLimit]
		}
		return err
	})
	return out, err
}

// ReviewStatuses lists the applicant review statuses, for filters.
func ReviewStatuses() []string { return reviewStatuses() }

// matches reports whether the lower-case query occurs in the applicant's
// externalUserId, names, email or registration number, or is its id (the
// applicantId every applicantReviewed carries).
func (a *diskApplicant) matches(query string) bool {
	if strings.Contains(strings.ToLower(a.ExternalID), query) || strings.ToLower(a.ID) == query {
		return true
	}
	for _, f := range []string{"firstName", "middleName", "lastName", "companyName", "email", "registrationNumber"} {
		if strings.Contains(strings.ToLower(a.Fields[f]), query) {
			return true
		}
	}
	full := strings.ToLower(a.Fields["firstName"] + " " + a.Fields["lastName"])
	return strings.Contains(full, query)
}

// ApplicantParent returns the externalUserId of the company whose
// beneficial-owner row spawned the applicant, "" for any other applicant.
// Returns ENOTFOUND.
func (s *Store) ApplicantParent(env Env, extID string) (string, error) {
	var out string
	err := s.viewIn(env, func(t *txn) error {
		a, err := t.getApplicant(env, extID)
		if err != nil {
			return err
		}
		out = a.parentExternalID()
		return nil
	})
	return out, err
}

// ApplicantImage returns the bytes of one of the applicant's documents by
// its sha256. Returns ENOTFOUND when the applicant has no such document.
func (s *Store) ApplicantImage(env Env, extID, sha string) (imagecheck.Image, error) {
	var out imagecheck.Image
	err := s.viewIn(env, func(t *txn) error {
		a, err := t.getApplicant(env, extID)
		if err != nil {
			return err
		}
		for _, d := range a.Documents {
			if d.SHA256 != sha {
				continue
			}
			data := t.env(env, "images").Get([]byte(sha))
			if data == nil {
				break
			}
			out = imagecheck.Image{Data: append([]byte(nil), data...), ContentType: d.ContentType, SHA256: sha}
			return nil
		}
		return NotFound("document", sha)
	})
	return out, err
}

// RotateWebhookSecret gives the custody webhook a new signing secret for
// the same URL and returns it (shown once). Returns ECONFLICT
// webhook_not_configured without a URL.
func (s *Store) RotateWebhookSecret(env Env) (string, error) {
	var secret string
	err := s.updateIn(env, func(t *txn) error {
		c, err := t.webhookConfig(env)
		if err != nil {
			return err
		}
		if c.URL == "" {
			return Conflict("webhook_not_configured", "no webhook URL is configured")
		}
		c.Secret, c.UpdatedAt = newSigningSecret(), At(t.now)
		secret = c.Secret
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		if err := t.appendInternal(env, "webhook:custody", "webhook.secret_rotated", map[string]any{"url": c.URL}); err != nil {
			return err
		}
		return t.env(env, "settings").Put(settingCustodyWebhook, b)
	})
	return secret, err
}

// RotateCallbackSecret gives the KYC callback a new signing secret and
// returns it (shown once). ECONFLICT when the configuration sets
// callback_secret: that would replace the new one again at the next start,
// and the receiver that took it would refuse every event from then on.
func (s *Store) RotateCallbackSecret() (string, error) {
	if s.settings.KYC.CallbackSecret != "" {
		return "", Errorf(ECONFLICT, "callback_secret_configured",
			"the configuration sets kyc.callback_secret, which replaces a rotated secret at every start: change the secret there (and restart)")
	}
	var secret string
	err := s.update(func(t *txn) error {
		c, err := t.callback()
		if err != nil {
			return err
		}
		c.Secret = newSigningSecret()
		secret = c.Secret
		for _, env := range Envs() {
			if err := t.appendInternal(env, "webhook:kyc", "callback.secret_rotated", map[string]any{"url": c.URL}); err != nil {
				return err
			}
		}
		return t.putCallback(c)
	})
	return secret, err
}
