package server_test

import (
	"encoding/json"
	"html"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/complybox/complybox/dispatch"
	"github.com/complybox/complybox/store"
)

// ranOnPage reads the console clock page's "Jobs run, by kind" table.
func ranOnPage(t testing.TB, body []byte) map[string]int {
	t.Helper()
	i := strings.Index(string(body), `id="clock-ran"`)
	if i < 0 {
		t.Fatalf("the page shows no move:\n%s", body)
	}
	rest := string(body[i:])
	rest = rest[:strings.Index(rest, "</table>")]
	out := map[string]int{}
	for _, m := range regexp.MustCompile(`<tr><th>([a-z]+)</th><td>(\d+)</td></tr>`).FindAllStringSubmatch(rest, -1) {
		n, _ := strconv.Atoi(m[2])
		out[m[1]] = n
	}
	return out
}

// lastConsoleAction returns the details of env's newest console action,
// failing unless it is of eventType.
func lastConsoleAction(t testing.TB, in *instance, env store.Env, eventType string) map[string]any {
	t.Helper()
	hs, err := in.Store.ConsoleActivity(env)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) == 0 || hs[0].EventType != eventType {
		t.Fatalf("newest console action %+v, want %s", hs, eventType)
	}
	return hs[0].Details
}

// TestConsoleClockExpiresLinks: an operator moves the sandbox clock past a
// link's hour from the console, as POST /v1/sandbox/clock would: the page
// says one expiry ran, the hosted page answers 410, the API reads the new
// time, and the move is the operator's recorded action.
func TestConsoleClockExpiresLinks(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("cexp", "Ire")
	var link struct{ Token string }
	in.expect(201, "POST", "/v1/applicants/cexp/verification-sessions", map[string]any{"ttlSecs": 3600}).json(t, &link)
	b := in.operator()
	b.page("/console/clock", ms(testStart), "Lead over real time", `href="/console/clock"`, "+1 hour", "+1 day", "+7 days")

	// Bad input comes back to the form, the clock unmoved.
	for _, c := range []struct {
		form  url.Values
		field string
	}{
		{url.Values{"advanceBy": {"2d"}}, "advanceBy"},
		{url.Values{"advanceBy": {"-1h"}}, "advanceBy"},
		{url.Values{"to": {"2026-11-20T05:00"}}, "to"}, // before the sandbox's time
		{url.Values{"to": {"tomorrow"}}, "to"},
		{url.Values{}, "advanceBy"},
	} {
		b.page("/console/clock")
		r := b.submit("/console/clock", c.form)
		expectStatus(t, "move "+c.form.Encode(), r, http.StatusBadRequest)
		if !strings.Contains(string(r.Body), "(field <code>"+c.field+"</code>)") || !strings.Contains(string(r.Body), `aria-invalid="true"`) {
			t.Errorf("move %s: the page does not name %s:\n%s", c.form.Encode(), c.field, r.Body)
		}
	}
	if c := in.clock(); c.Offset != "0s" {
		t.Fatalf("refused moves moved the clock: %+v", c)
	}

	// To a UTC time, as the datetime-local field posts it: two hours on.
	b.page("/console/clock")
	r := movedPage(t, b, b.submit("/console/clock", url.Values{"to": {testStart.Add(2 * time.Hour).Format("2006-01-02T15:04")}}))
	if ran := ranOnPage(t, r.Body); !maps.Equal(ran, map[string]int{"delivery": 0, "chain": 0, "review": 0, "expiry": 1, "retention": 0}) {
		t.Fatalf("ran %v, want one expiry", ran)
	}
	page := html.UnescapeString(string(r.Body))
	if !strings.Contains(page, "From <code>"+ms(testStart)+"</code> to <code>"+ms(testStart.Add(2*time.Hour))+"</code>") {
		t.Errorf("the page does not say from and to:\n%s", page)
	}
	if r := in.sdkGet("/sdk/" + link.Token); r.Status != http.StatusGone {
		t.Fatalf("/sdk page after the console's move: %d", r.Status)
	}
	if c := in.clock(); c.Now != ms(testStart.Add(2*time.Hour)) || c.Offset != "2h0m0s" {
		t.Fatalf("the API reads %+v after the console's move", c)
	}
	// Reloading the page after the move shows it again and moves nothing.
	if again := movedPage(t, b, r.from); !strings.Contains(html.UnescapeString(string(again.Body)), "to <code>"+ms(testStart.Add(2*time.Hour))+"</code>") {
		t.Errorf("the reloaded page lost the move:\n%s", again.Body)
	}
	if c := in.clock(); c.Offset != "2h0m0s" {
		t.Fatalf("reloading the page moved the clock: %+v", c)
	}
	d := lastConsoleAction(t, in, store.Sandbox, "console.sandbox_clock_moved")
	if d["operator"] != "admin" || d["to"] != ms(testStart.Add(2*time.Hour)) || d["steps"] != float64(1) {
		t.Errorf("recorded move %v", d)
	}

	// A form without its token moves nothing.
	expectStatus(t, "move without CSRF", b.post("/console/clock", url.Values{"advanceBy": {"1h"}}), http.StatusForbidden)
	if c := in.clock(); c.Offset != "2h0m0s" {
		t.Fatalf("a forged form moved the clock: %+v", c)
	}
}

