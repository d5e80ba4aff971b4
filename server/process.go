package server

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"

	"github.com/complybox/complybox/store"
)

func (s *Server) healthz(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	if s.disp == nil || !s.disp.Running() {
		return store.Errorf(store.EUNAVAILABLE, "starting", "the dispatcher is not running")
	}
	s.encode(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// backup streams a consistent copy of the db (bbolt Tx.WriteTo).
func (s *Server) backup(w http.ResponseWriter, r *request) error {
	sent := false
	err := s.store.Backup(w, func(size int64) {
		sent = true
		w.Header().Set("Content-Type", "application/octet-stream")
		// The whole file: secrets' hashes, signing secrets, personal data.
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Disposition", `attachment; filename="complybox-backup.db"`)
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	})
	switch {
	case err != nil && !sent:
		// The copy failed (the disk is full, the db's directory is not
		// writable) before any header went out: a 5xx the client sees,
		// never a 200 with an empty body.
		return fmt.Errorf("backup: copying the db: %w", err)
	case err != nil:
		s.log.Error("backup", "err", err) // headers are gone: the client sees a short body
	}
	return nil
}

// openapi serves the OpenAPI 3.1 document, merged from the fragments under
// openapi/ (one per area of the API).
func (s *Server) openapi(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	doc, err := s.openapiDoc()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(doc)
	return nil
}
