package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/complybox/complybox/store"
)

// Placeholders until the verification side lands; each answers 500.

func (s *Server) listLevels(w http.ResponseWriter, r *request) error           { return notYet(w, r) }
func (s *Server) createLevel(w http.ResponseWriter, r *request) error          { return notYet(w, r) }
func (s *Server) getLevel(w http.ResponseWriter, r *request) error             { return notYet(w, r) }
func (s *Server) patchLevel(w http.ResponseWriter, r *request) error           { return notYet(w, r) }
func (s *Server) createApplicant(w http.ResponseWriter, r *request) error      { return notYet(w, r) }
func (s *Server) listApplicants(w http.ResponseWriter, r *request) error       { return notYet(w, r) }
func (s *Server) getApplicant(w http.ResponseWriter, r *request) error         { return notYet(w, r) }
func (s *Server) patchApplicant(w http.ResponseWriter, r *request) error       { return notYet(w, r) }
func (s *Server) eraseApplicant(w http.ResponseWriter, r *request) error       { return notYet(w, r) }
func (s *Server) assignLevel(w http.ResponseWriter, r *request) error          { return notYet(w, r) }
func (s *Server) resetApplicant(w http.ResponseWriter, r *request) error       { return notYet(w, r) }
func (s *Server) deactivateApplicant(w http.ResponseWriter, r *request) error  { return notYet(w, r) }
func (s *Server) activateApplicant(w http.ResponseWriter, r *request) error    { return notYet(w, r) }
func (s *Server) blocklistApplicant(w http.ResponseWriter, r *request) error   { return notYet(w, r) }
func (s *Server) unblocklistApplicant(w http.ResponseWriter, r *request) error { return notYet(w, r) }
func (s *Server) enableMonitoring(w http.ResponseWriter, r *request) error     { return notYet(w, r) }
func (s *Server) disableMonitoring(w http.ResponseWriter, r *request) error    { return notYet(w, r) }
func (s *Server) sendToReview(w http.ResponseWriter, r *request) error         { return notYet(w, r) }
func (s *Server) applicantStatus(w http.ResponseWriter, r *request) error      { return notYet(w, r) }
func (s *Server) applicantSteps(w http.ResponseWriter, r *request) error       { return notYet(w, r) }
func (s *Server) reviewHistory(w http.ResponseWriter, r *request) error        { return notYet(w, r) }
func (s *Server) createSession(w http.ResponseWriter, r *request) error        { return notYet(w, r) }
func (s *Server) verify(w http.ResponseWriter, r *request) error               { return notYet(w, r) }
func (s *Server) addDocument(w http.ResponseWriter, r *request) error          { return notYet(w, r) }
func (s *Server) sandboxReview(w http.ResponseWriter, r *request) error        { return notYet(w, r) }
func (s *Server) decide(w http.ResponseWriter, r *request) error               { return notYet(w, r) }

func (s *Server) shortLink(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	return store.Errorf(store.ENOTFOUND, "not_found", "not implemented")
}
