package server_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/complybox/complybox/server"
	"github.com/complybox/complybox/store"
)

// runningDispatcher is a dispatcher that reports it runs.
type runningDispatcher struct{}

func (runningDispatcher) Running() bool { return true }

// TestSDKTokenNotLogged: the access log names hosted-UI paths without the
// session token.
func TestSDKTokenNotLogged(t *testing.T) {
	t.Parallel()
	st, err := store.Open(filepath.Join(t.TempDir(), "c.db"), store.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var logs bytes.Buffer
	h := server.New(st, runningDispatcher{}, server.Config{PublicURL: "http://127.0.0.1:8080"}, slog.New(slog.NewTextHandler(&logs, nil)))
	const token = "secret-token-0123456789abcdefghijklmnop"
	for _, c := range []struct{ method, path string }{
		{"GET", "/sdk/" + token}, {"GET", "/sdk/" + token + "/return"}, {"POST", "/sdk/" + token + "/submit"},
	} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(c.method, c.path, nil))
	}
	req := httptest.NewRequest("GET", "/api/v1/sdk/state", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("state with an unknown token: %d", rec.Code)
	}
	if strings.Contains(logs.String(), token) {
		t.Errorf("the token is in the log:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "/sdk/{token}/return") {
		t.Errorf("the log lacks the redacted path:\n%s", logs.String())
	}
}

func (runningDispatcher) Advance(context.Context, store.Env, store.ClockTarget) (store.ClockMove, error) {
	return store.ClockMove{}, errors.New("no dispatcher in this test")
}
