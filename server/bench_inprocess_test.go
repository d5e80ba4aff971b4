package server_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/complybox/complybox/server"
	"github.com/complybox/complybox/store"
)

// inProcess is a server handler called directly, without a network, with
// a sandbox credential.
type inProcess struct {
	h           http.Handler
	key, secret string
}

func newInProcess(b *testing.B) *inProcess {
	st, err := store.Open(filepath.Join(b.TempDir(), "complybox.db"), store.Options{Now: store.NewManualClock(testStart).Now,
		Logger: slog.New(slog.DiscardHandler), PasswordCost: bcrypt.MinCost})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	c, secret, err := st.CreateCredential(store.Sandbox, store.RolePartner, "bench")
	if err != nil {
		b.Fatal(err)
	}
	return &inProcess{h: server.New(st, runningDispatcher{}, server.Config{PublicURL: "http://127.0.0.1:8080", Version: "bench"}, slog.New(slog.DiscardHandler)),
		key: c.Key, secret: secret}
}

func (p *inProcess) serve(method, path string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req.Header.Set("X-Api-Key", p.key)
	req.Header.Set("X-Api-Secret", p.secret)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	p.h.ServeHTTP(w, req)
	return w
}

// BenchmarkReadInProcess is the CPU cost of one API read, GET
// /vaults/{id}, on one goroutine without a network: the number to compare
// when a change touches every request (request log, metrics).
func BenchmarkReadInProcess(b *testing.B) {
	p := newInProcess(b)
	w := p.serve("POST", "/vaults", []byte(`{"name":"bench","externalId":"bench-1"}`))
	var v struct{ VaultID string }
	if w.Code != http.StatusCreated || json.Unmarshal(w.Body.Bytes(), &v) != nil {
		b.Fatalf("create vault: %d %s", w.Code, w.Body)
	}
	path := "/vaults/" + v.VaultID
	b.ReportAllocs()
	for b.Loop() {
		if w := p.serve("GET", path, nil); w.Code != http.StatusOK {
			b.Fatalf("GET %s: %d", path, w.Code)
		}
	}
}
