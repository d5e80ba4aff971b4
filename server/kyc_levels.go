package server

import (
	"net/http"

	"github.com/complybox/complybox/server/wire"
	"github.com/complybox/complybox/store"
)

func (s *Server) listLevels(w http.ResponseWriter, r *request) error {
	p, err := wire.Page(r.Request)
	if err != nil {
		return err
	}
	levels, next, err := s.store.LevelPage(r.env, p)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, newList(levels, next))
	return nil
}

func (s *Server) getLevel(w http.ResponseWriter, r *request) error {
	l, err := s.store.Level(r.env, r.params.ByName("levelName"))
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, l)
	return nil
}

func (s *Server) createLevel(w http.ResponseWriter, r *request) error {
	var in store.Level
	if err := wire.Decode(r.Request, &in); err != nil {
		return err
	}
	l, err := s.store.CreateLevel(r.env, in)
	if err != nil {
		return err
	}
	wire.SetLocation(w, "/v1/levels/", l.Name)
	s.encode(w, http.StatusCreated, l)
	return nil
}

func (s *Server) patchLevel(w http.ResponseWriter, r *request) error {
	var in store.LevelPatch
	if err := wire.Decode(r.Request, &in); err != nil {
		return err
	}
	l, err := s.store.PatchLevel(r.env, r.params.ByName("levelName"), in)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, l)
	return nil
}
