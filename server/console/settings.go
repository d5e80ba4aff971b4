package console

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/complybox/complybox/server/wire"
	"github.com/complybox/complybox/store"
)

// Console settings: custody webhook, KYC callback, secret rotation, levels,
// credentials.

// Settings serves GET /console/settings.
func (c *Console) Settings(w http.ResponseWriter, r *Request) error {
	return c.settingsPage(w, r, http.StatusOK, nil)
}

// settingsForm is a refused settings form, shown again with its error and
// what was typed.
type settingsForm struct {
	Section  string // "webhook" or "callback"
	Err, URL string
	Field    string   // the field the error names: the URL's, or subscribedEventTypes
	Types    []string // the event types ticked
}

// TypesRefused reports whether the error is about the event types.
func (f *settingsForm) TypesRefused() bool { return f.Field == "subscribedEventTypes" }

// refusedSettings returns err's settingsForm for a client error, nil for
// any other.
func refusedSettings(err error, section, url string, types []string) *settingsForm {
	e := store.AsError(err)
	if e.Code != store.EINVALID && e.Code != store.ECONFLICT {
		return nil
	}
	return &settingsForm{Section: section, Err: e.Message, Field: e.Field, URL: url, Types: types}
}

func (c *Console) settingsPage(w http.ResponseWriter, r *Request, status int, form *settingsForm) error {
	wh, err := c.store.WebhookConfig(r.env)
	if err != nil {
		return err
	}
	cb, err := c.store.CallbackURL()
	if err != nil {
		return err
	}
	var types []string
	for _, e := range store.CustodyCatalog() {
		types = append(types, e.Name)
	}
	subscribed := wh.SubscribedEventTypes
	if wh.URL != nil && subscribed == nil {
		subscribed = types // nil: every type
	}
	whURL, cbSaved := deref(wh.URL), cb
	allWhenNone := wh.URL == nil // no URL yet: every box ticked; [] ticks none
	switch {
	case form == nil:
	case form.Section == "webhook":
		whURL, subscribed, allWhenNone = form.URL, form.Types, false
	case form.Section == "callback":
		cb = form.URL
	}
	urlSet, secretSet := c.store.CallbackConfigured()
	return c.render(w, r, status, "settings", "Settings", "settings", map[string]any{
		"CallbackURLConfigured": urlSet, "CallbackSecretConfigured": secretSet,
		"Webhook": wh, "WebhookURL": whURL, "Catalog": store.CustodyCatalog(), "Subscribed": subscribed, "AllWhenNone": allWhenNone,
		"CallbackURL": cb, "CallbackSaved": cbSaved, "Form": form,
		"CustodyTypes": eventTypeNames(store.CustodyCatalog()), "KYCTypes": eventTypeNames(store.KYCCatalog())})
}

// secretShown ends a POST that made a signing secret: the page after it
// shows the secret once (showOnce).
func (c *Console) secretShown(w http.ResponseWriter, r *Request, title, what, secret string) error {
	return c.showOnce(w, r, shownSecret{title: title, what: what, secret: secret})
}

// shownSecret is a secret the console shows once after the POST that made
// it (a rotation, a new webhook URL, a new credential).
type shownSecret struct {
	title, what, secret string
	cred                store.Credential // a new credential's key, environment, role and name
	at                  time.Time
}

// shownSecrets keeps each session's secret between the POST that made it
// and the page it redirects to, in memory only: a credential's secret is
// never written to the db, and a restart in between loses it (rotate or
// create again). Entries older than shownFor are dropped.
type shownSecrets struct {
	mu sync.Mutex
	m  map[string]shownSecret // console session id → secret
}

// shownFor is how long a secret waits for its page.
const shownFor = 5 * time.Minute

func (ss *shownSecrets) put(session string, s shownSecret) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for id, old := range ss.m {
		if time.Since(old.at) > shownFor {
			delete(ss.m, id)
		}
	}
	s.at = time.Now()
	ss.m[session] = s
}

