package server

import (
	"net/http"

	"github.com/complybox/complybox/store"
)

// notYet answers routes whose feature has not landed yet.
func notYet(w http.ResponseWriter, r *request) error {
	return store.Errorf(store.EINTERNAL, "not_implemented", "not implemented")
}
