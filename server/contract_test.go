package server_test

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	verrors "github.com/pb33f/libopenapi-validator/errors"
)

// contractFlag turns on contractCheck for every instance of the suite:
// `go test ./server -contract` checks that every response of every test
// conforms to /openapi.json (about 5 times slower, so .ci/run runs it once).
var contractFlag = flag.Bool("contract", false, "validate every response of the suite against /openapi.json")

// openapiValidator loads the document h serves at /openapi.json into
// libopenapi, an independent implementation of OpenAPI 3.1, failing the
// test on any error in building the model.
func openapiValidator(t testing.TB, h http.Handler) validator.Validator {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/openapi.json", nil))
	doc, err := libopenapi.NewDocument(rec.Body.Bytes())
	if err != nil {
		t.Fatalf("libopenapi: %v", err)
	}
	v, errs := validator.NewValidator(doc)
	for _, err := range errs {
		t.Errorf("libopenapi-validator: %v", err)
	}
	if t.Failed() {
		t.FailNow()
	}
	return v
}

// explain renders validation errors with their schema failures.
func explain(errs []*verrors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "\n\t%s: %s", e.Message, e.Reason)
		for _, se := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "\n\t\t%s (%s): %s", se.FieldPath, se.KeywordLocation, se.Reason)
		}
	}
	return b.String()
}

// TestOpenAPIDocumentIsValid validates /openapi.json with libopenapi and
// libopenapi-validator, as partners' tools will: zero errors. With
// COMPLYBOX_OPENAPI_OUT set it also writes the document there, for the
// other validators of .ci/run.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	t.Parallel()
	in := start(t)
	doc := doRequest(t, "GET", in.URL+"/openapi.json", nil).Body
	if out := os.Getenv("COMPLYBOX_OPENAPI_OUT"); out != "" {
		if err := os.WriteFile(out, doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v := openapiValidator(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(doc) }))
	if ok, errs := v.ValidateDocument(); !ok || len(errs) > 0 {
		t.Errorf("the document is invalid:%s", explain(errs))
	}
}

// contractCheck wraps h, the JSON API, so that every response that passes
// through it is validated against the document h serves: an undeclared
// status, a missing declared header or a body that does not match its
// schema fails t. With requests set, a request answered with a success is
// validated too (the scenario of TestContractExamples); the rest of the
// suite sends requests the server accepts beyond the document on purpose
// (fields a level does not enable are dropped whatever their JSON type,
// SPEC §3.2; no Content-Type on JSON). HTML pages are not in the document
// and pass unchecked, as do the answers for paths or methods the document
// does not have (404 route_not_found, 405).
func contractCheck(t testing.TB, h http.Handler, requests bool) http.Handler {
	v := openapiValidator(t, h)
	var mu sync.Mutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())

		if htmlRoute(r.URL.Path) || r.Method == http.MethodHead || rec.Code == http.StatusMethodNotAllowed ||
			(rec.Code == http.StatusNotFound && strings.Contains(rec.Body.String(), `"route_not_found"`)) {
			return
		}
		req := r.Clone(r.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		resp := rec.Result()
		if resp.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(rec.Body.Bytes()))
			if err != nil {
				t.Errorf("contract: %s %s: gzip: %v", r.Method, r.URL.Path, err)
				return
			}
			plain, err := io.ReadAll(zr)
			if err != nil {
				t.Errorf("contract: %s %s: gzip: %v", r.Method, r.URL.Path, err)
				return
			}
			resp.Body = io.NopCloser(bytes.NewReader(plain))
		}
		mu.Lock()
		defer mu.Unlock()
		var ok bool
		var errs []*verrors.ValidationError
		if requests && rec.Code < 300 {
			ok, errs = v.ValidateHttpRequestResponse(req, resp)
		} else {
			ok, errs = v.ValidateHttpResponse(req, resp)
		}
		if !ok || len(errs) > 0 {
			t.Errorf("contract: %s %s → %d %.300s:%s", r.Method, r.URL.RequestURI(), rec.Code, rec.Body.Bytes(), explain(errs))
		}
	})
}
