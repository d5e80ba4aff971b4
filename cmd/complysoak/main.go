// complysoak measures a built complybox binary on a large db, as a partner
// runs it for a long time: start-up, memory, the latency of each read and
// write at that size, and memory after a long stretch of mixed traffic with
// a live webhook receiver. It is how the README's figures for the db that
// `complybox seed` makes (1M applicants, 1M transactions, 5M deliveries)
// were measured:
//
//	go build -o /tmp/complybox .
//	/tmp/complybox seed --db /tmp/big.db --applicants 1000000 --transactions 1000000 --deliveries 5000000
//	go run ./cmd/complysoak -bin /tmp/complybox -db /tmp/big.db -d 1h
//
// It serves the db (a copy is not made: the db grows by what the load
// writes) on a loopback port with one sandbox admin credential, points the
// custody webhook and the KYC callback at its own receiver (which answers
// 200), and then:
//
//	start     exec -> first 200 from /healthz (polled every 5 ms); VmRSS
//	reads     -reps sequential calls of each read and write: p50, p99
//	soak      -d of open-loop mixed traffic at -rate requests/s (reads 75 %,
//	          applicants 10 %, withdrawals 10 %, deposits 5 %); VmRSS every
//	          minute
//	reads     the same table again, and VmRSS and VmHWM at the end
//
// All traffic goes to 127.0.0.1.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type options struct {
	bin, db string
	d       time.Duration
	rate    int
	reps    int
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "", "path to a built complybox binary (required)")
	flag.StringVar(&o.db, "db", "", "db file to serve, e.g. one complybox seed filled (required; the load writes to it)")
	flag.DurationVar(&o.d, "d", time.Hour, "duration of the mixed load")
	flag.IntVar(&o.rate, "rate", 100, "requests per second of the mixed load")
	flag.IntVar(&o.reps, "reps", 200, "sequential calls per read and write in each latency table")
	flag.Parse()
	if o.bin == "" || o.db == "" || o.rate < 1 || o.reps < 10 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "complysoak:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Printf("%s  %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func run(ctx context.Context, o options) error {
	dir, err := os.MkdirTemp("", "complysoak")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rc, err := startReceiver()
	if err != nil {
		return err
	}
	defer rc.srv.Close()
	if st, err := os.Stat(o.db); err == nil {
		logf("db %s: %.2f GB", o.db, float64(st.Size())/1e9)
	}
	p, took, err := startProduct(ctx, o, dir, rc.url)
	if err != nil {
		return err
	}
	defer p.stop()
	logf("start-up: /healthz answered after %.0f ms; VmRSS %.1f MiB (RssAnon %.1f, RssFile %.1f)",
		took.Seconds()*1000, p.rss("VmRSS"), p.rss("RssAnon"), p.rss("RssFile"))

	a := p.api
	if _, err := a.obj(ctx, "PUT", "/webhooks/outbound", map[string]any{"url": rc.url + "/custody"}); err != nil {
		return err
	}
	fx, err := discover(ctx, a)
	if err != nil {
		return err
	}
	logf("fixture: %d applicants, %d transactions, %d wallets, %d entities, funded wallet %s",
		len(fx.applicants), len(fx.transactions), len(fx.wallets), len(fx.entities), fx.funded)

	table(ctx, a, fx, o.reps, "at start")
	logf("mixed load: %s at %d requests/s", o.d, o.rate)
	if err := soak(ctx, a, fx, p, o); err != nil {
		return err
	}
	table(ctx, a, fx, o.reps, "after the load")
	// RssFile is the db's pages mapped in: page cache the kernel takes
	// back under pressure; RssAnon is the process's own memory.
	logf("end: VmRSS %.1f MiB (RssAnon %.1f, RssFile %.1f), VmHWM %.1f MiB; receiver got %d webhooks",
		p.rss("VmRSS"), p.rss("RssAnon"), p.rss("RssFile"), p.rss("VmHWM"), rc.count.Load())
	if st, err := os.Stat(o.db); err == nil {
		logf("db %s: %.2f GB", o.db, float64(st.Size())/1e9)
	}
	return nil
}

