package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	verrors "github.com/pb33f/libopenapi-validator/errors"
)

// contractFlag turns on contractCheck for every instance of the suite:
// `go test ./server -args -contract` checks that every request the server
// accepts and every response of every test conform to /openapi.json.
var contractFlag = flag.Bool("contract", false, "validate every accepted request and every response of the suite against /openapi.json")

// openapiValidator loads the document h serves at /openapi.json into
// libopenapi, an independent implementation of OpenAPI 3.1, failing the
// test on any error in building the model.
func openapiValidator(t testing.TB, h http.Handler) validator.Validator {
	t.Helper()
	v, err := newValidator(servedDocument(h))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// servedDocument is the document h serves at /openapi.json.
func servedDocument(h http.Handler) []byte {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/openapi.json", nil))
	return rec.Body.Bytes()
}

// newValidator builds a validator of doc; an error names every problem
// libopenapi and libopenapi-validator found in building the model.
func newValidator(doc []byte) (validator.Validator, error) {
	model, err := libopenapi.NewDocument(doc)
	if err != nil {
		return nil, fmt.Errorf("libopenapi: %w", err)
	}
	v, errs := validator.NewValidator(model)
	if len(errs) > 0 {
		return nil, fmt.Errorf("libopenapi-validator: %w", errors.Join(errs...))
	}
	return v, nil
}

// sharedValidator is the validator of one document, built once for every
// instance that serves it (contractValidators).
type sharedValidator struct {
	once sync.Once
	v    validator.Validator
	err  error
	mu   sync.Mutex // validation is not promised to be safe for concurrent use
}

// contractValidators memoises one sharedValidator per document (by
// sha256) for the -contract pass: building one costs about 0.3 s of CPU,
// and the suite's hundreds of instances serve a handful of documents. It
// holds no state a test can observe: a validator is a function of its
// document.
var contractValidators sync.Map

// documentValidator returns the shared validator of the document h serves.
func documentValidator(t testing.TB, h http.Handler) *sharedValidator {
	t.Helper()
	doc := servedDocument(h)
	key := sha256.Sum256(doc)
	sv, _ := contractValidators.LoadOrStore(key, &sharedValidator{})
	s := sv.(*sharedValidator)
	s.once.Do(func() { s.v, s.err = newValidator(doc) })
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s
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

// TestOpenAPIDocumentIsValid validates /openapi.json as partners' tools
// will, with two independent implementations: libopenapi and
// libopenapi-validator, and kin-openapi (under oapi-codegen and most Go
// request-validation middleware: its Validate and its router, which
// validates first), zero errors from each. Every const names its type, or
// generators such as ogen emit a client that does not compile. With
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

	kin, err := openapi3.NewLoader().LoadFromData(doc)
	if err != nil {
		t.Fatalf("kin-openapi cannot load the document: %v", err)
	}
	if err := kin.Validate(context.Background()); err != nil {
		t.Errorf("kin-openapi: the document is invalid: %v", err)
	}
	if _, err := legacy.NewRouter(kin); err != nil {
		t.Errorf("kin-openapi: no router from the document: %v", err)
	}

	var tree any
	if err := json.Unmarshal(doc, &tree); err != nil {
		t.Fatal(err)
	}
	var walk func(node any, path string)
	walk = func(node any, path string) {
		switch n := node.(type) {
		case map[string]any:
			if _, ok := n["const"]; ok && n["type"] == nil {
				t.Errorf("%s: a const without a type", path)
			}
			for k, v := range n {
				walk(v, path+"/"+k)
			}
		case []any:
			for i, v := range n {
				walk(v, fmt.Sprintf("%s/%d", path, i))
			}
		}
	}
	walk(tree, "#")
}

// documentedPageRequest reports whether r asks for one of the HTML pages
// the document describes (documentedPage): GET /l/{shortCode} and GET
// /sdk/{token}, whose answers the -contract pass checks too.
func documentedPageRequest(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/l/")
	if !ok {
		rest, ok = strings.CutPrefix(r.URL.Path, "/sdk/")
	}
	return ok && rest != "" && !strings.Contains(rest, "/")
}

// beyondContract is the request header with which a test marks a request
// that it sends beyond the document on purpose, with the SPEC rule that
// makes the server accept it as the value (droppedField, existingApplicant).
// contractCheck takes the header off before the server sees it and fails
// the test if the marked request, accepted, conforms after all.
const beyondContract = "X-Test-Beyond-Contract"

// The reasons a test gives in beyondContract.
const (
	droppedField      = "SPEC 3.2: a field the level does not enable is dropped before validation, whatever its JSON type"
	existingApplicant = "SPEC 3.2: an existing externalUserId answers 200 with the stored applicant, unchanged"
)

// contractCheck wraps h, the JSON API, so that every exchange that passes
// through it is validated against the document h serves: an undeclared
// status, a missing declared header or a body that does not match its
// schema fails t, and so does a request the server accepted (2xx) that the
// document does not allow: its path and query parameters, headers and body
// (unless marked beyondContract). A request answered 4xx is not checked as
// a request, since many are bad on purpose; its response is. HTML pages are
// not in the document and pass unchecked, as do HEAD and OPTIONS (the
// router's Allow, SPEC §2) and the answers for paths or methods the
// document does not have (404 route_not_found, 405, the target "*").
func contractCheck(t testing.TB, h http.Handler) http.Handler {
	sv := documentValidator(t, h)
	v := sv.v
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		beyond := r.Header.Get(beyondContract)
		r.Header.Del(beyondContract)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())

		if (htmlRoute(r.URL.Path) && !documentedPageRequest(r)) || r.RequestURI == "*" || r.Method == http.MethodHead || r.Method == http.MethodOptions || rec.Code == http.StatusMethodNotAllowed ||
			r.Context().Err() != nil || // the client went away: no one reads the answer (499)
			(rec.Code == http.StatusNotFound && strings.Contains(rec.Body.String(), `"route_not_found"`)) {
			return
		}
		req := r.Clone(r.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		resp := rec.Result()
		plain := rec.Body.Bytes()
		if resp.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(plain))
			if err == nil {
				plain, err = io.ReadAll(zr)
			}
			if err != nil {
				t.Errorf("contract: %s %s: gzip: %v", r.Method, r.URL.Path, err)
				return
			}
			resp.Body = io.NopCloser(bytes.NewReader(plain))
		}
		sv.mu.Lock()
		defer sv.mu.Unlock()
		var ok bool
		var errs []*verrors.ValidationError
		switch {
		case rec.Code >= 300:
			ok, errs = v.ValidateHttpResponse(req, resp)
		case beyond != "":
			conforms, _ := v.ValidateHttpRequest(req)
			req.Body = io.NopCloser(bytes.NewReader(body))
			if conforms {
				t.Errorf("contract: %s %s → %d is marked beyond the contract (%s), yet it conforms: drop the mark",
					r.Method, r.URL.RequestURI(), rec.Code, beyond)
			}
			ok, errs = v.ValidateHttpResponse(req, resp)
		default:
			ok, errs = v.ValidateHttpRequestResponse(req, resp)
		}
		if !ok || len(errs) > 0 {
			t.Errorf("contract: %s %s → %d %.300s:%s", r.Method, r.URL.RequestURI(), rec.Code, plain, explain(errs))
		}
	})
}