// clock reads GET /v1/sandbox/clock.
func (in *instance) clock() clockAnswer {
	in.t.Helper()
	var c clockAnswer
	in.expect(200, "GET", "/v1/sandbox/clock", nil).json(in.t, &c)
	return c
}

// TestConsoleClockRetriesDeliveries: a receiver answering 500, its first
// attempt made by the loop; "+1 hour" on the console makes the four
// retries at once and the delivery ends dead.
func TestConsoleClockRetriesDeliveries(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc := newReceiver(t, in.Clock, func(int) int { return 500 })
	in.configureWebhook(rc)
	id := in.testEvent()
	rc.next(t) // the loop's first attempt
	b := in.operator()
	b.page("/console/clock")
	r := movedPage(t, b, b.submit("/console/clock", url.Values{"advanceBy": {"1h"}}))
	if ran := ranOnPage(t, r.Body); ran["delivery"] != 4 {
		t.Fatalf("ran %v, want the 4 retries", ran)
	}
	for range 4 {
		rc.next(t)
	}
	var d struct {
		Status       string
		AttemptCount int
	}
	in.expect(200, "GET", "/webhooks/deliveries/"+id, nil).json(t, &d)
	if d.Status != "dead" || d.AttemptCount != 5 {
		t.Fatalf("delivery after +1 hour: %+v", d)
	}
	b.page("/console/deliveries/"+id, "dead")
	if ran := lastConsoleAction(t, in, store.Sandbox, "console.sandbox_clock_moved")["ran"]; ran.(map[string]any)["delivery"] != float64(4) {
		t.Errorf("recorded ran %v", ran)
	}
}

// TestConsoleClockNotInProduction: production has no test clock — no nav
// entry, 403 for the page and the form, its time never moved.
func TestConsoleClockNotInProduction(t *testing.T) {
	t.Parallel()
	in := start(t)
	b := in.operator()
	b.page("/console")
	expectStatus(t, "switch", b.submit("/console/env", url.Values{"env": {"production"}, "back": {"/console"}}), http.StatusSeeOther)
	if page := b.page("/console"); strings.Contains(page, `href="/console/clock"`) {
		t.Error("production's nav offers the test clock")
	}
	expectStatus(t, "clock page in production", b.get("/console/clock"), http.StatusForbidden)
	expectStatus(t, "clock move in production", b.submit("/console/clock", url.Values{"advanceBy": {"1h"}}), http.StatusForbidden)
	if now := in.Store.NowIn(store.Production); !now.Equal(testStart) {
		t.Fatalf("production's clock reads %s", now)
	}
	if c := in.clock(); c.Offset != "0s" {
		t.Fatalf("a production form moved the sandbox clock: %+v", c)
	}
}

// TestConsoleTestEvents: "send a test event of type …" on the settings page
// offers every catalog type of each destination; a type sent arrives at a
// real receiver as a signed sample with X-Webhook-Test: true, and the
// operator lands on its delivery.
func TestConsoleTestEvents(t *testing.T) {
	t.Parallel()
	in := start(t)
	custody := newReceiver(t, in.Clock, nil)
	secret := in.configureWebhook(custody)
	kyc, kycSecret := in.kycReceiver()
	b := in.operator()
	page := b.page("/console/settings")
	for id, catalog := range map[string][]store.EventType{"custody-test-type": store.CustodyCatalog(), "kyc-test-type": store.KYCCatalog()} {
		i := strings.Index(page, `<select id="`+id+`"`)
		if i < 0 {
			t.Fatalf("no %s select on the settings page", id)
		}
		sel := page[i : i+strings.Index(page[i:], "</select>")]
		var offered []string
		for _, m := range regexp.MustCompile(`<option value="([^"]+)"`).FindAllStringSubmatch(sel, -1) {
			offered = append(offered, m[1])
		}
		want := []string{"webhook.test"}
		for _, e := range catalog {
			want = append(want, e.Name)
		}
		if !slices.Equal(offered, want) {
			t.Errorf("%s offers %v, want %v", id, offered, want)
		}
	}

	for _, c := range []struct {
		path, eventType, dest string
		rc                    *receiver
		secret                string
	}{
		{"/console/settings/webhook/test", "transaction.status.updated", store.DestCustody, custody, secret},
		{"/console/settings/callback/test", "applicantReviewed", store.DestKYC, kyc, kycSecret},
		{"/console/settings/webhook/test", "webhook.test", store.DestCustody, custody, secret},
	} {
		b.page("/console/settings")
		r := b.submit(c.path, url.Values{"eventType": {c.eventType}})
		expectStatus(t, "send "+c.eventType, r, http.StatusSeeOther)
		loc := r.Header.Get("Location")
		id, ok := strings.CutPrefix(loc, "/console/deliveries/")
		if !ok {
			t.Fatalf("send %s: redirected to %q, not to its delivery", c.eventType, loc)
		}
		id, _, _ = strings.Cut(id, "?")
		b.page(loc, id, c.eventType, "The test event is queued")
		got := c.rc.nextOfType(t, c.eventType)
		if got.Header.Get("X-Webhook-Test") != "true" {
			t.Errorf("%s: X-Webhook-Test %q", c.eventType, got.Header.Get("X-Webhook-Test"))
		}
		if !dispatch.Verify(c.secret, got.Body, got.Header.Get("X-Webhook-Signature")) {
			t.Errorf("%s: the signature does not verify", c.eventType)
		}
		var ev struct {
			EventType string
			Data      map[string]any
		}
		if err := json.Unmarshal(got.Body, &ev); err != nil || ev.EventType != c.eventType || len(ev.Data) == 0 {
			t.Errorf("%s: body %s (%v)", c.eventType, got.Body, err)
		}
		var d struct{ ID, EventType, Destination string }
		in.expect(200, "GET", "/webhooks/deliveries/"+id, nil).json(t, &d)
		if d.EventType != c.eventType || d.Destination != c.dest {
			t.Errorf("delivery %s: %+v", id, d)
		}
		rec := lastConsoleAction(t, in, store.Sandbox, "console.test_event_sent")
		if rec["operator"] != "admin" || rec["eventType"] != c.eventType || rec["deliveryId"] != id {
			t.Errorf("recorded %v", rec)
		}
	}

	// A type of the other catalog is refused, naming the field.
	b.page("/console/settings")
	r := b.submit("/console/settings/webhook/test", url.Values{"eventType": {"applicantReviewed"}})
	expectStatus(t, "a KYC type to the custody webhook", r, http.StatusBadRequest)
	if !strings.Contains(string(r.Body), "eventType") {
		t.Errorf("the refusal does not name eventType: %s", r.Body)
	}
	expectStatus(t, "without CSRF", b.post("/console/settings/webhook/test", url.Values{"eventType": {"wallet.created"}}), http.StatusForbidden)
}

