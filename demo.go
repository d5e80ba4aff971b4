package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/complybox/complybox/dispatch"
)

// demoTimeout bounds each wait of the demo for a webhook or a state.
const demoTimeout = 20 * time.Second

func newDemoCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Run the whole story offline, with a built-in webhook receiver",
		Long: "demo serves complybox on a free loopback port with a temporary db and a\n" +
			"built-in webhook receiver, then runs the whole story: individual KYC, a company\n" +
			"with beneficial owners and their spawned child applicants, and a custody\n" +
			"deposit and withdrawal. It prints each step, each webhook received and its\n" +
			"signature checks, and exits 0 when every step held.",
		Args: args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd.Context(), cmd.OutOrStdout(), a.stderr)
		},
	}
}

// Parts of the demo's story, in the order runDemo runs them.
const (
	demoIndividual = "Individual KYC"
	demoCompany    = "Company (KYB) with beneficial owners"
	demoCustody    = "Custody deposit and withdrawal"
)

// runDemo runs the demo, printing to out; the server logs warnings to
// stderr. A failed step is an error.
func runDemo(ctx context.Context, out, stderr io.Writer) error {
	return runDemoParts(ctx, out, stderr, demoIndividual, demoCompany, demoCustody)
}

// runDemoParts runs the named parts of the demo's story.
func runDemoParts(ctx context.Context, out, stderr io.Writer, parts ...string) error {
	dir, err := os.MkdirTemp("", "complybox-demo-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p := &demoPrinter{w: out}
	rc, err := startDemoReceiver(p)
	if err != nil {
		return err
	}
	defer rc.close()

	cfg := DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.DB = filepath.Join(dir, "demo.db")
	key, secret := "demo_key", randomSecret()
	cfg.Credentials = []CredentialConfig{{Key: key, Secret: secret, Environment: "sandbox", Role: "partner", Name: "demo"}}
	cfg.KYC.CallbackURL = rc.url + "/kyc"
	cfg.KYC.CallbackSecret = randomSecret()
	cfg.KYC.ReviewDelay = Duration(200 * time.Millisecond)
	cfg.Chain.StepDelay = Duration(200 * time.Millisecond)
	cfg.Dispatch.PollInterval = Duration(time.Second)
	cfg.Dispatch.RetryDelays = []Duration{Duration(200 * time.Millisecond)}
	cfg.Log.Level = "warn"
	if err := cfg.Validate(); err != nil {
		return err
	}
	rc.setSecret("/kyc", cfg.KYC.CallbackSecret)

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srvCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	served := make(chan error, 1)
	go func() { served <- serveOn(srvCtx, ln, cfg, newLogger(cfg.Log, stderr), io.Discard) }()
	defer func() {
		stop()
		<-served
	}()

	d := &demo{
		ctx: ctx, p: p, rc: rc, base: "http://" + ln.Addr().String(), key: key, secret: secret,
		client: &http.Client{Timeout: 10 * time.Second},
	}
	if err := d.waitHealthy(served); err != nil {
		return err
	}
	p.printf("complybox demo: serving on %s (db %s), webhook receiver on %s\n", d.base, cfg.DB, rc.url)
	story := map[string]func() error{demoIndividual: d.individual, demoCompany: d.company, demoCustody: d.custody}
	for _, name := range parts {
		p.printf("\n== %s\n", name)
		if err := story[name](); err != nil {
			p.printf("FAILED: %v\n", err)
			return fmt.Errorf("demo: %s: %w", name, err)
		}
	}
	p.printf("\nEvery step held: %d webhooks received, every signature verified.\n", rc.count())
	return nil
}

// demo is the state of a demo run: the server's address and credential and
// the receiver.
type demo struct {
	ctx         context.Context
	p           *demoPrinter
	rc          *demoReceiver
	client      *http.Client
	base        string
	key, secret string
}

// demoPrinter serialises the demo's output between the story and the
// receiver's goroutines.
type demoPrinter struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *demoPrinter) printf(format string, a ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format, a...)
}

