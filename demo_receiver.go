package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/complybox/complybox/dispatch"
)

// demoReceiver is the demo's webhook receiver: it checks both signatures of
// every delivery (401 on a mismatch, as the seed asks of receivers),
// dedupes on the event id and keeps what it received until the story
// prints it.
type demoReceiver struct {
	srv *http.Server
	url string

	// balanceOf reads a balance when balance.updated arrives; set before
	// the first custody webhook.
	balanceOf func(vaultID, assetID string) string

	mu      sync.Mutex
	secrets map[string]string // path → signing secret
	seen    map[string]bool   // event ids
	events  []demoEvent
	bad     []string // deliveries whose signatures failed
	arrived chan struct{}
}

// demoEvent is one webhook the receiver accepted.
type demoEvent struct {
	path                string
	eventType, entityID string
	data                json.RawMessage
	balance             string // balance.updated: the balance read on arrival
	used                bool
}

func startDemoReceiver() (*demoReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rc := &demoReceiver{url: "http://" + ln.Addr().String(), secrets: map[string]string{}, seen: map[string]bool{}, arrived: make(chan struct{}, 1)}
	rc.srv = &http.Server{Handler: rc, ReadHeaderTimeout: 5 * time.Second}
	go rc.srv.Serve(ln)
	return rc, nil
}

func (rc *demoReceiver) close() { rc.srv.Close() }

func (rc *demoReceiver) setSecret(path, secret string) {
	rc.mu.Lock()
	rc.secrets[path] = secret
	rc.mu.Unlock()
}

// count returns how many distinct webhooks arrived on path with both
// signatures valid.
func (rc *demoReceiver) count(path string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for _, e := range rc.events {
		if e.path == path {
			n++
		}
	}
	return n
}

// ServeHTTP receives one delivery.
func (rc *demoReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == demoDownPath {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "read error", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	secret, known := rc.secrets[r.URL.Path]
	rc.mu.Unlock()
	var env struct {
		ID, EventType, EntityID string
		Data                    json.RawMessage
	}
	ts, tsErr := strconv.ParseInt(r.Header.Get("webhook-timestamp"), 10, 64)
	hexOK := known && dispatch.Verify(secret, body, r.Header.Get("X-Webhook-Signature"))
	stdOK := known && tsErr == nil && json.Unmarshal(body, &env) == nil &&
		verifyStandard(secret, r.Header.Get("webhook-id"), ts, body, r.Header.Get("webhook-signature"))
	if !hexOK || !stdOK || env.ID != r.Header.Get("webhook-id") {
		rc.mu.Lock()
		rc.bad = append(rc.bad, fmt.Sprintf("%s %s: X-Webhook-Signature ok %v, webhook-signature ok %v", r.URL.Path, env.EventType, hexOK, stdOK))
		rc.mu.Unlock()
		http.Error(w, "signature mismatch", http.StatusUnauthorized)
		return
	}
	e := demoEvent{path: r.URL.Path, eventType: env.EventType, entityID: env.EntityID, data: env.Data}
	if e.eventType == "balance.updated" && rc.balanceOf != nil {
		var b struct{ VaultAccountID, AssetID string }
		if json.Unmarshal(e.data, &b) == nil {
			e.balance = rc.balanceOf(b.VaultAccountID, b.AssetID)
		}
	}
	rc.mu.Lock()
	if !rc.seen[env.ID] {
		rc.seen[env.ID] = true
		rc.events = append(rc.events, e)
	}
	rc.mu.Unlock()
	select {
	case rc.arrived <- struct{}{}:
	default:
	}
	w.WriteHeader(http.StatusNoContent)
}

// problems reports a delivery whose signatures failed, or webhooks that
// arrived but that the story did not wait for.
func (rc *demoReceiver) problems() error {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.bad) > 0 {
		return fmt.Errorf("a webhook failed its signature check: %s", rc.bad[0])
	}
	var extra []string
	for _, e := range rc.events {
		if !e.used {
			extra = append(extra, e.path+" "+e.describe())
		}
	}
	if len(extra) > 0 {
		return fmt.Errorf("webhooks outside the story arrived: %s", strings.Join(extra, "; "))
	}
	return nil
}

// wait waits for an unused event on path of eventType (and entityID, when
// not empty) whose data satisfies match (when not nil), marks it used and
// returns it. A delivery whose signature failed ends the wait.
func (rc *demoReceiver) wait(path, eventType, entityID string, match func(json.RawMessage) bool) (demoEvent, error) {
	deadline := time.After(demoTimeout)
	for {
		rc.mu.Lock()
		if len(rc.bad) > 0 {
			bad := rc.bad[0]
			rc.mu.Unlock()
			return demoEvent{}, fmt.Errorf("a webhook failed its signature check: %s", bad)
		}
		for i := range rc.events {
			e := &rc.events[i]
			if !e.used && e.path == path && e.eventType == eventType && (entityID == "" || e.entityID == entityID) && (match == nil || match(e.data)) {
				e.used = true
				rc.mu.Unlock()
				return *e, nil
			}
		}
		rc.mu.Unlock()
		select {
		case <-rc.arrived:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			return demoEvent{}, fmt.Errorf("no %s webhook for %q arrived within %s", eventType, entityID, demoTimeout)
		}
	}
}

// describe says in a few words what the webhook tells its receiver:
// "applicantReviewed demo-alice GREEN", "transaction.status.updated
// Submitted → Confirming".
func (e demoEvent) describe() string {
	var x struct {
		ParentExternalUserID string `json:"parentExternalUserId"`
		ReviewResult         struct {
			ReviewAnswer     string   `json:"reviewAnswer"`
			ReviewRejectType string   `json:"reviewRejectType"`
			RejectLabels     []string `json:"rejectLabels"`
		} `json:"reviewResult"`
		Label          string  `json:"label"`
		Type           string  `json:"type"`
		Status         string  `json:"status"`
		PreviousStatus *string `json:"previousStatus"`
		Amount         string  `json:"amount"`
		AssetSymbol    string  `json:"assetSymbol"`
	}
	json.Unmarshal(e.data, &x)
	switch e.eventType {
	case "applicantCreated":
		if x.ParentExternalUserID != "" {
			return fmt.Sprintf("%s %s (an owner of %s)", e.eventType, e.entityID, x.ParentExternalUserID)
		}
		return e.eventType + " " + e.entityID
	case "applicantReviewed":
		r := x.ReviewResult
		return e.eventType + " " + e.entityID + " " +
			verdict{ReviewAnswer: r.ReviewAnswer, ReviewRejectType: r.ReviewRejectType, RejectLabels: r.RejectLabels}.String()
	case "wallet.created":
		return fmt.Sprintf("%s %q", e.eventType, x.Label)
	case "transaction.created":
		return fmt.Sprintf("%s %s of %s %s, %s", e.eventType, strings.ToLower(x.Type), x.Amount, x.AssetSymbol, x.Status)
	case "transaction.status.updated":
		prev := "?"
		if x.PreviousStatus != nil {
			prev = *x.PreviousStatus
		}
		return fmt.Sprintf("%s %s → %s", e.eventType, prev, x.Status)
	case "balance.updated":
		return e.eventType + " " + e.balance
	}
	return e.eventType + " " + e.entityID
}
