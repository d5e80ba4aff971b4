package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/complybox/complybox/dispatch"
)

// BenchmarkDelivery measures the enqueue→receiver path on the real clock
// with a local receiver, against a bare baseline in the same run:
//
//	Bare     32 senders POST signed bodies and acknowledge each 200 in bbolt
//	         through DB.Batch (MaxBatchDelay 1ms): deliveries/s.
//	Drain    b.N events committed through the API while the dispatcher is
//	         parked, then drained: events/s, and the ratio to Bare.
//	Latency  one POST /webhooks/outbound/test at a time: p50/p99 from the API
//	         call to the receiver's 200.
//	Loaded   32 clients POST /webhooks/outbound/test at once: events/s and
//	         p50/p99 from each API call to the receiver's 200.
//
// go test -run '^$' -bench Delivery -benchtime=3000x ./server/
func BenchmarkDelivery(b *testing.B) {
	var bare float64
	b.Run("Bare", func(b *testing.B) { bare = benchBare(b) })
	b.Run("Drain", func(b *testing.B) {
		rate := benchDrain(b)
		if bare > 0 {
			b.ReportMetric(rate/bare, "x-bare")
		}
	})
	b.Run("Latency", func(b *testing.B) { benchAPI(b, 1) })
	b.Run("Loaded", func(b *testing.B) { benchAPI(b, 32) })
}

// benchReceiver answers 200 and reports each delivery id with the time it
// answered.
type benchReceiver struct {
	*httptest.Server
	done chan arrival
}

type arrival struct {
	id string
	at time.Time
}

func newBenchReceiver(b *testing.B) *benchReceiver {
	rc := &benchReceiver{done: make(chan arrival, 1<<16)}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
		rc.done <- arrival{r.Header.Get("X-Webhook-Id"), time.Now()}
	}))
	b.Cleanup(rc.Close)
	return rc
}

// wait collects n arrivals, failing after 30s.
func (rc *benchReceiver) wait(b *testing.B, n int, each func(arrival)) {
	timeout := time.After(30 * time.Second)
	for range n {
		select {
		case a := <-rc.done:
			if each != nil {
				each(a)
			}
		case <-timeout:
			b.Fatalf("deliveries still missing after 30s")
		}
	}
}

// benchClient is a keep-alive client sized for 32 concurrent callers.
func deliveryBenchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64}}
}

func benchBoot(b *testing.B, parked bool) (*node, *benchReceiver) {
	in := boot(b, func(o *bootOptions) {
		o.now = time.Now
		o.parked = parked
		o.dispatch.AttemptTimeout = 5 * time.Second
		o.dispatch.Concurrency = 32
	})
	rc := newBenchReceiver(b)
	body, _ := json.Marshal(map[string]string{"url": rc.URL})
	if r := doRequest(b, "PUT", in.URL+"/webhooks/outbound", body, "X-Api-Key", in.Key, "X-Api-Secret", in.Secret); r.Status != 200 {
		b.Fatalf("configure: %d %s", r.Status, r.Body)
	}
	return in, rc
}

// fire calls POST /webhooks/outbound/test and returns the delivery id.
func fire(b *testing.B, c *http.Client, in *node) string {
	req, _ := http.NewRequest("POST", in.URL+"/webhooks/outbound/test", nil)
	req.Header.Set("X-Api-Key", in.Key)
	req.Header.Set("X-Api-Secret", in.Secret)
	resp, err := c.Do(req)
	if err != nil {
		b.Error(err)
		return ""
	}
	defer resp.Body.Close()
	var out struct{ DeliveryID string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 202 {
		b.Errorf("test event: %d %v", resp.StatusCode, err)
	}
	return out.DeliveryID
}

func benchDrain(b *testing.B) float64 {
	in, rc := benchBoot(b, true)
	c := deliveryBenchClient()
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				fire(b, c, in)
			}
		}()
	}
	wg.Wait()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	b.ResetTimer()
	start := time.Now()
	go func() { in.Disp.Run(ctx); close(done) }()
	rc.wait(b, b.N, nil)
	elapsed := time.Since(start)
	b.StopTimer()
	cancel()
	<-done
	rate := float64(b.N) / elapsed.Seconds()
	b.ReportMetric(rate, "events/s")
	return rate
}

func benchAPI(b *testing.B, clients int) {
	in, rc := benchBoot(b, false)
	c := deliveryBenchClient()
	var mu sync.Mutex
	sent := make(map[string]time.Time, b.N)
	arrived := make(map[string]time.Time, b.N)
	var wg sync.WaitGroup
	var next atomic.Int64
	b.ResetTimer()
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				id := fire(b, c, in)
				mu.Lock()
				sent[id] = t0
				mu.Unlock()
			}
		}()
	}
	rc.wait(b, b.N, func(a arrival) {
		mu.Lock()
		if _, dup := arrived[a.id]; dup {
			b.Errorf("delivery %s arrived twice", a.id)
		}
		arrived[a.id] = a.at
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	wg.Wait()
	lat := make([]float64, 0, b.N)
	for id, t0 := range sent {
		at, ok := arrived[id]
		if !ok {
			b.Fatalf("delivery %s never arrived", id)
		}
		lat = append(lat, float64(at.Sub(t0))/float64(time.Millisecond))
	}
	slices.Sort(lat)
	b.ReportMetric(lat[len(lat)/2], "p50-ms")
	b.ReportMetric(lat[min(len(lat)-1, len(lat)*99/100)], "p99-ms")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
}

// benchBare is the baseline: 32 senders each sign a body, POST it to a
// local receiver and acknowledge the 200 in bbolt through DB.Batch with a
// 1ms MaxBatchDelay. It returns deliveries per second.
func benchBare(b *testing.B) float64 {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "bare.db"), 0o600, &bolt.Options{NoFreelistSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.MaxBatchDelay = time.Millisecond
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("acks")); return err }); err != nil {
		b.Fatal(err)
	}
	rc := newBenchReceiver(b)
	go func() {
		for range rc.done {
		}
	}()
	c := deliveryBenchClient()
	const secret = "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYq="
	var wg sync.WaitGroup
	var next atomic.Int64
	b.ResetTimer()
	start := time.Now()
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				id := strconv.FormatInt(i, 10)
				body := []byte(fmt.Sprintf(`{"id":"%s","eventType":"webhook.test","entityType":"webhook","entityId":"%s","timestamp":"%s","data":{"message":"bare"}}`, id, id, time.Now().UTC().Format(time.RFC3339Nano)))
				req, _ := http.NewRequest("POST", rc.URL, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Webhook-Signature", dispatch.Sign(secret, body))
				resp, err := c.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				err = db.Batch(func(tx *bolt.Tx) error {
					return tx.Bucket([]byte("acks")).Put([]byte(id), []byte(strconv.Itoa(resp.StatusCode)))
				})
				if err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	rate := float64(b.N) / elapsed.Seconds()
	b.ReportMetric(rate, "events/s")
	return rate
}
