// Package server is complybox's HTTP layer: the partner JSON API, which
// decodes requests, calls the store and encodes answers. The hosted UI
// (package hostedui) and the console (package console) are packages of
// their own; errors and JSON bodies go through package wire for all three.
// Every route of the binary is listed in routes.go.
package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/complybox/complybox/server/console"
	"github.com/complybox/complybox/server/hostedui"
	"github.com/complybox/complybox/server/requestlog"
	"github.com/complybox/complybox/server/wire"
	"github.com/complybox/complybox/store"
	"github.com/complybox/complybox/store/imagequality"
)

// Body limits.
const (
	bodyLimit       = 1 << 20  // 1 MiB
	bodyLimitImages = 25 << 20 // 25 MiB on /verify and document uploads
)

// Config configures the HTTP layer.
type Config struct {
	PublicURL string                  // base of hosted-UI and short links
	Version   string                  // reported in the User-Agent and /openapi.json
	NoMetrics bool                    // no GET /metrics ([metrics] enabled = false)
	Branding  hostedui.Branding       // the partner's look of the hosted pages ([branding])
	Quality   imagequality.Thresholds // photo checks at upload ([image_quality]); zero: none
}

// Dispatcher is what the server needs of the dispatcher.
type Dispatcher interface {
	Running() bool
	// Advance moves env's test clock forward, running the work due on the
	// way (dispatch.Dispatcher.Advance).
	Advance(ctx context.Context, env store.Env, to store.ClockTarget) (store.ClockMove, error)
}

// Server serves the API, the hosted UI and the console.
type Server struct {
	store   *store.Store
	disp    Dispatcher
	cfg     Config
	log     *slog.Logger
	router  *httprouter.Router
	reqlog  *requestlog.Log // the last API requests per environment (SPEC §7)
	metrics *metrics        // nil when disabled
	gzips   sync.Pool       // *gzip.Writer, reused across responses (gzip.go)
	console *console.Console
	hosted  *hostedui.UI // its page API answers its own calls over the body limit

	openapiDoc func() ([]byte, error) // /openapi.json, built once (openapi.go)
}

// New returns the complybox HTTP handler.
func New(st *store.Store, disp Dispatcher, cfg Config, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.Default()
	}
	s := &Server{store: st, disp: disp, cfg: cfg, log: logger, reqlog: requestlog.New(requestlog.Capacity)}
	s.openapiDoc = sync.OnceValues(func() ([]byte, error) { return openapiDocument(cfg) })
	if !cfg.NoMetrics {
		s.metrics = newMetrics(st, disp)
	}
	s.router = httprouter.New()
	s.router.RedirectTrailingSlash = false
	s.router.RedirectFixedPath = false
	s.router.HandleMethodNotAllowed = true
	s.router.NotFound = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if to, ok := hostedLinkSlash(r); ok {
			// A mail or chat client that added a slash to the link an
			// applicant was sent still opens the page.
			http.Redirect(w, r, to, http.StatusMovedPermanently)
			return
		}
		s.captureUnrouted(w, r)
		s.routeError(w, r, store.Errorf(store.ENOTFOUND, "route_not_found", "no route for %s %s", r.Method, r.URL.Path))
	})
	s.router.MethodNotAllowed = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		allowHead(w, r)
		s.captureUnrouted(w, r)
		s.routeError(w, r, store.Errorf(store.EMETHOD, "method_not_allowed", "%s is not allowed on %s; allowed: %s", r.Method, r.URL.Path, w.Header().Get("Allow")))
	})
	s.router.GlobalOPTIONS = http.HandlerFunc(allowHead)
	s.router.PanicHandler = func(w http.ResponseWriter, r *http.Request, p any) {
		s.writeError(w, r, fmt.Errorf("panic: %v", p))
	}
	s.routes()
	return s
}