func (d *demo) step(format string, a ...any) { d.p.printf("-> "+format+"\n", a...) }

// waitHealthy waits for GET /healthz to answer 200, or for the server to
// fail.
func (d *demo) waitHealthy(served <-chan error) error {
	deadline := time.Now().Add(demoTimeout)
	for {
		resp, err := d.client.Get(d.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-served:
			return fmt.Errorf("the server stopped: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("the server did not become healthy")
		}
	}
}

// call makes an authenticated API call, checks the status and decodes the
// answer into out (when not nil).
func (d *demo) call(method, path string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(d.ctx, method, d.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("X-Api-Key", d.key)
	req.Header.Set("X-Api-Secret", d.secret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s answered %d, want %d: %s", method, path, resp.StatusCode, want, strings.TrimSpace(string(b)))
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return nil
}

// verifyBody is a direct-verification body with generated images.
func verifyBody(seed byte) map[string]any {
	return map[string]any{
		"idDocType":     "PASSPORT",
		"country":       "DEU",
		"documentFront": base64.StdEncoding.EncodeToString(demoImage(seed)),
		"selfie":        base64.StdEncoding.EncodeToString(demoImage(seed + 100)),
	}
}

// demoImage returns a 240×240 PNG whose pixels depend on seed, so that no
// two images of the demo are duplicates.
func demoImage(seed byte) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 240, 240))
	for y := range 240 {
		for x := range 240 {
			img.Set(x, y, color.RGBA{uint8(x) ^ seed, uint8(y) + seed, uint8(x*y) ^ seed, 255})
		}
	}
	var buf bytes.Buffer
	png.Encode(&buf, img)
	return buf.Bytes()
}

// reviewed waits for the applicantReviewed callback of extID and checks its
// answer.
func (d *demo) reviewed(extID, wantAnswer string) error {
	e, err := d.rc.wait("/kyc", "applicantReviewed", extID, nil)
	if err != nil {
		return err
	}
	var data struct {
		ReviewStatus string
		ReviewResult struct{ ReviewAnswer string }
	}
	if err := json.Unmarshal(e.data, &data); err != nil {
		return err
	}
	if data.ReviewStatus != "completed" || data.ReviewResult.ReviewAnswer != wantAnswer {
		return fmt.Errorf("applicantReviewed of %s: %s %s, want completed %s", extID, data.ReviewStatus, data.ReviewResult.ReviewAnswer, wantAnswer)
	}
	return nil
}

func (d *demo) individual() error {
	d.step("create applicant demo-alice on basic-kyc-level")
	if err := d.call("POST", "/v1/applicants", map[string]any{
		"externalUserId": "demo-alice", "firstName": "Alice", "lastName": "Example", "dateOfBirth": "1990-04-01", "nationality": "DEU",
	}, http.StatusCreated, nil); err != nil {
		return err
	}
	d.step("direct verification: passport front and selfie")
	var st struct{ ReviewStatus, ReviewAnswer string }
	if err := d.call("POST", "/v1/applicants/demo-alice/verify", verifyBody(1), http.StatusOK, &st); err != nil {
		return err
	}
	d.step("sandbox reviewer answered: %s %s", st.ReviewStatus, st.ReviewAnswer)
	if st.ReviewAnswer != "GREEN" {
		return fmt.Errorf("demo-alice is %s %s, want GREEN", st.ReviewStatus, st.ReviewAnswer)
	}
	return d.reviewed("demo-alice", "GREEN")
}

