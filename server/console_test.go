package server_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/complybox/complybox/dispatch"
	"github.com/complybox/complybox/store"
)

// consoleEvents returns the event types of the console's internal history.
func consoleEvents(t testing.TB, in *instance, env store.Env) []string {
	t.Helper()
	hs, err := in.Store.ConsoleActivity(env)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hs {
		if !h.Internal {
			t.Fatalf("console event %s is not internal", h.EventType)
		}
		out = append(out, h.EventType)
	}
	return out
}

func TestConsoleLogin(t *testing.T) {
	t.Parallel()
	in := start(t)
	b := in.browser()

	// Before a password is set the console says how to set one.
	b.page("/console", "complybox console set-password")
	r := b.submit("/console/login", url.Values{"name": {"admin"}, "password": {"anything at all"}})
	expectStatus(t, "login without a password set", r, http.StatusConflict)

	if err := in.Store.SetConsolePassword("short"); store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("short password: %v, want EINVALID", err)
	}
	if err := in.Store.SetConsolePassword(consolePassword); err != nil {
		t.Fatal(err)
	}
	page := b.page("/console/login", "autocomplete=\"username\"", "Password")
	if strings.Contains(page, "set-password") {
		t.Fatal("the login page still says no password is set")
	}

	// Wrong password: an error page and an internal event.
	r = b.submit("/console/login", url.Values{"name": {"admin"}, "password": {"wrong password"}})
	expectStatus(t, "wrong password", r, http.StatusUnauthorized)
	// The error is announced (role=alert) and describes both fields, and
	// the cursor waits in the password field to type it again.
	if !bytes.Contains(r.Body, []byte(`<p class="error" role="alert" id="login-error">The name or the password is not correct.</p>`)) ||
		!bytes.Contains(r.Body, []byte(`autocomplete="username" autocapitalize="none" required aria-invalid="true" aria-describedby="login-error">`)) ||
		!bytes.Contains(r.Body, []byte(`autocomplete="current-password" required aria-invalid="true" aria-describedby="login-error" autofocus>`)) {
		t.Fatalf("wrong password page: %s", r.Body)
	}
	if h := consoleEvents(t, in, store.Sandbox); !slices.Contains(h, "console.login_failed") {
		t.Fatalf("console history %v has no console.login_failed", h)
	}
	// A name no operator has is not kept: it is anyone's input, of any
	// length (the history is never pruned and the Overview shows it), and
	// often a password typed into the wrong box.
	typed := "Secret-typed-here-" + strings.Repeat("m", 10000)
	expectStatus(t, "unknown name", b.submit("/console/login", url.Values{"name": {typed}, "password": {"x"}}), http.StatusUnauthorized)
	activity, err := in.Store.ConsoleActivity(store.Sandbox)
	if err != nil || len(activity) < 2 || activity[0].EventType != "console.login_failed" || activity[1].EventType != "console.login_failed" {
		t.Fatalf("activity %v %v, want two failed logins", activity, err)
	}
	if fmt.Sprint(activity[0].Details) != "map[client:127.0.0.1 unknownName:true]" || activity[1].Details["name"] != "admin" {
		t.Errorf("failed logins recorded %v and %v, want the known name kept and the unknown one not", activity[1].Details, activity[0].Details)
	}

	// The login form has a CSRF token too.
	r = b.post("/console/login", url.Values{"name": {"admin"}, "password": {consolePassword}})
	expectStatus(t, "login without its token", r, http.StatusForbidden)

	// Right password: a strict, HttpOnly session cookie.
	r = b.submit("/console/login", url.Values{"name": {"admin"}, "password": {consolePassword}})
	expectStatus(t, "login", r, http.StatusSeeOther)
	var session *http.Cookie
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == "complybox_console" {
			session = c
		}
	}
	if session == nil {
		t.Fatalf("no session cookie in %v", r.Header["Set-Cookie"])
	}
	if !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Path != "/console" || len(session.Value) < 22 {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Strict, Path=/console and >=128 random bits", session)
	}
	if h := consoleEvents(t, in, store.Sandbox); !slices.Contains(h, "console.login") {
		t.Fatalf("console history %v has no console.login", h)
	}
	if h := consoleEvents(t, in, store.Production); !slices.Contains(h, "console.login") {
		t.Fatalf("production console history %v has no console.login", h)
	}

	// Pages carry the security headers.
	r = b.get("/console")
	expectStatus(t, "overview", r, http.StatusOK)
	if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Fatalf("Content-Security-Policy %q", csp)
	}
	if r.Header.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("X-Frame-Options %q", r.Header.Get("X-Frame-Options"))
	}
	if !bytes.Contains(r.Body, []byte("console.login")) {
		t.Fatal("the overview does not show the console activity")
	}
	b.page("/console/static/console.css", "--accent")

	// Another browser without the cookie is sent to the login page.
	r = in.browser().get("/console/applicants")
	expectStatus(t, "applicants without a session", r, http.StatusSeeOther)
	if loc := r.Header.Get("Location"); loc != "/console/login?next=%2Fconsole%2Fapplicants" {
		t.Fatalf("redirect to %q", loc)
	}

	// Logout ends the session server-side.
	b.page("/console/applicants")
	expectStatus(t, "logout", b.submit("/console/logout", nil), http.StatusSeeOther)
	expectStatus(t, "applicants after logout", b.get("/console/applicants"), http.StatusSeeOther)
	if _, err := in.Store.ConsoleSessionByID(session.Value); store.ErrorCode(err) != store.EUNAUTHORIZED {
		t.Fatalf("session after logout: %v", err)
	}
}

func TestConsoleSessionExpires(t *testing.T) {
	t.Parallel()
	in := start(t)
	b := in.operator()
	b.page("/console/applicants")
	in.advance(store.ConsoleSessionTTL + time.Second)
	expectStatus(t, "applicants after the session's lifetime", b.get("/console/applicants"), http.StatusSeeOther)

	// A new password ends every session.
	b.login(consolePassword)
	b.page("/console/applicants")
	if err := in.Store.SetConsolePassword("another password"); err != nil {
		t.Fatal(err)
	}
	expectStatus(t, "applicants after a password change", b.get("/console/applicants"), http.StatusSeeOther)
}

func TestConsoleCSRF(t *testing.T) {
	t.Parallel()
	in := start(t)
	b := in.operator()
	b.page("/console/settings")
	for _, path := range []string{"/console/env", "/console/logout", "/console/credentials", "/console/retry-deliveries",
		"/console/settings/callback/rotate", "/console/applicants/nobody/decision"} {
		form := url.Values{"env": {"production"}, "environment": {"sandbox"}, "status": {"failed"}, "reviewAnswer": {"GREEN"}}
		expectStatus(t, "POST "+path+" without a token", b.post(path, form), http.StatusForbidden)
		form.Set("csrf", b.csrf+"x")
		expectStatus(t, "POST "+path+" with a wrong token", b.post(path, form), http.StatusForbidden)
	}
	// Nothing happened: still logged in, still sandbox, no credential made.
	b.page("/console/applicants", "Showing the <strong>sandbox</strong> environment")
	creds, err := in.Store.Credentials()
	if err != nil || len(creds) != 1 {
		t.Fatalf("credentials %v %v, want the harness's one", creds, err)
	}
}

func TestConsoleLoginRateLimit(t *testing.T) {
	t.Parallel()
	in := start(t)
	if err := in.Store.SetConsolePassword(consolePassword); err != nil {
		t.Fatal(err)
	}
	b := in.browser()
	b.page("/console/login")
	for i := range store.ConsoleLoginLimit {
		expectStatus(t, "wrong password "+string(rune('1'+i)), b.submit("/console/login", url.Values{"name": {"admin"}, "password": {"guess guess"}}), http.StatusUnauthorized)
	}
	in.advance(10 * time.Second)
	r := b.submit("/console/login", url.Values{"name": {"admin"}, "password": {consolePassword}})
	expectStatus(t, "login past the limit", r, http.StatusTooManyRequests)
	if r.Header.Get("Retry-After") != "50" {
		t.Fatalf("Retry-After %q, want 50", r.Header.Get("Retry-After"))
	}
	in.advance(50 * time.Second)
	expectStatus(t, "login after the window", b.submit("/console/login", url.Values{"name": {"admin"}, "password": {consolePassword}}), http.StatusSeeOther)

	// Only failed attempts count, and a login clears them: an operator (or
	// a script) logging in often within the window is never held back.
	for i := range store.ConsoleLoginLimit + 1 {
		other := in.browser()
		other.page("/console/login")
		if i == 0 || i == store.ConsoleLoginLimit {
			expectStatus(t, "a wrong password between logins", other.submit("/console/login", url.Values{"name": {"admin"}, "password": {"guess guess"}}), http.StatusUnauthorized)
		}
		expectStatus(t, "login "+strconv.Itoa(i+1)+" within a minute", other.submit("/console/login", url.Values{"name": {"admin"}, "password": {consolePassword}}), http.StatusSeeOther)
	}
}

// TestConsoleLoginFailuresOutliveOthersLogins: a login that succeeds
// does not wipe the failed attempts the same address made at another
// operator's password: a reviewer cannot keep guessing the admin's.
func TestConsoleLoginFailuresOutliveOthersLogins(t *testing.T) {
	t.Parallel()
	in := start(t)
	if err := in.Store.SetConsolePassword(consolePassword); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Store.AddConsoleUser("rev", store.ConsoleReviewer, "reviewpass123", store.ConsoleCLIActor); err != nil {
		t.Fatal(err)
	}
	guess := func(want int) {
		t.Helper()
		b := in.browser()
		b.page("/console/login")
		expectStatus(t, "a guess at the admin's password", b.submit("/console/login", url.Values{"name": {"admin"}, "password": {"guess guess"}}), want)
	}
	for range store.ConsoleLoginLimit - 1 {
		guess(http.StatusUnauthorized)
	}
	rev := in.browser()
	rev.page("/console/login")
	expectStatus(t, "the reviewer's own login", rev.submit("/console/login", url.Values{"name": {"rev"}, "password": {"reviewpass123"}}), http.StatusSeeOther)
	guess(http.StatusUnauthorized)
	guess(http.StatusTooManyRequests)
}

