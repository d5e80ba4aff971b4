package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/complybox/complybox/store/urlpolicy"
)

// WebhookConfig is the custody side's outbound webhook configuration.
type WebhookConfig struct {
	URL        string   `json:"url"`
	Secret     string   `json:"secret"`
	Subscribed []string `json:"subscribed"` // nil: every type
	UpdatedAt  Time     `json:"updatedAt"`
}

// WebhookView is the configuration as the API shows it.
type WebhookView struct {
	URL                  *string  `json:"url"`
	SigningSecret        *string  `json:"signingSecret"`
	SubscribedEventTypes []string `json:"subscribedEventTypes"`
	IsConfigured         bool     `json:"isConfigured"`
}

// EventType describes one type of the event catalog.
type EventType struct {
	Name        string `json:"name"`
	EntityType  string `json:"entityType"`
	Description string `json:"description"`
}

// CustodyCatalog lists the custody event types.
func CustodyCatalog() []EventType {
	return []EventType{
		{"transaction.created", "transaction", "A transaction was created: a deposit was detected, or a withdrawal or internal transfer was submitted. Status is always Submitted."},
		{"transaction.status.updated", "transaction", "A transaction changed status; data carries status and previousStatus."},
		{"wallet.created", "wallet", "A wallet was provisioned for a vault; data carries its deposit address."},
		{"balance.updated", "balance", "A wallet's total or available balance changed; re-read it with GET /wallets/{id}/balance."},
	}
}

// KYCCatalog lists the applicant event types sent to the KYC callback.
func KYCCatalog() []EventType {
	return []EventType{
		{"applicantCreated", "applicant", "An applicant was created."},
		{"applicantPending", "applicant", "An applicant was submitted for review, or a company's closed verdict was reopened until its new beneficial owners are verified."},
		{"applicantOnHold", "applicant", "A review waits for an operator decision."},
		{"applicantReviewed", "applicant", "A verdict was reached; data carries reviewResult."},
		{"applicantPersonalInfoChanged", "applicant", "Applicant or company data changed."},
		{"applicantLevelChanged", "applicant", "The applicant was moved to another level."},
		{"applicantReset", "applicant", "The applicant's steps and review were reset."},
		{"applicantDeactivated", "applicant", "The applicant was deactivated."},
		{"applicantActivated", "applicant", "The applicant was activated again."},
	}
}

// KnownEventType reports whether name is a type some delivery can carry:
// a custody or applicant event, or webhook.test.
func KnownEventType(name string) bool {
	return name == "webhook.test" || inCatalog(CustodyCatalog(), name) || inCatalog(KYCCatalog(), name)
}

func inCatalog(cat []EventType, name string) bool {
	for _, e := range cat {
		if e.Name == name {
			return true
		}
	}
	return false
}

var settingCustodyWebhook = []byte("custody_webhook")

func (t *txn) webhookConfig(env Env) (WebhookConfig, error) {
	b := t.env(env, "settings").Get(settingCustodyWebhook)
	if b == nil {
		return WebhookConfig{}, nil
	}
	slot := t.s.webhooks.of(env)
	if e := slot.Load(); e != nil && bytes.Equal(e.raw, b) {
		return e.cfg, nil
	}
	var c WebhookConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return WebhookConfig{}, err
	}
	slot.Store(&decodedWebhook{raw: bytes.Clone(b), cfg: c})
	return c, nil
}

// webhookCache keeps each environment's custody webhook configuration
// decoded, with the bytes it was decoded from: the dispatcher reads it for
// every attempt and every event, and it changes only when a partner sets
// it. A reader whose transaction sees other bytes decodes them, so the
// cache never answers for a configuration the transaction does not see.
type webhookCache struct {
	sandbox, production atomic.Pointer[decodedWebhook]
}

type decodedWebhook struct {
	raw []byte
	cfg WebhookConfig // its Subscribed is shared: read it, never change it
}

func (c *webhookCache) of(env Env) *atomic.Pointer[decodedWebhook] {
	if env == Sandbox {
		return &c.sandbox
	}
	return &c.production
}

// newSigningSecret returns 32 random bytes in standard padded base64.
func newSigningSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// WebhookConfig returns the custody webhook configuration; the secret is
// never shown.
func (s *Store) WebhookConfig(env Env) (WebhookView, error) {
	var v WebhookView
	err := s.viewIn(env, func(t *txn) error {
		c, err := t.webhookConfig(env)
		if err != nil || c.URL == "" {
			return err
		}
		u := c.URL
		v = WebhookView{URL: &u, SubscribedEventTypes: c.Subscribed, IsConfigured: c.Secret != ""}
		return nil
	})
	return v, err
}