func (ss *shownSecrets) take(session string) (shownSecret, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.m[session]
	delete(ss.m, session)
	return s, ok && time.Since(s.at) <= shownFor
}

// showOnce ends a POST that made a secret: the secret waits for the
// operator's session and the browser is sent to the page that shows it
// (Shown), so that reloading that page repeats nothing.
func (c *Console) showOnce(w http.ResponseWriter, r *Request, s shownSecret) error {
	c.shown.put(r.sess.ID, s)
	http.Redirect(w, r.Request, "/console/shown", http.StatusSeeOther)
	return nil
}

// Shown serves GET /console/shown: the secret the last rotation, webhook
// URL or credential of this session made, once; later it says the secret
// was shown.
func (c *Console) Shown(w http.ResponseWriter, r *Request) error {
	s, ok := c.shown.take(r.sess.ID)
	switch {
	case !ok:
		return c.render(w, r, http.StatusOK, "secret", "Secret shown already", "settings", map[string]any{"Gone": true})
	case s.cred.Key != "":
		return c.render(w, r, http.StatusOK, "credential", s.title, "settings", map[string]any{"C": s.cred, "Secret": s.secret})
	}
	return c.render(w, r, http.StatusOK, "secret", s.title, "settings", map[string]any{"What": s.what, "Secret": s.secret})
}

// SetWebhook serves POST /console/settings/webhook: URL and subscription
// (none named: every type). A URL change generates a new secret, shown
// once.
func (c *Console) SetWebhook(w http.ResponseWriter, r *Request) error {
	raw := strings.TrimSpace(r.PostForm.Get("url"))
	types := r.PostForm["subscribedEventTypes"]
	if len(types) == 0 {
		// The page's form says it lists the boxes: none ticked is a
		// mistake. A script posting only the URL subscribes to every
		// type, as PUT /webhooks/outbound without subscribedEventTypes.
		// Unless the webhook is subscribed to nothing ([]), which the
		// page shows with no box ticked: saved as shown, it stays so.
		if r.PostForm.Get("subscription") == "" {
			types = nil
		} else if cur, err := c.store.WebhookConfig(r.env); err == nil && cur.SubscribedEventTypes != nil && len(cur.SubscribedEventTypes) == 0 {
			types = []string{}
		} else {
			return c.settingsPage(w, r, http.StatusBadRequest, &settingsForm{Section: "webhook", URL: raw, Field: "subscribedEventTypes", Err: "Choose at least one event type."})
		}
	}
	if everyCustodyType(types) {
		// Every box ticked, as the page shows a subscription to every
		// type: it stays that (null, also types added later), unless it
		// was a list.
		if cur, err := c.store.WebhookConfig(r.env); err == nil && cur.SubscribedEventTypes == nil {
			types = nil
		}
	}
	v, err := c.store.SetWebhook(r.Context(), r.env, raw, types)
	if form := refusedSettings(err, "webhook", raw, types); form != nil {
		return c.settingsPage(w, r, wire.Status(err), form)
	}
	if err != nil {
		return err
	}
	if err := c.record(r, r.env, "console.webhook_configured", map[string]any{"url": raw, "subscribedEventTypes": types}); err != nil {
		return err
	}
	if v.SigningSecret != nil {
		return c.secretShown(w, r, "Webhook signing secret", "custody webhook ("+raw+")", *v.SigningSecret)
	}
	return redirect(w, r, "/console/settings", "webhook")
}

// everyCustodyType reports whether types names every custody event type.
func everyCustodyType(types []string) bool {
	for _, e := range store.CustodyCatalog() {
		if !slices.Contains(types, e.Name) {
			return false
		}
	}
	return true
}

