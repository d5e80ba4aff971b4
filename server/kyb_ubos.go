package server

import (
	"net/http"

	"github.com/complybox/complybox/server/wire"
	"github.com/complybox/complybox/store"
)

// Company structure and beneficial-owner rows (SPEC 3.6). :id is the
// company's externalUserId, :uboIndex the zero-based row index.

func (s *Server) addUbo(w http.ResponseWriter, r *request) error {
	var in store.UboInput
	idem, err := decodeIdem(r, &in)
	if err != nil {
		return err
	}
	out, err := s.store.AddUbo(r.env, r.params.ByName("id"), in, store.SourceAPI, idem)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusCreated, out)
	return nil
}

func (s *Server) listUbos(w http.ResponseWriter, r *request) error {
	p, err := wire.Page(r.Request)
	if err != nil {
		return err
	}
	items, next, err := s.store.Ubos(r.env, r.params.ByName("id"), p)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, newList(items, next))
	return nil
}

func (s *Server) getUbo(w http.ResponseWriter, r *request) error {
	out, err := s.store.Ubo(r.env, r.params.ByName("id"), r.params.ByName("uboIndex"))
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, out)
	return nil
}

func (s *Server) patchUbo(w http.ResponseWriter, r *request) error {
	var in store.UboInput
	if err := wire.Decode(r.Request, &in); err != nil {
		return err
	}
	out, err := s.store.PatchUbo(r.env, r.params.ByName("id"), r.params.ByName("uboIndex"), in)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, out)
	return nil
}

func (s *Server) getCompanyStructure(w http.ResponseWriter, r *request) error {
	out, err := s.store.CompanyStructure(r.env, r.params.ByName("id"))
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, out)
	return nil
}

func (s *Server) patchCompanyStructure(w http.ResponseWriter, r *request) error {
	var in store.StructureInput
	if err := wire.Decode(r.Request, &in); err != nil {
		return err
	}
	out, err := s.store.PatchCompanyStructure(r.env, r.params.ByName("id"), in)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, out)
	return nil
}

// spawnKYC answers 201 when it created the child, 200 with alreadyLinked
// and a fresh link after.
func (s *Server) spawnKYC(w http.ResponseWriter, r *request) error {
	var in store.LinkInput
	if err := wire.Decode(r.Request, &in); err != nil {
		return err
	}
	out, err := s.store.SpawnKYC(r.env, r.cred.Key, r.params.ByName("id"), r.params.ByName("uboIndex"), in)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if out.AlreadyLinked {
		status = http.StatusOK
	}
	s.encode(w, status, out)
	return nil
}

func (s *Server) regenerateLink(w http.ResponseWriter, r *request) error {
	var in store.LinkInput
	if err := wire.Decode(r.Request, &in); err != nil {
		return err
	}
	out, err := s.store.RegenerateLink(r.env, r.params.ByName("id"), r.params.ByName("uboIndex"), in)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, out)
	return nil
}