func (d *demo) company() error {
	const parent = "demo-acme"
	d.step("create company %s on kyb-level with two beneficial owners", parent)
	if err := d.call("POST", "/v1/applicants", map[string]any{
		"externalUserId": parent, "type": "company", "companyName": "Acme Trading", "registrationNumber": "HRB 1234",
		"country": "DEU", "legalForm": "gmbh",
		"ubos": []map[string]any{
			{"fullName": "Bob Builder", "dateOfBirth": "1980-02-03", "ownershipPercent": 60, "roles": []string{"ubo", "director"}},
			{"fullName": "Carol Client", "dateOfBirth": "1985-05-06", "ownershipPercent": 40, "roles": []string{"ubo"}},
		},
	}, http.StatusCreated, nil); err != nil {
		return err
	}
	var app struct {
		Ubos []struct {
			UboIndex int    `json:"uboIndex"`
			FullName string `json:"fullName"`
		} `json:"ubos"`
	}
	if err := d.call("GET", "/v1/applicants/"+parent, nil, http.StatusOK, &app); err != nil {
		return err
	}
	if len(app.Ubos) != 2 {
		return fmt.Errorf("%s has %d beneficial-owner rows, want 2", parent, len(app.Ubos))
	}
	for i, row := range app.Ubos {
		var sp struct {
			ChildExternalUserID string `json:"childExternalUserId"`
			SDKLink             struct {
				URL string `json:"url"`
			} `json:"sdkLink"`
		}
		path := "/v1/applicants/" + parent + "/ubos/" + strconv.Itoa(row.UboIndex) + "/spawn-kyc"
		if err := d.call("POST", path, map[string]any{}, http.StatusCreated, &sp); err != nil {
			return err
		}
		d.step("spawned child %s for %s (hosted UI link %s)", sp.ChildExternalUserID, row.FullName, sp.SDKLink.URL)
		d.step("child %s verifies directly", sp.ChildExternalUserID)
		if err := d.call("POST", "/v1/applicants/"+sp.ChildExternalUserID+"/verify", verifyBody(byte(10+i)), http.StatusOK, nil); err != nil {
			return err
		}
		if err := d.reviewed(sp.ChildExternalUserID, "GREEN"); err != nil {
			return err
		}
	}
	for i, doc := range []string{"certificate_of_incorporation", "register_of_shareholders"} {
		d.step("upload company document %s", doc)
		if err := d.call("POST", "/v1/applicants/"+parent+"/documents", map[string]any{
			"kind": "company_docs", "docType": doc, "image": base64.StdEncoding.EncodeToString(demoImage(byte(50 + i))),
		}, http.StatusCreated, nil); err != nil {
			return err
		}
	}
	d.step("send %s to review; the sandbox reviewer decides after review_delay", parent)
	if err := d.call("POST", "/v1/applicants/"+parent+"/review", nil, http.StatusOK, nil); err != nil {
		return err
	}
	if err := d.reviewed(parent, "GREEN"); err != nil {
		return err
	}
	var cs struct {
		AllChildrenComplete bool `json:"allChildrenComplete"`
		Counts              struct {
			Spawned, Completed int
		} `json:"counts"`
	}
	if err := d.call("GET", "/v1/applicants/"+parent+"/company-structure", nil, http.StatusOK, &cs); err != nil {
		return err
	}
	d.step("company structure: %d spawned, %d completed, allChildrenComplete %v", cs.Counts.Spawned, cs.Counts.Completed, cs.AllChildrenComplete)
	if !cs.AllChildrenComplete || cs.Counts.Completed != 2 {
		return errors.New("the company's children are not all complete")
	}
	return nil
}