// RotateWebhook serves POST /console/settings/webhook/rotate.
func (c *Console) RotateWebhook(w http.ResponseWriter, r *Request) error {
	secret, err := c.store.RotateWebhookSecret(r.env)
	if err != nil {
		return err
	}
	if err := c.record(r, r.env, "console.webhook_secret_rotated", nil); err != nil {
		return err
	}
	return c.secretShown(w, r, "New webhook signing secret", "custody webhook", secret)
}

// SetCallback serves POST /console/settings/callback: the KYC callback URL
// (empty: none). It is shared by both environments.
func (c *Console) SetCallback(w http.ResponseWriter, r *Request) error {
	raw := strings.TrimSpace(r.PostForm.Get("callbackUrl"))
	if _, named := r.PostForm["callbackUrl"]; !named {
		raw = strings.TrimSpace(r.PostForm.Get("url")) // a script's guess of the field's name
	}
	if err := c.store.SetCallbackURL(r.Context(), raw); err != nil {
		if form := refusedSettings(err, "callback", raw, nil); form != nil {
			return c.settingsPage(w, r, wire.Status(err), form)
		}
		return err
	}
	if err := c.record(r, r.env, "console.callback_configured", map[string]any{"url": raw}); err != nil {
		return err
	}
	return redirect(w, r, "/console/settings", "callback")
}

// RotateCallback serves POST /console/settings/callback/rotate.
func (c *Console) RotateCallback(w http.ResponseWriter, r *Request) error {
	secret, err := c.store.RotateCallbackSecret()
	if err != nil {
		return err
	}
	if err := c.record(r, r.env, "console.callback_secret_rotated", nil); err != nil {
		return err
	}
	return c.secretShown(w, r, "New KYC callback signing secret", "KYC callback", secret)
}

// Levels serves GET /console/levels.
func (c *Console) Levels(w http.ResponseWriter, r *Request) error {
	ls, err := c.store.Levels(r.env)
	if err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, "levels", "Levels", "settings", map[string]any{"Items": ls})
}

// Level serves GET /console/levels/:name.
func (c *Console) Level(w http.ResponseWriter, r *Request) error {
	l, err := c.store.Level(r.env, r.params.ByName("name"))
	if err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, "level", "Level "+l.Name, "settings", map[string]any{"L": l, "Edit": levelJSON(l)})
}

// levelFormError shows a level form again after a failed save: what the
// operator typed, kept, and the error beside the field, with the status
// the API would answer. Only EINVALID and ECONFLICT come back to the form.
func (c *Console) levelFormError(w http.ResponseWriter, r *Request, page string, l store.Level, err error) error {
	e := store.AsError(err)
	if e.Code != store.EINVALID && e.Code != store.ECONFLICT {
		return err
	}
	data := map[string]any{"L": l, "Edit": r.PostForm.Get("level"), "Err": e.Message, "ErrField": e.Field}
	title := "Level " + l.Name
	if page == "levels" {
		ls, lerr := c.store.Levels(r.env)
		if lerr != nil {
			return lerr
		}
		data["Items"], title = ls, "Levels"
	}
	return c.render(w, r, wire.Status(err), page, title, "settings", data)
}

// levelJSON is the editable part of l as indented JSON, the body of
// PATCH /v1/levels/{levelName}.
func levelJSON(l store.Level) string {
	b, err := json.MarshalIndent(map[string]any{"name": l.Name, "applicantType": l.ApplicantType, "steps": l.Steps,
		"personalInfoFields": l.PersonalInfoFields, "companyDataFields": l.CompanyDataFields,
		"companyRequiredFields": l.CompanyRequiredFields, "companyRequiredDocuments": l.CompanyRequiredDocuments,
		"questionnaire": l.Questionnaire}, "", "  ")
	if err != nil {
		return "{}"
	}
	return string(b)
}