// ServeHTTP adds the request id, body limit, gzip (gzip.go) and access log
// around the router.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	method := r.Method
	r, id := wire.WithRequestID(w, r)
	if r.Method == http.MethodHead {
		if h, _, _ := s.router.Lookup(http.MethodGet, r.URL.Path); h != nil {
			// HEAD is GET without the body: net/http drops what the
			// handler writes, as it knows the request was HEAD.
			r.Method = http.MethodGet
		}
	}
	limit := int64(bodyLimit)
	if imageUpload(r) {
		limit = bodyLimitImages
	}
	out := w
	if acceptsGzip(r) && r.Method != http.MethodHead {
		gz := &gzipWriter{ResponseWriter: w, pool: &s.gzips}
		defer gz.close()
		out = gz
	}
	rec := &statusRecorder{ResponseWriter: out, status: http.StatusOK, start: start}
	rec.record = func() { s.recordRequest(rec, r, method, id) }
	if r.ContentLength < 0 && limit == bodyLimit && takesBody(r) && r.Body != nil && r.Body != http.NoBody {
		// A body of unknown length (chunked) is read here, up to the
		// limit, as one with a Content-Length is judged: a handler that
		// never reads its body (submit, reset) would run past any size.
		// Image uploads keep streaming; their handlers read the body.
		b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		switch {
		case err != nil:
			// As ReadBody answers a body with a Content-Length cut short,
			// and in the request log as any refused call (captureUnrouted).
			s.captureUnrouted(rec, r)
			s.routeError(rec, r, store.Errorf(store.EINVALID, "bad_request", "could not read the request body: %v", err))
			s.logRequest(r, rec, method, id, start)
			return
		case int64(len(b)) > limit:
			r.ContentLength = int64(len(b))
		default:
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		}
	}
	switch {
	case r.RequestURI == "*" && r.Method == http.MethodOptions:
		// What the server as a whole supports (RFC 9110 §9.3.7).
		rec.Header().Set("Allow", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS")
		rec.Header().Set("Content-Length", "0")
		rec.WriteHeader(http.StatusOK)
	case r.RequestURI == "*":
		// The asterisk form is OPTIONS's alone (RFC 9110 §7.1); no
		// resource carries another method.
		s.routeError(rec, r, store.Errorf(store.EINVALID, "bad_request", "the request target * is only for OPTIONS"))
	case encodedSlash(r.URL):
		s.captureUnrouted(rec, r)
		s.routeError(rec, r, store.Errorf(store.ENOTFOUND, "route_not_found",
			"no route for %s %s: a path segment holds an encoded / (%%2F), which no id contains", r.Method, r.URL.EscapedPath()))
	case r.ContentLength > limit && takesBody(r) && s.pageAPICall(r):
		// The page API checks its token first (401 for an unknown one)
		// and records the refusal as an sdk call (SPEC §3.8).
		s.hosted.Refuse(rec, r, store.Errorf(store.ETOOLARGE, "body_too_large", "request body is over the %d byte limit", limit))
	case r.ContentLength > limit && takesBody(r) && !hostedPagePost(r):
		s.captureOverLimit(rec, r)
		s.routeError(rec, r, store.Errorf(store.ETOOLARGE, "body_too_large", "request body is over the %d byte limit", limit))
	default:
		// The hosted UI's upload form reads its body up to the limit, so
		// that its page can say in the applicant's language what was too
		// large: a browser shows a JSON error as text.
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		s.router.ServeHTTP(rec, r)
	}
	s.logRequest(r, rec, method, id, start)
}

// captureOverLimit puts an API call refused for its body's size, before
// any handler runs, in the request log as captureUnrouted does, with the
// size it was sent with.
func (s *Server) captureOverLimit(rec *statusRecorder, r *http.Request) {
	s.captureUnrouted(rec, r)
	if rec.reqBody != nil {
		rec.reqBody.n = r.ContentLength // its size, as sent; none of it is read
	}
}

// captureUnrouted puts a call that no handler takes (a body over the
// limit, a path or a method no route serves) in the request log when its
// credential is valid, as authed does for every call it lets through: the
// requestId of its error then finds it (SPEC §7), and a wrong path or
// method is the commonest mistake of an integration. The console's and
// the hosted UI's paths stay out: they carry no API credential, and a
// short link's or a hosted page's path holds its bearer code or token.
func (s *Server) captureUnrouted(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("X-Api-Key")
	if key == "" || !apiPath(r.URL.Path) {
		return
	}
	if cred, err := s.store.Authenticate(key, r.Header.Get("X-Api-Secret")); err == nil {
		capture(w, r, cred)
	}
}

// hostedLinkSlash returns the link an applicant is sent, a hosted page
// (/sdk/{token}) or a short link (/l/{code}), when r asks for it with a
// slash added, and true.
func hostedLinkSlash(r *http.Request) (string, bool) {
	p, ok := strings.CutSuffix(r.URL.Path, "/")
	if !ok || r.Method != http.MethodGet && r.Method != http.MethodHead {
		return "", false
	}
	for _, prefix := range []string{"/sdk/", "/l/"} {
		if rest, ok := strings.CutPrefix(p, prefix); ok && rest != "" && !strings.Contains(rest, "/") {
			to := strings.TrimSuffix(r.URL.EscapedPath(), "/")
			if r.URL.RawQuery != "" {
				to += "?" + r.URL.RawQuery
			}
			return to, true
		}
	}
	return "", false
}

