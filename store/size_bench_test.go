package store_test

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// BenchmarkDeliveryBytes fills a db with 10,000 deliveries of a
// transaction-sized event, each with a failed and a successful attempt,
// and reports the bytes the db file grew by per delivery (its event,
// delivery record, attempts and indexes). Run it with
//
//	go test ./store -run '^$' -bench DeliveryBytes -benchtime 1x
func BenchmarkDeliveryBytes(b *testing.B) {
	for range b.N {
		s, clock := mustOpen(b, "", store.Options{})
		if _, err := s.SetWebhook(context.Background(), store.Sandbox, "http://127.0.0.1:9/hook", nil); err != nil {
			b.Fatal(err)
		}
		size := func() int64 {
			var n int64
			if err := s.Backup(io.Discard, func(sz int64) { n = sz }); err != nil {
				b.Fatal(err)
			}
			return n
		}
		before := size()
		const n, workers = 10000, 32
		data := map[string]any{"transactionId": "0190c2a4-7f3e-7b1a-9c2d-3e4f5a6b7c8d", "type": "Withdrawal",
			"status": "Submitted", "vaultId": "0190c2a4-7f3e-7b1a-9c2d-3e4f5a6b7c8e", "vaultName": "Treasury",
			"assetId": "0190c2a4-7f3e-7b1a-9c2d-3e4f5a6b7c8f", "assetSymbol": "ETH", "assetNetwork": "ethereum",
			"amount": "1.25", "sourceAddress": "0x52908400098527886E0F7030069857D2E4169EE7",
			"destinationAddress": "0x8617E340B3D01FA5F11F306F4090FD50E238070D", "networkFee": "0.0005", "feeCurrency": "ETH",
			"amountUSD": "4375", "feeUSD": "1.75", "createdAt": "2026-11-21T05:00:00.000Z"}
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < n; i += workers {
					if err := s.Enqueue(store.Sandbox, store.DestCustody, "transaction.created", "transaction", fmt.Sprintf("tx-%d", i), data); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		body := "upstream said no"
		for round := range 2 {
			done := 0
			for done < n {
				jobs, _, err := s.Due(clock.Now(), 500, nil)
				if err != nil {
					b.Fatal(err)
				}
				if len(jobs) == 0 {
					b.Fatalf("round %d: %d of %d due", round, done, n)
				}
				var wg sync.WaitGroup
				for _, j := range jobs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						r := store.AttemptResult{RequestURL: "http://127.0.0.1:9/hook", StatusCode: 200, Duration: time.Millisecond, At: clock.Now(), Success: true}
						if round == 0 {
							r = store.AttemptResult{RequestURL: "http://127.0.0.1:9/hook", StatusCode: 503, ResponseBody: &body,
								Error: "HTTP 503", Duration: time.Millisecond, At: clock.Now(), RetryAt: clock.Now()}
						}
						if _, err := s.RecordAttempt(j, r); err != nil {
							b.Error(err)
						}
					}()
				}
				wg.Wait()
				done += len(jobs)
			}
		}
		b.ReportMetric(float64(size()-before)/n, "bytes/delivery")
	}
}