func TestConsolePages(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc := newReceiver(t, in.Clock, nil)
	in.configureWebhook(rc)
	in.createApplicant("page-user", "Lovelace")
	in.expect(200, "POST", "/v1/applicants/page-user/verify", verifyBody(t, 3))
	in.createApplicant("other-user", "Hopper")
	vault := in.vault("Treasury")
	w := in.wallet(vault, "ETH")
	in.fund(w.WalletID, "1.5")
	txs := in.expect(200, "GET", "/transactions?vaultId="+vault, nil).m(t)["items"].([]any)
	txID := txs[0].(map[string]any)["transactionId"].(string)
	did := in.testEvent()

	b := in.operator()
	b.page("/console", "Overview", "Waiting for an operator decision")
	b.page("/console/applicants", "page-user", "other-user")
	list := b.page("/console/applicants?q=lovel", "page-user")
	if strings.Contains(list, "other-user") {
		t.Fatal("search for lovel lists other-user")
	}
	// The applicantId of a callback, an email, a registration number.
	otherID := in.expect(200, "GET", "/v1/applicants/other-user", nil).m(t)["id"].(string)
	in.expect(200, "PATCH", "/v1/applicants/other-user", map[string]any{"email": "grace@navy.example"})
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "co-search", "type": "company", "companyName": "Acme", "registrationNumber": "HRB 4711"})
	for q, want := range map[string]string{url.QueryEscape(strings.ToUpper(otherID)): "other-user", "navy.example": "other-user", "hrb+4711": "co-search"} {
		if list := b.page("/console/applicants?q="+q, want); strings.Contains(list, ">page-user<") {
			t.Errorf("search for %s lists page-user", q)
		}
	}
	list = b.page("/console/applicants?reviewStatus=pending", "other-user")
	if strings.Contains(list, ">page-user<") {
		t.Fatal("reviewStatus=pending lists the reviewed page-user")
	}
	// The next page keeps the filters and the limit (and drops a flash).
	first := b.page("/console/applicants?type=individual&limit=1&ok=decided", "Next page")
	m := regexp.MustCompile(`<a class="next" href="([^"]+)"`).FindStringSubmatch(first)
	if m == nil {
		t.Fatal("no next page link")
	}
	next, err := url.Parse(html.UnescapeString(m[1]))
	if err != nil || next.Path != "/console/applicants" || next.Query().Get("limit") != "1" || next.Query().Get("type") != "individual" ||
		next.Query().Get("cursor") == "" || next.Query().Has("ok") {
		t.Fatalf("next page link %q", m[1])
	}
	if second := b.page(next.RequestURI()); strings.Count(second, `<tr`) != strings.Count(first, `<tr`) {
		t.Errorf("the second page of limit=1 lists another number of rows than the first")
	}
	expectStatus(t, "unknown reviewStatus", b.get("/console/applicants?reviewStatus=sleeping"), http.StatusBadRequest)

	var a store.Applicant
	in.expect(200, "GET", "/v1/applicants/page-user", nil).json(t, &a)
	detail := b.page("/console/applicants/page-user", "Lovelace", "Identity document", "Selfie", "Applicant created", "GREEN")
	for _, d := range a.Documents {
		src := "/console/applicants/page-user/documents/" + d.SHA256
		if !strings.Contains(detail, src) {
			t.Fatalf("the detail page does not show %s", src)
		}
		r := b.get(src)
		expectStatus(t, "document "+d.Kind, r, http.StatusOK)
		sum := sha256.Sum256(r.Body)
		if r.Header.Get("Content-Type") != d.ContentType || hex.EncodeToString(sum[:]) != d.SHA256 {
			t.Fatalf("document %s: %s with sha256 %x, want %s %s", d.Kind, r.Header.Get("Content-Type"), sum, d.ContentType, d.SHA256)
		}
	}
	expectStatus(t, "another applicant's document", b.get("/console/applicants/other-user/documents/"+a.Documents[0].SHA256), http.StatusNotFound)
	expectStatus(t, "unknown applicant", b.get("/console/applicants/nobody"), http.StatusNotFound)
	if strings.Contains(detail, `action="/console/applicants/page-user/decision`) {
		t.Fatal("a completed applicant shows the decision form")
	}

	var dl struct{ CreatedAt string }
	in.expect(200, "GET", "/webhooks/deliveries/"+did, nil).json(t, &dl)
	b.page("/console/deliveries", did, "webhook.test", shownTime(t, dl.CreatedAt))
	b.page("/console/deliveries?status=delivered", did)
	// The payload as sent, byte for byte (a copy must verify), beside a
	// formatted view.
	var dv struct{ Payload string }
	in.expect(200, "GET", "/webhooks/deliveries/"+did, nil).json(t, &dv)
	b.page("/console/deliveries/"+did, "Attempts", "This is a test event from complybox.", dv.Payload, shownTime(t, dl.CreatedAt))
	b.page("/console/deliveries?eventType=webhook.test", did)
	expectStatus(t, "unknown eventType", b.get("/console/deliveries?eventType=bogus"), http.StatusBadRequest)
	b.page("/console/settings", rc.URL, "transaction.status.updated", "KYC callback")
	b.page("/console/levels", "basic-kyc-level", "kyb-level")
	b.page("/console/levels/kyb-level", "certificate_of_incorporation")
	b.page("/console/credentials", in.Key)
	b.page("/console/vaults", "Treasury")
	b.page("/console/vaults/"+vault, w.WalletID, w.DepositAddress, "<td>ETH</td><td>1.5</td><td>1.5</td><td>0</td>")
	b.page("/console/wallets/"+w.WalletID, "1.5", txID)
	b.page("/console/transactions", txID, "Deposit", shownTime(t, txs[0].(map[string]any)["createdAt"].(string)))
	b.page("/console/transactions/"+txID, txID, "Completed", shownTime(t, txs[0].(map[string]any)["createdAt"].(string)))

	// A company shows its structure section (rows once it has any).
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "acme", "type": "company",
		"companyName": "Acme Holding", "registrationNumber": "HRB 1", "country": "DEU"})
	b.page("/console/applicants/acme", "Acme Holding", "Company structure", "Company documents")

	// The production switch shows the other partition.
	r := b.submit("/console/env", url.Values{"env": {"production"}, "back": {"/console/applicants/page-user"}})
	expectStatus(t, "switch", r, http.StatusSeeOther)
	if loc := r.Header.Get("Location"); !strings.HasPrefix(loc, "/console/applicants?") {
		t.Fatalf("switch redirects to %q", loc)
	}
	list = b.page("/console/applicants", "Showing the <strong>production</strong> environment")
	if strings.Contains(list, "page-user") {
		t.Fatal("production lists a sandbox applicant")
	}
	expectStatus(t, "sandbox applicant in production", b.get("/console/applicants/page-user"), http.StatusNotFound)
}

func TestConsoleDecision(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	in.createApplicant("manual-1", "manual")
	in.expect(200, "POST", "/v1/applicants/manual-1/verify", verifyBody(t, 11))
	in.createApplicant("manual-2", "Manual")
	in.expect(200, "POST", "/v1/applicants/manual-2/verify", verifyBody(t, 21))

	b := in.operator()
	page := b.page("/console/applicants/manual-1", "awaitingOperatorReview", "SELFIE_MISMATCH", "RETRY")
	if !strings.Contains(page, `action="/console/applicants/manual-1/decision`) {
		t.Fatal("no decision form for an applicant awaiting an operator")
	}
	// A browser sends a textarea's line breaks as CRLF (HTML's form
	// encoding); the comment keeps the \n an API client sends.
	r := b.submit("/console/applicants/manual-1/decision", url.Values{"reviewAnswer": {"GREEN"}, "moderationComment": {"looks fine\r\nsecond line"}})
	expectStatus(t, "approve", r, http.StatusSeeOther)
	// The confirmation is a status message, which a screen reader reads
	// out when the page comes.
	b.page(r.Header.Get("Location"), `<p class="flash" role="status">The decision was recorded.</p>`, "managed_compliance.decided")

	st := in.expect(200, "GET", "/v1/applicants/manual-1/status", nil).m(t)
	if st["reviewStatus"] != "completed" || st["reviewAnswer"] != "GREEN" || st["moderationComment"] != "looks fine\nsecond line" {
		t.Fatalf("status after the console decision: %v", st)
	}
	// The page shows it on its lines (white-space: pre-line).
	b.page("/console/applicants/manual-1", `<td class="text">looks fine`+"\n"+`second line</td>`)
	got := rc.reviewed(t, secret)
	if got["externalUserId"] != "manual-1" || got["reviewResult"].(map[string]any)["reviewAnswer"] != "GREEN" {
		t.Fatalf("applicantReviewed %v", got)
	}
	if h := in.historyTypes("manual-1"); !slices.Contains(h, "managed_compliance.decided:operator") {
		t.Fatalf("review history %v has no operator decision", h)
	}

	// A rejection with labels; a bad one is a 400 that changes nothing.
	r = b.submit("/console/applicants/manual-2/decision", url.Values{"reviewAnswer": {"RED"}, "reviewRejectType": {"SOMETIMES"}})
	expectStatus(t, "bad reject type", r, http.StatusBadRequest)
	// A refused decision marks the control its error is about and ties
	// the error to it, for a screen reader as for the eye.
	for _, c := range []struct {
		what    string
		form    url.Values
		control string
	}{
		{"FINAL unconfirmed", url.Values{"reviewAnswer": {"RED"}, "reviewRejectType": {"FINAL"}, "rejectLabels": {"FORGERY"}},
			`name="confirmFinal" value="yes" aria-invalid="true" aria-describedby="decision-error"`},
		{"comment too long", url.Values{"reviewAnswer": {"GREEN"}, "moderationComment": {strings.Repeat("x", 2001)}},
			`name="moderationComment" maxlength="2000" rows="3" aria-invalid="true" aria-describedby="decision-error"`},
	} {
		r := b.submit("/console/applicants/manual-2/decision", c.form)
		expectStatus(t, c.what, r, http.StatusBadRequest)
		if body := string(r.Body); !strings.Contains(body, c.control) || !strings.Contains(body, `role="alert" id="decision-error"`) {
			t.Errorf("%s: the control is not marked with its error", c.what)
		}
	}
	r = b.submit("/console/applicants/manual-2/decision", url.Values{"reviewAnswer": {"RED"}, "reviewRejectType": {"RETRY"},
		"rejectLabels": {"LOW_QUALITY", "SELFIE_MISMATCH"}, "moderationComment": {"blurred"}})
	expectStatus(t, "reject", r, http.StatusSeeOther)
	got = rc.reviewed(t, secret)
	res := got["reviewResult"].(map[string]any)
	if got["externalUserId"] != "manual-2" || res["reviewAnswer"] != "RED" || res["reviewRejectType"] != "RETRY" ||
		!slices.Equal(toStrings(res["rejectLabels"]), []string{"LOW_QUALITY", "SELFIE_MISMATCH"}) || res["moderationComment"] != "blurred" {
		t.Fatalf("applicantReviewed %v", got)
	}
	// A second decision conflicts.
	expectStatus(t, "decide twice", b.submit("/console/applicants/manual-2/decision", url.Values{"reviewAnswer": {"GREEN"}}), http.StatusConflict)
}

