package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// BenchmarkWithdrawalWebhookLive measures POST /transactions as complyperf
// drives it: Withdrawals from one wallet (all their balance.updated events
// share one entity), the custody webhook live at a local receiver that
// answers 200, the simulator off, the real clock. It reports how many
// webhooks had arrived when the load stopped.
//
// go test -run '^$' -bench WithdrawalWebhookLive -benchtime 5s -cpuprofile /tmp/cpu.out ./server/
func BenchmarkWithdrawalWebhookLive(b *testing.B) {
	in := boot(b, func(o *bootOptions) {
		o.now = time.Now
		o.settings.Chain.AutoAdvance = false
		o.dispatch.AttemptTimeout = 5 * time.Second
	})
	var arrived atomic.Int64
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		arrived.Add(1)
	}))
	b.Cleanup(rc.Close)
	in.expect(200, "PUT", "/webhooks/outbound", map[string]any{"url": rc.URL})
	w := in.wallet(in.vault("perf"), "ETH")
	in.fund(w.WalletID, "1000000")
	body, _ := json.Marshal(map[string]any{"type": "Withdrawal", "sourceWalletId": w.WalletID,
		"destinationAddress": "0x00112233445566778899aabbccddeeff00112233", "amount": "0.000001"})
	before := arrived.Load()
	// How many operations share a commit (the group commit, store/commit.go).
	var commits, ops, pages atomic.Int64
	in.Store.OnCommit(func(c store.CommitStats) { commits.Add(1); ops.Add(int64(c.Group)); pages.Add(int64(c.Pages)) })
	cpu0 := processCPU()
	hammer(b, http.StatusCreated, func(c *http.Client, _ int) (int, error) {
		req, _ := http.NewRequest("POST", in.URL+"/transactions", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Api-Key", in.Key)
		req.Header.Set("X-Api-Secret", in.Secret)
		return call(c, req)
	})
	b.ReportMetric(float64(arrived.Load()-before)/float64(b.N), "webhooks/op")
	b.ReportMetric(float64(commits.Load())/float64(b.N), "commits/op")
	b.ReportMetric(float64(ops.Load())/float64(max(commits.Load(), 1)), "ops/commit")
	// The B+tree pages each commit rewrote: about one leaf and its
	// branches per region of a tree it touched (docs/performance.md).
	b.ReportMetric(float64(pages.Load())/float64(max(commits.Load(), 1)), "pages/commit")
	// The whole process: server, dispatcher, load clients and receiver.
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	// And once every webhook of the load has arrived (transaction.created
	// and balance.updated per withdrawal), bounded at a minute.
	for deadline := time.Now().Add(time.Minute); arrived.Load()-before < 2*int64(b.N) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "drained-cpu-µs/op")
}

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
