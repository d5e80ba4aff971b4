package server

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/complybox/complybox/server/requestlog"
	"github.com/complybox/complybox/server/wire"
	"github.com/complybox/complybox/store"
)

func (s *Server) createApplicant(w http.ResponseWriter, r *request) error {
	var in store.ApplicantInput
	if err := wire.Decode(r.Request, &in); err != nil {
		return err
	}
	a, viewed, created, err := s.store.CreateApplicantJSON(r.env, in)
	if err != nil {
		return err
	}
	if !created {
		s.encode(w, http.StatusOK, a)
		return nil
	}
	// A new applicant is answered with the bytes GET answers for it.
	wire.SetLocation(w, "/v1/applicants/", a.ExternalUserID)
	wire.RawJSON(w, http.StatusCreated, viewed)
	return nil
}

func (s *Server) listApplicants(w http.ResponseWriter, r *request) error {
	p, err := wire.Page(r.Request)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	items, next, err := s.store.Applicants(r.env, store.ApplicantFilter{Status: q.Get("status"), ReviewStatus: q.Get("reviewStatus"), Type: q.Get("type")}, p)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, newList(items, next))
	return nil
}

func (s *Server) getApplicant(w http.ResponseWriter, r *request) error {
	b, err := s.store.ApplicantJSON(r.env, r.params.ByName("id"))
	if err != nil {
		return err
	}
	wire.RawJSON(w, http.StatusOK, b)
	return nil
}

func (s *Server) patchApplicant(w http.ResponseWriter, r *request) error {
	var in store.ApplicantInput
	if err := wire.Decode(r.Request, &in); err != nil {
		return err
	}
	a, err := s.store.PatchApplicant(r.env, r.params.ByName("id"), in)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, a)
	return nil
}

func (s *Server) eraseApplicant(w http.ResponseWriter, r *request) error {
	if err := noBody(r); err != nil {
		return err
	}
	id := r.params.ByName("id")
	if err := s.store.Erase(r.env, id); err != nil {
		return err
	}
	// The request log holds the personal data the erasure removed (the
	// create call's body, every answer that showed the applicant): the
	// bodies of the calls that name the applicant go too (SPEC §3.2).
	s.reqlog.Forget(r.env, namesApplicant(id))
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// namesApplicant reports whether a logged call concerns the applicant
// with externalUserId id: its path is the applicant's, or a body gives it
// as an externalUserId (the create call, a list that showed it; not any
// string equal to the id, such as a vault named "1"). The id's characters
// need no JSON escaping.
func namesApplicant(id string) func(e *requestlog.Entry) bool {
	path := "/v1/applicants/" + id
	return func(e *requestlog.Entry) bool {
		return e.Path == path || strings.HasPrefix(e.Path, path+"/") ||
			givesExternalUserID(e.RequestBody, id) || givesExternalUserID(e.ResponseBody, id)
	}
}

// givesExternalUserID reports whether the JSON text body has a member
// "externalUserId" (or "parentExternalUserId") whose value is id, also
// when its name or value is written with \u escapes (which the API
// decodes, so a call may have named the applicant that way).
func givesExternalUserID(body []byte, id string) bool {
	if bytes.IndexByte(body, '\\') >= 0 {
		body = unescapeASCII(body)
	}
	const name = `xternalUserId"` // externalUserId and parentExternalUserId
	for i := 0; ; {
		j := bytes.Index(body[i:], []byte(name))
		if j < 0 {
			return false
		}
		i += j + len(name)
		rest := bytes.TrimLeft(body[i:], " \t\r\n")
		if len(rest) == 0 || rest[0] != ':' {
			continue
		}
		rest = bytes.TrimLeft(rest[1:], " \t\r\n")
		if len(rest) > len(id)+1 && rest[0] == '"' && string(rest[1:1+len(id)]) == id && rest[1+len(id)] == '"' {
			return true
		}
	}
}

func (s *Server) getCompanyInfo(w http.ResponseWriter, r *request) error {
	c, err := s.store.CompanyInfo(r.env, r.params.ByName("id"))
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, c)
	return nil
}

func (s *Server) patchCompanyInfo(w http.ResponseWriter, r *request) error {
	var in store.ApplicantInput
	if err := wire.Decode(r.Request, &in); err != nil {
		return err
	}
	c, err := s.store.PatchCompanyInfo(r.env, r.params.ByName("id"), in)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, c)
	return nil
}

