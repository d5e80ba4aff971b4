package server

import (
	"io"
	"net/http"
	"time"

	"github.com/complybox/complybox/server/requestlog"
	"github.com/complybox/complybox/server/wire"
	"github.com/complybox/complybox/store"
)

// Request log (SPEC §7): every authenticated API call is recorded in the
// Server's requestlog as its answer ends, before the last bytes leave
// (statusRecorder.record). Calls that fail
// authentication are not: they belong to no environment, and a caller
// without a credential must not be able to push a partner's entries out.

// requestCapture is what statusRecorder keeps of an API call for the log.
type requestCapture struct {
	logged   bool // an authenticated API call: recorded when answered
	env      store.Env
	key      string
	reqBody  *bodyTap
	resp     []byte // the first requestlog.MaxBody bytes written
	respSize int64
}

// keepResponse keeps the first requestlog.MaxBody bytes of the answer.
func (c *requestCapture) keepResponse(b []byte) {
	c.respSize += int64(len(b))
	if room := requestlog.MaxBody - len(c.resp); room > 0 {
		c.resp = append(c.resp, b[:min(room, len(b))]...)
	}
}

// bodyTap is a request body that keeps what the log shows of it
// (requestlog.Head) as the handler reads it, and counts its bytes.
type bodyTap struct {
	io.ReadCloser
	head requestlog.Head
	n    int64
}

func (t *bodyTap) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	t.n += int64(n)
	if n > 0 && !t.head.Full() {
		t.head.Write(p[:n])
	}
	return n, err
}

// capture marks an authenticated call for the request log. w is the
// statusRecorder ServeHTTP gave the router.
func capture(w http.ResponseWriter, r *http.Request, cred store.Credential) {
	rec, ok := w.(*statusRecorder)
	if !ok {
		return
	}
	rec.logged, rec.env, rec.key = true, cred.Environment, cred.Key
	if r.Body != nil && r.Body != http.NoBody {
		rec.reqBody = &bodyTap{ReadCloser: r.Body}
		r.Body = rec.reqBody
	}
}

// notLogged keeps the current call out of the request log (reads of the
// log itself, which would otherwise push out what they look for).
func notLogged(w http.ResponseWriter) {
	if rec, ok := w.(*statusRecorder); ok {
		rec.logged = false
	}
}

// recordRequest adds an answered call to the request log; method is the
// one the client sent (HEAD is served as GET).
func (s *Server) recordRequest(rec *statusRecorder, r *http.Request, method, id string) {
	e := requestlog.Entry{
		RequestID: id, At: s.store.NowIn(rec.env), Method: method, Path: r.URL.Path, Query: r.URL.RawQuery,
		Status: rec.status, Duration: time.Since(rec.start), Began: rec.start, CredentialKey: rec.key,
		RequestContentType: r.Header.Get("Content-Type"), ResponseContentType: rec.Header().Get("Content-Type"),
		ResponseBody: rec.resp, ResponseBodySize: rec.respSize,
	}
	if t := rec.reqBody; t != nil {
		e.RequestBody, e.RequestBodySize = t.head.Bytes(), t.n
	}
	s.reqlog.Record(rec.env, e)
}

// listRequests serves GET /v1/requests: the environment's request log,
// newest first (?status=4xx|404, ?path= prefix, ?method=, ?requestId=).
func (s *Server) listRequests(w http.ResponseWriter, r *request) error {
	notLogged(w)
	p, err := wire.Page(r.Request)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := requestlog.Filter{Status: q.Get("status"), PathPrefix: q.Get("path"), Method: q.Get("method"), RequestID: q.Get("requestId")}
	items, next, err := s.reqlog.List(r.env, f, p)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, newList(items, next))
	return nil
}

// getRequest serves GET /v1/requests/:requestId: the newest logged call
// with that request id (the requestId of an error body).
func (s *Server) getRequest(w http.ResponseWriter, r *request) error {
	notLogged(w)
	v, err := s.reqlog.Get(r.env, r.params.ByName("requestId"))
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, v)
	return nil
}