// CreateLevel serves POST /console/levels: the form's "level" field is the
// JSON body of POST /v1/levels.
func (c *Console) CreateLevel(w http.ResponseWriter, r *Request) error {
	var in store.Level
	if err := wire.DecodeBytes([]byte(r.PostForm.Get("level")), &in); err != nil {
		return c.levelFormError(w, r, "levels", store.Level{}, err)
	}
	l, err := c.store.CreateLevel(r.env, in)
	if err != nil {
		return c.levelFormError(w, r, "levels", store.Level{}, err)
	}
	if err := c.record(r, r.env, "console.level_created", map[string]any{"name": l.Name}); err != nil {
		return err
	}
	return redirect(w, r, "/console/levels/"+url.PathEscape(l.Name), "level")
}

// EditLevel serves POST /console/levels/:name: the form's "level" field is
// the JSON body of PATCH /v1/levels/{levelName}.
func (c *Console) EditLevel(w http.ResponseWriter, r *Request) error {
	name := r.params.ByName("name")
	old, err := c.store.Level(r.env, name)
	if err != nil {
		return err
	}
	var in store.LevelPatch
	if err := wire.DecodeBytes([]byte(r.PostForm.Get("level")), &in); err != nil {
		return c.levelFormError(w, r, "level", old, err)
	}
	l, err := c.store.PatchLevel(r.env, name, in)
	if err != nil {
		return c.levelFormError(w, r, "level", old, err)
	}
	if err := c.record(r, r.env, "console.level_edited", map[string]any{"name": l.Name, "previousName": name}); err != nil {
		return err
	}
	return redirect(w, r, "/console/levels/"+url.PathEscape(l.Name), "level")
}

// Credentials serves GET /console/credentials.
func (c *Console) Credentials(w http.ResponseWriter, r *Request) error {
	return c.credentialsPage(w, r, http.StatusOK, &credentialForm{Environment: string(r.env), Role: store.RolePartner})
}

// credentialForm is the create form, shown again with the error and what
// was chosen when refused.
type credentialForm struct {
	Environment, Role, Name, Err, ErrField string
}

func (c *Console) credentialsPage(w http.ResponseWriter, r *Request, status int, form *credentialForm) error {
	cs, err := c.store.Credentials()
	if err != nil {
		return err
	}
	return c.render(w, r, status, "credentials", "API credentials", "settings", map[string]any{"Items": cs, "Form": form,
		"Roles": []string{store.RolePartner, store.RoleAdmin}})
}

// CreateCredential serves POST /console/credentials; the secret is shown
// once. Without an environment it is the one the console shows; without a
// role, partner.
func (c *Console) CreateCredential(w http.ResponseWriter, r *Request) error {
	f := r.PostForm
	env := store.Env(f.Get("environment"))
	if env == "" {
		env = r.env // the environment the console shows
	}
	cred, secret, err := c.store.CreateCredential(env, f.Get("role"), strings.TrimSpace(f.Get("name")))
	if e := store.AsError(err); err != nil && e.Code == store.EINVALID {
		return c.credentialsPage(w, r, wire.Status(err), &credentialForm{Environment: string(env), Role: f.Get("role"),
			Name: f.Get("name"), Err: e.Message, ErrField: e.Field})
	}
	if err != nil {
		return err
	}
	if err := c.record(r, cred.Environment, "console.credential_created", map[string]any{"key": cred.Key, "role": cred.Role}); err != nil {
		return err
	}
	return c.showOnce(w, r, shownSecret{title: "Credential created", secret: secret, cred: cred})
}

// RevokeCredential serves POST /console/credentials/:key/revoke.
func (c *Console) RevokeCredential(w http.ResponseWriter, r *Request) error {
	key := r.params.ByName("key")
	if err := c.store.RevokeCredential(key); err != nil {
		return err
	}
	env := r.env
	if cs, err := c.store.Credentials(); err == nil {
		for _, cr := range cs {
			if cr.Key == key {
				env = cr.Environment // the event belongs to the credential's environment
			}
		}
	}
	if err := c.record(r, env, "console.credential_revoked", map[string]any{"key": key}); err != nil {
		return err
	}
	return redirect(w, r, "/console/credentials", "revoked")
}
