// Package console is the operator console (SPEC 3.9): server-rendered
// html/template pages with embedded assets, usable without JavaScript. Every
// page carries a strict Content-Security-Policy and X-Frame-Options DENY;
// every POST form carries the session's CSRF token and the environment its
// page showed (formFields in layout.html); the session cookie is
// HttpOnly and SameSite=Strict. Sessions and CSRF are this package's; error
// statuses, Retry-After and request ids come from package wire. It never
// imports package server.
package console

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/complybox/complybox/server/hostedui"
	"github.com/complybox/complybox/server/wire"
	"github.com/complybox/complybox/store"
)

//go:embed templates static
var consoleFiles embed.FS

// Console cookies.
const (
	consoleCookie      = "complybox_console"       // the session id
	consoleLoginCookie = "complybox_console_login" // the login form's CSRF token (double submit)
	consoleCSP         = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)

// Console serves the console pages: the templates are parsed once, by New.
type Console struct {
	store  *store.Store
	log    *slog.Logger
	pages  map[string]*template.Template
	static fs.FS
	secure bool              // cookies only over https (public_url is https)
	labels map[string]string // reject label → the sentence that explains it
	events map[string]string // history event type → words
	shown  shownSecrets      // secrets waiting to be shown once (settings.go)
}

// New parses the console templates. publicURL is the service's public
// base: over https the cookies are Secure. Internal errors are logged to
// log.
func New(st *store.Store, publicURL string, log *slog.Logger) *Console {
	c := &Console{store: st, log: log, pages: map[string]*template.Template{}, secure: strings.HasPrefix(publicURL, "https://"),
		labels: hostedui.RejectLabelTexts(), events: eventNames(), shown: shownSecrets{m: map[string]shownSecret{}}}
	static, err := fs.Sub(consoleFiles, "static")
	if err != nil {
		panic(err)
	}
	c.static = static
	names, err := fs.Glob(consoleFiles, "templates/*.html")
	if err != nil {
		panic(err)
	}
	for _, name := range names {
		page := strings.TrimSuffix(strings.TrimPrefix(name, "templates/"), ".html")
		if page == "layout" {
			continue
		}
		c.pages[page] = template.Must(template.New("layout.html").Funcs(c.funcs()).
			ParseFS(consoleFiles, "templates/layout.html", name))
	}
	return c
}

// Request is what a console handler gets: the request, its route
// parameters, the operator's session and the environment it shows.
type Request struct {
	*http.Request
	params httprouter.Params
	sess   store.ConsoleSession
	env    store.Env
}

// Handler is a console page or action; a returned error is rendered
// as the error page.
type Handler func(w http.ResponseWriter, r *Request) error

// Page wraps h with the console's headers and a live session: without one a
// GET goes to the login page and a POST is 403; a POST also needs the
// session's CSRF token (403 otherwise); its "shownEnv" field, the
// environment its page was shown in, must still be the session's: a form
// of a page shown before another tab switched the environment would act
// on the other environment's data (409 otherwise). A POST without the
// field (a script that copies only csrf) acts on the session's
// environment, as before the field.
func (c *Console) Page(h Handler) httprouter.Handle {
	return c.page(h, true)
}

// AnyEnv wraps h as Page does but takes a POST without "shownEnv": for
// the forms that act on the session, not on an environment's data (the
// environment switch, log out).
func (c *Console) AnyEnv(h Handler) httprouter.Handle {
	return c.page(h, false)
}

// page is Page, and AnyEnv without checkEnv.
func (c *Console) page(h Handler, checkEnv bool) httprouter.Handle {
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		consoleHeaders(w)
		cr := &Request{Request: r, params: ps}
		err := c.authorize(cr, checkEnv)
		if store.ErrorCode(err) == store.EUNAUTHORIZED {
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				// A form posted without a live session cannot carry its
				// session's CSRF token: refused like any other forgery.
				c.fail(w, cr, errCSRF())
				return
			}
			http.Redirect(w, r, "/console/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		if err == nil {
			err = h(w, cr)
		}
		if err != nil {
			c.fail(w, cr, err)
		}
	}
}

// Admin wraps h as Page does and also requires the admin role: a
// reviewer gets 403 on settings, credentials, levels and operator
// accounts, reading or posting.
func (c *Console) Admin(h Handler) httprouter.Handle {
	return c.Page(func(w http.ResponseWriter, r *Request) error {
		if !r.sess.IsAdmin() {
			return store.Errorf(store.EFORBIDDEN, "admin_only", "this page is for admins; operator %q is a %s", r.sess.Operator, r.sess.Role)
		}
		return h(w, r)
	})
}

