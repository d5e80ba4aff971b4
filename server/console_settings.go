package server

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/complybox/complybox/store"
)

// Console settings: custody webhook, KYC callback, secret rotation, levels,
// credentials; and the read-only custody pages.

// settings serves GET /console/settings.
func (c *console) settings(w http.ResponseWriter, r *consoleRequest) error {
	wh, err := c.s.store.WebhookConfig(r.env)
	if err != nil {
		return err
	}
	cb, err := c.s.store.CallbackURL()
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
	return c.render(w, r, http.StatusOK, "settings", "Settings", "settings", map[string]any{
		"Webhook": wh, "WebhookURL": deref(wh.URL), "Catalog": store.CustodyCatalog(), "Subscribed": subscribed, "CallbackURL": cb})
}

// secretShown renders the page that shows a new signing secret once.
func (c *console) secretShown(w http.ResponseWriter, r *consoleRequest, title, what, secret string) error {
	return c.render(w, r, http.StatusOK, "secret", title, "settings", map[string]any{"What": what, "Secret": secret})
}

// setWebhook serves POST /console/settings/webhook: URL and subscription
// (none named: every type). A URL change generates a new secret, shown
// once.
func (c *console) setWebhook(w http.ResponseWriter, r *consoleRequest) error {
	raw := strings.TrimSpace(r.PostForm.Get("url"))
	types := r.PostForm["subscribedEventTypes"]
	if len(types) == 0 {
		// The page's form says it lists the boxes: none ticked is a
		// mistake. A script posting only the URL subscribes to every
		// type, as PUT /webhooks/outbound without subscribedEventTypes.
		if r.PostForm.Get("subscription") != "" {
			return store.Invalid("subscribedEventTypes", "choose at least one event type")
		}
		types = nil
	}
	v, err := c.s.store.SetWebhook(r.Context(), r.env, raw, types)
	if err != nil {
		return err
	}
	if err := c.s.store.RecordConsoleAction(r.env, "console.webhook_configured", map[string]any{"url": raw, "subscribedEventTypes": types}); err != nil {
		return err
	}
	if v.SigningSecret != nil {
		return c.secretShown(w, r, "Webhook signing secret", "custody webhook ("+raw+")", *v.SigningSecret)
	}
	return redirect(w, r, "/console/settings", "webhook")
}

// rotateWebhook serves POST /console/settings/webhook/rotate.
func (c *console) rotateWebhook(w http.ResponseWriter, r *consoleRequest) error {
	secret, err := c.s.store.RotateWebhookSecret(r.env)
	if err != nil {
		return err
	}
	if err := c.s.store.RecordConsoleAction(r.env, "console.webhook_secret_rotated", nil); err != nil {
		return err
	}
	return c.secretShown(w, r, "New webhook signing secret", "custody webhook", secret)
}

// setCallback serves POST /console/settings/callback: the KYC callback URL
// (empty: none). It is shared by both environments.
func (c *console) setCallback(w http.ResponseWriter, r *consoleRequest) error {
	raw := strings.TrimSpace(r.PostForm.Get("callbackUrl"))
	if _, named := r.PostForm["callbackUrl"]; !named {
		raw = strings.TrimSpace(r.PostForm.Get("url")) // a script's guess of the field's name
	}
	if err := c.s.store.SetCallbackURL(r.Context(), raw); err != nil {
		return err
	}
	if err := c.s.store.RecordConsoleAction(r.env, "console.callback_configured", map[string]any{"url": raw}); err != nil {
		return err
	}
	return redirect(w, r, "/console/settings", "callback")
}

// rotateCallback serves POST /console/settings/callback/rotate.
func (c *console) rotateCallback(w http.ResponseWriter, r *consoleRequest) error {
	secret, err := c.s.store.RotateCallbackSecret()
	if err != nil {
		return err
	}
	if err := c.s.store.RecordConsoleAction(r.env, "console.callback_secret_rotated", nil); err != nil {
		return err
	}
	return c.secretShown(w, r, "New KYC callback signing secret", "KYC callback", secret)
}

// levels serves GET /console/levels.
func (c *console) levels(w http.ResponseWriter, r *consoleRequest) error {
	ls, err := c.s.store.Levels(r.env)
	if err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, "levels", "Levels", "settings", map[string]any{"Items": ls})
}

// level serves GET /console/levels/:name.
func (c *console) level(w http.ResponseWriter, r *consoleRequest) error {
	l, err := c.s.store.Level(r.env, r.params.ByName("name"))
	if err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, "level", "Level "+l.Name, "settings", map[string]any{"L": l, "Edit": levelJSON(l)})
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

// createLevel serves POST /console/levels: the form's "level" field is the
// JSON body of POST /v1/levels.
func (c *console) createLevel(w http.ResponseWriter, r *consoleRequest) error {
	var in store.Level
	if err := decodeBytes([]byte(r.PostForm.Get("level")), &in); err != nil {
		return err
	}
	l, err := c.s.store.CreateLevel(r.env, in)
	if err != nil {
		return err
	}
	if err := c.s.store.RecordConsoleAction(r.env, "console.level_created", map[string]any{"name": l.Name}); err != nil {
		return err
	}
	return redirect(w, r, "/console/levels/"+url.PathEscape(l.Name), "level")
}

