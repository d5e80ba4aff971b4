package server_test

import (
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/complybox/complybox/store"
)

// TestConsoleStaleFormKeepsItsEnvironment: a form acts on the environment
// its page was shown in, or not at all. An operator opens applicant s2 in
// production, switches to sandbox in another tab, then submits the first
// tab's decision: it was recorded on the sandbox s2. Now it is refused
// (409, "reload") and neither s2 changes; so are the settings webhook and
// level edit forms of a production page, and a form that names no
// environment.
func TestConsoleStaleFormKeepsItsEnvironment(t *testing.T) {
	t.Parallel()
	in := start(t)
	pk, ps := in.credential(store.Production, store.RolePartner)
	in.createApplicant("s2", "manual")
	in.expect(200, "POST", "/v1/applicants/s2/verify", verifyBody(t, 11))
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "s2", "firstName": "Ada", "lastName": "manual", "dateOfBirth": "1990-04-01"},
		"X-Api-Key", pk, "X-Api-Secret", ps)
	in.expect(200, "POST", "/v1/applicants/s2/verify", verifyBody(t, 11), "X-Api-Key", pk, "X-Api-Secret", ps)
	rc := newReceiver(t, in.Clock, nil)

	b := in.operator()
	b.page("/console")
	expectStatus(t, "switch to production", b.submit("/console/env", url.Values{"env": {"production"}, "back": {"/console"}}), http.StatusSeeOther)
	page := b.page("/console/applicants/s2", "Showing the <strong>production</strong> environment", "awaitingOperatorReview")
	if !strings.Contains(page, `name="shownEnv" value="production"`) {
		t.Fatal("the production decision form does not say which environment it was shown for")
	}
	before := map[store.Env]store.Level{}
	for _, env := range store.Envs() {
		l, err := in.Store.Level(env, "basic-kyc-level")
		if err != nil {
			t.Fatal(err)
		}
		before[env] = l
	}

	// Each form as its production page rendered it, posted after another
	// tab switched the session to sandbox.
	stale := []struct {
		what, page, path string
		form             url.Values
	}{
		{"decision", "/console/applicants/s2", "/console/applicants/s2/decision", url.Values{"reviewAnswer": {"RED"}, "reviewRejectType": {"FINAL"},
			"rejectLabels": {"SANCTIONS"}, "confirmFinal": {"yes"}}},
		{"webhook settings", "/console/settings", "/console/settings/webhook", url.Values{"url": {rc.URL}, "subscribedEventTypes": {"wallet.created"}}},
		{"level edit", "/console/levels/basic-kyc-level", "/console/levels/basic-kyc-level", url.Values{"level": {`{"steps":[{"kind":"identity_doc"}]}`}}},
	}
	for _, s := range stale {
		b.page("/console")
		expectStatus(t, "switch to production", b.submit("/console/env", url.Values{"env": {"production"}}), http.StatusSeeOther)
		b.page(s.page, "Showing the <strong>production</strong> environment")
		expectStatus(t, "switch to sandbox in another tab", b.submit("/console/env", url.Values{"env": {"sandbox"}}), http.StatusSeeOther)
		s.form.Set("shownEnv", "production")
		r := b.submit(s.path, s.form)
		expectStatus(t, "stale "+s.what+" form", r, http.StatusConflict)
		if body := string(r.Body); !strings.Contains(body, "switched to sandbox") || !strings.Contains(body, "reload") {
			t.Errorf("stale %s form: the error page does not say the console switched: %s", s.what, body)
		}
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("stale %s form: Content-Type %q, want the console's page", s.what, ct)
		}
	}
	// A form that names no environment of the session is refused too.
	b.page("/console/applicants/s2")
	r := b.submit("/console/applicants/s2/decision", url.Values{"reviewAnswer": {"GREEN"}, "shownEnv": {"staging"}})
	expectStatus(t, "decision for no environment", r, http.StatusConflict)

	// Nothing changed in either environment.
	for _, h := range [][]string{nil, {"X-Api-Key", pk, "X-Api-Secret", ps}} {
		if st := in.expect(200, "GET", "/v1/applicants/s2/status", nil, h...).m(t); st["reviewStatus"] != "awaitingOperatorReview" {
			t.Fatalf("s2 after refused decisions: %v", st)
		}
	}
	for _, env := range store.Envs() {
		if v, err := in.Store.WebhookConfig(env); err != nil || v.URL != nil {
			t.Fatalf("%s webhook after a refused form: %+v %v", env, v, err)
		}
		if l, err := in.Store.Level(env, "basic-kyc-level"); err != nil || !reflect.DeepEqual(l, before[env]) {
			t.Fatalf("%s basic-kyc-level after a refused edit: %+v %v", env, l, err)
		}
	}

	// The form of a page of the environment shown still works: the
	// sandbox s2 is decided, the production s2 still waits.
	b.page("/console/applicants/s2", "Showing the <strong>sandbox</strong> environment", `name="shownEnv" value="sandbox"`)
	r = b.submit("/console/applicants/s2/decision", url.Values{"reviewAnswer": {"GREEN"}})
	expectStatus(t, "decision in the environment shown", r, http.StatusSeeOther)
	if st := in.expect(200, "GET", "/v1/applicants/s2/status", nil).m(t); st["reviewStatus"] != "completed" || st["reviewAnswer"] != "GREEN" {
		t.Fatalf("sandbox s2 after the decision: %v", st)
	}
	if st := in.expect(200, "GET", "/v1/applicants/s2/status", nil, "X-Api-Key", pk, "X-Api-Secret", ps).m(t); st["reviewStatus"] != "awaitingOperatorReview" {
		t.Fatalf("production s2 after the sandbox decision: %v", st)
	}
	b.page("/console/settings")
	b.shown("webhook in the environment shown", b.submit("/console/settings/webhook", url.Values{"url": {rc.URL}, "subscribedEventTypes": {"wallet.created"}}))
	if v, err := in.Store.WebhookConfig(store.Sandbox); err != nil || v.URL == nil || *v.URL != rc.URL {
		t.Fatalf("sandbox webhook: %+v %v", v, err)
	}
	// A script that posts without shownEnv (one written before the field,
	// copying only csrf) acts on the session's environment, as before: the
	// check is for the pages, whose forms always say it.
	b.page("/console/settings")
	b.shown("webhook from a script", b.submit("/console/settings/webhook", url.Values{"url": {rc.URL + "?script"}, "subscribedEventTypes": {"wallet.created"}, "shownEnv": {""}}))
	if v, err := in.Store.WebhookConfig(store.Sandbox); err != nil || v.URL == nil || *v.URL != rc.URL+"?script" {
		t.Fatalf("sandbox webhook from a script: %+v %v", v, err)
	}
}
