package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// updateExamples rewrites openapi/examples.json from the example scenario.
var updateExamples = flag.Bool("update", false, "rewrite openapi/examples.json from TestOpenAPIExamples' scenario")

// examplesFile holds the request and 2xx-response example of every
// operation, by operationId (see applyExamples in openapi.go).
const examplesFile = "openapi/examples.json"

// noExample lists the operations whose JSON bodies carry no example, and
// why.
var noExample = map[string]string{
	"getOpenAPIDocument": "its response is the document itself",
}

// TestOpenAPIExamples runs one partner scenario through the real server,
// touching every operation of /openapi.json, and keeps openapi/examples.json
// true: the first accepted request body and the first body of each 2xx
// status of every operation, with ids, times, secrets, tokens and addresses
// replaced by stable placeholders of the same format. Every example must
// validate against its operation's schemas, every JSON request body and 2xx
// JSON response of the document must have one, and the committed file must
// be what the scenario produces; `go test ./server -run TestOpenAPIExamples
// -update` rewrites it.
func TestOpenAPIExamples(t *testing.T) {
	t.Parallel()
	in := start(t)
	doc := doRequest(t, "GET", in.URL+"/openapi.json", nil).Body
	ops := documentOperations(t, doc)
	x := &exampleScenario{t: t, in: in, ops: ops}
	x.run()

	// Every example, as its operation's schemas see it.
	v := openapiValidator(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(doc) }))
	var servers struct{ Servers []struct{ URL string } }
	if err := json.Unmarshal(doc, &servers); err != nil || len(servers.Servers) != 1 {
		t.Fatalf("servers of the document: %v", err)
	}
	n := newNormaliser(servers.Servers[0].URL)
	out := map[string]map[string]json.RawMessage{}
	for _, c := range x.calls {
		reqBody, respBody := n.body(c.reqBody), n.body(c.respBody)
		req, err := http.NewRequest(c.method, in.URL+c.path, bytes.NewReader(reqBody))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = c.reqHeader.Clone()
		resp := &http.Response{StatusCode: c.status, Header: c.respHeader.Clone(), Body: nopBody(respBody), Request: req}
		if ok, errs := v.ValidateHttpRequestResponse(req, resp); !ok || len(errs) > 0 {
			t.Errorf("example of %s (%s %s → %d) does not match its schemas:%s\n\trequest %s\n\tresponse %.400s",
				c.op.id, c.method, c.path, c.status, explain(errs), reqBody, respBody)
		}
		ex := out[c.op.id]
		if ex == nil {
			ex = map[string]json.RawMessage{}
			out[c.op.id] = ex
		}
		if c.reqBody != nil && c.op.jsonRequest && ex["request"] == nil {
			ex["request"] = reqBody
		}
		status := fmt.Sprint(c.status)
		if c.op.jsonResponses[status] && ex[status] == nil {
			ex[status] = respBody
		}
	}

	// Every JSON body of the partner document has its example.
	for _, op := range ops {
		if why, ok := noExample[op.id]; ok {
			if out[op.id] != nil {
				t.Errorf("%s has an example, yet noExample says %q", op.id, why)
			}
			continue
		}
		if op.jsonRequest && out[op.id]["request"] == nil {
			t.Errorf("%s (%s %s): no request example; add a step to exampleScenario.run", op.id, op.method, op.path)
		}
		for status := range op.jsonResponses {
			if out[op.id][status] == nil {
				t.Errorf("%s (%s %s): no %s example; add a step to exampleScenario.run", op.id, op.method, op.path, status)
			}
		}
	}
	for id, ex := range out {
		if len(ex) == 0 {
			delete(out, id)
		}
	}
	got := examplesJSON(t, out)
	if *updateExamples {
		if err := os.WriteFile(examplesFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(examplesFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not what the scenario produces (rerun with -update and review the diff):%s", examplesFile, firstDifference(t, want, got))
	}
}

// examplesJSON lays the examples out one operation to a line, by
// operationId, so that a change shows as the lines of the operations it
// touches and the file stays small.
func examplesJSON(t *testing.T, out map[string]map[string]json.RawMessage) []byte {
	ids := make([]string, 0, len(out))
	for id := range out {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, id := range ids {
		line, err := json.Marshal(out[id])
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%q: %s", id, line)
		if i < len(ids)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// firstDifference names the operations whose examples differ.
func firstDifference(t *testing.T, want, got []byte) string {
	var w, g map[string]json.RawMessage
	if json.Unmarshal(want, &w) != nil || json.Unmarshal(got, &g) != nil {
		return " (not JSON)"
	}
	var b strings.Builder
	for id := range g {
		if !bytes.Equal(w[id], g[id]) {
			fmt.Fprintf(&b, "\n\t%s:\n\t\tfile     %.300s\n\t\tscenario %.300s", id, w[id], g[id])
		}
	}
	for id := range w {
		if g[id] == nil {
			fmt.Fprintf(&b, "\n\t%s: in the file, not produced", id)
		}
	}
	return b.String()
}

// docOperation is one operation of the document.
type docOperation struct {
	id, method, path string
	pattern          *regexp.Regexp
	params           int
	jsonRequest      bool
	jsonResponses    map[string]bool // 2xx statuses with a JSON body
}

// documentOperations lists the operations of doc, the served document.
func documentOperations(t *testing.T, doc []byte) []docOperation {
	t.Helper()
	var d struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			RequestBody struct {
				Content map[string]any `json:"content"`
			} `json:"requestBody"`
			Responses map[string]struct {
				Content map[string]any `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`\\\{[^}]+\\\}`)
	var ops []docOperation
	for path, item := range d.Paths {
		for method, o := range item {
			if !isHTTPMethod(method) {
				continue
			}
			op := docOperation{id: o.OperationID, method: strings.ToUpper(method), path: path, jsonResponses: map[string]bool{},
				pattern: regexp.MustCompile("^" + param.ReplaceAllString(regexp.QuoteMeta(path), `[^/]+`) + "$"),
				params:  strings.Count(path, "{")}
			_, op.jsonRequest = o.RequestBody.Content["application/json"]
			for status, r := range o.Responses {
				if _, ok := r.Content["application/json"]; ok && strings.HasPrefix(status, "2") {
					op.jsonResponses[status] = true
				}
			}
			ops = append(ops, op)
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].id < ops[j].id })
	return ops
}

func isHTTPMethod(m string) bool {
	switch m {
	case "get", "put", "post", "delete", "patch":
		return true
	}
	return false
}

// exampleCall is one exchange of the scenario.
type exampleCall struct {
	op                *docOperation
	method, path      string
	reqHeader         http.Header
	reqBody, respBody []byte
	status            int
	respHeader        http.Header
}

// exampleScenario is the partner scenario whose exchanges become examples.
type exampleScenario struct {
	t     *testing.T
	in    *instance
	ops   []docOperation
	calls []exampleCall
}

// operation is the document's operation for method and path: a literal
// segment wins over a parameter.
func (x *exampleScenario) operation(method, path string) *docOperation {
	path, _, _ = strings.Cut(path, "?")
	var best *docOperation
	for i := range x.ops {
		op := &x.ops[i]
		if op.method == method && op.pattern.MatchString(path) && (best == nil || op.params < best.params) {
			best = op
		}
	}
	return best
}

// send sends a request as do does, fails unless the answer is want and
// records the exchange for the operation of the document it belongs to.
func (x *exampleScenario) send(want int, method, path string, body any, headers ...string) *response {
	x.t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			x.t.Fatal(err)
		}
		raw = j
	}
	h := append([]string{"X-Api-Key", x.in.Key, "X-Api-Secret", x.in.Secret}, headers...)
	var sent any
	if raw != nil {
		sent = raw
	}
	r := doRequest(x.t, method, x.in.URL+path, sent, h...)
	if r.Status != want {
		x.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, r.Status, want, r.Body)
	}
	op := x.operation(method, path)
	if op == nil {
		x.t.Fatalf("%s %s is no operation of the document", method, path)
	}
	reqHeader := http.Header{}
	for i := 0; i+1 < len(h); i += 2 {
		if h[i+1] != "" {
			reqHeader.Set(h[i], h[i+1])
		} else {
			reqHeader.Del(h[i])
		}
	}
	if raw != nil {
		reqHeader.Set("Content-Type", "application/json")
	}
	x.calls = append(x.calls, exampleCall{op: op, method: method, path: path, reqHeader: reqHeader, reqBody: raw,
		status: r.Status, respHeader: r.Header, respBody: r.Body})
	return r
}

// sdk sends a hosted-UI page API request with the session token.
func (x *exampleScenario) sdk(want int, method, path, token string, body any) *response {
	x.t.Helper()
	return x.send(want, method, path, body, "X-Api-Key", "", "X-Api-Secret", "", "Authorization", "Bearer "+token)
}

// settle waits until no job is due or in flight on the instance's clock.
func (x *exampleScenario) settle() {
	x.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		due, _, err := x.in.Store.Due(x.in.Clock.Now(), 1, nil)
		if err != nil {
			x.t.Fatal(err)
		}
		if len(due) == 0 {
			return
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("jobs still due after 10s: %+v", due[0])
		}
		runtimeYield()
	}
}

// examplePNG is the one image of the examples: 200×200 pixels, the least
// SPEC §3.4 accepts, of one colour, so the examples stay small.
func examplePNG(t testing.TB) string {
	img := image.NewGray(image.Rect(0, 0, 200, 200))
	for i := range img.Pix {
		img.Pix[i] = 0x80
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return b64(buf.Bytes())
}

// run is the scenario: every operation of the document, in the order a
// partner meets them.
func (x *exampleScenario) run() {
	t, in := x.t, x.in
	img := examplePNG(t)
	var m map[string]any

	x.send(200, "GET", "/healthz", nil)

	// Custody webhooks: a receiver that fails its first request, so that a
	// delivery can be retried.
	rc := newReceiver(t, in.Clock, func(n int) int {
		if n == 1 {
			return 500
		}
		return 200
	})
	x.send(200, "PUT", "/webhooks/outbound", map[string]any{"url": rc.URL,
		"subscribedEventTypes": []string{"transaction.created", "transaction.status.updated"}})
	x.send(200, "GET", "/webhooks/outbound", nil)
	x.send(200, "GET", "/webhooks/events/catalog", nil)
	x.send(200, "GET", "/v1/webhooks/events/catalog", nil)
	x.send(202, "POST", "/webhooks/outbound/test", map[string]any{"eventType": "transaction.created"}).json(t, &m)
	delivery := m["deliveryId"].(string)
	rc.next(t)
	in.waitDelivery(delivery, "failed", 1)
	x.send(200, "POST", "/webhooks/deliveries/"+delivery+"/retry", nil)
	rc.next(t)
	in.waitDelivery(delivery, "delivered", 2)
	x.send(200, "GET", "/webhooks/deliveries/"+delivery, nil)
	x.send(200, "GET", "/webhooks/deliveries?limit=1", nil)
	x.send(200, "POST", "/webhooks/deliveries/retry", map[string]any{"status": "dead", "since": "2026-11-21T00:00:00.000Z"})

	// Custody: a vault, a wallet, a deposit, a withdrawal through its
	// statuses, one that fails and one cancelled.
	x.send(200, "GET", "/assets", nil)
	x.send(201, "POST", "/vaults", map[string]any{"name": "Treasury", "externalId": "acct-42"}).json(t, &m)
	vault := m["vaultId"].(string)
	x.send(200, "GET", "/vaults?limit=1", nil)
	x.send(200, "GET", "/vaults/"+vault, nil)
	x.send(201, "POST", "/vaults/"+vault+"/wallets", map[string]any{"assetSymbol": "ETH", "label": "Hot wallet"}).json(t, &m)
	wallet := m["walletId"].(string)
	x.send(200, "GET", "/vaults/"+vault+"/wallets", nil)
	x.send(200, "GET", "/wallets/"+wallet, nil)
	x.send(201, "POST", "/sandbox/deposits", map[string]any{"walletId": wallet, "amount": "2.5",
		"sourceAddress": "0x" + strings.Repeat("a1", 20)}).json(t, &m)
	deposit := m["transactionId"].(string)
	x.send(200, "POST", "/transactions/"+deposit+"/advance", nil)
	in.expect(200, "POST", "/transactions/"+deposit+"/advance", nil)
	x.send(200, "GET", "/wallets/"+wallet+"/balance", nil)
	withdraw := func() string {
		var w map[string]any
		x.send(201, "POST", "/transactions", map[string]any{"type": "Withdrawal", "sourceWalletId": wallet,
			"destinationAddress": "0x" + strings.Repeat("b2", 20), "amount": "0.5", "note": "payout 7"}).json(t, &w)
		return w["transactionId"].(string)
	}
	tx := withdraw()
	x.send(200, "GET", "/transactions/"+tx, nil)
	x.send(200, "GET", "/transactions?limit=1", nil)
	x.send(200, "POST", "/transactions/"+withdraw()+"/fail", map[string]any{"reason": "insufficient gas"})
	x.send(200, "POST", "/transactions/"+withdraw()+"/cancel", nil)

	// KYC levels, with applicant events going to a receiver.
	in.kycReceiver()
	x.send(200, "GET", "/v1/levels", nil)
	x.send(201, "POST", "/v1/levels", map[string]any{"name": "id-only", "applicantType": "individual",
		"steps": []map[string]any{{"kind": "identity_doc"}}, "personalInfoFields": []string{"firstName", "lastName", "dateOfBirth"}})
	x.send(200, "GET", "/v1/levels/id-only", nil)
	x.send(200, "PATCH", "/v1/levels/id-only", map[string]any{"steps": []map[string]any{{"kind": "identity_doc"}, {"kind": "selfie"}}})

	// An individual verified directly through the API.
	person := map[string]any{"externalUserId": "user-1001", "firstName": "Ada", "lastName": "Lovelace",
		"dateOfBirth": "1990-04-01", "nationality": "GBR", "email": "ada@example.com"}
	x.send(201, "POST", "/v1/applicants", person)
	x.send(200, "POST", "/v1/applicants", person)
	x.send(200, "GET", "/v1/applicants?limit=1", nil)
	x.send(200, "PATCH", "/v1/applicants/user-1001", map[string]any{"phone": "+44 20 7946 0001", "middleName": nil})
	x.send(200, "POST", "/v1/applicants/user-1001/verify", map[string]any{"idDocType": "PASSPORT", "country": "GBR",
		"documentFront": img, "selfie": "data:image/png;base64," + img})
	in.advance(3 * time.Second) // the sandbox reviewer's delay
	in.waitReviewStatus("user-1001", "completed")
	x.send(200, "GET", "/v1/applicants/user-1001", nil)
	x.send(200, "GET", "/v1/applicants/user-1001/status", nil)
	x.send(200, "GET", "/v1/applicants/user-1001/steps", nil)
	x.send(200, "GET", "/v1/applicants/user-1001/review-history?limit=2", nil)
	x.send(200, "POST", "/v1/applicants/user-1001/monitoring", nil)
	x.send(200, "DELETE", "/v1/applicants/user-1001/monitoring", nil)

	// An individual on full-kyc-level through the hosted flow's page API.
	x.send(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "user-1002", "firstName": "Grace"})
	x.send(200, "POST", "/v1/applicants/user-1002/levels/full-kyc-level", nil)
	x.send(201, "POST", "/v1/applicants/user-1002/verification-sessions", map[string]any{"ttlSecs": 3600, "lang": "en",
		"theme": "light", "returnUrl": "https://partner.example.com/done"}).json(t, &m)
	token := m["token"].(string)
	x.sdk(200, "GET", "/api/v1/sdk/state", token, nil)
	x.sdk(200, "POST", "/api/v1/sdk/personal-info", token, map[string]any{"lastName": "Hopper", "dateOfBirth": "1986-12-09",
		"nationality": "USA", "address": "1 Main St, Arlington, VA"})
	x.sdk(201, "POST", "/api/v1/sdk/documents", token, map[string]any{"kind": "identity_doc", "side": "front", "docType": "PASSPORT", "image": img})
	x.sdk(200, "POST", "/api/v1/sdk/questionnaire", token, map[string]any{"pep": false, "sourceOfFunds": "salary"})
	in.expect(201, "POST", "/v1/applicants/user-1002/documents", map[string]any{"kind": "selfie", "image": img})
	in.expect(201, "POST", "/v1/applicants/user-1002/documents", map[string]any{"kind": "poa", "image": img})
	for range 3 {
		in.expect(201, "POST", "/v1/applicants/user-1002/documents", map[string]any{"kind": "liveness", "image": img})
	}
	x.sdk(200, "POST", "/api/v1/sdk/submit", token, nil)
	x.send(200, "POST", "/v1/applicants/user-1002/sandbox/review", map[string]any{"reviewAnswer": "RED",
		"reviewRejectType": "RETRY", "rejectLabels": []string{"UNSATISFACTORY_PHOTOS"}, "moderationComment": "The passport photo is blurred."})
	x.send(200, "POST", "/v1/applicants/user-1002/reset", nil)
	x.send(200, "POST", "/v1/applicants/user-1002/deactivate", nil)
	x.send(200, "POST", "/v1/applicants/user-1002/activate", nil)
	x.send(200, "POST", "/v1/applicants/user-1002/blocklist", nil)
	x.send(200, "DELETE", "/v1/applicants/user-1002/blocklist", nil)

	// An applicant whose sandbox review is manual, decided by an admin.
	ak, as := in.credential(store.Sandbox, store.RoleAdmin)
	x.send(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "user-1003", "firstName": "Alan", "lastName": "manual"})
	x.send(201, "POST", "/v1/applicants/user-1003/documents", map[string]any{"kind": "identity_doc", "side": "front",
		"docType": "ID_CARD", "image": img})
	in.expect(201, "POST", "/v1/applicants/user-1003/documents", map[string]any{"kind": "identity_doc", "side": "back", "docType": "ID_CARD", "image": img})
	in.expect(201, "POST", "/v1/applicants/user-1003/documents", map[string]any{"kind": "selfie", "image": img})
	x.send(200, "POST", "/v1/applicants/user-1003/review", nil)
	in.advance(3 * time.Second)
	in.waitReviewStatus("user-1003", "awaitingOperatorReview")
	x.send(200, "POST", "/v1/admin/applicants/user-1003/decision", map[string]any{"reviewAnswer": "GREEN"}, "X-Api-Key", ak, "X-Api-Secret", as)
	x.send(204, "DELETE", "/v1/applicants/user-1003", nil)

	// A company with its beneficial owners.
	x.send(201, "POST", "/v1/applicants", map[string]any{"externalUserId": "company-77", "type": "company",
		"companyName": "Acme Trading GmbH", "registrationNumber": "HRB 123456", "country": "DEU",
		"ubos": []map[string]any{{"fullName": "Una Owner", "dateOfBirth": "1980-01-02", "roles": []string{"ubo", "director"}, "ownershipPercent": 60}}})
	x.send(200, "GET", "/v1/applicants/company-77/company-info", nil)
	x.send(200, "PATCH", "/v1/applicants/company-77/company-info", map[string]any{"legalForm": "GmbH", "incorporationDate": "2015-03-01"})
	x.send(200, "GET", "/v1/applicants/company-77/company-structure", nil)
	x.send(200, "PATCH", "/v1/applicants/company-77/company-structure", map[string]any{"hasNoRepresentatives": true})
	x.send(201, "POST", "/v1/applicants/company-77/ubos", map[string]any{"fullName": "Sam Share", "roles": []string{"shareholder"},
		"ownershipPercent": 40, "email": "sam@example.com", "nationality": "AUT"})
	x.send(200, "GET", "/v1/applicants/company-77/ubos", nil)
	x.send(200, "GET", "/v1/applicants/company-77/ubos/1", nil)
	x.send(200, "PATCH", "/v1/applicants/company-77/ubos/1", map[string]any{"ownershipPercent": 39.5})
	x.send(201, "POST", "/v1/applicants/company-77/ubos/0/spawn-kyc", map[string]any{"ttlDays": 14, "lang": "de"})
	x.send(200, "POST", "/v1/applicants/company-77/ubos/0/spawn-kyc", map[string]any{})
	x.send(200, "POST", "/v1/applicants/company-77/ubos/0/regenerate-link", map[string]any{"ttlDays": 7})
	x.send(201, "POST", "/v1/applicants/company-77/verification-sessions", map[string]any{}).json(t, &m)
	dana := map[string]any{"fullName": "Dana Director", "dateOfBirth": "1975-07-14", "roles": []string{"director"}, "nationality": "DEU"}
	x.sdk(201, "POST", "/api/v1/sdk/ubos", m["token"].(string), dana)
	x.sdk(200, "POST", "/api/v1/sdk/ubos", m["token"].(string), dana) // sent again: the same row

	// Sandbox tools and the request log.
	x.send(202, "POST", "/v1/webhooks/test", map[string]any{"eventType": "applicantReviewed"})
	x.settle() // what the clock move runs is then only what is due later
	x.send(200, "GET", "/v1/sandbox/clock", nil)
	x.send(200, "POST", "/v1/sandbox/clock", map[string]any{"advanceBy": "1h"})
	r := x.send(200, "GET", "/v1/requests?limit=1", nil)
	var log struct{ Items []struct{ RequestID string } }
	r.json(t, &log)
	x.send(200, "GET", "/v1/requests/"+log.Items[0].RequestID, nil)
}

// nopBody is an http.Response body over b.
func nopBody(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }

// normaliser replaces what differs from run to run in the scenario's
// bodies by stable placeholders of the same format, the same value by the
// same placeholder throughout the scenario: ids (uuid), blockchain
// addresses and hashes, session tokens and short codes, signing secrets,
// credential keys, cursors, attempt durations, and the hosts of the test
// servers. Times come from the test's manual clock and stay as they are.
type normaliser struct {
	publicURL string            // the instance's public_url
	seen      map[string]string // real value → placeholder
	n         map[string]int    // placeholders made, by kind
	secrets   *strings.Replacer // the secret values known so far
	pairs     []string
}

func newNormaliser(publicURL string) *normaliser {
	return &normaliser{publicURL: publicURL, seen: map[string]string{}, n: map[string]int{}, secrets: strings.NewReplacer()}
}

var (
	uuidRE    = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	hexRE     = regexp.MustCompile(`0x[0-9a-f]{64}|0x[0-9a-f]{40}`)
	localRE   = regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+`)
	linkRE    = regexp.MustCompile(`/sdk/([A-Za-z0-9_-]{43})|/l/([A-Za-z0-9]{22})`)
	secretKey = map[string]string{ // key → kind of placeholder
		"token": "token", "shortCode": "code", "signingSecret": "secret", "credentialKey": "key", "nextCursor": "cursor",
	}
)

// placeholders of each kind, from the number of the placeholder.
var placeholderFormat = map[string]func(n int) string{
	"uuid":  func(n int) string { return fmt.Sprintf("01935f00-0000-7000-8000-%012d", n) },
	"hex40": func(n int) string { return fmt.Sprintf("0x%040x", 0xe000+n) },
	"hex64": func(n int) string { return fmt.Sprintf("0x%064x", 0xf000+n) },
	"token": func(n int) string { return fmt.Sprintf("exampleSessionToken%024d", n) },
	"code":  func(n int) string { return fmt.Sprintf("exampleCode%011d", n) },
	"secret": func(n int) string {
		return base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "example signing secret number %02d", n))
	},
	"key": func(n int) string { return fmt.Sprintf("sbx_key_%024d", n) },
	"cursor": func(n int) string {
		return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "example-cursor-%d", n))
	},
}

