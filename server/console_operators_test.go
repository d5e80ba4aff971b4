package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/complybox/complybox/store"
)

// TestConsoleOperators: an admin adds a reviewer in the console; the
// reviewer decides and retries but gets 403 on every admin page and form;
// each decision and setting change names its operator in the console's
// history and on the pages that show it.
func TestConsoleOperators(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("held-r", "MANUAL")
	in.expect(200, "POST", "/v1/applicants/held-r/verify", verifyBody(t, 31))

	admin := in.operator()
	admin.page("/console/operators", "Operators", "admin", "Add an operator")
	// Refused forms keep what was typed, with the error beside the field.
	r := admin.submit("/console/operators", url.Values{"name": {"rita"}, "role": {"reviewer"}, "password": {"reviewer pw 1"}, "password2": {"reviewer pw 2"}})
	expectStatus(t, "passwords differ", r, http.StatusBadRequest)
	if !strings.Contains(string(r.Body), "The two passwords differ.") || !strings.Contains(string(r.Body), `value="rita"`) {
		t.Fatalf("refused add form: %s", r.Body)
	}
	r = admin.submit("/console/operators", url.Values{"name": {"Rita R"}, "role": {"reviewer"}, "password": {"reviewer pw 1"}, "password2": {"reviewer pw 1"}})
	expectStatus(t, "bad name", r, http.StatusBadRequest)
	r = admin.submit("/console/operators", url.Values{"name": {"admin"}, "role": {"reviewer"}, "password": {"reviewer pw 1"}, "password2": {"reviewer pw 1"}})
	expectStatus(t, "taken name", r, http.StatusConflict)
	r = admin.submit("/console/operators", url.Values{"name": {"rita"}, "role": {"reviewer"}, "password": {"reviewer pw 1"}, "password2": {"reviewer pw 1"}})
	expectStatus(t, "add rita", r, http.StatusSeeOther)
	admin.page(r.Header.Get("Location"), "The operator account was saved.", "rita", "reviewer")

	rev := in.browser()
	rev.loginAs("rita", "reviewer pw 1")
	home := rev.page("/console", "rita")
	if strings.Contains(home, `href="/console/settings"`) || strings.Contains(home, `href="/console/operators"`) || strings.Contains(home, `href="/console/clock"`) {
		t.Error("a reviewer's navigation links admin pages")
	}
	for _, path := range []string{"/console/settings", "/console/levels", "/console/credentials", "/console/operators", "/console/clock", "/console/shown"} {
		expectStatus(t, "reviewer GET "+path, rev.get(path), http.StatusForbidden)
	}
	rev.page("/console/applicants")
	for _, path := range []string{"/console/settings/callback", "/console/settings/callback/rotate", "/console/credentials",
		"/console/levels", "/console/operators", "/console/operators/admin/remove", "/console/operators/rita/role", "/console/clock"} {
		r := rev.submit(path, url.Values{"url": {"http://127.0.0.1:1/cb"}, "environment": {"sandbox"}, "role": {"admin"},
			"name": {"otto"}, "password": {"long enough 1"}, "password2": {"long enough 1"}})
		expectStatus(t, "reviewer POST "+path, r, http.StatusForbidden)
	}
	if users, err := in.Store.ConsoleUsers(); err != nil || len(users) != 2 || users[1].Role != store.ConsoleReviewer {
		t.Fatalf("after the reviewer's posts: %+v %v", users, err)
	}

	// The reviewer decides: the applicant's history and the console's
	// activity name rita.
	rev.page("/console/applicants/held-r")
	r = rev.submit("/console/applicants/held-r/decision", url.Values{"reviewAnswer": {"GREEN"}})
	expectStatus(t, "reviewer decides", r, http.StatusSeeOther)
	rev.page(r.Header.Get("Location"), "Decided in the console", "operator", "rita")
	found := false
	acts, err := in.Store.ConsoleActivity(store.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range acts {
		if e.EventType == "console.decided" && e.Details["operator"] == "rita" && e.Details["applicant"] == "held-r" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no console.decided by rita in %v", consoleEvents(t, in, store.Sandbox))
	}
	// The partner's history does not show the console account.
	for _, h := range in.historyTypes("held-r") {
		if strings.HasPrefix(h, "console.") {
			t.Fatalf("partner history shows %s", h)
		}
	}

	// An admin's setting change names the admin.
	admin.page("/console/settings")
	admin.shown("rotate", admin.submit("/console/settings/callback/rotate", nil))
	admin.page("/console", "Callback secret rotated", "admin")

	// Promote, then remove: the role holds at once, removal ends the session.
	admin.page("/console/operators")
	expectStatus(t, "promote", admin.submit("/console/operators/rita/role", url.Values{"role": {"admin"}}), http.StatusSeeOther)
	rev.page("/console/settings")
	expectStatus(t, "remove", admin.submit("/console/operators/rita/remove", nil), http.StatusSeeOther)
	expectStatus(t, "removed operator", rev.get("/console/applicants"), http.StatusSeeOther)
	// The last admin stays.
	admin.page("/console/operators")
	expectStatus(t, "remove the last admin", admin.submit("/console/operators/admin/remove", nil), http.StatusConflict)
}