// TestConsoleDecisionOnTheAttemptShown: a decision is for the submission
// its page showed. Rejected for RETRY and submitted again while an
// operator's page stood open, the applicant's new documents were approved
// unseen; the form now names its attempt, and a later one (or a decision
// taken meanwhile) refuses it with 409, keeping what was posted on the
// page as it is now.
func TestConsoleDecisionOnTheAttemptShown(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	ak, as := in.credential(store.Sandbox, store.RoleAdmin)
	in.createApplicant("manual-a", "manual")
	in.expect(200, "POST", "/v1/applicants/manual-a/verify", verifyBody(t, 31))
	in.waitReviewStatus("manual-a", "awaitingOperatorReview")

	b := in.operator()
	b.page("/console/applicants/manual-a", `name="shownAttempt" value="1"`)
	in.expect(200, "POST", "/v1/admin/applicants/manual-a/decision", map[string]any{"reviewAnswer": "RED", "reviewRejectType": "RETRY",
		"rejectLabels": []string{"LOW_QUALITY"}}, "X-Api-Key", ak, "X-Api-Secret", as)
	rc.reviewed(t, secret)
	in.expect(200, "POST", "/v1/applicants/manual-a/verify", verifyBody(t, 32))
	in.waitReviewStatus("manual-a", "awaitingOperatorReview")

	// The page still open shows attempt 1: its GREEN is refused, and the
	// form comes again for attempt 2, with the comment kept.
	r := b.submit("/console/applicants/manual-a/decision", url.Values{"reviewAnswer": {"GREEN"}, "shownAttempt": {"1"}, "moderationComment": {"seen on attempt 1"}})
	expectStatus(t, "decide an attempt no longer current", r, http.StatusConflict)
	body := html.UnescapeString(string(r.Body))
	for _, want := range []string{`role="alert" id="decision-error">Nothing was recorded: applicant "manual-a" was submitted again (attempt 2)`,
		`name="shownAttempt" value="2"`, "seen on attempt 1</textarea>"} {
		if !strings.Contains(body, want) {
			t.Fatalf("the refused decision's page has no %q:\n%s", want, body)
		}
	}
	if st := in.expect(200, "GET", "/v1/applicants/manual-a/status", nil).m(t); st["reviewStatus"] != "awaitingOperatorReview" || st["reviewAnswer"] != nil {
		t.Fatalf("status after the refused decision: %v", st)
	}
	expectStatus(t, "a bad attempt number", b.submit("/console/applicants/manual-a/decision", url.Values{"reviewAnswer": {"GREEN"}, "shownAttempt": {"two"}}), http.StatusBadRequest)

	// Its data PATCHed while it waits (no new attempt): the page's record
	// is not the one to approve either.
	version := regexp.MustCompile(`name="shownVersion" value="([0-9a-f]+)"`)
	shownVersion := func() string {
		t.Helper()
		m := version.FindStringSubmatch(b.page("/console/applicants/manual-a"))
		if m == nil {
			t.Fatal("the decision form carries no shownVersion")
		}
		return m[1]
	}
	before := shownVersion()
	in.expect(200, "PATCH", "/v1/applicants/manual-a", map[string]any{"lastName": "Mallory", "dateOfBirth": "1950-05-05"})
	r = b.submit("/console/applicants/manual-a/decision", url.Values{"reviewAnswer": {"GREEN"}, "shownAttempt": {"2"}, "shownVersion": {before}})
	expectStatus(t, "decide data changed since the page", r, http.StatusConflict)
	if body := html.UnescapeString(string(r.Body)); !strings.Contains(body, `applicant "manual-a" changed after the page showed it`) || !strings.Contains(body, "Mallory") {
		t.Fatalf("the refused decision's page does not say why or show the data as it is:\n%s", body)
	}
	// A new hosted link changes nothing the page shows: the page's
	// decision stands (the review found it refused).
	shown := shownVersion()
	in.expect(201, "POST", "/v1/applicants/manual-a/verification-sessions", map[string]any{})
	expectStatus(t, "decide the record shown", b.submit("/console/applicants/manual-a/decision", url.Values{"reviewAnswer": {"GREEN"}, "shownAttempt": {"2"}, "shownVersion": {shown}}), http.StatusSeeOther)
	if got := rc.reviewed(t, secret); got["reviewResult"].(map[string]any)["reviewAnswer"] != "GREEN" {
		t.Fatalf("applicantReviewed %v", got)
	}

	// A second operator's tab, decided meanwhile: the page says what was
	// not recorded, its verdict and comment, beside the applicant as it is.
	r = b.submit("/console/applicants/manual-a/decision", url.Values{"reviewAnswer": {"RED"}, "reviewRejectType": {"FINAL"}, "confirmFinal": {"yes"},
		"rejectLabels": {"FORGERY"}, "moderationComment": {"forged passport"}, "shownAttempt": {"2"}})
	expectStatus(t, "decide a decided applicant", r, http.StatusConflict)
	body = html.UnescapeString(string(r.Body))
	for _, want := range []string{"Decision not recorded", `is completed, not awaitingOperatorReview`, "<strong>RED</strong> FINAL — Forgery",
		"forged passport</blockquote>", `<span class="badge ans-GREEN">GREEN</span>`} {
		if !strings.Contains(body, want) {
			t.Fatalf("the conflict page has no %q:\n%s", want, body)
		}
	}
	if st := in.expect(200, "GET", "/v1/applicants/manual-a/status", nil).m(t); st["reviewAnswer"] != "GREEN" {
		t.Fatalf("status after the refused second decision: %v", st)
	}
}