// receiver answers every webhook 200 and counts them.
type receiver struct {
	srv   *http.Server
	url   string
	count atomic.Int64
}

func startReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rc := &receiver{url: "http://" + ln.Addr().String()}
	rc.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		rc.count.Add(1)
	})}
	go rc.srv.Serve(ln)
	return rc, nil
}

// product is one running `complybox serve`.
type product struct {
	cmd *exec.Cmd
	api *api
}

func startProduct(ctx context.Context, o options, dir, hook string) (*product, time.Duration, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, 0, err
	}
	listen := ln.Addr().String()
	ln.Close()
	key, secret := "soak_"+randHex(8), randHex(32)
	cfg := fmt.Sprintf("listen = %s\npublic_url = %s\ndb = %s\n\n[[credentials]]\nkey = %q\nsecret = %q\nenvironment = \"sandbox\"\nrole = \"admin\"\n\n[kyc]\ncallback_url = %s\n\n[dispatch]\nallow_http = \"loopback\"\n",
		strconv.Quote(listen), strconv.Quote("http://"+listen), strconv.Quote(o.db), key, secret, strconv.Quote(hook+"/kyc"))
	path := filepath.Join(dir, "complybox.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return nil, 0, err
	}
	logFile, err := os.Create(filepath.Join(dir, "complybox.log"))
	if err != nil {
		return nil, 0, err
	}
	p := &product{cmd: exec.Command(o.bin, "serve", "--config", path),
		api: &api{base: "http://" + listen, key: key, secret: secret, c: &http.Client{Timeout: 30 * time.Second}}}
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	began := time.Now()
	if err := p.cmd.Start(); err != nil {
		return nil, 0, err
	}
	for deadline := began.Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if ctx.Err() != nil {
			p.stop()
			return nil, 0, ctx.Err()
		}
		resp, err := http.Get(p.api.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p, time.Since(began), nil
			}
		}
	}
	p.stop()
	return nil, 0, errors.New("complybox did not answer /healthz within 5 minutes")
}

func (p *product) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
	}
}

// rss reads a VmRSS-style field of /proc/PID/status, in MiB.
func (p *product) rss(field string) float64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// api calls the product with the credential.
type api struct {
	base, key, secret string
	c                 *http.Client
}

