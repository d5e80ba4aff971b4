package server

import (
	"net/http"

	"github.com/complybox/complybox/server/wire"
	"github.com/complybox/complybox/store"
)

// Sessions, links and direct verification (SPEC §3.4). The short links
// the sessions hand out are served by the hosted UI (package hostedui).

// createSession serves POST /v1/applicants/:id/verification-sessions: a
// hosted-UI session with its link and short link.
func (s *Server) createSession(w http.ResponseWriter, r *request) error {
	var in store.SessionInput
	idem, err := decodeIdem(r, &in)
	if err != nil {
		return err
	}
	link, err := s.store.CreateSession(r.env, r.params.ByName("id"), in, idem)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusCreated, link)
	return nil
}

// verify serves POST /v1/applicants/:id/verify: every step's data in one
// JSON body.
func (s *Server) verify(w http.ResponseWriter, r *request) error {
	var in store.VerifyInput
	if err := wire.Decode(r.Request, &in); err != nil {
		return err
	}
	v, err := s.store.Verify(r.env, r.params.ByName("id"), in)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, v)
	return nil
}

// addDocument serves POST /v1/applicants/:id/documents: one document of a
// step.
func (s *Server) addDocument(w http.ResponseWriter, r *request) error {
	var in store.DocumentInput
	if err := wire.Decode(r.Request, &in); err != nil {
		return err
	}
	d, err := s.store.AddDocument(r.env, r.params.ByName("id"), in)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusCreated, d)
	return nil
}
