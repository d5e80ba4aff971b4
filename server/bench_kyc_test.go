package server_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// kycBenchClients is the number of concurrent HTTP clients of the benchmarks.
const kycBenchClients = 32

// benchClient returns an HTTP client that keeps a connection per client.
func kycBenchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: kycBenchClients * 2, MaxIdleConnsPerHost: kycBenchClients * 2}}
}

// kycClients runs fn from kycBenchClients goroutines until b.N calls are done.
func kycClients(b *testing.B, fn func(c *http.Client, n int64) error) {
	c := kycBenchClient()
	defer c.CloseIdleConnections()
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((kycBenchClients + procs - 1) / procs)
	var seq atomic.Int64
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := fn(c, seq.Add(1)); err != nil {
				b.Error(err)
				return
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
}

func (in *instance) kycSend(c *http.Client, method, path string, body []byte, want int) error {
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
	kycClients(b, func(c *http.Client, n int64) error {
		body := fmt.Appendf(nil, `{"externalUserId":"bench-%d","firstName":"Ada","lastName":"Lovelace","dateOfBirth":"1990-04-01","nationality":"GBR","email":"ada@example.com"}`, n)
		return in.kycSend(c, "POST", "/v1/applicants", body, http.StatusCreated)
	})
}

// BenchmarkGetApplicant: GET /v1/applicants/{id} over 1000 applicants.
func BenchmarkGetApplicant(b *testing.B) {
	in := start(b)
	c := kycBenchClient()
	for i := 0; i < 1000; i++ {
		body := fmt.Appendf(nil, `{"externalUserId":"bench-%d","firstName":"Ada","lastName":"Lovelace","dateOfBirth":"1990-04-01","nationality":"GBR"}`, i)
		if err := in.kycSend(c, "POST", "/v1/applicants", body, http.StatusCreated); err != nil {
			b.Fatal(err)
		}
	}
	kycClients(b, func(c *http.Client, n int64) error {
		return in.kycSend(c, "GET", fmt.Sprintf("/v1/applicants/bench-%d", n%1000), nil, http.StatusOK)
	})
}

// BenchmarkKYCAuthFloor is the floor of every authenticated API read: GET
// /v1/webhooks/events/catalog, which authenticates, logs and answers a
// constant body without a db read of its own.
func BenchmarkKYCAuthFloor(b *testing.B) {
	in := start(b)
	kycClients(b, func(c *http.Client, n int64) error {
		return in.kycSend(c, "GET", "/v1/webhooks/events/catalog", nil, http.StatusOK)
	})
}
