package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/complybox/complybox/store"
)

func (s *Server) verify(w http.ResponseWriter, r *request) error {
	var in store.VerifyInput
	if err := decode(r.Request, &in); err != nil {
		return err
	}
	v, err := s.store.Verify(r.env, r.params.ByName("id"), in)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, v)
	return nil
}

func (s *Server) addDocument(w http.ResponseWriter, r *request) error {
	var in store.DocumentInput
	if err := decode(r.Request, &in); err != nil {
		return err
	}
	d, err := s.store.AddDocument(r.env, r.params.ByName("id"), in)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusCreated, d)
	return nil
}

func (s *Server) sandboxReview(w http.ResponseWriter, r *request) error {
	if err := sandboxOnly(r); err != nil {
		return err
	}
	var in store.Decision
	if err := decode(r.Request, &in); err != nil {
		return err
	}
	v, err := s.store.ForceReview(r.env, r.params.ByName("id"), in)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, v)
	return nil
}

func (s *Server) decide(w http.ResponseWriter, r *request) error {
	var in store.Decision
	if err := decode(r.Request, &in); err != nil {
		return err
	}
	v, err := s.store.Decide(r.env, r.params.ByName("id"), in)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, v)
	return nil
}

func (s *Server) createSession(w http.ResponseWriter, r *request) error {
	var in store.SessionInput
	if err := decode(r.Request, &in); err != nil {
		return err
	}
	link, err := s.store.CreateSession(r.env, r.params.ByName("id"), in)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusCreated, link)
	return nil
}

const expiredPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Link expired</title></head>
<body style="font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem">
<h1>This verification link has expired</h1>
<p>Please ask for a new link to continue your verification.</p>
</body></html>
`

// shortLink redirects a short link to its hosted-UI session; 410 with a
// small page once the session expired.
func (s *Server) shortLink(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	target, err := s.store.ShortLink(ps.ByName("code"))
	if store.ErrorCode(err) == store.EGONE {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusGone)
		w.Write([]byte(expiredPage))
		return nil
	}
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, target, http.StatusFound)
	return nil
}
