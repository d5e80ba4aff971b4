package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/complybox/complybox/store"
)

// demoTimeout bounds each wait of the demo for a webhook or a state.
const demoTimeout = 20 * time.Second

func newDemoCmd(a *app) *cobra.Command {
	var keep bool
	cmd := &cobra.Command{
		Use:   "demo [--keep]",
		Short: "Run the whole story offline, with a built-in webhook receiver",
		Long: "demo serves complybox on a free loopback port with a temporary db and a\n" +
			"built-in webhook receiver, then runs the whole story: individual KYC, a company\n" +
			"with beneficial owners and their spawned child applicants, a custody\n" +
			"deposit and withdrawal, and the sandbox test clock expiring a link and\n" +
			"retrying a webhook to its end without waiting. It prints each step, the webhooks that follow it and\n" +
			"the resulting state, checks every webhook's signatures, and exits 0 when every\n" +
			"step held. With --keep the server keeps running afterwards, until Ctrl-C, so\n" +
			"the printed links, the API and the console can be tried by hand.",
		Args: args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd.Context(), cmd.OutOrStdout(), a.stderr, keep)
		},
	}
	cmd.Flags().BoolVar(&keep, "keep", false, "keep serving after the story, until Ctrl-C")
	return cmd
}

// Parts of the demo's story, in the order runDemo runs them.
const (
	demoIndividual = "Individual KYC: a person proves who they are"
	demoCompany    = "Company KYB: a company and the people who own it"
	demoCustody    = "Custody: a deposit and a withdrawal of bitcoin"
	demoClock      = "Test clock: hours pass in the sandbox in an instant"
)

// Webhook destinations of the demo's receiver.
const (
	demoKYCPath     = "/kyc"
	demoCustodyPath = "/custody"
	demoDownPath    = "/down" // a receiver that is down: always 503
)

// runDemo runs the demo, printing to out; the server logs warnings to
// stderr. A failed step is an error. With keep, it serves on after the story
// until ctx is done.
func runDemo(ctx context.Context, out, stderr io.Writer, keep bool) error {
	return runDemoParts(ctx, out, stderr, keep, demoIndividual, demoCompany, demoCustody, demoClock)
}

// runDemoParts runs the named parts of the demo's story.
func runDemoParts(ctx context.Context, out, stderr io.Writer, keep bool, parts ...string) error {
	dir, err := os.MkdirTemp("", "complybox-demo-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rc, err := startDemoReceiver()
	if err != nil {
		return err
	}
	defer rc.close()

	cfg := DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.DB = filepath.Join(dir, "demo.db")
	key, secret := "demo_key", randomSecret()
	cfg.Credentials = []CredentialConfig{{Key: key, Secret: secret, Environment: "sandbox", Role: "partner", Name: "demo"}}
	cfg.KYC.CallbackURL = rc.url + demoKYCPath
	cfg.KYC.CallbackSecret = randomSecret()
	cfg.KYC.ReviewDelay = Duration(200 * time.Millisecond)
	cfg.Chain.StepDelay = Duration(200 * time.Millisecond)
	cfg.Dispatch.PollInterval = Duration(time.Second)
	cfg.Log.Level = "warn"
	if err := cfg.Validate(); err != nil {
		return err
	}
	rc.setSecret(demoKYCPath, cfg.KYC.CallbackSecret)
	consolePassword := ""
	if keep {
		if consolePassword, err = setDemoConsolePassword(cfg.DB); err != nil {
			return err
		}
	}

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
		ctx: ctx, out: out, rc: rc, base: "http://" + ln.Addr().String(), key: key, secret: secret,
		client: &http.Client{Timeout: 10 * time.Second},
	}
	rc.balanceOf = d.balanceOf
	if err := d.waitHealthy(served); err != nil {
		return err
	}
	d.printf("complybox demo: the whole story, run against a real server on this machine.\n")
	d.printf("  server    %s (its db is temporary)\n", d.base)
	d.printf("  receiver  %s (a webhook receiver that checks signatures)\n", rc.url)
	d.printf("Each step shows what the demo does (->), the webhooks that follow (<-)\n")
	d.printf("and the resulting state (=).\n")
	story := map[string]func() error{demoIndividual: d.individual, demoCompany: d.company, demoCustody: d.custody,
		demoClock: d.clock}
	for i, name := range parts {
		d.printf("\n== %d. %s\n", i+1, name)
		if err := story[name](); err != nil {
			d.printf("FAILED: %v\n", err)
			return fmt.Errorf("demo: %s: %w", name, err)
		}
	}
	if err := rc.problems(); err != nil {
		d.printf("FAILED: %v\n", err)
		return fmt.Errorf("demo: %w", err)
	}
	d.printf("\n== Webhook signatures\n")
	for _, dest := range []struct{ name, path string }{{"KYC callback", demoKYCPath}, {"custody webhooks", demoCustodyPath}} {
		n := rc.count(dest.path)
		if n == 0 {
			continue
		}
		d.printf("%s: %d received, %d signatures verified (X-Webhook-Signature, Standard Webhooks)\n",
			dest.name, n, n)
	}
	d.printf("\nEvery step held.\n")
	if !keep {
		d.printf("The links above stop working now: the server and its db end with the demo.\n")
		d.printf("Run `complybox demo --keep` to keep them serving until Ctrl-C.\n")
		return nil
	}
	d.printf("Still serving (--keep) until Ctrl-C; the db is deleted then.\n")
	d.printf("  API      %s  X-Api-Key: %s\n", d.base, key)
	d.printf("           X-Api-Secret: %s\n", secret)
	d.printf("  console  %s/console  name: admin  password: %s\n", d.base, consolePassword)
	select {
	case <-ctx.Done():
		return nil
	case err := <-served:
		return fmt.Errorf("the server stopped: %v", err)
	}
}

// setDemoConsolePassword gives the demo's db a random console password, so
// that --keep can print it.
func setDemoConsolePassword(db string) (string, error) {
	st, err := store.Open(db, store.Options{})
	if err != nil {
		return "", err
	}
	password := randomSecret()[:16]
	if err := st.SetConsolePassword(password); err != nil {
		st.Close()
		return "", err
	}
	return password, st.Close()
}

// demo is the state of a demo run: the server's address and credential and
// the receiver.
type demo struct {
	ctx         context.Context
	out         io.Writer
	rc          *demoReceiver
	client      *http.Client
	base        string
	key, secret string
}

func (d *demo) printf(format string, a ...any) { fmt.Fprintf(d.out, format, a...) }

// step prints what the demo does next.
func (d *demo) step(format string, a ...any) { d.printf("-> "+format+"\n", a...) }

// state prints a state the demo read back from the API.
func (d *demo) state(format string, a ...any) { d.printf("   = "+format+"\n", a...) }

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

// webhook waits for the webhook on path of eventType about entityID (any
// entity when "") whose data satisfies match (when not nil), and prints
// what it says.
func (d *demo) webhook(path, eventType, entityID string, match func(json.RawMessage) bool) error {
	e, err := d.rc.wait(path, eventType, entityID, match)
	if err != nil {
		return err
	}
	d.printf("   <- webhook %s\n", e.describe())
	return nil
}

// kyc waits for the applicant event eventType of extID and prints it.
func (d *demo) kyc(eventType, extID string) error {
	return d.webhook(demoKYCPath, eventType, extID, nil)
}

// randomSecret returns 32 random bytes in standard base64.
func randomSecret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}
