package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/complybox/complybox/server/wire"
	"github.com/complybox/complybox/store"
)

// Deliveries: list, detail, retry one, retry in bulk.

// Deliveries serves GET /console/deliveries.
func (c *Console) Deliveries(w http.ResponseWriter, r *Request) error {
	return c.deliveriesPage(w, r, http.StatusOK, &bulkForm{})
}

// bulkForm is the bulk retry form, shown again with the error and what
// was typed when refused.
type bulkForm struct {
	Status, Destination, Since, Until, Err, ErrField string
}

func (c *Console) deliveriesPage(w http.ResponseWriter, r *Request, status int, bulk *bulkForm) error {
	p, err := wire.Page(r.Request)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := store.DeliveryFilter{Status: q.Get("status"), Destination: q.Get("destination"), EventType: q.Get("eventType")}
	if err := f.Validate(); err != nil {
		return err
	}
	items, next, err := c.store.Deliveries(r.env, f, p)
	if err != nil {
		return err
	}
	return c.render(w, r, status, "deliveries", "Deliveries", "deliveries", map[string]any{
		"Items": items, "Next": deref(next), "Status": f.Status, "Destination": f.Destination, "EventType": f.EventType, "Bulk": bulk,
		"Statuses": []string{store.DeliveryPending, store.DeliveryDelivered, store.DeliveryFailed, store.DeliveryDead}})
}

// Delivery serves GET /console/deliveries/:id.
func (c *Console) Delivery(w http.ResponseWriter, r *Request) error {
	d, err := c.store.Delivery(r.env, store.CanonicalID(r.params.ByName("id")))
	if err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, "delivery", "Delivery "+d.ID, "deliveries", map[string]any{
		"D": d, "Summary": recordFields(d.DeliverySummary),
		"Retryable": d.Status == store.DeliveryFailed || d.Status == store.DeliveryDead})
}

// RetryDelivery serves POST /console/deliveries/:id/retry.
func (c *Console) RetryDelivery(w http.ResponseWriter, r *Request) error {
	id := store.CanonicalID(r.params.ByName("id"))
	if _, err := c.store.RetryDelivery(r.env, id); err != nil {
		return err
	}
	if err := c.record(r, r.env, "console.delivery_retried", map[string]any{"deliveryId": id}); err != nil {
		return err
	}
	return redirect(w, r, "/console/deliveries/"+url.PathEscape(id), "retried")
}

// RetryDeliveries serves POST /console/retry-deliveries: bulk retry of the
// failed or dead deliveries (status failed, dead, or empty for both)
// created between since and until.
func (c *Console) RetryDeliveries(w http.ResponseWriter, r *Request) error {
	f := r.PostForm
	form := &bulkForm{Status: f.Get("status"), Destination: f.Get("destination"), Since: f.Get("since"), Until: f.Get("until")}
	n, err := c.retryDeliveries(r, form)
	if e := store.AsError(err); err != nil && e.Code == store.EINVALID {
		form.Err, form.ErrField = e.Message, e.Field
		// A POST's URL has no list filters: the page lists every delivery.
		return c.deliveriesPage(w, r, wire.Status(err), form)
	}
	if err != nil {
		return err
	}
	// Post/redirect/get: reloading the page that says so must not queue
	// them again.
	return redirect(w, r, "/console/deliveries?status="+url.QueryEscape(store.DeliveryPending)+"&requeued="+strconv.Itoa(n), "bulk-retried")
}

// retryDeliveries re-queues the deliveries form selects and reports how
// many.
func (c *Console) retryDeliveries(r *Request, form *bulkForm) (int, error) {
	in := store.DeliveryFilter{Status: form.Status, Destination: form.Destination}
	switch in.Destination {
	case "", store.DestCustody, store.DestKYC:
	default:
		return 0, store.Invalid("destination", "destination must be custody or kyc")
	}
	var ok bool
	if v := strings.TrimSpace(form.Since); v != "" {
		if in.Since, ok = store.ParseTime(v); !ok {
			return 0, store.Invalid("since", "since must be an ISO 8601 timestamp such as 2026-11-21T05:00:00Z")
		}
	}
	if v := strings.TrimSpace(form.Until); v != "" {
		if in.Until, ok = store.ParseTime(v); !ok {
			return 0, store.Invalid("until", "until must be an ISO 8601 timestamp such as 2026-11-21T06:00:00Z")
		}
	}
	// No status: both kinds of undelivered ones, failed and dead.
	statuses := []string{in.Status}
	if in.Status == "" {
		statuses = []string{store.DeliveryFailed, store.DeliveryDead}
	}
	n := 0
	for _, st := range statuses {
		f := in
		f.Status = st
		m, err := c.store.RetryDeliveries(r.env, f)
		if err != nil {
			return 0, err
		}
		n += m
	}
	return n, c.record(r, r.env, "console.deliveries_retried", map[string]any{
		"status": in.Status, "destination": in.Destination, "since": store.At(in.Since), "until": store.At(in.Until), "requeued": n})
}