// shownTime is how a console page shows the API's time iso: UTC text in
// a <time> element, which the page's script turns into the operator's
// own time zone.
func shownTime(t testing.TB, iso string) string {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, iso)
	if err != nil {
		t.Fatalf("time %q: %v", iso, err)
	}
	return `<time datetime="` + iso + `">` + at.UTC().Format("2006-01-02 15:04:05") + " UTC</time>"
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestConsoleDeliveryRetry(t *testing.T) {
	t.Parallel()
	in := start(t)
	// The receiver is down for its first three requests.
	rc := newReceiver(t, in.Clock, func(n int) int {
		if n <= 3 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	in.configureWebhook(rc)
	one, two, three := in.testEvent(), in.testEvent(), in.testEvent()
	for _, id := range []string{one, two, three} {
		in.waitDelivery(id, "failed", 1)
	}
	b := in.operator()
	b.page("/console/deliveries?status=failed", one, two, three)

	// Retry one.
	b.page("/console/deliveries/"+one, "Retry now", "503")
	r := b.submit("/console/deliveries/"+one+"/retry", nil)
	expectStatus(t, "retry", r, http.StatusSeeOther)
	if d := in.waitDelivery(one, "delivered", 2); d.Attempts[1].HTTPStatusCode == nil || *d.Attempts[1].HTTPStatusCode != 200 {
		t.Fatalf("retried delivery %+v", d)
	}
	page := b.page("/console/deliveries/"+one, "delivered")
	if strings.Contains(page, "Retry now") {
		t.Fatal("a delivered delivery offers a retry")
	}
	expectStatus(t, "retry a delivered one", b.submit("/console/deliveries/"+one+"/retry", nil), http.StatusConflict)

	// Bulk retry: a bad time is a 400, then every failed one is queued.
	b.page("/console/deliveries")
	expectStatus(t, "bulk retry with a bad since", b.submit("/console/retry-deliveries", url.Values{"status": {"failed"}, "since": {"yesterday"}}), http.StatusBadRequest)
	r = b.submit("/console/retry-deliveries", url.Values{"status": {"failed"}, "since": {testStart.Add(-time.Minute).Format(time.RFC3339)}})
	// Post/redirect/get: the page that says how many were queued is a GET,
	// so reloading it queues nothing again.
	expectStatus(t, "bulk retry", r, http.StatusSeeOther)
	b.page(r.Header.Get("Location"), "2 deliveries were queued")
	in.waitDelivery(two, "delivered", 2)
	in.waitDelivery(three, "delivered", 2)
	if h := consoleEvents(t, in, store.Sandbox); !slices.Contains(h, "console.delivery_retried") || !slices.Contains(h, "console.deliveries_retried") {
		t.Fatalf("console history %v lacks the retries", h)
	}
}

var (
	secretShownRe = regexp.MustCompile(`<pre class="secret">([^<]+)</pre>`)
	keyShown      = regexp.MustCompile(`<code>((?:sbx|prd)_key_[0-9a-f]+)</code>`)
)

// secretOnPage returns the secret a page shows once, "" if none.
func secretOnPage(body []byte) string {
	m := secretShownRe.FindSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(string(m[1]))
}

func TestConsoleCredentials(t *testing.T) {
	t.Parallel()
	in := start(t)
	b := in.operator()
	b.page("/console/credentials")
	r := b.shown("create", b.submit("/console/credentials", url.Values{"environment": {"production"}, "role": {"admin"}, "name": {"ops"}}))
	key, secret := keyShown.FindSubmatch(r.Body), secretOnPage(r.Body)
	if key == nil || secret == "" {
		t.Fatalf("the created credential page shows no key or secret: %s", r.Body)
	}
	in.expect(200, "GET", "/v1/levels", nil, "X-Api-Key", string(key[1]), "X-Api-Secret", secret)
	page := b.page("/console/credentials", string(key[1]), "ops")
	if strings.Contains(page, secret) {
		t.Fatal("the credentials list shows a secret")
	}
	expectStatus(t, "bad role", b.submit("/console/credentials", url.Values{"environment": {"sandbox"}, "role": {"root"}}), http.StatusBadRequest)

	r = b.submit("/console/credentials/"+string(key[1])+"/revoke", nil)
	expectStatus(t, "revoke", r, http.StatusSeeOther)
	in.expect(401, "GET", "/v1/levels", nil, "X-Api-Key", string(key[1]), "X-Api-Secret", secret)
	b.page("/console/credentials")
	expectStatus(t, "revoke unknown", b.submit("/console/credentials/sbx_key_nope/revoke", nil), http.StatusNotFound)
	if h := consoleEvents(t, in, store.Production); !slices.Contains(h, "console.credential_created") {
		t.Fatalf("production console history %v lacks the creation", h)
	}
}

func TestConsoleSettings(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc := newReceiver(t, in.Clock, nil)
	b := in.operator()

	// Rotation before any URL is a conflict.
	b.page("/console/settings")
	expectStatus(t, "rotate unconfigured", b.submit("/console/settings/webhook/rotate", nil), http.StatusConflict)

	// Configure URL and subscription: the secret is shown once.
	b.page("/console/settings")
	expectStatus(t, "bad URL", b.submit("/console/settings/webhook", url.Values{"url": {"ftp://x"}, "subscribedEventTypes": {"wallet.created"}}), http.StatusBadRequest)
	r := b.shown("set webhook", b.submit("/console/settings/webhook", url.Values{"url": {rc.URL}, "subscribedEventTypes": {"wallet.created", "balance.updated"}}))
	first := secretOnPage(r.Body)
	if first == "" {
		t.Fatalf("no secret shown: %s", r.Body)
	}
	cfg := in.expect(200, "GET", "/webhooks/outbound", nil).m(t)
	if cfg["url"] != rc.URL || !slices.Equal(toStrings(cfg["subscribedEventTypes"]), []string{"wallet.created", "balance.updated"}) {
		t.Fatalf("webhook config %v", cfg)
	}
	page := b.page("/console/settings", rc.URL)
	if strings.Contains(page, first) {
		t.Fatal("the settings page shows the secret again")
	}

	// Rotate: a new secret for the same URL signs the next delivery.
	r = b.shown("rotate", b.submit("/console/settings/webhook/rotate", nil))
	second := secretOnPage(r.Body)
	if second == "" || first == second {
		t.Fatalf("rotation shows no new secret: %s", r.Body)
	}
	in.testEvent()
	got := rc.next(t)
	if !dispatch.Verify(second, got.Body, got.Header.Get("X-Webhook-Signature")) {
		t.Fatal("the delivery after rotation is not signed with the new secret")
	}
	if dispatch.Verify(first, got.Body, got.Header.Get("X-Webhook-Signature")) {
		t.Fatal("the old secret still verifies")
	}

	// KYC callback URL and its secret.
	kyc := newReceiver(t, in.Clock, nil)
	b.page("/console/settings")
	expectStatus(t, "set callback", b.submit("/console/settings/callback", url.Values{"callbackUrl": {kyc.URL}}), http.StatusSeeOther)
	if u, err := in.Store.CallbackURL(); err != nil || u != kyc.URL {
		t.Fatalf("callback URL %q %v", u, err)
	}
	old, err := in.Store.CallbackSecret()
	if err != nil {
		t.Fatal(err)
	}
	b.page("/console/settings", kyc.URL)
	r = b.shown("rotate callback", b.submit("/console/settings/callback/rotate", nil))
	shown := secretOnPage(r.Body)
	now, err := in.Store.CallbackSecret()
	if err != nil || shown != now || now == old {
		t.Fatalf("callback rotation: shown %q, stored %q, old %q", shown, now, old)
	}
	in.createApplicant("cb-user", "Turing")
	created := kyc.nextOfType(t, "applicantCreated")
	if !dispatch.Verify(now, created.Body, created.Header.Get("X-Webhook-Signature")) {
		t.Fatal("applicantCreated is not signed with the rotated callback secret")
	}
}

func TestConsoleProductionDecision(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, secret := in.kycReceiver()
	pk, ps := in.credential(store.Production, store.RolePartner)
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "prod-1", "firstName": "Ada", "lastName": "Lovelace", "dateOfBirth": "1990-01-01"},
		"X-Api-Key", pk, "X-Api-Secret", ps)
	in.expect(200, "POST", "/v1/applicants/prod-1/verify", verifyBody(t, 41), "X-Api-Key", pk, "X-Api-Secret", ps)

	b := in.operator()
	expectStatus(t, "production applicant in sandbox", b.get("/console/applicants/prod-1"), http.StatusNotFound)
	b.page("/console")
	expectStatus(t, "switch", b.submit("/console/env", url.Values{"env": {"production"}, "back": {"/console"}}), http.StatusSeeOther)
	b.page("/console", "prod-1") // waiting for a decision
	b.page("/console/applicants/prod-1", "review.check", "awaitingOperatorReview")
	// The console's own rules (issue 11): a rejection names a label, a
	// FINAL one is confirmed; a refused form comes back as posted.
	r := b.submit("/console/applicants/prod-1/decision", url.Values{"reviewAnswer": {"RED"}, "reviewRejectType": {"FINAL"}, "moderationComment": {"kept"}})
	expectStatus(t, "RED without a label", r, http.StatusBadRequest)
	for _, want := range []string{"Choose at least one reject label", `value="RED" checked`, ">kept</textarea>"} {
		if !strings.Contains(string(r.Body), want) {
			t.Errorf("the refused decision form lacks %q", want)
		}
	}
	r = b.submit("/console/applicants/prod-1/decision", url.Values{"reviewAnswer": {"RED"}, "reviewRejectType": {"FINAL"}, "rejectLabels": {"FORGERY"}})
	expectStatus(t, "FINAL without confirmation", r, http.StatusBadRequest)
	if !strings.Contains(string(r.Body), "tick the confirmation") || !strings.Contains(string(r.Body), `value="FORGERY" checked`) {
		t.Errorf("the refused FINAL form does not ask for the confirmation")
	}
	b.page("/console/applicants/prod-1", "awaitingOperatorReview") // nothing recorded
	r = b.submit("/console/applicants/prod-1/decision", url.Values{"reviewAnswer": {"RED"}, "reviewRejectType": {"FINAL"}, "rejectLabels": {"FORGERY"}, "confirmFinal": {"yes"}})
	expectStatus(t, "reject in production", r, http.StatusSeeOther)
	got := rc.reviewed(t, secret)
	if got["environment"] != "production" || got["reviewResult"].(map[string]any)["reviewRejectType"] != "FINAL" {
		t.Fatalf("applicantReviewed %v", got)
	}
	expectStatus(t, "unknown environment", b.submit("/console/env", url.Values{"env": {"staging"}}), http.StatusBadRequest)
}

// TestConsoleTrailingSlash: GET /console/ is the overview's address with a
// slash too many; it redirects to /console.
func TestConsoleTrailingSlash(t *testing.T) {
	t.Parallel()
	in := start(t)
	b := in.browser()
	r := b.get("/console/?ok=env")
	expectStatus(t, "GET /console/", r, http.StatusMovedPermanently)
	if loc := r.Header.Get("Location"); loc != "/console?ok=env" {
		t.Fatalf("GET /console/ redirects to %q", loc)
	}
}

