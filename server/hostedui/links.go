package hostedui

import (
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/complybox/complybox/store"
)

// ShortLink serves GET /l/:code: a redirect (302) to the link's hosted-UI
// session. /l/ is a link people open in a browser, so an expired link is
// the friendly 410 page, and so is an unknown one ("link not found"), as
// for an unknown token's page: retention removes a link a day after it
// expired, and its code must still answer 410. The pages come in the
// session's language and theme when known, with the hosted UI's CSP. Only
// a client that asks for JSON and not for HTML (a script checking a link)
// gets the API's JSON error instead (404 link_not_found, 410 link_expired).
func (ui *UI) ShortLink(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	target, err := ui.store.ShortLink(ps.ByName("code"))
	if err != nil {
		accept := r.Header.Get("Accept")
		if strings.Contains(accept, "application/json") && !strings.Contains(accept, "text/html") {
			ui.writeError(w, r, err)
			return
		}
		if store.ErrorCode(err) == store.ENOTFOUND {
			ui.unknownLink(w, r)
			return
		}
		ui.fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, target, http.StatusFound)
}

// Favicon serves /favicon.ico, the icon browsers ask for on every page of
// the hosted UI and the console.
func (ui *UI) Favicon(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	r2 := r.Clone(r.Context())
	ui.Asset(w, r2, httprouter.Params{{Key: "file", Value: "/favicon.ico"}})
}
