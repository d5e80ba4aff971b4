package server_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/complybox/complybox/server"
	"github.com/complybox/complybox/store"
)

// TestShortCodeNotLogged: the access log names /l/{code} without the code,
// whether the link resolves, is unknown or carries a trailing path, and
// names no session token or code of a path that only looks like a route.
func TestShortCodeNotLogged(t *testing.T) {
	t.Parallel()
	st, err := store.Open(filepath.Join(t.TempDir(), "c.db"), store.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, _, err := st.CreateApplicant(store.Sandbox, store.ApplicantInput{"externalUserId": json.RawMessage(`"u1"`)}); err != nil {
		t.Fatal(err)
	}
	link, err := st.CreateSession(store.Sandbox, "u1", store.SessionInput{}, store.Idem{})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	h := server.New(st, runningDispatcher{}, server.Config{PublicURL: "http://127.0.0.1:8080"}, slog.New(slog.NewTextHandler(&logs, nil)))
	const unknown = "ZZZZunknownCodeZZZZZZZ"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/l/"+link.ShortCode, nil))
	if rec.Code != http.StatusFound {
		t.Fatalf("GET /l/{code}: %d", rec.Code)
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/l/"+unknown, nil))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/l/"+unknown+"/x", nil))
	// Paths that only look like the routes (404s, a base URL joined with
	// a doubled slash, another case, a prefix) keep nothing either.
	for _, p := range []string{"//sdk/" + link.Token, "/sdk//" + link.Token + "/consent", "/SDK/" + link.Token,
		"/l//" + link.ShortCode, "/L/" + link.ShortCode, "//l/" + link.ShortCode, "/prefix/sdk/" + link.Token} {
		req := httptest.NewRequest("GET", "/", nil)
		req.URL.Path = p
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	for _, secret := range []string{link.ShortCode, unknown, link.Token} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("%q is in the log:\n%s", secret, logs.String())
		}
	}
	if !strings.Contains(logs.String(), "/l/{code}") {
		t.Errorf("the log lacks the redacted path:\n%s", logs.String())
	}
}