// TestConsolePostWithoutSession: a form posted without a session carries no
// valid CSRF token: 403, and nothing happens.
func TestConsolePostWithoutSession(t *testing.T) {
	t.Parallel()
	in := start(t)
	if err := in.Store.SetConsolePassword(consolePassword); err != nil {
		t.Fatal(err)
	}
	b := in.browser()
	for _, path := range []string{"/console/credentials", "/console/logout", "/console/settings/callback/rotate",
		"/console/applicants/nobody/decision", "/console/retry-deliveries"} {
		r := b.post(path, url.Values{"csrf": {"guessed"}, "environment": {"sandbox"}, "status": {"failed"}})
		expectStatus(t, "POST "+path+" without a session", r, http.StatusForbidden)
	}
	creds, err := in.Store.Credentials()
	if err != nil || len(creds) != 1 {
		t.Fatalf("credentials %v %v, want the harness's one", creds, err)
	}
	// A GET without a session still goes to the login page.
	r := b.get("/console/applicants")
	expectStatus(t, "GET without a session", r, http.StatusSeeOther)
	if loc := r.Header.Get("Location"); !strings.HasPrefix(loc, "/console/login?next=") {
		t.Fatalf("GET without a session redirects to %q", loc)
	}
}

// TestConsoleEscapesUserData: names, labels and notes a partner or an
// applicant typed are shown as text, never as markup.
func TestConsoleEscapesUserData(t *testing.T) {
	t.Parallel()
	in := start(t)
	const evil = "<script>alert(1)</script>"
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "xss-1", "firstName": evil, "lastName": "MANUAL"})
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "xss-co", "type": "company", "companyName": evil,
		"country": "DEU", "ubos": []map[string]any{{"fullName": "Eve " + evil, "dateOfBirth": "1980-01-01", "ownershipPercent": 50, "roles": []string{"ubo"}}}})
	vault := in.vault(evil)
	b := in.operator()
	for _, path := range []string{"/console/applicants", "/console/applicants?q=script", "/console/applicants/xss-1",
		"/console/applicants/xss-co", "/console/vaults", "/console/vaults/" + vault} {
		r := b.get(path)
		expectStatus(t, path, r, http.StatusOK)
		if strings.Contains(string(r.Body), evil) {
			t.Fatalf("GET %s renders the markup unescaped:\n%s", path, r.Body)
		}
		if !strings.Contains(string(r.Body), "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Fatalf("GET %s does not show the escaped value:\n%s", path, r.Body)
		}
	}
}

// TestConsoleApplicantList: the list names each applicant and filters by
// type; search also answers to ?search=.
func TestConsoleApplicantList(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("list-ada", "Lovelace")
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "list-co", "type": "company", "companyName": "Acme Holding", "country": "DEU"})
	b := in.operator()
	b.page("/console/applicants", "Lovelace", "Acme Holding")
	page := b.page("/console/applicants?type=company", "list-co")
	if strings.Contains(page, "list-ada") {
		t.Fatal("type=company lists an individual")
	}
	page = b.page("/console/applicants?type=individual&q=list", "list-ada")
	if strings.Contains(page, "list-co") {
		t.Fatal("type=individual&q=list lists a company")
	}
	page = b.page("/console/applicants?search=acme", "list-co")
	if strings.Contains(page, "list-ada") {
		t.Fatal("search=acme lists list-ada")
	}
	expectStatus(t, "unknown type", b.get("/console/applicants?type=robot"), http.StatusBadRequest)
}

// TestConsoleCompanyStructure: a company's page shows its structure's flags
// and counts and its rows with their children; a child's page names its
// parent.
func TestConsoleCompanyStructure(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "holding", "type": "company", "companyName": "Holding AG",
		"country": "DEU", "ubos": []map[string]any{
			{"fullName": "Anna Maria Schmidt", "dateOfBirth": "1980-02-02", "ownershipPercent": 60, "roles": []string{"ubo", "director"}},
			{"fullName": "Bob Jones", "dateOfBirth": "1970-03-03", "ownershipPercent": 30, "roles": []string{"ubo"}}}})
	in.spawn(201, "holding", 0, nil)
	b := in.operator()
	page := b.page("/console/applicants/holding", "Company structure", "Anna Maria Schmidt", "Bob Jones",
		`<a href="/console/applicants/holding.ubo.1">holding.ubo.1</a>`, "allChildrenComplete", "hasNoUbos")
	for _, kv := range []string{`<th scope="row">spawned</th><td>1</td>`, `<th scope="row">pending</th><td>1</td>`, `<th scope="row">total</th><td>2</td>`} {
		if !strings.Contains(page, kv) {
			t.Fatalf("the company page has no %s:\n%s", kv, page)
		}
	}
	b.page("/console/applicants/holding.ubo.1", "parentExternalUserId", `<a href="/console/applicants/holding">holding</a>`)
}

// TestConsoleCredentialDefaults: a credential made without naming an
// environment is one of the environment the console shows.
func TestConsoleCredentialDefaults(t *testing.T) {
	t.Parallel()
	in := start(t)
	b := in.operator()
	b.page("/console/credentials")
	expectStatus(t, "switch", b.submit("/console/env", url.Values{"env": {"production"}}), http.StatusSeeOther)
	b.page("/console/credentials")
	b.shown("create without fields", b.submit("/console/credentials", nil))
	creds, err := in.Store.Credentials()
	if err != nil {
		t.Fatal(err)
	}
	var made *store.Credential
	for i := range creds {
		if creds[i].Key != in.Key {
			made = &creds[i]
		}
	}
	if made == nil || made.Environment != store.Production || made.Role != store.RolePartner {
		t.Fatalf("credentials %+v: want a production partner credential", creds)
	}

	// Revoked from the sandbox view, the event still belongs to production.
	b.page("/console/credentials")
	expectStatus(t, "switch back", b.submit("/console/env", url.Values{"env": {"sandbox"}}), http.StatusSeeOther)
	b.page("/console/credentials")
	expectStatus(t, "revoke", b.submit("/console/credentials/"+made.Key+"/revoke", nil), http.StatusSeeOther)
	if events := consoleEvents(t, in, store.Production); !slices.Contains(events, "console.credential_revoked") {
		t.Fatalf("production console events %v have no console.credential_revoked", events)
	}
}

// postMultipart submits fields to path as multipart/form-data, as curl -F
// does.
func (b *browser) postMultipart(path string, fields map[string]string) *response {
	b.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			b.t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		b.t.Fatal(err)
	}
	req, err := http.NewRequest("POST", b.base+path, &body)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return b.send(req)
}

// TestConsoleMultipartForms: forms posted as multipart/form-data work like
// URL-encoded ones, CSRF check included.
func TestConsoleMultipartForms(t *testing.T) {
	t.Parallel()
	in := start(t)
	if err := in.Store.SetConsolePassword(consolePassword); err != nil {
		t.Fatal(err)
	}
	b := in.browser()
	b.page("/console/login")
	expectStatus(t, "multipart login", b.postMultipart("/console/login", map[string]string{"name": "admin", "password": consolePassword, "csrf": b.csrf}), http.StatusSeeOther)
	b.page("/console/credentials")
	expectStatus(t, "multipart form without its token", b.postMultipart("/console/credentials", map[string]string{"environment": "sandbox"}), http.StatusForbidden)
	r := b.shown("multipart credential", b.postMultipart("/console/credentials", map[string]string{"environment": "sandbox", "name": "multi", "csrf": b.csrf, "shownEnv": b.env}))
	if !strings.Contains(string(r.Body), "multi") {
		t.Fatalf("credential page: %s", r.Body)
	}
}

// TestConsoleLevels: levels are created and edited from the console with
// the JSON of the API; each edit is an internal console event.
func TestConsoleLevels(t *testing.T) {
	t.Parallel()
	in := start(t)
	b := in.operator()
	b.page("/console/levels", "Create a level")
	r := b.submit("/console/levels", url.Values{"level": {`{"name":"console-level","applicantType":"individual","steps":[{"kind":"identity_doc"},{"kind":"selfie"}],"personalInfoFields":["firstName","lastName"]}`}})
	expectStatus(t, "create a level", r, http.StatusSeeOther)
	if loc := r.Header.Get("Location"); !strings.HasPrefix(loc, "/console/levels/console-level") {
		t.Fatalf("create redirects to %q", loc)
	}
	in.expect(200, "GET", "/v1/levels/console-level", nil)
	// Newest first, as the API lists them (SPEC §2): the new level before
	// the built-in ones.
	if list := b.page("/console/levels"); !(strings.Index(list, "console-level") < strings.Index(list, "kyb-level") &&
		strings.Index(list, "kyb-level") < strings.Index(list, "basic-kyc-level")) {
		t.Errorf("console levels not newest first:\n%s", list)
	}
	b.page("/console/levels/console-level", "identity_doc", "Edit")
	expectStatus(t, "edit a level", b.submit("/console/levels/console-level", url.Values{"level": {`{"steps":[{"kind":"identity_doc"}]}`}}), http.StatusSeeOther)
	var l store.Level
	in.expect(200, "GET", "/v1/levels/console-level", nil).json(t, &l)
	if len(l.Steps) != 1 || l.Steps[0].Kind != "identity_doc" {
		t.Fatalf("steps after the edit: %+v", l.Steps)
	}
	b.page("/console/levels/console-level")
	expectStatus(t, "edit with bad JSON", b.submit("/console/levels/console-level", url.Values{"level": {`{"steps":`}}), http.StatusBadRequest)
	expectStatus(t, "edit with a wrong type", b.submit("/console/levels/console-level", url.Values{"level": {`{"steps":"x"}`}}), http.StatusBadRequest)
	expectStatus(t, "edit an unknown level", b.submit("/console/levels/nope", url.Values{"level": {`{}`}}), http.StatusNotFound)
	expectStatus(t, "create without a token", b.post("/console/levels", url.Values{"level": {`{"name":"x"}`}}), http.StatusForbidden)
	events := consoleEvents(t, in, store.Sandbox)
	if !slices.Contains(events, "console.level_created") || !slices.Contains(events, "console.level_edited") {
		t.Fatalf("console events %v", events)
	}
}

