package console

import (
	"net/http"

	"github.com/complybox/complybox/server/requestlog"
	"github.com/complybox/complybox/server/wire"
	"github.com/complybox/complybox/store"
)

// RequestPages are the console's Requests pages (SPEC §7): the request log
// of the environment shown, list and detail.
type RequestPages struct {
	c   *Console
	log *requestlog.Log
}

// RequestPages returns the Requests pages reading log.
func (c *Console) RequestPages(log *requestlog.Log) *RequestPages {
	return &RequestPages{c: c, log: log}
}

// statusClasses are the status filters the list offers.
var statusClasses = [...]string{"2xx", "4xx", "5xx"}

// List serves GET /console/requests.
func (p *RequestPages) List(w http.ResponseWriter, r *Request) error {
	pg, err := wire.Page(r.Request)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := requestlog.Filter{Status: q.Get("status"), PathPrefix: q.Get("path"), Method: q.Get("method"), RequestID: q.Get("requestId")}
	items, next, err := p.log.List(r.env, f, pg)
	if err != nil {
		return err
	}
	return p.c.render(w, r, http.StatusOK, "requests", "Requests", "requests", map[string]any{
		"Items": items, "Next": deref(next), "F": f, "Classes": statusClasses[:], "Capacity": requestlog.Capacity})
}

// Detail serves GET /console/requests/:id, :id being the request id.
func (p *RequestPages) Detail(w http.ResponseWriter, r *Request) error {
	v, err := p.log.Get(r.env, r.params.ByName("id"))
	if err != nil {
		return err
	}
	return p.c.render(w, r, http.StatusOK, "request", v.Method+" "+v.Path, "requests", map[string]any{
		"V": v, "Summary": recordFields(struct {
			RequestID     string     `json:"requestId"`
			At            store.Time `json:"at"`
			Method        string     `json:"method"`
			Path          string     `json:"path"`
			Query         string     `json:"query"`
			Status        int        `json:"status"`
			DurationMs    float64    `json:"durationMs"`
			CredentialKey string     `json:"credentialKey"`
		}{v.RequestID, v.At, v.Method, v.Path, v.Query, v.Status, v.DurationMs, v.CredentialKey})})
}