// movedPage follows a clock move's answer: a 303 to the clock page, which
// must then show the move. from is the redirect it followed, so the caller
// can reload it.
func movedPage(t *testing.T, b *browser, r *response) movedResponse {
	t.Helper()
	if r.Status == http.StatusSeeOther {
		loc := r.Header.Get("Location")
		if !strings.HasPrefix(loc, "/console/clock?") {
			t.Fatalf("the move redirects to %q", loc)
		}
		page := b.get(loc)
		expectStatus(t, "the page after the move", page, http.StatusOK)
		return movedResponse{page, r}
	}
	t.Fatalf("a clock move answered %d, want 303 to the page:\n%s", r.Status, r.Body)
	return movedResponse{}
}

// movedResponse is the clock page after a move and the 303 that led to it.
type movedResponse struct {
	*response
	from *response
}

// TestConsoleClockOffersOnlyTimesItTakes: the "to" field's min, a whole
// minute as the datetime-local field takes it, is one the move accepts:
// with the sandbox clock in the middle of a minute, not that minute (which
// is before the clock's time: a 400 for the browser's own minimum).
func TestConsoleClockOffersOnlyTimesItTakes(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.Clock.Advance(30*time.Second + 250*time.Millisecond)
	b := in.operator()
	page := b.page("/console/clock")
	m := regexp.MustCompile(`id="clock-to" type="datetime-local" name="to" required min="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no min on the to field:\n%s", page)
	}
	movedPage(t, b, b.submit("/console/clock", url.Values{"to": {m[1]}}))
	if c := in.clock(); c.Now != ms(testStart.Add(time.Minute)) {
		t.Errorf("moved to the field's min %s: the clock reads %s", m[1], c.Now)
	}
}

// TestConsoleActivityOnTheSandboxClock: the sandbox's console activity
// is on the sandbox clock throughout: a login after a clock move is
// stamped with the sandbox's time, as the move and the decisions are (it
// was real time, so the Overview listed a login of today under a decision
// of next week).
func TestConsoleActivityOnTheSandboxClock(t *testing.T) {
	t.Parallel()
	in := start(t)
	b := in.operator()
	b.page("/console/clock")
	movedPage(t, b, b.submit("/console/clock", url.Values{"advanceBy": {"168h"}}))
	in.operator() // logs in again
	later := testStart.Add(168 * time.Hour).Format("2006-01-02")
	activity, err := in.Store.ConsoleActivity(store.Sandbox)
	if err != nil || len(activity) < 2 || activity[0].EventType != "console.login" {
		t.Fatalf("activity %v %v, want the second login first", activity, err)
	}
	if at := activity[0].AtUtc.String(); !strings.HasPrefix(at, later) {
		t.Errorf("the sandbox's login after a week's move is at %s, want on %s", at, later)
	}
	prod, err := in.Store.ConsoleActivity(store.Production)
	if err != nil || len(prod) == 0 || !strings.HasPrefix(prod[0].AtUtc.String(), testStart.Format("2006-01-02")) {
		t.Errorf("production's login %v %v, want on the real clock's %s", prod, err, testStart.Format("2006-01-02"))
	}
}