// action adapts a store action on one applicant to a handler answering the
// applicant.
func (s *Server) action(fn func(env store.Env, id string) (store.Applicant, error)) handlerFunc {
	return func(w http.ResponseWriter, r *request) error {
		if err := noBody(r); err != nil {
			return err
		}
		a, err := fn(r.env, r.params.ByName("id"))
		if err != nil {
			return err
		}
		s.encode(w, http.StatusOK, a)
		return nil
	}
}

func (s *Server) assignLevel(w http.ResponseWriter, r *request) error {
	if err := noBody(r); err != nil {
		return err
	}
	a, err := s.store.AssignLevel(r.env, r.params.ByName("id"), r.params.ByName("levelName"))
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, a)
	return nil
}

func (s *Server) resetApplicant(w http.ResponseWriter, r *request) error {
	return s.action(s.store.Reset)(w, r)
}

func (s *Server) deactivateApplicant(w http.ResponseWriter, r *request) error {
	return s.action(s.store.Deactivate)(w, r)
}

func (s *Server) activateApplicant(w http.ResponseWriter, r *request) error {
	return s.action(s.store.Activate)(w, r)
}

func (s *Server) blocklistApplicant(w http.ResponseWriter, r *request) error {
	return s.action(s.store.Blocklist)(w, r)
}

func (s *Server) unblocklistApplicant(w http.ResponseWriter, r *request) error {
	return s.action(s.store.Unblocklist)(w, r)
}

func (s *Server) enableMonitoring(w http.ResponseWriter, r *request) error {
	return s.action(func(env store.Env, id string) (store.Applicant, error) { return s.store.SetMonitoring(env, id, true) })(w, r)
}

func (s *Server) disableMonitoring(w http.ResponseWriter, r *request) error {
	return s.action(func(env store.Env, id string) (store.Applicant, error) { return s.store.SetMonitoring(env, id, false) })(w, r)
}

func (s *Server) sendToReview(w http.ResponseWriter, r *request) error {
	return s.action(s.store.SendToReview)(w, r)
}

func (s *Server) applicantStatus(w http.ResponseWriter, r *request) error {
	v, err := s.store.Status(r.env, r.params.ByName("id"))
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, v)
	return nil
}

func (s *Server) applicantSteps(w http.ResponseWriter, r *request) error {
	v, err := s.store.Steps(r.env, r.params.ByName("id"))
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, v)
	return nil
}

func (s *Server) reviewHistory(w http.ResponseWriter, r *request) error {
	// Page checks the query as every list's (limit, a parameter given
	// twice, bad encoding).
	p, err := wire.Page(r.Request)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	hq := store.HistoryQuery{EventType: q.Get("eventType"), Limit: p.Limit, Cursor: q.Get("cursor")}
	if v := q.Get("since"); v != "" || q.Has("since") {
		t, ok := parseSince(v)
		if !ok {
			return store.Invalid("since", "since must be an ISO 8601 timestamp, e.g. 2026-11-21T05:17:44.123Z")
		}
		hq.Since = t
	}
	if q.Has("eventType") && hq.EventType == "" {
		return store.Invalid("eventType", "eventType must not be empty")
	}
	h, err := s.store.ReviewHistory(r.env, r.params.ByName("id"), hq)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, h)
	return nil
}

// parseSince reads the review-history since parameter: an ISO 8601
// timestamp with an offset (a "+" left unencoded in the query arrives as a
// space and is taken back), a timestamp without an offset (UTC), or a
// calendar date (its midnight UTC).
func parseSince(v string) (time.Time, bool) {
	v = strings.TrimSpace(v)
	if i := strings.LastIndexByte(v, ' '); i > 0 && strings.Contains(v[:i], "T") {
		v = v[:i] + "+" + v[i+1:]
	}
	return store.ParseTime(v)
}

// unescapeASCII returns body with each JSON escape of a printable ASCII
// character other than the quote and the backslash (\u0063, \/) written
// as the character, so that a name or an id written escaped reads as sent
// unescaped; other escapes stay.
func unescapeASCII(body []byte) []byte {
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' || i+1 >= len(body) {
			out = append(out, body[i])
			continue
		}
		switch next := body[i+1]; {
		case next == '/':
			out = append(out, '/')
			i++
		case next == 'u' && i+5 < len(body):
			if v, err := strconv.ParseUint(string(body[i+2:i+6]), 16, 8); err == nil && v >= 0x20 && v < 0x7f && v != '"' && v != '\\' {
				out = append(out, byte(v))
				i += 5
				continue
			}
			out = append(out, body[i], next)
			i++
		default:
			out = append(out, body[i], next) // an escape kept whole: \\ stays \\
			i++
		}
	}
	return out
}
