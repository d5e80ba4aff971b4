package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// TestCallbackSecretMustBeBase64: a [kyc] callback_secret that Standard
// Webhooks libraries cannot base64-decode, or that is shorter than 24
// bytes, or that holds a line break, is refused at start-up naming the key (SPEC §5: receivers built on
// that spec verify unchanged). Empty (generated) and whsec_-prefixed
// secrets are accepted.
func TestCallbackSecretMustBeBase64(t *testing.T) {
	for _, bad := range []string{
		"my-callback-secret", // the audit's example: not base64
		"c2hvcnQ=",           // base64 of 5 bytes
		"whsec_c2hvcnQ=",     // prefixed, still 5 bytes
		"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw!",
		"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw-_Ab", // URL-safe alphabet: the libraries decode standard base64
		"whsec_",
		"Zm9v YmFy",
		// Two lines, as `openssl rand -base64 64` prints (a TOML escape):
		// Go's base64 would skip the break, the Node libraries refuse it.
		"MfKQ9r8GKYqrTwjUPD8ILPZI\\no2LaLaSwMfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
	} {
		t.Run(bad, func(t *testing.T) {
			_, _, err := loadConfig(configFlags{path: writeConfig(t, "[kyc]\ncallback_secret = \""+bad+"\"\n")}, nil)
			wantErr(t, err, "kyc.callback_secret")
		})
	}
	for _, good := range []string{
		"",
		"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",       // 24 bytes
		"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", // the Standard Webhooks test vector
		"q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=", // 32 bytes, as complybox generates
	} {
		t.Run("OK"+good, func(t *testing.T) {
			if _, _, err := loadConfig(configFlags{path: writeConfig(t, "[kyc]\ncallback_secret = \""+good+"\"\n")}, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// kill9Env makes the served binary deliver, retry and advance fast.
var kill9Env = []string{
	"COMPLYBOX_DISPATCH_RETRY_DELAYS=50ms",
	"COMPLYBOX_DISPATCH_MAX_ATTEMPTS=1000",
	"COMPLYBOX_DISPATCH_ATTEMPT_TIMEOUT=2s",
	"COMPLYBOX_DISPATCH_POLL_INTERVAL=100ms",
	"COMPLYBOX_CHAIN_STEP_DELAY=100ms",
	"COMPLYBOX_KYC_REVIEW_DELAY=100ms",
}

// try is a request that may fail (the server may be killed under it): it
// returns the error instead of failing the test.
func try(client *http.Client, method, url, key, secret string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("X-Api-Secret", secret)
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// walk follows nextCursor from path and returns every item.
func walk(t *testing.T, base, path, key, secret string) []map[string]any {
	t.Helper()
	var out []map[string]any
	cursor := ""
	for {
		p := path + "&limit=200"
		if cursor != "" {
			p += "&cursor=" + cursor
		}
		status, body := call(t, "GET", base+p, key, secret, nil)
		var page struct {
			Items      []map[string]any
			NextCursor *string
		}
		if status != 200 || json.Unmarshal(body, &page) != nil {
			t.Fatalf("GET %s: %d %s", p, status, body)
		}
		out = append(out, page.Items...)
		if page.NextCursor == nil || *page.NextCursor == "" {
			return out
		}
		cursor = *page.NextCursor
	}
}

// TestKill9Repeatedly kills the real binary with SIGKILL many times at
// random moments under concurrent mixed writes (applicants, internal
// transfers, test events) with a live receiver, then restarts it, lets it
// drain and checks: every acknowledged write is there, every delivery was
// delivered and reached the receiver at least once, every transfer
// completed with exact balances, and bbolt's consistency check passes.
// COMPLYBOX_KILLS sets the number of kills (default 10).
func TestKill9Repeatedly(t *testing.T) {
	kills := 10
	if v, err := strconv.Atoi(os.Getenv("COMPLYBOX_KILLS")); err == nil && v > 0 {
		kills = v
	}
	bin := buildBinary(t)
	db := filepath.Join(t.TempDir(), "complybox.db")

	var mu sync.Mutex
	seen := map[string]int{} // X-Webhook-Id -> 2xx answers
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		seen[r.Header.Get("X-Webhook-Id")]++
		mu.Unlock()
	}))
	defer rc.Close()

	p := startProcess(t, bin, db, kill9Env...)
	p.dumpLogs(t)
	key, secret := p.Key, p.Secret
	if key == "" {
		t.Fatalf("no first-run credential: %q", p.Lines)
	}
	mustCall := func(method, path string, body any, want int) map[string]any {
		t.Helper()
		status, b := call(t, method, p.URL+path, key, secret, body)
		var out map[string]any
		if status != want || json.Unmarshal(b, &out) != nil {
			t.Fatalf("%s %s: %d %s", method, path, status, b)
		}
		return out
	}
	mustCall("PUT", "/webhooks/outbound", map[string]any{"url": rc.URL + "/hook"}, 200)
	vault := mustCall("POST", "/vaults", map[string]any{"name": "kill9"}, 201)["vaultId"].(string)
	from := mustCall("POST", "/vaults/"+vault+"/wallets", map[string]any{"assetSymbol": "BTC"}, 201)["walletId"].(string)
	to := mustCall("POST", "/vaults/"+vault+"/wallets", map[string]any{"assetSymbol": "BTC"}, 201)["walletId"].(string)
	mustCall("POST", "/sandbox/deposits", map[string]any{"walletId": from, "amount": "100000"}, 201)
	// A company whose beneficial-owner rows are spawned concurrently, two
	// workers racing on the same row: each row must end with one child.
	const rows = 6
	var owners []map[string]any
	for n := range rows {
		owners = append(owners, map[string]any{"fullName": fmt.Sprintf("Owner Number%d", n), "roles": []string{"director"}})
	}
	mustCall("POST", "/v1/applicants", map[string]any{"externalUserId": "kill-co", "type": "company", "companyName": "Kill Co",
		"registrationNumber": "HRB 9", "country": "DEU", "ubos": owners}, 201)

	var ackMu sync.Mutex
	var applicants, transfers []string
	children := map[int]string{} // row -> the child applicant id an acknowledged spawn answered
	client := &http.Client{Timeout: 5 * time.Second}
	seq := 0
	for kill := range kills + 1 {
		if kill > 0 {
			p = startProcess(t, bin, db, kill9Env...)
			p.dumpLogs(t)
		}
		if kill == kills {
			break // the last start only drains
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for c := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					switch (c + i) % 4 {
					case 0:
						ackMu.Lock()
						seq++
						ext := fmt.Sprintf("k%d-%d", kill, seq)
						ackMu.Unlock()
						status, _, err := try(client, "POST", p.URL+"/v1/applicants", key, secret, map[string]any{"externalUserId": ext})
						if err == nil && status == 201 {
							ackMu.Lock()
							applicants = append(applicants, ext)
							ackMu.Unlock()
						}
					case 1:
						status, b, err := try(client, "POST", p.URL+"/transactions", key, secret, map[string]any{"type": "InternalTransfer",
							"sourceWalletId": from, "destinationWalletId": to, "amount": "1"})
						var x struct{ TransactionID string }
						if err == nil && status == 201 && json.Unmarshal(b, &x) == nil {
							ackMu.Lock()
							transfers = append(transfers, x.TransactionID)
							ackMu.Unlock()
						}
					case 2:
						try(client, "POST", p.URL+"/webhooks/outbound/test", key, secret, nil)
					default:
						row := (i / 4) % rows // workers 0 and 2, and 1 and 3, take the same rows
						status, b, err := try(client, "POST", fmt.Sprintf("%s/v1/applicants/kill-co/ubos/%d/spawn-kyc", p.URL, row), key, secret, nil)
						var x struct{ ChildApplicantID string }
						if err == nil && (status == 201 || status == 200) && json.Unmarshal(b, &x) == nil {
							ackMu.Lock()
							if prev, ok := children[row]; ok && prev != x.ChildApplicantID {
								t.Errorf("row %d answered child %s, then %s", row, prev, x.ChildApplicantID)
							}
							children[row] = x.ChildApplicantID
							ackMu.Unlock()
						}
					}
				}
			}()
		}
		time.Sleep(time.Duration(100+rand.IntN(500)) * time.Millisecond) // a random moment
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		p.cmd.Wait()
		close(stop)
		wg.Wait()
	}
	t.Logf("%d kills: %d applicants, %d transfers and %d spawned rows acknowledged", kills, len(applicants), len(transfers), len(children))

	// Drain: every transaction final, every delivery delivered.
	deadline := time.Now().Add(60 * time.Second)
	for {
		open := 0
		for _, st := range []string{"pending", "failed"} {
			open += len(walk(t, p.URL, "/webhooks/deliveries?status="+st, key, secret))
		}
		for _, st := range []string{"Submitted", "PendingSignature", "Broadcasting", "Confirming"} {
			open += len(walk(t, p.URL, "/transactions?vaultId="+vault+"&status="+st, key, secret))
		}
		if open == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries or transactions still open 60 s after the last restart", open)
		}
		time.Sleep(100 * time.Millisecond)
	}

	listed := map[string]bool{}
	for _, a := range walk(t, p.URL, "/v1/applicants?x=1", key, secret) {
		listed[a["externalUserId"].(string)] = true
	}
	for _, ext := range applicants {
		if !listed[ext] {
			t.Errorf("acknowledged applicant %s is missing", ext)
		}
	}
	var ubos struct{ Items []map[string]any }
	status, b := call(t, "GET", p.URL+"/v1/applicants/kill-co/ubos", key, secret, nil)
	if status != 200 || json.Unmarshal(b, &ubos) != nil || len(ubos.Items) != rows {
		t.Fatalf("GET ubos: %d %s", status, b)
	}
	for n, r := range ubos.Items {
		want, acked := children[n]
		linked, _ := r["linkedApplicantId"].(string)
		if acked && linked != want {
			t.Errorf("row %d links child %q; an acknowledged spawn answered %s", n, linked, want)
		}
		if linked == "" {
			continue
		}
		child := mustCall("GET", fmt.Sprintf("/v1/applicants/%v", r["childExternalUserId"]), nil, 200)
		if child["id"] != linked {
			t.Errorf("row %d links %s, its child applicant is %v", n, linked, child["id"])
		}
	}
	txs := map[string]string{}
	completed := 0
	for _, x := range walk(t, p.URL, "/transactions?vaultId="+vault, key, secret) {
		txs[x["transactionId"].(string)] = x["status"].(string)
		if x["type"] == "InternalTransfer" && x["status"] == "Completed" {
			completed++
		}
	}
	for _, id := range transfers {
		if txs[id] != "Completed" {
			t.Errorf("acknowledged transfer %s is %q, want Completed", id, txs[id])
		}
	}
	for wallet, want := range map[string]int{from: 100000 - completed, to: completed} {
		b := mustCall("GET", "/wallets/"+wallet+"/balance", nil, 200)
		if !decimalIs(b["total"], want) || !decimalIs(b["available"], want) || !decimalIs(b["pending"], 0) {
			t.Errorf("wallet %s: %v, want total = available = %d, pending 0", wallet, b, want)
		}
	}
	deliveries := walk(t, p.URL, "/webhooks/deliveries?x=1", key, secret)
	mu.Lock()
	for _, d := range deliveries {
		if id := d["id"].(string); d["status"] != "delivered" || seen[id] == 0 {
			t.Errorf("delivery %s is %v, reached the receiver %d times", id, d["status"], seen[id])
		}
	}
	mu.Unlock()
	t.Logf("%d deliveries, all delivered", len(deliveries))

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
	st, err := store.Open(db, store.Options{OpenTimeout: time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Check(); err != nil {
		t.Errorf("bbolt check: %v", err)
	}
}

// decimalIs reports whether v, a decimal string, equals n.
func decimalIs(v any, n int) bool {
	s, _ := v.(string)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s == strconv.Itoa(n)
}