// record records a console action of the session's operator in env.
func (c *Console) record(r *Request, env store.Env, eventType string, details map[string]any) error {
	d := make(map[string]any, len(details)+1)
	for k, v := range details {
		d[k] = v
	}
	d["operator"] = r.sess.Operator
	return c.store.RecordConsoleAction(env, eventType, d)
}

// authorize loads the session and, on a POST, checks the CSRF token and,
// with checkEnv, the environment the form was shown in.
func (c *Console) authorize(r *Request, checkEnv bool) error {
	ck, err := r.Cookie(consoleCookie)
	if err != nil {
		return store.Errorf(store.EUNAUTHORIZED, "not_logged_in", "log in to the console first")
	}
	if r.sess, err = c.store.ConsoleSessionByID(ck.Value); err != nil {
		return err
	}
	r.env = r.sess.Env
	if r.Method == http.MethodPost {
		if err := parseForm(r.Request); err != nil {
			return err
		}
		if !r.sess.CheckCSRF(r.PostForm.Get("csrf")) {
			return errCSRF()
		}
		if shown := store.Env(r.PostForm.Get("shownEnv")); checkEnv && shown != "" && shown != r.env {
			return errShownEnv(shown, r.env)
		}
	}
	return nil
}

// parseForm reads a posted form, URL-encoded or multipart (a script's
// client may send either), into r.PostForm.
func parseForm(r *http.Request) error {
	var err error
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		err = r.ParseMultipartForm(1 << 20)
	} else {
		err = r.ParseForm()
	}
	if err != nil {
		return store.Invalid("form", "the form could not be read")
	}
	return nil
}

func errCSRF() error {
	return store.Errorf(store.EFORBIDDEN, "csrf_token_invalid", "the form's security token is missing or wrong; reload the page and try again")
}

// errShownEnv refuses a form shown in another environment than env, the
// session's now; shown is what the form says ("" or not an environment:
// a page from before forms said it).
func errShownEnv(shown, env store.Env) error {
	if !shown.Valid() {
		return store.Conflict("environment_switched", "the form names no environment of the console (%q), so nothing was changed; reload the page to act in %s", shown, env)
	}
	return store.Conflict("environment_switched", "the console switched to %s since this page showed %s, so nothing was changed; reload the page to act in %s", env, shown, env)
}

// Open wraps a handler that needs no session (the login pages).
func (c *Console) Open(h Handler) httprouter.Handle {
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		consoleHeaders(w)
		cr := &Request{Request: r, params: ps, env: store.Sandbox}
		if err := h(w, cr); err != nil {
			c.fail(w, cr, err)
		}
	}
}

// Error renders err as the console's error page, outside any route: a
// path under /console that names no page or takes no such method, or a
// body over the limit. A browser shows the API's JSON error as text.
func (c *Console) Error(w http.ResponseWriter, r *http.Request, err error) {
	consoleHeaders(w)
	cr := &Request{Request: r, env: store.Sandbox}
	// A logged-in operator keeps the navigation and the environment; the
	// session is only read (a POST's form and token are not).
	if ck, cerr := r.Cookie(consoleCookie); cerr == nil {
		if sess, serr := c.store.ConsoleSessionByID(ck.Value); serr == nil {
			cr.sess, cr.env = sess, sess.Env
		}
	}
	c.fail(w, cr, err)
}

func consoleHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", consoleCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// consoleView is what every page template gets.
type consoleView struct {
	Title    string
	Nav      string // the highlighted section
	Env      store.Env
	Envs     []store.Env
	CSRF     string
	Path     string // the current path and query, for the environment switch
	LoggedIn bool
	Operator string // the logged-in operator's name
	IsAdmin  bool   // the operator has the admin role
	Flash    string
	Data     any
}

// render executes page with data at status.
func (c *Console) render(w http.ResponseWriter, r *Request, status int, page, title, nav string, data any) error {
	t, ok := c.pages[page]
	if !ok {
		return store.Errorf(store.EINTERNAL, "", "no console page %q", page)
	}
	v := consoleView{Title: title, Nav: nav, Env: r.env, Envs: store.Envs(), CSRF: r.sess.CSRF, Path: r.URL.RequestURI(),
		LoggedIn: r.sess.ID != "", Operator: r.sess.Operator, IsAdmin: r.sess.IsAdmin(), Flash: flash(r.URL.Query()), Data: data}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	w.Write(buf.Bytes())
	return nil
}