// TestConsoleDecisionWords: the decision form also reads approve/reject and
// a lower-case reject type, as a script filling it in may write them.
func TestConsoleDecisionWords(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("words-1", "MANUAL")
	in.expect(200, "POST", "/v1/applicants/words-1/verify", verifyBody(t, 21))
	in.createApplicant("words-2", "MANUAL")
	in.expect(200, "POST", "/v1/applicants/words-2/verify", verifyBody(t, 22))
	b := in.operator()
	b.page("/console/applicants/words-1", "Record decision")
	r := b.submit("/console/applicants/words-1/decision", url.Values{"decision": {"reject"}, "reviewRejectType": {"retry"}, "rejectLabels": {"FORGERY"}})
	expectStatus(t, "reject", r, http.StatusSeeOther)
	st := in.expect(200, "GET", "/v1/applicants/words-1/status", nil).m(t)
	if st["reviewAnswer"] != "RED" || st["reviewRejectType"] != "RETRY" {
		t.Fatalf("status after reject: %v", st)
	}
	b.page("/console/applicants/words-2", "Record decision")
	expectStatus(t, "approve", b.submit("/console/applicants/words-2/decision", url.Values{"reviewAnswer": {"Approve"}}), http.StatusSeeOther)
	if st := in.expect(200, "GET", "/v1/applicants/words-2/status", nil).m(t); st["reviewAnswer"] != "GREEN" {
		t.Fatalf("status after approve: %v", st)
	}
}

// TestConsoleSettingsScripted: a script posting only a URL subscribes the
// webhook to every type; the page's form with no box ticked is refused;
// the callback form also takes its URL as "url".
func TestConsoleSettingsScripted(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc := newReceiver(t, in.Clock, nil)
	b := in.operator()
	b.page("/console/settings")
	expectStatus(t, "the page's form with no type", b.submit("/console/settings/webhook", url.Values{"url": {rc.URL}, "subscription": {"boxes"}}), http.StatusBadRequest)
	r := b.shown("only a URL", b.submit("/console/settings/webhook", url.Values{"url": {rc.URL}}))
	if secretOnPage(r.Body) == "" {
		t.Fatalf("no secret shown: %s", r.Body)
	}
	if cfg := in.expect(200, "GET", "/webhooks/outbound", nil).m(t); cfg["url"] != rc.URL || cfg["subscribedEventTypes"] != nil {
		t.Fatalf("webhook config %v, want every type", cfg)
	}
	b.page("/console/settings")
	expectStatus(t, "callback as url", b.submit("/console/settings/callback", url.Values{"url": {rc.URL}}), http.StatusSeeOther)
	if u, err := in.Store.CallbackURL(); err != nil || u != rc.URL {
		t.Fatalf("callback URL %q %v", u, err)
	}
}