// SetWebhook sets the custody webhook URL and subscription. A new secret is
// generated, and returned, on the first configuration and on a URL change.
// Returns EINVALID for a bad or disallowed URL or an unknown event type.
func (s *Store) SetWebhook(ctx context.Context, env Env, rawURL string, subscribed []string) (WebhookView, error) {
	if err := s.CheckWebhookURL(ctx, "url", rawURL); err != nil {
		return WebhookView{}, err
	}
	var types []string // nil (every type) stays nil; duplicates are dropped
	if subscribed != nil {
		types = []string{}
	}
	for i, name := range subscribed {
		if !inCatalog(CustodyCatalog(), name) {
			return WebhookView{}, Invalid("subscribedEventTypes["+itoa(i)+"]", "unknown event type %q", name)
		}
		if !inList(types, name) {
			types = append(types, name)
		}
	}
	subscribed = types
	var v WebhookView
	err := s.updateIn(env, func(t *txn) error {
		c, err := t.webhookConfig(env)
		if err != nil {
			return err
		}
		v = WebhookView{}
		if !sameURL(c.URL, rawURL) || c.Secret == "" {
			c.Secret = newSigningSecret()
			secret := c.Secret
			v.SigningSecret = &secret
		}
		c.URL, c.Subscribed, c.UpdatedAt = rawURL, subscribed, At(t.now)
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		u := c.URL
		v.URL, v.SubscribedEventTypes, v.IsConfigured = &u, c.Subscribed, true
		if err := t.appendInternal(env, "webhook:custody", "webhook.configured", map[string]any{"url": c.URL, "secretRotated": v.SigningSecret != nil}); err != nil {
			return err
		}
		return t.env(env, "settings").Put(settingCustodyWebhook, b)
	})
	return v, err
}

// sameURL reports whether a and b name the same receiver, so that
// re-sending it keeps the signing secret (seed 001 §4): the scheme and the
// host compare without case (RFC 3986 §6.2.2.1), the rest as sent.
func sameURL(a, b string) bool {
	fold := func(s string) string {
		u, err := url.Parse(s)
		if err != nil {
			return s
		}
		u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
		return u.String()
	}
	return a == b || fold(a) == fold(b)
}

// URLPolicy returns the webhook URL policy of the settings in force; the
// dispatcher applies it to every address it connects to.
func (s *Store) URLPolicy() urlpolicy.Policy {
	return urlpolicy.Policy{AllowHTTP: s.settings.AllowHTTP, AllowPrivateNetworks: s.settings.AllowPrivateNetworks}
}

// CheckWebhookURL applies the URL policy: http(s) only, http only as
// allow_http says, loopback only unless allow_http is never, private networks
// only when allowed. Returns EINVALID naming field.
func (s *Store) CheckWebhookURL(ctx context.Context, field, raw string) error {
	return fieldError(s.URLPolicy().Check(ctx, field, raw))
}

// Callback is the KYC callback destination, shared by both environments.
type Callback struct {
	URL    string `json:"url"`
	Secret string `json:"secret"`
}

var metaCallback = []byte("kyc_callback")

// callback returns the KYC callback, decoded once per stored version as
// the custody webhook is (webhookConfig): every KYC event reads it.
func (t *txn) callback() (Callback, error) {
	var c Callback
	b := t.Bucket(bucketMeta).Get(metaCallback)
	if b == nil {
		return c, nil
	}
	if e := t.s.callbacks.Load(); e != nil && bytes.Equal(e.raw, b) {
		return e.cb, nil
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return Callback{}, err
	}
	t.s.callbacks.Store(&decodedCallback{raw: bytes.Clone(b), cb: c})
	return c, nil
}

type decodedCallback struct {
	raw []byte
	cb  Callback
}

// CallbackConfigured reports which of the KYC callback's URL and secret
// the configuration sets: InitCallback applies them at every start, over
// what the console saved.
func (s *Store) CallbackConfigured() (url, secret bool) {
	return s.settings.KYC.CallbackURL != "", s.settings.KYC.CallbackSecret != ""
}

// InitCallback applies the configured KYC callback URL and secret. With no
// configured secret it keeps the stored one, or generates, stores and
// returns one (the caller prints it once).
func (s *Store) InitCallback() (generated string, err error) {
	err = s.update(func(t *txn) error {
		generated = ""
		c, err := t.callback()
		if err != nil {
			return err
		}
		if s.settings.KYC.CallbackURL != "" {
			c.URL = s.settings.KYC.CallbackURL
		}
		switch {
		case s.settings.KYC.CallbackSecret != "":
			c.Secret = s.settings.KYC.CallbackSecret
		case c.Secret == "":
			c.Secret = newSigningSecret()
			generated = c.Secret
		}
		return t.putCallback(c)
	})
	return generated, err
}

// DiscardCallbackSecret clears the KYC callback's signing secret if it is
// still secret: one InitCallback generated but that could not be printed,
// so no receiver has it. The next InitCallback generates and returns
// another.
func (s *Store) DiscardCallbackSecret(secret string) error {
	return s.update(func(t *txn) error {
		c, err := t.callback()
		if err != nil || c.Secret != secret {
			return err
		}
		c.Secret = ""
		return t.putCallback(c)
	})
}

func (t *txn) putCallback(c Callback) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return t.Bucket(bucketMeta).Put(metaCallback, b)
}

// SetCallbackURL changes the KYC callback URL (console settings). Returns
// EINVALID for a URL the policy refuses.
func (s *Store) SetCallbackURL(ctx context.Context, raw string) error {
	if raw != "" {
		if err := s.CheckWebhookURL(ctx, "callbackUrl", raw); err != nil {
			return err
		}
	}
	return s.update(func(t *txn) error {
		c, err := t.callback()
		if err != nil {
			return err
		}
		c.URL = raw
		return t.putCallback(c)
	})
}

// CallbackURL returns the KYC callback URL, "" when none.
func (s *Store) CallbackURL() (string, error) {
	var u string
	err := s.view(func(t *txn) error {
		c, err := t.callback()
		u = c.URL
		return err
	})
	return u, err
}

func itoa(i int) string { return strconv.Itoa(i) }