func (d *demo) custody() error {
	d.step("configure the custody webhook: PUT /webhooks/outbound")
	var hook struct{ SigningSecret string }
	if err := d.call("PUT", "/webhooks/outbound", map[string]any{"url": d.rc.url + "/custody"}, http.StatusOK, &hook); err != nil {
		return err
	}
	d.rc.setSecret("/custody", hook.SigningSecret)

	var vault struct{ VaultID string }
	if err := d.call("POST", "/vaults", map[string]any{"name": "Demo treasury", "externalId": "demo-vault-1"}, http.StatusCreated, &vault); err != nil {
		return err
	}
	d.step("created vault %s", vault.VaultID)
	var w struct{ WalletID, DepositAddress string }
	if err := d.call("POST", "/vaults/"+vault.VaultID+"/wallets", map[string]any{"assetSymbol": "BTC", "label": "BTC hot wallet"}, http.StatusCreated, &w); err != nil {
		return err
	}
	d.step("created BTC wallet %s, deposit address %s", w.WalletID, w.DepositAddress)
	if _, err := d.rc.wait("/custody", "wallet.created", w.WalletID, nil); err != nil {
		return err
	}

	var dep struct{ TransactionID string }
	if err := d.call("POST", "/sandbox/deposits", map[string]any{"walletId": w.WalletID, "amount": "0.5"}, http.StatusCreated, &dep); err != nil {
		return err
	}
	d.step("sandbox deposit of 0.5 BTC: transaction %s; the chain simulator moves it along", dep.TransactionID)
	if err := d.completed(dep.TransactionID); err != nil {
		return err
	}
	if err := d.balance(w.WalletID, "0.5"); err != nil {
		return err
	}

	var wd struct{ TransactionID string }
	if err := d.call("POST", "/transactions", map[string]any{
		"type": "Withdrawal", "sourceWalletId": w.WalletID, "amount": "0.1",
		"destinationAddress": "bc1qdemo0000000000000000000000000000000000", "note": "demo payout",
	}, http.StatusCreated, &wd); err != nil {
		return err
	}
	d.step("withdrawal of 0.1 BTC (network fee 0.0001): transaction %s", wd.TransactionID)
	if err := d.completed(wd.TransactionID); err != nil {
		return err
	}
	return d.balance(w.WalletID, "0.3999")
}

// completed waits for the transaction's created event and its status
// updates up to Completed.
func (d *demo) completed(id string) error {
	if _, err := d.rc.wait("/custody", "transaction.created", id, nil); err != nil {
		return err
	}
	_, err := d.rc.wait("/custody", "transaction.status.updated", id, func(data json.RawMessage) bool {
		var x struct{ Status string }
		return json.Unmarshal(data, &x) == nil && x.Status == "Completed"
	})
	return err
}

// balance waits for a balance.updated event of the wallet's vault and
// checks the balance the API then reports.
func (d *demo) balance(walletID, want string) error {
	deadline := time.Now().Add(demoTimeout)
	for {
		var b struct{ Total, Available string }
		if err := d.call("GET", "/wallets/"+walletID+"/balance", nil, http.StatusOK, &b); err != nil {
			return err
		}
		if b.Total == want && b.Available == want {
			d.step("balance of wallet %s: total %s, available %s", walletID, b.Total, b.Available)
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("wallet %s: total %s, available %s, want %s", walletID, b.Total, b.Available, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, err := d.rc.wait("/custody", "balance.updated", "", nil)
	return err
}

// demoReceiver is the demo's webhook receiver: it checks both signatures of
// every delivery (401 on a mismatch, as the seed asks of receivers),
// dedupes on the event id and keeps what it received.
type demoReceiver struct {
	p   *demoPrinter
	srv *http.Server
	url string

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
	used                bool
}

func startDemoReceiver(p *demoPrinter) (*demoReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rc := &demoReceiver{p: p, url: "http://" + ln.Addr().String(), secrets: map[string]string{}, seen: map[string]bool{}, arrived: make(chan struct{}, 1)}
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

func (rc *demoReceiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.events)
}

// ServeHTTP receives one delivery.
func (rc *demoReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
		rc.p.printf("   <- webhook %s on %s: SIGNATURE MISMATCH, answered 401\n", env.EventType, r.URL.Path)
		http.Error(w, "signature mismatch", http.StatusUnauthorized)
		return
	}
	rc.mu.Lock()
	dup := rc.seen[env.ID]
	if !dup {
		rc.seen[env.ID] = true
		rc.events = append(rc.events, demoEvent{path: r.URL.Path, eventType: env.EventType, entityID: env.EntityID, data: env.Data})
	}
	rc.mu.Unlock()
	if !dup {
		rc.p.printf("   <- webhook %-28s %-48s signatures OK (X-Webhook-Signature, webhook-signature)\n", env.EventType, env.EntityID)
	}
	select {
	case rc.arrived <- struct{}{}:
	default:
	}
	w.WriteHeader(http.StatusNoContent)
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

// randomSecret returns 32 random bytes in standard base64.
func randomSecret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}