// editLevel serves POST /console/levels/:name: the form's "level" field is
// the JSON body of PATCH /v1/levels/{levelName}.
func (c *console) editLevel(w http.ResponseWriter, r *consoleRequest) error {
	var in store.LevelPatch
	if err := decodeBytes([]byte(r.PostForm.Get("level")), &in); err != nil {
		return err
	}
	name := r.params.ByName("name")
	l, err := c.s.store.PatchLevel(r.env, name, in)
	if err != nil {
		return err
	}
	if err := c.s.store.RecordConsoleAction(r.env, "console.level_edited", map[string]any{"name": l.Name, "previousName": name}); err != nil {
		return err
	}
	return redirect(w, r, "/console/levels/"+url.PathEscape(l.Name), "level")
}

// credentials serves GET /console/credentials.
func (c *console) credentials(w http.ResponseWriter, r *consoleRequest) error {
	cs, err := c.s.store.Credentials()
	if err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, "credentials", "API credentials", "settings", map[string]any{"Items": cs})
}

// createCredential serves POST /console/credentials; the secret is shown
// once. Without an environment it is the one the console shows; without a
// role, partner.
func (c *console) createCredential(w http.ResponseWriter, r *consoleRequest) error {
	f := r.PostForm
	env := store.Env(f.Get("environment"))
	if env == "" {
		env = r.env // the environment the console shows
	}
	cred, secret, err := c.s.store.CreateCredential(env, f.Get("role"), strings.TrimSpace(f.Get("name")))
	if err != nil {
		return err
	}
	if err := c.s.store.RecordConsoleAction(cred.Environment, "console.credential_created", map[string]any{"key": cred.Key, "role": cred.Role}); err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, "credential", "Credential created", "settings", map[string]any{"C": cred, "Secret": secret})
}

// revokeCredential serves POST /console/credentials/:key/revoke.
func (c *console) revokeCredential(w http.ResponseWriter, r *consoleRequest) error {
	key := r.params.ByName("key")
	if err := c.s.store.RevokeCredential(key); err != nil {
		return err
	}
	env := r.env
	if cs, err := c.s.store.Credentials(); err == nil {
		for _, cr := range cs {
			if cr.Key == key {
				env = cr.Environment // the event belongs to the credential's environment
			}
		}
	}
	if err := c.s.store.RecordConsoleAction(env, "console.credential_revoked", map[string]any{"key": key}); err != nil {
		return err
	}
	return redirect(w, r, "/console/credentials", "revoked")
}

// Custody (read-only).

// vaults serves GET /console/vaults.
func (c *console) vaults(w http.ResponseWriter, r *consoleRequest) error {
	p, err := page(r.Request)
	if err != nil {
		return err
	}
	items, next, err := c.s.store.Vaults(r.env, p)
	if err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, "vaults", "Vaults", "custody", map[string]any{"Items": items, "Next": deref(next)})
}

// vault serves GET /console/vaults/:id with its wallets.
func (c *console) vault(w http.ResponseWriter, r *consoleRequest) error {
	id := r.params.ByName("id")
	v, err := c.s.store.Vault(r.env, id)
	if err != nil {
		return err
	}
	p, err := page(r.Request)
	if err != nil {
		return err
	}
	wallets, next, err := c.s.store.VaultWallets(r.env, id, p)
	if err != nil {
		return err
	}
	balances := make([]store.Balance, len(wallets))
	for i, wl := range wallets {
		if balances[i], err = c.s.store.WalletBalance(r.env, wl.WalletID); err != nil {
			return err
		}
	}
	return c.render(w, r, http.StatusOK, "vault", "Vault "+v.Name, "custody", map[string]any{
		"V": v, "Fields": recordFields(v), "Wallets": wallets, "Balances": balances, "Next": deref(next)})
}

// wallet serves GET /console/wallets/:id with its balance and latest
// transactions.
func (c *console) wallet(w http.ResponseWriter, r *consoleRequest) error {
	id := r.params.ByName("id")
	wl, err := c.s.store.Wallet(r.env, id)
	if err != nil {
		return err
	}
	bal, err := c.s.store.WalletBalance(r.env, id)
	if err != nil {
		return err
	}
	txs, next, err := c.s.store.Transactions(r.env, store.TransactionFilter{WalletID: id}, store.Page{Limit: 50})
	if err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, "wallet", "Wallet "+wl.WalletID, "custody", map[string]any{
		"W": wl, "Fields": recordFields(wl), "Balance": recordFields(bal), "Txs": txs,
		"More": next != nil, "MoreURL": "/console/transactions?walletId=" + url.QueryEscape(id)})
}

// transactions serves GET /console/transactions.
func (c *console) transactions(w http.ResponseWriter, r *consoleRequest) error {
	p, err := page(r.Request)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := store.TransactionFilter{VaultID: q.Get("vaultId"), Status: q.Get("status"), Type: q.Get("type"), WalletID: q.Get("walletId")}
	items, next, err := c.s.store.Transactions(r.env, f, p)
	if err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, "transactions", "Transactions", "custody", map[string]any{
		"Items": items, "Next": deref(next), "F": f, "Statuses": store.TransactionStatuses(), "Types": store.TransactionTypes()})
}

// transaction serves GET /console/transactions/:id.
func (c *console) transaction(w http.ResponseWriter, r *consoleRequest) error {
	tx, err := c.s.store.Transaction(r.env, r.params.ByName("id"))
	if err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, "transaction", "Transaction "+tx.TransactionID, "custody", map[string]any{
		"T": tx, "Fields": recordFields(tx)})
}
