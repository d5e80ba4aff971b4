package server_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
)

// benchClients is the number of concurrent HTTP clients of the benchmarks.
const benchClients = 32

// benchClient returns an HTTP client that keeps a connection per client.
func benchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: benchClients * 2, MaxIdleConnsPerHost: benchClients * 2}}
}

// runClients runs fn from benchClients goroutines until b.N calls are done.
func runClients(b *testing.B, fn func(c *http.Client, n int64) error) {
	c := benchClient()
	defer c.CloseIdleConnections()
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((benchClients + procs - 1) / procs)
	var seq atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := fn(c, seq.Add(1)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func (in *instance) send(c *http.Client, method, path string, body []byte, want int) error {
	req, err := http.NewRequest(method, in.URL+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("X-Api-Key", in.Key)
	req.Header.Set("X-Api-Secret", in.Secret)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	return nil
}

// BenchmarkCreateApplicant: POST /v1/applicants, each a durable commit of
// the applicant, its history entry and its outbox event.
func BenchmarkCreateApplicant(b *testing.B) {
	in := start(b)
	runClients(b, func(c *http.Client, n int64) error {
		body := fmt.Appendf(nil, `{"externalUserId":"bench-%d","firstName":"Ada","lastName":"Lovelace","dateOfBirth":"1990-04-01","nationality":"GBR","email":"ada@example.com"}`, n)
		return in.send(c, "POST", "/v1/applicants", body, http.StatusCreated)
	})
}

// BenchmarkGetApplicant: GET /v1/applicants/{id} over 1000 applicants.
func BenchmarkGetApplicant(b *testing.B) {
	in := start(b)
	c := benchClient()
	for i := 0; i < 1000; i++ {
		body := fmt.Appendf(nil, `{"externalUserId":"bench-%d","firstName":"Ada","lastName":"Lovelace","dateOfBirth":"1990-04-01","nationality":"GBR"}`, i)
		if err := in.send(c, "POST", "/v1/applicants", body, http.StatusCreated); err != nil {
			b.Fatal(err)
		}
	}
	runClients(b, func(c *http.Client, n int64) error {
		return in.send(c, "GET", fmt.Sprintf("/v1/applicants/bench-%d", n%1000), nil, http.StatusOK)
	})
}
