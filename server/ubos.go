package server

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/complybox/complybox/store"
)

// Company structure and beneficial-owner rows (SPEC 3.6). :id is the
// company's externalUserId, :uboIndex the zero-based row index.

func (s *Server) addUbo(w http.ResponseWriter, r *request) error {
	var in store.UboInput
	if err := decode(r.Request, &in); err != nil {
		return err
	}
	out, err := s.store.AddUbo(r.env, r.params.ByName("id"), in, store.SourceAPI)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusCreated, out)
	return nil
}

func (s *Server) listUbos(w http.ResponseWriter, r *request) error {
	p, err := page(r.Request)
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
	if err := decode(r.Request, &in); err != nil {
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
	if err := decode(r.Request, &in); err != nil {
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
	if err := decode(r.Request, &in); err != nil {
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
	if err := decode(r.Request, &in); err != nil {
		return err
	}
	out, err := s.store.RegenerateLink(r.env, r.params.ByName("id"), r.params.ByName("uboIndex"), in)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, out)
	return nil
}

// sdkAddUbo is POST /api/v1/sdk/ubos: the hosted UI adds a row (source
// sdk) to the session's company; 201 {uboIndex, row}.
func (s *Server) sdkAddUbo(w http.ResponseWriter, r *http.Request, token string) error {
	var in store.UboInput
	if err := decode(r, &in); err != nil {
		return err
	}
	_, out, err := s.store.SDKAddUbo(token, in)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusCreated, out)
	return nil
}

// postUbo takes the hosted UI's row form: inputs fullName, dateOfBirth,
// ownershipPercent, roles (one input per role), email and nationality; an
// empty input is no value.
func (ui *sdkUI) postUbo(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	token := ps.ByName("token")
	if err := r.ParseForm(); err != nil {
		ui.formError(w, r, token, "ubo", store.Invalid("body", "malformed form"), nil)
		return
	}
	in := store.UboInput{}
	for _, f := range []string{"fullName", "dateOfBirth", "email", "nationality"} {
		if v := strings.TrimSpace(r.PostForm.Get(f)); v != "" {
			in[f], _ = json.Marshal(v)
		}
	}
	if v := strings.TrimSpace(r.PostForm.Get("ownershipPercent")); v != "" {
		// A form value is text; a number that does not parse is sent as a
		// string so that the store names the field.
		var n json.Number
		if json.Unmarshal([]byte(v), &n) == nil {
			in["ownershipPercent"] = json.RawMessage(v)
		} else {
			in["ownershipPercent"], _ = json.Marshal(v)
		}
	}
	roles := []string{}
	for _, v := range r.PostForm["roles"] {
		if v = strings.TrimSpace(v); v != "" {
			roles = append(roles, v)
		}
	}
	in["roles"], _ = json.Marshal(roles)
	st, _, err := ui.s.store.SDKAddUbo(token, in)
	if err != nil {
		ui.formError(w, r, token, "ubo", err, r.PostForm)
		return
	}
	ui.done(w, r, token, st, "ubo")
}
