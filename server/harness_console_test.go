package server_test

import (
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// consolePassword is the operator password of console tests.
const consolePassword = "correct horse battery"

// browser is an operator's browser: it keeps cookies and does not follow
// redirects, so tests see each 303.
type browser struct {
	t    testing.TB
	base string
	c    *http.Client
	csrf string // the token of the last page that carried one
	env  string // the environment the last page was shown in
}

// browser returns a fresh browser on the instance.
func (in *instance) browser() *browser {
	in.t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		in.t.Fatal(err)
	}
	return &browser{t: in.t, base: in.URL, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

var (
	csrfField = regexp.MustCompile(`name="csrf" value="([^"]*)"`)
	pageEnv   = regexp.MustCompile(`<body class="env-([a-z]+)">`)
)

func (b *browser) send(req *http.Request) *response {
	b.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	if m := csrfField.FindSubmatch(body); m != nil {
		b.csrf = html.UnescapeString(string(m[1]))
	}
	if m := pageEnv.FindSubmatch(body); m != nil {
		b.env = string(m[1])
	}
	return &response{Status: resp.StatusCode, Header: resp.Header, Body: body}
}

// get fetches path.
func (b *browser) get(path string) *response {
	b.t.Helper()
	req, err := http.NewRequest("GET", b.base+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.send(req)
}

// post submits form to path as is (no token added).
func (b *browser) post(path string, form url.Values) *response {
	b.t.Helper()
	req, err := http.NewRequest("POST", b.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.send(req)
}

// submit posts form with the last CSRF token and the environment the last
// page was shown in (unless form names one), as a browser submitting the
// page's form does.
func (b *browser) submit(path string, form url.Values) *response {
	b.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", b.csrf)
	if !form.Has("shownEnv") {
		form.Set("shownEnv", b.env)
	}
	return b.post(path, form)
}

// shown follows r, the answer to a POST that made a secret, to the page
// that shows it once, and returns that page. It fails unless r redirected
// there and a second visit shows no secret (a reload repeats nothing).
func (b *browser) shown(what string, r *response) *response {
	b.t.Helper()
	expectStatus(b.t, what, r, http.StatusSeeOther)
	if loc := r.Header.Get("Location"); loc != "/console/shown" {
		b.t.Fatalf("%s: redirected to %q, want /console/shown", what, loc)
	}
	page := b.get("/console/shown")
	expectStatus(b.t, what+": the secret's page", page, http.StatusOK)
	again := b.get("/console/shown")
	if s := secretOnPage(page.Body); s == "" || strings.Contains(string(again.Body), s) || !strings.Contains(string(again.Body), "shown once") {
		b.t.Fatalf("%s: the secret (%q) is not shown exactly once; second visit: %s", what, s, again.Body)
	}
	return page
}

// page is get that fails unless the status is 200 and the page contains
// every one of want.
func (b *browser) page(path string, want ...string) string {
	b.t.Helper()
	r := b.get(path)
	if r.Status != http.StatusOK {
		b.t.Fatalf("GET %s: status %d; body %s", path, r.Status, r.Body)
	}
	body := html.UnescapeString(string(r.Body))
	for _, w := range want {
		if !strings.Contains(body, w) {
			b.t.Fatalf("GET %s: no %q in the page:\n%s", path, w, body)
		}
	}
	return body
}

// expectStatus fails unless r has status want.
func expectStatus(t testing.TB, what string, r *response, want int) {
	t.Helper()
	if r.Status != want {
		t.Fatalf("%s: status %d, want %d; body %s", what, r.Status, want, r.Body)
	}
}

// login logs in as the first admin with password and fails unless it
// succeeds.
func (b *browser) login(password string) {
	b.t.Helper()
	b.loginAs("admin", password)
}

// loginAs logs in as the operator name and fails unless it succeeds.
func (b *browser) loginAs(name, password string) {
	b.t.Helper()
	b.page("/console/login")
	r := b.submit("/console/login", url.Values{"name": {name}, "password": {password}})
	expectStatus(b.t, "login as "+name, r, http.StatusSeeOther)
}

// operator sets the console password and returns a logged-in browser.
func (in *instance) operator() *browser {
	in.t.Helper()
	if err := in.Store.SetConsolePassword(consolePassword); err != nil {
		in.t.Fatal(err)
	}
	b := in.browser()
	b.login(consolePassword)
	return b
}