// fail renders err as the error page with the status of its code.
func (c *Console) fail(w http.ResponseWriter, r *Request, err error) {
	status, e := wire.Prepare(w, r.Request, c.log, err)
	msg := e.Message
	if e.Code == store.EINTERNAL {
		msg = "Something went wrong on our side; the request id is in the logs."
	}
	data := map[string]any{"Status": status, "StatusText": http.StatusText(status), "Message": msg, "Field": e.Field,
		"RequestID": wire.RequestID(r.Request)}
	if rerr := c.render(w, r, status, "error", http.StatusText(status), "", data); rerr != nil {
		c.log.Error("console render error page", "err", rerr)
		http.Error(w, msg, status)
	}
}

// FormAddress serves GET at the address of a form that only takes POST.
// A refused form's page is the POST's answer, so its address stays in the
// browser's bar; opened again (a reload, Enter, a restored tab, the
// environment switch's way back) it leads to page, the page the form is
// on (303), not to a 405. A segment of page written :name is the route's
// parameter of that name.
func (c *Console) FormAddress(page string) Handler {
	return func(w http.ResponseWriter, r *Request) error {
		parts := strings.Split(page, "/")
		for i, p := range parts {
			if name, ok := strings.CutPrefix(p, ":"); ok {
				parts[i] = wire.PathSegment(r.params.ByName(name))
			}
		}
		return redirect(w, r, strings.Join(parts, "/"), "")
	}
}

// redirect answers a successful POST: 303 to path with a flash code.
func redirect(w http.ResponseWriter, r *Request, path, ok string) error {
	if ok != "" {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path += sep + "ok=" + url.QueryEscape(ok)
	}
	http.Redirect(w, r.Request, path, http.StatusSeeOther)
	return nil
}

// flash is the message of the flash code redirect set in query's "ok";
// a bulk retry's names how many deliveries it queued ("requeued").
func flash(query url.Values) string {
	code := query.Get("ok")
	if n, err := strconv.Atoi(query.Get("requeued")); code == "bulk-retried" && err == nil && n >= 0 {
		return strconv.Itoa(n) + " deliveries were queued for a new round of attempts."
	}
	return flashText(code)
}

// nextPage returns the link to the list at base after the page shown at
// uri (the request's path and query): the same filters and limit, cursor
// next, without the flash of the redirect that led there. A page shown
// by a form's POST has no filters in its URL.
func nextPage(base, uri, next string) string {
	q := url.Values{}
	if u, err := url.Parse(uri); err == nil && u.Path == base {
		q = u.Query()
	}
	q.Del("ok")
	q.Del("requeued")
	q.Set("cursor", next)
	return base + "?" + q.Encode()
}

// flashText is the message of a flash code set by redirect.
func flashText(code string) string {
	return map[string]string{
		"decided":      "The decision was recorded.",
		"retried":      "The delivery is queued for a new round of attempts.",
		"webhook":      "The custody webhook settings were saved.",
		"callback":     "The KYC callback URL was saved.",
		"revoked":      "The credential was revoked.",
		"env":          "Environment switched.",
		"logged-out":   "You are logged out.",
		"bulk-retried": "The matching deliveries are queued again.",
		"level":        "The level was saved.",
		"operator":     "The operator account was saved.",
		"removed":      "The operator account was removed.",
		"test-event":   "The test event is queued; reload to see its attempts.",
	}[code]
}

// clientAddr is the address login attempts are counted by: the peer's IP.
// X-Forwarded-For is not trusted: the console is served directly.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// randomCookieToken returns 32 random bytes, URL-safe base64.
func randomCookieToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func (c *Console) cookie(name, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: "/console", MaxAge: maxAge, HttpOnly: true,
		Secure: c.secure, SameSite: http.SameSiteStrictMode}
}

// loginToken returns the login form's CSRF token, setting its cookie when
// the browser has none.
func (c *Console) loginToken(w http.ResponseWriter, r *http.Request) string {
	if ck, err := r.Cookie(consoleLoginCookie); err == nil && len(ck.Value) >= 32 {
		return ck.Value
	}
	tok := randomCookieToken()
	http.SetCookie(w, c.cookie(consoleLoginCookie, tok, int((24*time.Hour).Seconds())))
	return tok
}