// apiPath reports whether p lies outside the console's and the hosted
// UI's paths (/console, /sdk…, /l/…, /api/v1/sdk/…, cleaned, in any case)
// and holds no segment the logs redact as a hosted page's token or a short
// link's code (wire.RedactPath: /SDK/T, /prefix/sdk/T).
func apiPath(p string) bool {
	if wire.RedactPath(p) != p {
		return false
	}
	c := strings.ToLower(path.Clean("/" + p))
	for _, prefix := range []string{"/console", "/sdk", "/l/", "/api/v1/sdk"} {
		if strings.HasPrefix(c, prefix) {
			return false
		}
	}
	return true
}

// Unread puts an answer to a request net/http could not read in the
// access log and the metrics (wire.ProtocolErrors tells it), as any other
// answer, so that its X-Request-Id finds it. No handler saw the request:
// its method and path are "-".
func (s *Server) Unread(status int, requestID string) {
	s.log.LogAttrs(context.Background(), slog.LevelInfo, "http",
		slog.String("method", "-"), slog.String("path", "-"), slog.Int("status", status),
		slog.Duration("duration", 0), slog.String("requestId", requestID))
	if s.metrics != nil {
		s.metrics.observe("", "", status, 0)
	}
}

// logRequest writes the access log line, the metrics and the request log
// entry of a request answered.
func (s *Server) logRequest(r *http.Request, rec *statusRecorder, method, id string, start time.Time) {
	s.log.LogAttrs(r.Context(), slog.LevelInfo, "http",
		slog.String("method", method), slog.String("path", wire.RedactPath(r.URL.Path)), slog.Int("status", rec.status),
		slog.Duration("duration", time.Since(start)), slog.String("requestId", id))
	if s.metrics != nil {
		s.metrics.observe(rec.route, method, rec.status, time.Since(start))
	}
	if rec.logged && !rec.recorded {
		rec.recorded = true
		rec.record()
	}
}

// imageUploadPath matches the routes that take images: /verify and the
// document uploads of the API, the hosted UI's API and its form.
var imageUploadPath = regexp.MustCompile(`^(/v1/applicants/[^/]+/(verify|documents)|/api/v1/sdk/documents|/sdk/[^/]+/documents)$`)

// routeError answers a request that reached no handler (no route, a
// method not allowed, a body over the limit): the console's error page
// under /console, else the API's JSON error.
func (s *Server) routeError(w http.ResponseWriter, r *http.Request, err error) {
	if r.URL.Path == "/console" || strings.HasPrefix(r.URL.Path, "/console/") {
		s.console.Error(w, r, err)
		return
	}
	s.writeError(w, r, err)
}

// takesBody reports whether r's method carries a body (POST, PUT, PATCH):
// only those are held to the body limit (413). No GET or DELETE route
// reads a body, so one sent with them is left unread, whatever its size.
func takesBody(r *http.Request) bool {
	return r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch
}

// encodedSlash reports whether a segment of u's path holds an encoded "/"
// (%2F). The router matches the decoded path, where that slash would
// split the segment and reach another route (an applicant "u3%2Fstatus"
// is no id: ids hold no "/").
func encodedSlash(u *url.URL) bool {
	return u.RawPath != "" && strings.Contains(strings.ToUpper(u.RawPath), "%2F")
}