// TestConsoleBulkRetryAnyStatus: bulk retry without a status queues the
// failed and the dead deliveries alike.
func TestConsoleBulkRetryAnyStatus(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc := newReceiver(t, in.Clock, func(n int) int {
		if n <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	in.configureWebhook(rc)
	one, two := in.testEvent(), in.testEvent()
	in.waitDelivery(one, "failed", 1)
	in.waitDelivery(two, "failed", 1)
	b := in.operator()
	b.page("/console/deliveries", "failed or dead")
	r := b.submit("/console/retry-deliveries", nil)
	expectStatus(t, "bulk retry without a status", r, http.StatusSeeOther)
	b.page(r.Header.Get("Location"), "2 deliveries were queued")
	in.waitDelivery(one, "delivered", 2)
	in.waitDelivery(two, "delivered", 2)
	b.page("/console/deliveries")
	expectStatus(t, "bulk retry of delivered ones", b.submit("/console/retry-deliveries", url.Values{"status": {"delivered"}}), http.StatusBadRequest)
}

// TestConsoleLevelTypo: a typo in a level's JSON keeps what the operator
// typed in the form and shows the error beside it (issue 11), for editing
// and for creating.
func TestConsoleLevelTypo(t *testing.T) {
	t.Parallel()
	in := start(t)
	b := in.operator()
	b.page("/console/levels/basic-kyc-level")
	typo := `{"steps": [{"kind": "selfie"},]}`
	r := b.submit("/console/levels/basic-kyc-level", url.Values{"level": {typo}})
	expectStatus(t, "typo", r, http.StatusBadRequest)
	body := html.UnescapeString(string(r.Body))
	for _, want := range []string{`id="level-error"`, typo, `aria-invalid="true"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the level form after a typo lacks %q:\n%s", want, body)
		}
	}
	b.page("/console/levels")
	r = b.submit("/console/levels", url.Values{"level": {`{"name": "x", "applicantType": "robot"}`}})
	expectStatus(t, "bad value", r, http.StatusBadRequest)
	body = html.UnescapeString(string(r.Body))
	if !strings.Contains(body, `"applicantType": "robot"`) || !strings.Contains(body, `id="level-error"`) {
		t.Errorf("the create form lost the input or the error:\n%s", body)
	}
}

// TestConsoleRouteErrorsArePages: a console path that names no page, a
// method a page does not take, or a body over the limit is answered with
// the console's error page and headers, not the API's JSON (which a
// browser shows as text); the API keeps its JSON.
func TestConsoleRouteErrorsArePages(t *testing.T) {
	t.Parallel()
	in := start(t)
	b := in.operator()
	b.page("/console/settings")
	for _, c := range []struct {
		what string
		r    *response
		want int
	}{
		{"no page", b.get("/console/nothing"), http.StatusNotFound},
		{"trailing slash", b.get("/console/applicants/"), http.StatusNotFound},
		{"a form posted to a page", b.submit("/console/vaults", url.Values{}), http.StatusMethodNotAllowed},
		{"body over the limit", b.submit("/console/levels", url.Values{"level": {strings.Repeat("a", 1100000)}}), http.StatusRequestEntityTooLarge},
	} {
		expectStatus(t, c.what, c.r, c.want)
		if ct := c.r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") || c.r.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: Content-Type %q, X-Frame-Options %q: want the console's page", c.what, ct, c.r.Header.Get("X-Frame-Options"))
		}
	}
	// The operator keeps the navigation, in the environment shown.
	expectStatus(t, "switch", b.submit("/console/env", url.Values{"env": {"production"}}), http.StatusSeeOther)
	if r := b.get("/console/nothing"); !strings.Contains(string(r.Body), `href="/console/applicants"`) || !strings.Contains(string(r.Body), "<strong>production</strong>") {
		t.Errorf("the 404 page of a logged-in operator lacks the navigation or the environment: %s", r.Body)
	}
	if r := b.submit("/console/vaults", url.Values{}); !strings.Contains(r.Header.Get("Allow"), "GET") {
		t.Errorf("405 page without Allow: %q", r.Header.Get("Allow"))
	}
	if code, _ := errField(t, in.expect(404, "GET", "/v1/nothing", nil)); code != "route_not_found" {
		t.Errorf("API 404 code %q", code)
	}
}

// TestConsoleRefusedFormsKeepTheirValues: a refused settings, callback,
// credential or bulk-retry form comes back on its page with the message
// and what was typed (it was a bare error page that lost them).
func TestConsoleRefusedFormsKeepTheirValues(t *testing.T) {
	t.Parallel()
	in := start(t)
	b := in.operator()
	b.page("/console/settings")
	for _, c := range []struct {
		what, path string
		form       url.Values
		want       []string
	}{
		{"webhook", "/console/settings/webhook", url.Values{"url": {"http://example.com/my-hook"}, "subscription": {"boxes"}, "subscribedEventTypes": {"wallet.created"}},
			[]string{"http://example.com/my-hook", `value="wallet.created" checked`, `role="alert" id="webhook-error"`,
				`name="url" value="http://example.com/my-hook" required placeholder="https://example.com/webhooks" aria-invalid="true" aria-describedby="webhook-error"`}},
		{"webhook without a type", "/console/settings/webhook", url.Values{"url": {"https://example.com/h2"}, "subscription": {"boxes"}},
			[]string{"https://example.com/h2", "Choose at least one event type.", `<fieldset class="invalid" aria-describedby="webhook-error">`}},
		{"callback", "/console/settings/callback", url.Values{"callbackUrl": {"http://example.com/kyc"}},
			[]string{`value="http://example.com/kyc"`, `role="alert" id="callback-error"`, `aria-invalid="true" aria-describedby="callback-error"`}},
		{"credential", "/console/credentials", url.Values{"environment": {"staging"}, "role": {"admin"}, "name": {"ci-bot"}}, []string{`value="ci-bot"`, `role="alert"`, `aria-invalid="true"`}},
		{"bulk retry", "/console/retry-deliveries", url.Values{"status": {"dead"}, "destination": {"kyc"}, "since": {"yesterday"}},
			[]string{`value="yesterday"`, `<option selected>kyc</option>`, "since must be an ISO 8601 timestamp", `role="alert" id="bulk-retry-error"`,
				`value="yesterday" placeholder="2026-11-21T05:00:00Z" aria-invalid="true" aria-describedby="bulk-retry-error" autofocus`}},
	} {
		r := b.submit(c.path, c.form)
		expectStatus(t, c.what, r, http.StatusBadRequest)
		body := string(r.Body)
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: the page lacks %s", c.what, w)
			}
		}
		// Sent again, the form is there with the cursor in the refused
		// field (autofocus, which scrolls to it past a long list: a
		// fragment in the action would keep Chromium from focusing it),
		// and the field names the error as its description.
		if !strings.Contains(body, `action="`+c.path+`"`) {
			t.Errorf("%s: the form is not on the page again", c.what)
		}
	}
	// A webhook page with no URL yet still ticks every box.
	if page := b.page("/console/settings"); !strings.Contains(page, `value="balance.updated" checked`) {
		t.Error("the settings page ticks no box before a URL is set")
	}
}

// TestConsoleLoginReturnsToThePageAsked: a page opened without a session
// sends the browser to the login page and, once logged in, back to it;
// a next that is not a console page of this site goes home.
func TestConsoleLoginReturnsToThePageAsked(t *testing.T) {
	t.Parallel()
	in := start(t)
	if err := in.Store.SetConsolePassword(consolePassword); err != nil {
		t.Fatal(err)
	}
	b := in.browser()
	r := b.get("/console/deliveries?status=dead")
	expectStatus(t, "a page without a session", r, http.StatusSeeOther)
	loc := r.Header.Get("Location")
	if loc != "/console/login?next="+url.QueryEscape("/console/deliveries?status=dead") {
		t.Fatalf("sent to %q", loc)
	}
	b.page(loc, `name="next" value="/console/deliveries?status=dead"`)
	r = b.submit("/console/login", url.Values{"name": {"admin"}, "password": {consolePassword}, "next": {"/console/deliveries?status=dead"}})
	expectStatus(t, "login", r, http.StatusSeeOther)
	if got := r.Header.Get("Location"); got != "/console/deliveries?status=dead" {
		t.Errorf("after login: %q", got)
	}
	for _, next := range []string{"https://evil.example/console", "//evil.example/console", "/\\evil.example", "/v1/applicants", "/console/login?next=x", "",
		"/console/../v1/applicants", "/console/%2e%2e/v1/applicants", "/console/./../metrics", "/console/logout",
		"/console/applicants?q=" + strings.Repeat("a", 3000)} {
		b := in.browser()
		b.page("/console/login")
		r := b.submit("/console/login", url.Values{"name": {"admin"}, "password": {consolePassword}, "next": {next}})
		if got := r.Header.Get("Location"); got != "/console" {
			t.Errorf("next %q: sent to %q, want /console", next, got)
		}
	}
}

// TestConsoleSettingsKeepEveryType: a webhook subscribed to every type
// (subscribedEventTypes null: also types added later) stays so when the
// settings form is saved with every box ticked, as the page shows it; an
// explicit list stays explicit.
func TestConsoleSettingsKeepEveryType(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc := newReceiver(t, in.Clock, nil)
	in.expect(200, "PUT", "/webhooks/outbound", map[string]any{"url": rc.URL})
	all := url.Values{"url": {rc.URL}, "subscription": {"boxes"}}
	for _, e := range store.CustodyCatalog() {
		all.Add("subscribedEventTypes", e.Name)
	}
	b := in.operator()
	b.page("/console/settings")
	expectStatus(t, "save with every box", b.submit("/console/settings/webhook", all), http.StatusSeeOther)
	if cfg := in.expect(200, "GET", "/webhooks/outbound", nil).m(t); cfg["subscribedEventTypes"] != nil {
		t.Fatalf("subscribedEventTypes %v after saving the page as shown, want null (every type)", cfg["subscribedEventTypes"])
	}
	in.expect(200, "PUT", "/webhooks/outbound", map[string]any{"url": rc.URL, "subscribedEventTypes": []string{"wallet.created"}})
	b.page("/console/settings")
	expectStatus(t, "save with every box", b.submit("/console/settings/webhook", all), http.StatusSeeOther)
	if cfg := in.expect(200, "GET", "/webhooks/outbound", nil).m(t); len(cfg["subscribedEventTypes"].([]any)) != len(store.CustodyCatalog()) {
		t.Fatalf("subscribedEventTypes %v, want the four ticked", cfg["subscribedEventTypes"])
	}
}

// TestConsoleSettingsShowNoSubscription: a webhook subscribed to nothing
// (subscribedEventTypes [], seed 001: null means all) shows no box ticked,
// and saving the page as shown keeps it subscribed to nothing rather than
// turning it into every type.
func TestConsoleSettingsShowNoSubscription(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc := newReceiver(t, in.Clock, nil)
	in.expect(200, "PUT", "/webhooks/outbound", map[string]any{"url": rc.URL, "subscribedEventTypes": []string{}})
	b := in.operator()
	page := b.page("/console/settings")
	for _, e := range store.CustodyCatalog() {
		if regexp.MustCompile(`value="` + regexp.QuoteMeta(e.Name) + `"[^>]*checked`).MatchString(page) {
			t.Errorf("%s shown ticked for a webhook subscribed to nothing", e.Name)
		}
	}
	expectStatus(t, "save as shown", b.submit("/console/settings/webhook", url.Values{"url": {rc.URL}, "subscription": {"boxes"}}), http.StatusSeeOther)
	if cfg := in.expect(200, "GET", "/webhooks/outbound", nil).m(t); cfg["subscribedEventTypes"] == nil || len(cfg["subscribedEventTypes"].([]any)) != 0 {
		t.Fatalf("subscribedEventTypes %v after saving the page as shown, want []", cfg["subscribedEventTypes"])
	}
}

// TestConsoleBulkRetryWindow: the console's bulk retry holds to the API's
// rule, until later than since (400 naming until), rather than queueing
// nothing and saying so.
func TestConsoleBulkRetryWindow(t *testing.T) {
	t.Parallel()
	in := start(t)
	b := in.operator()
	b.page("/console/deliveries")
	r := b.submit("/console/retry-deliveries", url.Values{"status": {"failed"},
		"since": {"2026-12-31T00:00:00Z"}, "until": {"2026-01-01T00:00:00Z"}})
	expectStatus(t, "bulk retry with until before since", r, http.StatusBadRequest)
	if !strings.Contains(string(r.Body), "until must be later than since") {
		t.Errorf("page does not say why: %s", r.Body)
	}
}

// TestConsoleDuplicatesBothWays: an image two production applicants share
// flags both on the page the operator decides from (SPEC §3.5: duplicate
// selfie or document across applicants), also the one submitted first,
// whose checks ran before the other existed; and any document counts, a
// company's certificate as much as a selfie.
func TestConsoleDuplicatesBothWays(t *testing.T) {
	t.Parallel()
	in := start(t)
	pk, ps := in.credential("production", "partner")
	prod := []string{"X-Api-Key", pk, "X-Api-Secret", ps, "X-Environment", "production"}
	selfie := verifyBody(t, 41)["selfie"]
	for i, id := range []string{"dup-first", "dup-second"} {
		in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": id, "firstName": "Ann", "lastName": "Dup", "dateOfBirth": "1980-01-01"}, prod...)
		body := verifyBody(t, uint64(42+i))
		body["selfie"] = selfie
		in.expect(200, "POST", "/v1/applicants/"+id+"/verify", body, prod...)
	}
	certificate := b64(pngImage(t, 210, 210, 44))
	for i, id := range []string{"co-first", "co-second"} {
		in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": id, "type": "company", "companyName": "Dup " + id,
			"registrationNumber": "HRB 1", "country": "DEU"}, prod...)
		in.expect(201, "POST", "/v1/applicants/"+id+"/documents", map[string]any{"kind": "company_docs", "docType": "certificate_of_incorporation",
			"image": certificate}, prod...)
		in.expect(201, "POST", "/v1/applicants/"+id+"/documents", map[string]any{"kind": "company_docs", "docType": "register_of_shareholders",
			"image": b64(pngImage(t, 210, 210, uint64(45+i)))}, prod...)
		in.expect(200, "POST", "/v1/applicants/"+id+"/review", nil, prod...)
	}

	b := in.operator()
	b.page("/console/applicants")
	expectStatus(t, "switch to production", b.submit("/console/env", url.Values{"env": {"production"}}), http.StatusSeeOther)
	for _, pair := range [][2]string{{"dup-first", "dup-second"}, {"dup-second", "dup-first"}, {"co-first", "co-second"}, {"co-second", "co-first"}} {
		page := b.page("/console/applicants/"+pair[0], "Automatic checks")
		if !strings.Contains(page, `data-check="duplicate" data-result="match"`) || !strings.Contains(page, `href="/console/applicants/`+pair[1]+`"`) {
			t.Errorf("%s: no duplicate finding naming %s", pair[0], pair[1])
		}
		if strings.Contains(page, "is used by another applicant") && strings.Contains(page, `data-result="none"`) {
			t.Errorf("%s: the page says no image is shared", pair[0])
		}
	}
}

// TestConsoleCallbackSecretFromConfig: a callback secret the configuration
// sets is applied again at every start, so the console offers no rotation
// that the next start would undo (the receiver given the rotated secret
// would refuse every applicant event from then on), and says where the
// secret is changed.
func TestConsoleCallbackSecretFromConfig(t *testing.T) {
	t.Parallel()
	pinned := "whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	kyc := "http://127.0.0.1:9/kyc"
	in := start(t, func(o *options) { o.settings.KYC.CallbackSecret, o.settings.KYC.CallbackURL = pinned, kyc })
	b := in.operator()
	page := b.page("/console/settings", "kyc.callback_secret", "kyc.callback_url")
	if strings.Contains(page, "/console/settings/callback/rotate") {
		t.Error("the settings page offers a rotation of the configured callback secret")
	}
	r := b.submit("/console/settings/callback/rotate", nil)
	expectStatus(t, "rotate a configured secret", r, http.StatusConflict)
	if !strings.Contains(string(r.Body), "kyc.callback_secret") {
		t.Errorf("the refusal does not say where the secret is set: %s", r.Body)
	}
	if s, err := in.Store.CallbackSecret(); err != nil || s != pinned {
		t.Errorf("callback secret %q %v, want the configured one", s, err)
	}
}

// TestConsoleDotIDs: "." and ".." are valid externalUserIds (SPEC §3.2);
// the console's links to them escape the dots, so a client that removes
// dot segments from a path as RFC 3986 §5.2.4 says still opens the
// applicant. (A browser's URL parser folds %2E%2E too: there the console
// still cannot open them.)
func TestConsoleDotIDs(t *testing.T) {
	t.Parallel()
	in := start(t)
	b := in.operator()
	for _, id := range []string{".", ".."} {
		in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": id, "lastName": "Dots" + strconv.Itoa(len(id))})
	}
	list := b.page("/console/applicants")
	for id, href := range map[string]string{".": "/console/applicants/%2E", "..": "/console/applicants/%2E%2E"} {
		if !strings.Contains(list, `href="`+href+`"`) {
			t.Errorf("the list does not link %q as %s", id, href)
		}
		b.page(href, "Dots"+strconv.Itoa(len(id)))
	}
	// A refused decision's address, opened again, leads back to it too.
	for id, href := range map[string]string{".": "/console/applicants/%2E", "..": "/console/applicants/%2E%2E"} {
		if loc := b.get(href + "/decision").Header.Get("Location"); loc != href {
			t.Errorf("the decision address of %q leads to %q, want %s", id, loc, href)
		}
	}
}

// TestConsoleFormAddressesOpenTheirPage: a refused form leaves its
// address in the bar (a POST-only route); opened again (a reload, Enter, a
// restored tab, the environment switch's way back) it shows the page the
// form is on, never a 405. Every POST route of the console of routes.go
// without a GET of its own is tried.
func TestConsoleFormAddressesOpenTheirPage(t *testing.T) {
	t.Parallel()
	in := start(t)
	b := in.operator()
	b.page("/console")
	gets := map[string]bool{}
	for _, rt := range sweepRoutes(t) {
		if rt.guard == "console" && rt.method == "GET" {
			gets[rt.path] = true
		}
	}
	params := strings.NewReplacer(":id", "some-id", ":key", "some-key", ":name", "some-name")
	tried := 0
	for _, rt := range sweepRoutes(t) {
		if rt.guard != "console" || rt.method != "POST" || rt.path == "/console/login" {
			continue
		}
		if !gets[rt.path] {
			t.Errorf("POST %s has no GET route: opened again, its address is a 405", rt.path)
			continue
		}
		tried++
		path := params.Replace(rt.path)
		r := b.get(path)
		if r.Status == http.StatusOK || r.Status == http.StatusNotFound {
			continue // a page of its own (levels, credentials, the clock)
		}
		to := r.Header.Get("Location")
		if r.Status != http.StatusSeeOther || !strings.HasPrefix(to, "/console") {
			t.Errorf("GET %s: %d to %q, want the page or a 303 to the form's page", path, r.Status, to)
			continue
		}
		if page := b.get(to); page.Status != http.StatusOK && page.Status != http.StatusNotFound {
			t.Errorf("GET %s leads to %s: %d", path, to, page.Status)
		}
	}
	if tried < 15 {
		t.Errorf("tried %d form addresses, want every POST-only one", tried)
	}
	// The switch of environment from a refused bulk retry's page goes
	// back to the deliveries.
	if to := b.get("/console/retry-deliveries?ok=env").Header.Get("Location"); !strings.HasPrefix(to, "/console/deliveries") {
		t.Errorf("the bulk retry's address leads to %q, want the deliveries", to)
	}
}

// TestConsoleOverviewLinksWhatItHides: the Overview shows the 20 newest
// applicants waiting for a decision; with more waiting it says so and
// links them all (the hidden ones have waited longest), and with 20 or
// fewer it does not.
func TestConsoleOverviewLinksWhatItHides(t *testing.T) {
	t.Parallel()
	in := start(t)
	b := in.operator()
	held := func(id string) {
		in.createApplicant(id, "MANUAL")
		in.expect(200, "POST", "/v1/applicants/"+id+"/verify", verifyBody(t, 50))
		in.waitReviewStatus(id, "awaitingOperatorReview")
	}
	for i := range 20 {
		held(fmt.Sprintf("wait-%02d", i))
	}
	const all = `href="/console/applicants?reviewStatus=awaitingOperatorReview"`
	if page := b.page("/console", "wait-19", "wait-00"); strings.Contains(page, all) {
		t.Error("with 20 waiting, the Overview says more are waiting")
	}
	held("wait-20")
	page := b.page("/console", "wait-20", "More are waiting")
	if !strings.Contains(page, all) || strings.Contains(page, "wait-00") {
		t.Errorf("with 21 waiting, the Overview shows the oldest or no link to them all")
	}
	b.page("/console/applicants?reviewStatus=awaitingOperatorReview", "wait-00", "wait-20")
}

// TestConsoleShowsQuestionnaireAnswers: the operator deciding a review
// sees what the applicant answered (SPEC §3.9: the detail "with data"):
// each answer beside its question's text, in the level's order, a boolean
// as Yes or No, text as typed; a level without questions shows the
// partner's own members by name, and an applicant not asked anything has
// no questionnaire section.
func TestConsoleShowsQuestionnaireAnswers(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.expect(201, "POST", "/v1/levels", map[string]any{"name": "survey", "personalInfoFields": []string{"lastName"},
		"steps": []map[string]any{{"kind": "questionnaire"}},
		"questionnaire": []map[string]any{
			{"id": "pep", "text": "Are you a politically exposed person?", "type": "boolean", "required": true},
			{"id": "source", "text": "Source of funds", "type": "choice", "options": []string{"salary", "savings"}, "required": true},
			{"id": "note", "text": "Anything else?", "type": "text"},
		}})
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "qa-1", "verificationLevelName": "survey", "lastName": "Manual"})
	in.expect(200, "POST", "/v1/applicants/qa-1/verify", map[string]any{"questionnaire": map[string]any{
		"note": "<b>two</b>\nlines", "source": "savings", "pep": false}})
	in.expect(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "qa-2", "verificationLevelName": "full-kyc-level", "lastName": "Doe"})
	body := verifyBody(t, 3)
	body["questionnaire"] = map[string]any{"occupation": "Engineer", "years": 7}
	in.expect(200, "POST", "/v1/applicants/qa-2/verify", body)
	// The partner's own answers are text an operator reads: no control
	// character in a name or a string value.
	for _, bad := range []map[string]any{{"a\x00": 1}, {"note": "a\x07b"}, {"a": []any{"x\x00y"}}, {"a": map[string]any{"b": "x\x1by"}}, {"a": map[string]any{"b\x00": "x"}}, {"a": []any{"\u0085"}}} {
		body["questionnaire"] = bad
		if code, _ := errField(t, in.expect(400, "POST", "/v1/applicants/qa-2/verify", body)); code != "validation_failed" {
			t.Errorf("answers %q: code %s", bad, code)
		}
	}
	in.createApplicant("qa-3", "Doe")

	b := in.operator()
	page := b.page("/console/applicants/qa-1", `<h2>Questionnaire</h2>`)
	want := regexp.MustCompile(`(?s)Are you a politically exposed person\?.*<td class="text">No</td>.*Source of funds.*<td class="text">savings</td>.*Anything else\?.*<td class="text"><b>two</b>\nlines</td>`)
	if !want.MatchString(page) {
		t.Errorf("qa-1's answers are not shown in the level's order:\n%s", section(page, "Questionnaire"))
	}
	page = b.page("/console/applicants/qa-2", `<h2>Questionnaire</h2>`)
	if !regexp.MustCompile(`(?s)occupation.*<td class="text">Engineer</td>.*years.*<td class="text">7</td>`).MatchString(page) {
		t.Errorf("qa-2's own answers are not shown by name:\n%s", section(page, "Questionnaire"))
	}
	if page := b.page("/console/applicants/qa-3", "qa-3"); strings.Contains(page, "<h2>Questionnaire</h2>") {
		t.Error("an applicant whose level asks nothing has a questionnaire section")
	}

	// The level is edited afterwards: a question reworded, one removed.
	// qa-1's answers stay under the questions it was asked (they showed
	// under the new wording, the removed one by its id alone).
	in.expect(200, "PATCH", "/v1/levels/survey", map[string]any{"questionnaire": []map[string]any{
		{"id": "pep", "text": "Are you a politically exposed person?", "type": "boolean", "required": true},
		{"id": "source", "text": "Source of wealth", "type": "choice", "options": []string{"salary", "savings"}, "required": true},
	}})
	page = b.page("/console/applicants/qa-1", `<h2>Questionnaire</h2>`)
	if !want.MatchString(page) || strings.Contains(page, "Source of wealth") {
		t.Errorf("qa-1's answers after the level's edit are not under the questions it was asked:\n%s", section(page, "Questionnaire"))
	}
}

// section returns the part of page from its heading name to the next h2.
func section(page, name string) string {
	_, rest, _ := strings.Cut(page, "<h2>"+name+"</h2>")
	before, _, _ := strings.Cut(rest, "<h2")
	return before
}

// TestConsoleTemplatesNameWhatTheyFocus: every element a keyboard reaches
// only for scrolling (a wide table's box, tabindex 0) is a named region, so
// a screen reader says what the focus landed on; and no table has a column
// header without a name (the actions column is named, visually hidden).
func TestConsoleTemplatesNameWhatTheyFocus(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("console/templates/*.html")
	if err != nil || len(paths) == 0 {
		t.Fatalf("console/templates: %v (%d files)", err, len(paths))
	}
	focusable := regexp.MustCompile(`<div[^>]*tabindex="0"[^>]*>`)
	named := regexp.MustCompile(`role="region" aria-label="[^"]+"`)
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, tag := range focusable.FindAllString(string(src), -1) {
			if !named.MatchString(tag) {
				t.Errorf("%s: %s is a tab stop without a name", filepath.Base(p), tag)
			}
		}
		if strings.Contains(string(src), "<th></th>") {
			t.Errorf("%s: a column header without a name", filepath.Base(p))
		}
	}
}