// checkLoginToken compares the login form's token with its cookie.
func checkLoginToken(r *http.Request) bool {
	ck, err := r.Cookie(consoleLoginCookie)
	form := r.PostForm.Get("csrf")
	return err == nil && ck.Value != "" && subtle.ConstantTimeCompare([]byte(ck.Value), []byte(form)) == 1
}

// funcs are the template functions.
func (c *Console) funcs() template.FuncMap {
	return template.FuncMap{
		"labelName":    humanize,
		"humanizeKind": humanizeKind,
		"labelText":    func(label string) string { return c.labels[label] },
		"eventName":    c.eventName,
		"details":      details,
		"omit": func(m map[string]any, key string) map[string]any {
			out := make(map[string]any, len(m))
			for k, v := range m {
				if k != key {
					out[k] = v
				}
			}
			return out
		},
		"when": when,
		"str": func(v any) string {
			switch x := v.(type) {
			case nil:
				return ""
			case *string:
				if x == nil {
					return ""
				}
				return *x
			case store.NullString:
				return string(x)
			case store.Time:
				return x.String()
			case *int:
				if x == nil {
					return ""
				}
				return strconv.Itoa(*x)
			case string:
				return x
			}
			b, err := json.Marshal(v)
			if err != nil {
				return ""
			}
			return string(b)
		},
		"join": strings.Join,
		"has": func(list []string, s string) bool {
			for _, x := range list {
				if x == s {
					return true
				}
			}
			return false
		},
		"pretty": func(s string) string {
			var buf bytes.Buffer
			if json.Indent(&buf, []byte(s), "", "  ") != nil {
				return s
			}
			return buf.String()
		},
		"fields":  recordFields,
		"pathEsc": wire.PathSegment,
		"query": func(base string, kv ...string) string {
			q := url.Values{}
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i+1] != "" {
					q.Set(kv[i], kv[i+1])
				}
			}
			if len(q) == 0 {
				return base
			}
			return base + "?" + q.Encode()
		},
		"nextPage": nextPage,
		"secret":   secretText,
		"displayName": func(a store.Applicant) string {
			if a.Type == "company" {
				return deref(a.CompanyInfo["companyName"])
			}
			var parts []string
			for _, f := range []string{"firstName", "middleName", "lastName"} {
				if v := deref(a.Info[f]); v != "" {
					parts = append(parts, v)
				}
			}
			return strings.Join(parts, " ")
		},
		"add":     func(a, b int) int { return a + b },
		"isImage": func(contentType string) bool { return strings.HasPrefix(contentType, "image/") },
	}
}

// when shows t as every console page shows a time: UTC text in a <time>
// element, which console.js turns into the operator's own zone.
func when(t store.Time) template.HTML {
	if t.IsZero() {
		return ""
	}
	iso := t.String()
	return template.HTML(`<time datetime="` + template.HTMLEscapeString(iso) + `">` +
		template.HTMLEscapeString(t.UTC().Format("2006-01-02 15:04:05")+" UTC") + `</time>`)
}

// field is one name and value of a record shown as a table.
type field struct {
	Name  string
	Value string
	At    store.Time // Value as a time, when the field is one ("at", or a name ending in At or AtUtc)
}

// Cell is the field's value as its table shows it: a time as every time
// is shown (when), anything else as text.
func (f field) Cell() template.HTML {
	if !f.At.IsZero() {
		return when(f.At)
	}
	return template.HTML(template.HTMLEscapeString(f.Value))
}

// recordFields lists v's JSON fields in their declared order, each value as
// text (strings bare, null empty, anything else compact JSON).
func recordFields(v any) []field {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var out []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return out
		}
		var s string
		var list []string
		switch {
		case string(raw) == "null":
		case json.Unmarshal(raw, &s) == nil:
		case json.Unmarshal(raw, &list) == nil:
			s = strings.Join(list, ", ") // roles: ubo, director
		default:
			s = string(raw)
		}
		f := field{Name: name, Value: s}
		if name == "at" || strings.HasSuffix(name, "At") || strings.HasSuffix(name, "AtUtc") {
			if at, err := time.Parse(time.RFC3339Nano, s); err == nil {
				f.At = store.At(at)
			}
		}
		out = append(out, f)
	}
	return out
}

// secretText is a secret shown once, as the bytes to copy: html/template
// would write a base64 "+" as "&#43;", which a script scraping the page
// reads wrong. A secret of other characters than base64 (standard or URL
// safe) is escaped as usual.
func secretText(secret string) any {
	for _, r := range secret {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("+/=-_.", r)) {
			return secret
		}
	}
	return template.HTML(secret)
}

// deref is *s, "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
