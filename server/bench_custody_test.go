package server_test

import (
	"bytes"
	"net/http"
	"sync"
	"testing"

	"github.com/complybox/complybox/store"
)

// BenchmarkCreateTransaction measures POST /transactions: each request is an
// InternalTransfer committed durably with its transaction.created and
// balance.updated events and its simulator step (group commit).
func BenchmarkCreateTransaction(b *testing.B) {
	in := start(b)
	src, dst := in.wallet(in.vault("a"), "USDC"), in.wallet(in.vault("b"), "USDC")
	in.fund(src.WalletID, "100000000")
	body := []byte(`{"type":"InternalTransfer","sourceWalletId":"` + src.WalletID + `","destinationWalletId":"` + dst.WalletID + `","amount":"0.01"}`)
	hammer(b, http.StatusCreated, func(c *http.Client, _ int) (int, error) {
		req, _ := http.NewRequest("POST", in.URL+"/transactions", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Api-Key", in.Key)
		req.Header.Set("X-Api-Secret", in.Secret)
		return call(c, req)
	})
}

// BenchmarkGetTransaction measures GET /transactions/{id} over 1000
// transactions.
func BenchmarkGetTransaction(b *testing.B) {
	in := start(b)
	src, dst := in.wallet(in.vault("a"), "USDC"), in.wallet(in.vault("b"), "USDC")
	in.fund(src.WalletID, "100000000")
	ids := make([]string, 1000)
	var wg sync.WaitGroup
	errs := make(chan error, len(ids))
	for i := range ids { // concurrent creates share commits: a quick setup
		wg.Add(1)
		go func() {
			defer wg.Done()
			x, err := in.Store.CreateTransaction(store.Sandbox, store.TransactionInput{Type: ptr("InternalTransfer"),
				SourceWalletID: &src.WalletID, DestinationWalletID: &dst.WalletID, Amount: ptr("0.01"), Note: ptr("benchmark")}, store.Idem{})
			ids[i] = x.TransactionID
			errs <- err
		}()
	}
	wg.Wait()
	for range ids {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	hammer(b, http.StatusOK, func(c *http.Client, i int) (int, error) {
		req, _ := http.NewRequest("GET", in.URL+"/transactions/"+ids[i%len(ids)], nil)
		req.Header.Set("X-Api-Key", in.Key)
		req.Header.Set("X-Api-Secret", in.Secret)
		return call(c, req)
	})
}

func ptr(s string) *string { return &s }
