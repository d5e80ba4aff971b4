package console

import (
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/complybox/complybox/server/wire"
	"github.com/complybox/complybox/store"
)

// Console pages: login, overview, environment switch.

// Home serves GET /console: the login form without a session, the
// overview with one.
func (c *Console) Home(w http.ResponseWriter, r *Request) error {
	if c.authorize(r, true) != nil {
		return c.LoginPage(w, r)
	}
	// The 20 newest of each; when there are more, the page links the
	// whole list (the hidden ones have waited longest).
	waiting, moreWaiting, err := c.store.Applicants(r.env, store.ApplicantFilter{ReviewStatus: store.ReviewAwaiting}, store.Page{Limit: 20})
	if err != nil {
		return err
	}
	failing, moreDead, err := c.store.Deliveries(r.env, store.DeliveryFilter{Status: store.DeliveryDead}, store.Page{Limit: 20})
	if err != nil {
		return err
	}
	activity, err := c.store.ConsoleActivity(r.env)
	if err != nil {
		return err
	}
	if len(activity) > 30 {
		activity = activity[:30]
	}
	return c.render(w, r, http.StatusOK, "home", "Overview", "home", map[string]any{
		"Waiting": waiting, "MoreWaiting": moreWaiting != nil, "Dead": failing, "MoreDead": moreDead != nil, "Activity": activity})
}

// ToHome serves GET /console/: a permanent redirect to /console, the one
// address of the overview (the query is kept).
func (c *Console) ToHome(w http.ResponseWriter, r *Request) error {
	to := "/console"
	if r.URL.RawQuery != "" {
		to += "?" + r.URL.RawQuery
	}
	http.Redirect(w, r.Request, to, http.StatusMovedPermanently)
	return nil
}

// LoginPage serves GET /console/login.
func (c *Console) LoginPage(w http.ResponseWriter, r *Request) error {
	next := loginNext(r.URL.Query().Get("next"))
	if ck, err := r.Cookie(consoleCookie); err == nil {
		if _, err := c.store.ConsoleSessionByID(ck.Value); err == nil {
			return redirect(w, r, next, "")
		}
	}
	return c.renderLogin(w, r, http.StatusOK, "", "", next)
}

// loginNext is the console page to go to after logging in: next, the page
// that sent the browser to the login page, when it is a console page of
// this site; else the home page.
func loginNext(next string) string {
	u, ok := consolePage(next)
	if !ok || len(next) > maxNext || strings.HasPrefix(u.Path, "/console/login") || u.Path == "/console/logout" {
		return "/console"
	}
	return u.String()
}

// maxNext bounds the page to return to after login: a console address
// with its filters is far shorter.
const maxNext = 2000

// consolePage parses raw as a page of this console: a path (and query)
// whose dot segments resolve under /console, with the path cleaned. ok is
// false for anything else: another host, //host, a backslash or line
// break, an API path.
func consolePage(raw string) (*url.URL, bool) {
	if strings.ContainsAny(raw, "\\\r\n") || strings.HasPrefix(raw, "//") {
		return nil, false
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" || !strings.HasPrefix(u.Path, "/") {
		return nil, false
	}
	u.Path, u.RawPath = path.Clean(u.Path), ""
	if u.Path != "/console" && !strings.HasPrefix(u.Path, "/console/") {
		return nil, false
	}
	return u, true
}

func (c *Console) renderLogin(w http.ResponseWriter, r *Request, status int, msg, name, next string) error {
	set, err := c.store.ConsolePasswordSet()
	if err != nil {
		return err
	}
	r.sess = store.ConsoleSession{CSRF: c.loginToken(w, r.Request)}
	return c.render(w, r, status, "login", "Log in", "", map[string]any{"PasswordSet": set, "Error": msg, "Name": name, "Next": next})
}

// Login serves POST /console/login.
func (c *Console) Login(w http.ResponseWriter, r *Request) error {
	if err := parseForm(r.Request); err != nil {
		return err
	}
	if !checkLoginToken(r.Request) {
		return errCSRF()
	}
	name := strings.ToLower(strings.TrimSpace(r.PostForm.Get("name")))
	next := loginNext(r.PostForm.Get("next"))
	sess, err := c.store.ConsoleLogin(name, r.PostForm.Get("password"), clientAddr(r.Request))
	switch store.ErrorCode(err) {
	case "":
	case store.EUNAUTHORIZED:
		return c.renderLogin(w, r, wire.Status(err), "The name or the password is not correct.", name, next)
	case store.ECONFLICT:
		return c.renderLogin(w, r, wire.Status(err), "No console operator exists yet.", name, next)
	default:
		return err
	}
	http.SetCookie(w, c.cookie(consoleCookie, sess.ID, int(store.ConsoleSessionTTL.Seconds())))
	http.SetCookie(w, c.cookie(consoleLoginCookie, "", -1))
	return redirect(w, r, next, "")
}

// Logout serves POST /console/logout.
func (c *Console) Logout(w http.ResponseWriter, r *Request) error {
	if err := c.store.ConsoleLogout(r.sess.ID); err != nil {
		return err
	}
	http.SetCookie(w, c.cookie(consoleCookie, "", -1))
	return redirect(w, r, "/console/login", "logged-out")
}

// SwitchEnv serves POST /console/env: the environment the console shows.
func (c *Console) SwitchEnv(w http.ResponseWriter, r *Request) error {
	env := store.Env(r.PostForm.Get("env"))
	if _, err := c.store.SetConsoleEnv(r.sess.ID, env); err != nil {
		return err
	}
	return redirect(w, r, consoleBack(r.PostForm.Get("back"), env), "env")
}

// consoleBack is where the environment switch to env returns to: the
// console page back names, a detail page's list (a record of one
// environment does not exist in the other), and /console for anything
// else, the test clock too when env is not the sandbox (it has none).
func consoleBack(back string, env store.Env) string {
	u, ok := consolePage(back)
	if !ok || (u.Path == "/console/clock" && env != store.Sandbox) {
		return "/console"
	}
	clean := u.Path
	if parts := strings.Split(clean, "/"); len(parts) > 3 {
		return strings.Join(parts[:3], "/")
	}
	q := u.Query()
	q.Del("cursor") // a page of the other environment's list
	q.Del("ok")
	if len(q) > 0 {
		clean += "?" + q.Encode()
	}
	return clean
}

// StaticFile serves GET /console/static/:file from the embedded assets.
func (c *Console) StaticFile(w http.ResponseWriter, r *Request) error {
	name := r.params.ByName("file")
	b, err := fs.ReadFile(c.static, name)
	if err != nil {
		return store.NotFound("file", name)
	}
	ct := "application/octet-stream"
	switch {
	case strings.HasSuffix(name, ".css"):
		ct = "text/css; charset=utf-8"
	case strings.HasSuffix(name, ".js"):
		ct = "text/javascript; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
	return nil
}
