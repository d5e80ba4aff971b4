package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/complybox/complybox/store"
)

// "Send a test event of type …" on the settings page (SPEC §7): a sample of
// any catalog type, or webhook.test, delivered to the custody webhook or
// the KYC callback through the store call that POST /webhooks/outbound/test
// and POST /v1/webhooks/test make; the operator lands on its delivery.

// TestWebhook serves POST /console/settings/webhook/test {eventType}: a
// test event to the custody webhook of the environment shown.
func (c *Console) TestWebhook(w http.ResponseWriter, r *Request) error {
	return c.sendTestEvent(w, r, store.DestCustody)
}

// TestCallback serves POST /console/settings/callback/test {eventType}: a
// test event to the KYC callback, as an event of the environment shown.
func (c *Console) TestCallback(w http.ResponseWriter, r *Request) error {
	return c.sendTestEvent(w, r, store.DestKYC)
}

// sendTestEvent sends a test event of the posted eventType (empty:
// webhook.test) to dest and redirects to its delivery. Returns EINVALID for
// a type outside dest's catalog, ECONFLICT when dest has no URL.
func (c *Console) sendTestEvent(w http.ResponseWriter, r *Request, dest string) error {
	eventType := strings.TrimSpace(r.PostForm.Get("eventType"))
	if eventType == "webhook.test" {
		eventType = ""
	}
	id, err := c.store.SendSampleEvent(r.env, dest, eventType)
	if err != nil {
		return err
	}
	if eventType == "" {
		eventType = "webhook.test"
	}
	if err := c.record(r, r.env, "console.test_event_sent", map[string]any{"destination": dest, "eventType": eventType, "deliveryId": id}); err != nil {
		return err
	}
	return redirect(w, r, "/console/deliveries/"+url.PathEscape(id), "test-event")
}

// eventTypeNames lists the names of a catalog, webhook.test first.
func eventTypeNames(catalog []store.EventType) []string {
	out := []string{"webhook.test"}
	for _, e := range catalog {
		out = append(out, e.Name)
	}
	return out
}