// errorRecorder is a testing.TB whose Errorf records instead of failing.
type errorRecorder struct {
	testing.TB
	errs []string
}

// Errorf records the error.
func (r *errorRecorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestContractCheckRequests: contractCheck fails a request the server
// accepts beyond the document, unless the test marks it beyondContract,
// and fails a marked request that conforms; a refused request is not
// checked as a request.
func TestContractCheckRequests(t *testing.T) {
	t.Parallel()
	in := boot(t, func(o *bootOptions) { o.unchecked = true }).instance
	in.createApplicant("cc", "Check")
	target, err := url.Parse(in.URL)
	if err != nil {
		t.Fatal(err)
	}
	rec := &errorRecorder{TB: t}
	check := contractCheck(rec, httputil.NewSingleHostReverseProxy(target))
	for _, c := range []struct {
		name, body, mark string
		status, errs     int
	}{
		{"conforms", `{"email":"cc@example.com"}`, "", 200, 0},
		{"accepted beyond the document", `{"gender":5}`, "", 200, 1},
		{"marked beyond the document", `{"gender":5}`, droppedField, 200, 0},
		{"marked yet conforms", `{"phone":"+44 20 7946 0000"}`, droppedField, 200, 1},
		{"refused", `{"email":7}`, "", 400, 0},
	} {
		rec.errs = nil
		req := httptest.NewRequest("PATCH", "/v1/applicants/cc", strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Api-Key", in.Key)
		req.Header.Set("X-Api-Secret", in.Secret)
		if c.mark != "" {
			req.Header.Set(beyondContract, c.mark)
		}
		w := httptest.NewRecorder()
		check.ServeHTTP(w, req)
		if w.Code != c.status || len(rec.errs) != c.errs {
			t.Errorf("%s: status %d, %d contract errors %q; want %d, %d", c.name, w.Code, len(rec.errs), rec.errs, c.status, c.errs)
		}
	}
}
