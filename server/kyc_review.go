package server

import (
	"net/http"

	"github.com/complybox/complybox/server/wire"
	"github.com/complybox/complybox/store"
)

// The reviewer (SPEC §3.5): the verdict forced in sandbox, the operator's
// decision in production.

// sandboxReview serves POST /v1/applicants/:id/sandbox/review (sandbox only).
func (s *Server) sandboxReview(w http.ResponseWriter, r *request) error {
	if err := sandboxOnly(r); err != nil {
		return err
	}
	var in store.Decision
	if err := wire.Decode(r.Request, &in); err != nil {
		return err
	}
	v, err := s.store.ForceReview(r.env, r.params.ByName("id"), in)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, v)
	return nil
}

// decide serves POST /v1/admin/applicants/:id/decision.
func (s *Server) decide(w http.ResponseWriter, r *request) error {
	var in store.Decision
	if err := wire.Decode(r.Request, &in); err != nil {
		return err
	}
	v, err := s.store.Decide(r.env, r.params.ByName("id"), in)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, v)
	return nil
}
