package hostedui

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/complybox/complybox/store"
)

const expiredPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Link expired</title></head>
<body style="font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem">
<h1>This verification link has expired</h1>
<p>Please ask for a new link to continue your verification.</p>
</body></html>
`

// ShortLink serves GET /l/:code: a redirect to the link's hosted-UI
// session; 410 with a small page once the session expired.
func (ui *UI) ShortLink(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	target, err := ui.store.ShortLink(ps.ByName("code"))
	if store.ErrorCode(err) == store.EGONE {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusGone)
		w.Write([]byte(expiredPage))
		return
	}
	if err != nil {
		ui.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, target, http.StatusFound)
}
