// Command receiver is a minimal complybox webhook receiver on the standard
// library: it verifies X-Webhook-Signature (hex HMAC-SHA256 of the raw
// body, keyed with the signing secret's UTF-8 bytes) before parsing,
// answers 401 on a mismatch, deduplicates on the envelope's id (deliveries
// are at least once) and answers 204 at once, handling the event
// afterwards.
//
//	WEBHOOK_SECRET=… go run ./testdata/receivers/go   # listens on 127.0.0.1:9000; LISTEN to change
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
)

// event is the envelope of every delivery.
type event struct {
	ID         string          `json:"id"`
	EventType  string          `json:"eventType"`
	EntityType string          `json:"entityType"`
	EntityID   string          `json:"entityId"`
	Timestamp  string          `json:"timestamp"`
	Data       json.RawMessage `json:"data"`
}

func main() {
	secret := os.Getenv("WEBHOOK_SECRET")
	addr := os.Getenv("LISTEN")
	if addr == "" {
		addr = "127.0.0.1:9000"
	}
	if secret == "" {
		log.Fatal("set WEBHOOK_SECRET")
	}
	var mu sync.Mutex
	seen := map[string]bool{} // a real receiver keeps this in its database
	work := make(chan event, 1000)
	go func() {
		for e := range work {
			fmt.Printf("received %s %s %s\n", e.ID, e.EventType, e.EntityID) // handle the event here
		}
	}()
	http.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(body)
		got, err := hex.DecodeString(r.Header.Get("X-Webhook-Signature"))
		if err != nil || !hmac.Equal(got, mac.Sum(nil)) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var e event
		if err := json.Unmarshal(body, &e); err != nil || e.ID == "" {
			http.Error(w, "not an event", http.StatusBadRequest)
			return
		}
		mu.Lock()
		dup := seen[e.ID]
		seen[e.ID] = true
		mu.Unlock()
		if dup {
			fmt.Printf("duplicate %s\n", e.ID)
		} else {
			work <- e
		}
		w.WriteHeader(http.StatusNoContent)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	log.Fatal(http.Serve(ln, nil))
}