func (a *api) call(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-Api-Key", a.key)
	req.Header.Set("X-Api-Secret", a.secret)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func (a *api) obj(ctx context.Context, method, path string, body any) (map[string]any, error) {
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	st, b, err := a.call(ctx, method, path, raw)
	if err != nil {
		return nil, err
	}
	if st/100 != 2 {
		return nil, fmt.Errorf("%s %s: %d %s", method, path, st, clip(b))
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s %s: %v", method, path, err)
	}
	return m, nil
}

func clip(b []byte) string {
	if len(b) > 300 {
		b = b[:300]
	}
	return string(b)
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// fixture holds ids read from the db: what the reads ask for.
type fixture struct {
	applicants, transactions, wallets, entities []string
	vault, funded                               string
	withdrawal                                  []byte
}

func (f *fixture) pick(ids []string) string { return ids[mrand.IntN(len(ids))] }

// discover reads ids of existing records through the list endpoints and
// funds one wallet for the withdrawals.
func discover(ctx context.Context, a *api) (*fixture, error) {
	f := &fixture{}
	items := func(path, field string) ([]string, error) {
		m, err := a.obj(ctx, "GET", path, nil)
		if err != nil {
			return nil, err
		}
		list, _ := m["items"].([]any)
		var out []string
		for _, it := range list {
			if o, ok := it.(map[string]any); ok {
				if s, _ := o[field].(string); s != "" {
					out = append(out, s)
				}
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("GET %s: no %s in %v", path, field, clip(mustJSON(m)))
		}
		return out, nil
	}
	var err error
	if f.applicants, err = items("/v1/applicants?limit=100", "externalUserId"); err != nil {
		return nil, err
	}
	if f.transactions, err = items("/transactions?limit=100", "transactionId"); err != nil {
		return nil, err
	}
	if f.entities, err = items("/webhooks/deliveries?limit=100", "entityId"); err != nil {
		return nil, err
	}
	vaults, err := items("/vaults?limit=20", "vaultId")
	if err != nil {
		return nil, err
	}
	for _, v := range vaults {
		ws, err := items("/vaults/"+v+"/wallets", "walletId")
		if err != nil {
			return nil, err
		}
		f.wallets = append(f.wallets, ws...)
	}
	v, err := a.obj(ctx, "POST", "/vaults", map[string]any{"name": "complysoak"})
	if err != nil {
		return nil, err
	}
	f.vault, _ = v["vaultId"].(string)
	w, err := a.obj(ctx, "POST", "/vaults/"+f.vault+"/wallets", map[string]any{"assetSymbol": "ETH"})
	if err != nil {
		return nil, err
	}
	f.funded, _ = w["walletId"].(string)
	dep, err := a.obj(ctx, "POST", "/sandbox/deposits", map[string]any{"walletId": f.funded, "amount": "1000000"})
	if err != nil {
		return nil, err
	}
	id, _ := dep["transactionId"].(string)
	for i := 0; i < 600; i++ { // the simulator completes it, or /advance does
		m, err := a.obj(ctx, "GET", "/transactions/"+id, nil)
		if err != nil {
			return nil, err
		}
		if m["status"] == "Completed" {
			break
		}
		a.call(ctx, "POST", "/transactions/"+id+"/advance", nil)
		time.Sleep(100 * time.Millisecond)
	}
	f.withdrawal, _ = json.Marshal(map[string]any{"type": "Withdrawal", "sourceWalletId": f.funded,
		"destinationAddress": "0x" + randHex(20), "amount": "0.000001"})
	return f, nil
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// op is one kind of call: a name and how to make one.
type op struct {
	name string
	want int
	call func(ctx context.Context, a *api, f *fixture) (int, error)
}

func readOps() []op {
	g := func(name string, path func(f *fixture) string) op {
		return op{name: name, want: 200, call: func(ctx context.Context, a *api, f *fixture) (int, error) {
			st, _, err := a.call(ctx, "GET", path(f), nil)
			return st, err
		}}
	}
	return []op{
		g("GET /v1/applicants/{id}", func(f *fixture) string { return "/v1/applicants/" + f.pick(f.applicants) }),
		g("GET /v1/applicants?limit=10", func(*fixture) string { return "/v1/applicants?limit=10" }),
		g("GET /v1/applicants?reviewStatus=pending&limit=10", func(*fixture) string { return "/v1/applicants?reviewStatus=pending&limit=10" }),
		g("GET /v1/applicants?reviewStatus=completed&limit=10", func(*fixture) string { return "/v1/applicants?reviewStatus=completed&limit=10" }),
		g("GET /transactions/{id}", func(f *fixture) string { return "/transactions/" + f.pick(f.transactions) }),
		g("GET /transactions?walletId=…&limit=10", func(f *fixture) string { return "/transactions?limit=10&walletId=" + f.pick(f.wallets) }),
		g("GET /transactions?status=Completed&limit=10", func(*fixture) string { return "/transactions?status=Completed&limit=10" }),
		g("GET /vaults/{id}", func(f *fixture) string { return "/vaults/" + f.vault }),
		g("GET /webhooks/deliveries?limit=10", func(*fixture) string { return "/webhooks/deliveries?limit=10" }),
		g("GET /webhooks/deliveries?entityId=…&limit=10", func(f *fixture) string { return "/webhooks/deliveries?limit=10&entityId=" + f.pick(f.entities) }),
		g("GET /webhooks/deliveries?status=delivered&limit=10", func(*fixture) string { return "/webhooks/deliveries?status=delivered&limit=10" }),
		g("GET /webhooks/deliveries?status=pending&limit=1", func(*fixture) string { return "/webhooks/deliveries?status=pending&limit=1" }),
	}
}

func writeOps() []op {
	return []op{
		{name: "POST /v1/applicants", want: 201, call: func(ctx context.Context, a *api, f *fixture) (int, error) {
			body := mustJSON(map[string]any{"externalUserId": "soak-" + randHex(8), "type": "individual", "email": "soak@example.com"})
			st, _, err := a.call(ctx, "POST", "/v1/applicants", body)
			return st, err
		}},
		{name: "POST /transactions (Withdrawal)", want: 201, call: func(ctx context.Context, a *api, f *fixture) (int, error) {
			st, _, err := a.call(ctx, "POST", "/transactions", f.withdrawal)
			return st, err
		}},
		{name: "POST /sandbox/deposits", want: 201, call: func(ctx context.Context, a *api, f *fixture) (int, error) {
			body := mustJSON(map[string]any{"walletId": f.pick(f.wallets), "amount": "0.01"})
			st, _, err := a.call(ctx, "POST", "/sandbox/deposits", body)
			return st, err
		}},
	}
}

// table prints p50 and p99 of reps sequential calls of every op.
func table(ctx context.Context, a *api, f *fixture, reps int, when string) {
	logf("latency %s (%d sequential calls each):", when, reps)
	fmt.Println("| call | p50 | p99 |\n|---|---|---|")
	for _, o := range append(readOps(), writeOps()...) {
		var d []time.Duration
		bad := 0
		for range reps {
			t0 := time.Now()
			st, err := o.call(ctx, a, f)
			d = append(d, time.Since(t0))
			if err != nil || st != o.want {
				bad++
			}
		}
		slices.Sort(d)
		note := ""
		if bad > 0 {
			note = fmt.Sprintf(" (%d answers not %d)", bad, o.want)
		}
		fmt.Printf("| `%s` | %s | %s |%s\n", o.name, ms(d[len(d)/2]), ms(d[len(d)*99/100]), note)
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", d.Seconds()*1000) }

// soak sends the mixed load open-loop at o.rate for o.d.
func soak(ctx context.Context, a *api, f *fixture, p *product, o options) error {
	reads, writes := readOps(), writeOps()
	var sent, failed atomic.Int64
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / time.Duration(o.rate))
	defer tick.Stop()
	minute := time.NewTicker(time.Minute)
	defer minute.Stop()
	end := time.After(o.d)
	sem := make(chan struct{}, 256)
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return ctx.Err()
		case <-end:
			wg.Wait()
			logf("mixed load done: %d requests, %d not as expected", sent.Load(), failed.Load())
			return nil
		case <-minute.C:
			logf("  %d requests (%d not as expected); VmRSS %.1f MiB (RssAnon %.1f, RssFile %.1f)",
				sent.Load(), failed.Load(), p.rss("VmRSS"), p.rss("RssAnon"), p.rss("RssFile"))
		case <-tick.C:
			var o op
			switch n := mrand.IntN(100); {
			case n < 75:
				o = reads[mrand.IntN(len(reads))]
			case n < 85:
				o = writes[0]
			case n < 95:
				o = writes[1]
			default:
				o = writes[2]
			}
			select {
			case sem <- struct{}{}:
			default:
				failed.Add(1) // 256 calls outstanding: the server is behind
				continue
			}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				st, err := o.call(ctx, a, f)
				sent.Add(1)
				if err != nil || st != o.want {
					failed.Add(1)
				}
			}()
		}
	}
}
