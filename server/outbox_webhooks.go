// Webhooks of both destinations (SPEC §5, §7): the custody webhook's
// settings, test events, the deliveries list and its retries, and the
// event catalogs. The KYC callback is set in the config or the console.

package server

import (
	"net/http"

	"github.com/complybox/complybox/server/wire"
	"github.com/complybox/complybox/store"
)

// putWebhook serves PUT /webhooks/outbound: the custody webhook's URL and
// subscribed event types (SPEC §5).
func (s *Server) putWebhook(w http.ResponseWriter, r *request) error {
	var in struct {
		URL                  *string  `json:"url"`
		SubscribedEventTypes []string `json:"subscribedEventTypes"`
	}
	if err := wire.Decode(r.Request, &in); err != nil {
		return err
	}
	if in.URL == nil {
		return store.Invalid("url", "url is required")
	}
	v, err := s.store.SetWebhook(r.Context(), r.env, *in.URL, in.SubscribedEventTypes)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, v)
	return nil
}

// getWebhook serves GET /webhooks/outbound.
func (s *Server) getWebhook(w http.ResponseWriter, r *request) error {
	v, err := s.store.WebhookConfig(r.env)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, v)
	return nil
}

// testWebhook serves POST /webhooks/outbound/test {eventType?}: webhook.test,
// or a sample of a custody catalog type (SPEC §7).
func (s *Server) testWebhook(w http.ResponseWriter, r *request) error {
	return s.sendSample(w, r, store.DestCustody)
}

// testCallback serves POST /v1/webhooks/test {eventType?}: the same for the
// KYC callback and the applicant catalog.
func (s *Server) testCallback(w http.ResponseWriter, r *request) error {
	return s.sendSample(w, r, store.DestKYC)
}

// sendSample enqueues a sample event {eventType?} for destination dest and
// answers 202 with its delivery id.
func (s *Server) sendSample(w http.ResponseWriter, r *request, dest string) error {
	var in struct {
		EventType *string `json:"eventType"`
	}
	if err := wire.Decode(r.Request, &in); err != nil {
		return err
	}
	eventType := ""
	if in.EventType != nil {
		if eventType = *in.EventType; eventType == "" {
			return store.Invalid("eventType", "eventType must name a catalog type, or webhook.test (the default)")
		}
	}
	id, err := s.store.SendSampleEvent(r.env, dest, eventType)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusAccepted, map[string]string{"deliveryId": id})
	return nil
}

// deliveryFilter reads the deliveries list's filters from the query.
func deliveryFilter(r *request) (store.DeliveryFilter, error) {
	q := r.URL.Query()
	f := store.DeliveryFilter{Status: q.Get("status"), EventType: q.Get("eventType"), Destination: q.Get("destination"), EntityID: q.Get("entityId")}
	return f, f.Validate()
}

// listDeliveries serves GET /webhooks/deliveries: both destinations'
// deliveries, newest first, by their filter indexes.
func (s *Server) listDeliveries(w http.ResponseWriter, r *request) error {
	f, err := deliveryFilter(r)
	if err != nil {
		return err
	}
	p, err := wire.Page(r.Request)
	if err != nil {
		return err
	}
	items, next, err := s.store.Deliveries(r.env, f, p)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, newList(items, next))
	return nil
}

// getDelivery serves GET /webhooks/deliveries/:id.
func (s *Server) getDelivery(w http.ResponseWriter, r *request) error {
	if allow, _ := deliveryAllow(r.URL.Path); allow != "GET, HEAD, OPTIONS" {
		w.Header().Set("Allow", allow)
		return store.Errorf(store.EMETHOD, "method_not_allowed", "%s is not allowed on %s; allowed: %s", r.Method, r.URL.Path, allow)
	}
	d, err := s.store.Delivery(r.env, r.id())
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, d)
	return nil
}

// retryDelivery serves POST /webhooks/deliveries/:id/retry: a failed or
// dead delivery, due now, with a fresh round of attempts.
func (s *Server) retryDelivery(w http.ResponseWriter, r *request) error {
	if err := noBody(r); err != nil {
		return err
	}
	d, err := s.store.RetryDelivery(r.env, r.id())
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, d)
	return nil
}

// postDeliveries serves POST /webhooks/deliveries/retry. httprouter cannot
// hold the static "retry" beside ":id" in one method tree, so the route is
// POST /webhooks/deliveries/:id and any other id is unknown.
func (s *Server) postDeliveries(w http.ResponseWriter, r *request) error {
	if allow, _ := deliveryAllow(r.URL.Path); allow != "OPTIONS, POST" {
		w.Header().Set("Allow", allow)
		return store.Errorf(store.EMETHOD, "method_not_allowed", "POST is not allowed on %s; allowed: %s", r.URL.Path, allow)
	}
	var in struct {
		Status      string `json:"status"`
		Since       string `json:"since"`
		Until       string `json:"until"`
		Destination string `json:"destination"`
	}
	if err := wire.Decode(r.Request, &in); err != nil {
		return err
	}
	f := store.DeliveryFilter{Status: in.Status, Destination: in.Destination}
	switch in.Status {
	case store.DeliveryFailed, store.DeliveryDead:
	default:
		return store.Invalid("status", "status must be failed or dead")
	}
	switch in.Destination {
	case "", store.DestCustody, store.DestKYC:
	default:
		return store.Invalid("destination", "destination must be custody or kyc")
	}
	var ok bool
	if in.Since != "" {
		if f.Since, ok = store.ParseTime(in.Since); !ok {
			return store.Invalid("since", "since must be an ISO 8601 timestamp")
		}
	}
	if in.Until != "" {
		if f.Until, ok = store.ParseTime(in.Until); !ok {
			return store.Invalid("until", "until must be an ISO 8601 timestamp")
		}
	}
	n, err := s.store.RetryDeliveries(r.env, f)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, map[string]int{"requeued": n})
	return nil
}

// custodyCatalog serves GET /webhooks/events/catalog: the custody events.
func (s *Server) custodyCatalog(w http.ResponseWriter, r *request) error {
	s.encode(w, http.StatusOK, map[string]any{"eventTypes": store.CustodyCatalog()})
	return nil
}

// kycCatalog serves GET /v1/webhooks/events/catalog: the applicant events
// (SPEC §3.7).
func (s *Server) kycCatalog(w http.ResponseWriter, r *request) error {
	s.encode(w, http.StatusOK, map[string]any{"eventTypes": store.KYCCatalog()})
	return nil
}