// allowHead sets the Allow of r's path (RFC 9110 §10.2.1): the router's,
// or deliveryAllow's for a delivery, with HEAD wherever GET is, since
// ServeHTTP answers HEAD on every GET route.
func allowHead(w http.ResponseWriter, r *http.Request) {
	allow := w.Header().Get("Allow")
	if a, ok := deliveryAllow(r.URL.Path); ok {
		allow = a
	}
	methods := strings.Split(allow, ", ")
	if slices.Contains(methods, http.MethodGet) && !slices.Contains(methods, http.MethodHead) {
		methods = append(methods, http.MethodHead)
		slices.Sort(methods)
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
}

// deliveryAllow returns the Allow of a /webhooks/deliveries/{id} path.
// The router holds GET and POST there, since bulk retry (POST
// /webhooks/deliveries/retry) shares the parameter's place: a delivery
// takes GET, "retry" takes POST.
func deliveryAllow(path string) (string, bool) {
	id, ok := strings.CutPrefix(path, "/webhooks/deliveries/")
	switch {
	case !ok || id == "" || strings.Contains(id, "/"):
		return "", false
	case id == "retry":
		return "OPTIONS, POST", true
	}
	return "GET, HEAD, OPTIONS", true
}

// hostedPagePost reports whether r is the upload form post of the hosted
// UI's pages (/sdk/{token}/documents), whose errors are pages: it reads its
// body up to the limit to say so in the applicant's language.
func hostedPagePost(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/sdk/") && strings.HasSuffix(r.URL.Path, "/documents")
}

// pageAPICall reports whether r is a call of a route of the hosted UI's
// page API (/api/v1/sdk/*).
func (s *Server) pageAPICall(r *http.Request) bool {
	if !strings.HasPrefix(r.URL.Path, "/api/v1/sdk/") {
		return false
	}
	h, _, _ := s.router.Lookup(r.Method, r.URL.Path)
	return h != nil
}

// imageUpload reports whether r is a POST to a route with the 25 MiB limit.
func imageUpload(r *http.Request) bool {
	return r.Method == http.MethodPost && imageUploadPath.MatchString(r.URL.Path)
}

// statusRecorder is the ResponseWriter of every request: it keeps the
// status and, once an API call has been authenticated (capture), what the
// request log needs.
type statusRecorder struct {
	http.ResponseWriter
	status int
	start  time.Time
	route  string // the route pattern, "" when none matched
	requestCapture
	// record puts a logged call in the request log (set by ServeHTTP).
	// The write that completes the answer's Content-Length calls it
	// before it passes the bytes on, so that the entry is there by the
	// time the client has the answer and looks for it; an answer of no
	// declared length ends only after the handler, when ServeHTTP calls
	// it. recorded: it was called.
	record   func()
	recorded bool
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.logged {
		r.keepResponse(b)
		if !r.recorded && r.complete() {
			r.recorded = true
			r.record()
		}
	}
	return r.ResponseWriter.Write(b)
}

// complete reports whether the answer's bytes so far reach its declared
// Content-Length.
func (r *statusRecorder) complete() bool {
	size, err := strconv.ParseInt(r.Header().Get("Content-Length"), 10, 64)
	return err == nil && r.respSize >= size
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// request is what an API handler gets: the request, its route parameters and
// the authenticated credential.
type request struct {
	*http.Request
	params httprouter.Params
	cred   store.Credential
	env    store.Env
}

// id is the path's :id, a UUID the service minted, in lower case
// whichever case it was sent in (store.CanonicalID).
func (r *request) id() string { return store.CanonicalID(r.params.ByName("id")) }

// handlerFunc is an API handler; a returned error goes to writeError.
type handlerFunc func(w http.ResponseWriter, r *request) error

// api wraps h with authentication (X-Api-Key, X-Api-Secret, X-Environment).
func (s *Server) api(h handlerFunc) httprouter.Handle {
	return s.authed(h, false)
}

// admin is api for /v1/admin/*: the credential must have the admin role.
func (s *Server) admin(h handlerFunc) httprouter.Handle {
	return s.authed(h, true)
}

func (s *Server) authed(h handlerFunc, adminOnly bool) httprouter.Handle {
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		cred, err := s.store.Authenticate(r.Header.Get("X-Api-Key"), r.Header.Get("X-Api-Secret"))
		if err == nil {
			capture(w, r, cred) // an authenticated call is logged, even if refused
			err = checkAccess(r, cred, adminOnly)
		} else {
			// A 401 names its scheme (RFC 9110 §11.6.1): the two headers.
			w.Header().Set("WWW-Authenticate", `ApiKey realm="complybox", headers="X-Api-Key X-Api-Secret"`)
		}
		if err == nil {
			err = h(w, &request{Request: r, params: ps, cred: cred, env: cred.Environment})
		}
		if err != nil {
			s.writeError(w, r, err)
		}
	}
}

func checkAccess(r *http.Request, cred store.Credential, adminOnly bool) error {
	// Sent, the header names one environment: an empty value or a second
	// header is not left to chance (a proxy may have added one).
	switch envs := r.Header.Values("X-Environment"); {
	case len(envs) > 1:
		return store.Invalid("X-Environment", "X-Environment is given twice")
	case len(envs) == 1:
		env := store.Env(envs[0])
		if !env.Valid() {
			return store.Invalid("X-Environment", "X-Environment must be sandbox or production")
		}
		if env != cred.Environment {
			return store.Errorf(store.EFORBIDDEN, "environment_mismatch", "this credential belongs to the %s environment", cred.Environment)
		}
	}
	if adminOnly && cred.Role != store.RoleAdmin {
		return store.Errorf(store.EFORBIDDEN, "admin_required", "this call needs a credential with the admin role")
	}
	return nil
}

// public wraps an unauthenticated handler.
func (s *Server) public(h func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error) httprouter.Handle {
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		if err := h(w, r, ps); err != nil {
			s.writeError(w, r, err)
		}
	}
}

// sandboxOnly returns EFORBIDDEN outside the sandbox environment.
func sandboxOnly(r *request) error {
	if r.env != store.Sandbox {
		return store.Errorf(store.EFORBIDDEN, "sandbox_only", "this call exists only in the sandbox environment")
	}
	return nil
}