// placeholder returns the placeholder of real, making the next one of kind.
func (n *normaliser) placeholder(kind, real string) string {
	if p, ok := n.seen[real]; ok {
		return p
	}
	n.n[kind]++
	p := placeholderFormat[kind](n.n[kind])
	n.seen[real] = p
	if kind != "uuid" && !strings.HasPrefix(kind, "hex") {
		n.pairs = append(n.pairs, real, p)
		n.secrets = strings.NewReplacer(n.pairs...)
	}
	return p
}

// body normalises a JSON body; nil stays nil.
func (n *normaliser) body(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return b
	}
	n.learn("", v)
	out, err := json.Marshal(n.value("", v))
	if err != nil {
		panic(err)
	}
	return out
}

// learn records the secret values of v: those under a key of secretKey and
// the tokens and codes of hosted links.
func (n *normaliser) learn(key string, v any) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			n.learn(k, v[k])
		}
	case []any:
		for _, x := range v {
			n.learn(key, x)
		}
	case string:
		if kind, ok := secretKey[key]; ok && v != "" {
			n.placeholder(kind, v)
		}
		for _, m := range linkRE.FindAllStringSubmatch(v, -1) {
			if m[1] != "" {
				n.placeholder("token", m[1])
			} else {
				n.placeholder("code", m[2])
			}
		}
	}
}

func (n *normaliser) value(key string, v any) any {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			v[k] = n.value(k, v[k])
		}
	case []any:
		for i := range v {
			v[i] = n.value(key, v[i])
		}
	case json.Number:
		if key == "durationMs" {
			return json.Number("42")
		}
	case string:
		return n.str(v)
	}
	return v
}

func (n *normaliser) str(s string) string {
	s = n.secrets.Replace(s)
	s = uuidRE.ReplaceAllStringFunc(s, func(id string) string { return n.placeholder("uuid", id) })
	s = hexRE.ReplaceAllStringFunc(s, func(h string) string { return n.placeholder(fmt.Sprintf("hex%d", len(h)-2), h) })
	s = strings.ReplaceAll(s, n.publicURL, "https://complybox.example.com")
	return localRE.ReplaceAllString(s, "https://partner.example.com/webhooks")
}
