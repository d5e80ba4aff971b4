package server_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/julienschmidt/httprouter"
	bolt "go.etcd.io/bbolt"
)

// benchClients is the number of concurrent HTTP clients of every benchmark.
const benchClients = 32

// benchClient is an HTTP client with room for every concurrent client's
// connection, so a benchmark measures the server, not connection setup.
func benchClient(b *testing.B) *http.Client {
	c := &http.Client{Transport: &http.Transport{MaxIdleConns: 2 * benchClients, MaxIdleConnsPerHost: 2 * benchClients}}
	b.Cleanup(c.CloseIdleConnections)
	return c
}

// hammer runs send from benchClients goroutines until b.N requests are done
// and reports requests per second. send returns the status it got; any
// status other than want fails the benchmark.
func hammer(b *testing.B, want int, send func(c *http.Client, i int) (int, error)) {
	c := benchClient(b)
	var n, bad atomic.Int64
	var firstErr atomic.Value
	b.SetParallelism((benchClients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			status, err := send(c, int(n.Add(1)))
			if err != nil || status != want {
				if bad.Add(1) == 1 {
					firstErr.Store(strconv.Itoa(status) + " " + errString(err))
				}
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if bad.Load() > 0 {
		b.Fatalf("%d requests failed; first: %v", bad.Load(), firstErr.Load())
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// call sends one request and drains the answer.
func call(c *http.Client, req *http.Request) (int, error) {
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// bareDB opens a bbolt file the way the store does, with one bucket.
func bareDB(b *testing.B) *bolt.DB {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "bare.db"), 0o600, &bolt.Options{Timeout: time.Second, NoFreelistSync: true})
	if err != nil {
		b.Fatal(err)
	}
	db.MaxBatchDelay = time.Millisecond
	b.Cleanup(func() { db.Close() })
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists([]byte("items"))
		return err
	}); err != nil {
		b.Fatal(err)
	}
	return db
}

// BenchmarkBareBatchedWrite is the floor for write endpoints: an httprouter
// handler that stores each request body under a fresh uuid with one
// bolt.DB.Batch write (durable, group-committed) and answers 201.
func BenchmarkBareBatchedWrite(b *testing.B) {
	db := bareDB(b)
	r := httprouter.New()
	r.POST("/items", func(w http.ResponseWriter, req *http.Request, _ httprouter.Params) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		id := uuid.NewString()
		if err := db.Batch(func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("items")).Put([]byte(id), body)
		}); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"id":"` + id + `"}`))
	})
	srv := httptest.NewServer(r)
	defer srv.Close()
	body := []byte(`{"type":"InternalTransfer","amount":"0.01"}`)
	hammer(b, http.StatusCreated, func(c *http.Client, _ int) (int, error) {
		req, _ := http.NewRequest("POST", srv.URL+"/items", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		return call(c, req)
	})
}

// BenchmarkBarePointRead is the floor for read endpoints: an httprouter
// handler that answers one bbolt point read.
func BenchmarkBarePointRead(b *testing.B) {
	db := bareDB(b)
	ids := make([]string, 1000)
	value := bytes.Repeat([]byte("x"), 900) // about a transaction record
	if err := db.Update(func(tx *bolt.Tx) error {
		for i := range ids {
			ids[i] = uuid.NewString()
			if err := tx.Bucket([]byte("items")).Put([]byte(ids[i]), value); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	r := httprouter.New()
	r.GET("/items/:id", func(w http.ResponseWriter, req *http.Request, ps httprouter.Params) {
		var out []byte
		db.View(func(tx *bolt.Tx) error {
			out = bytes.Clone(tx.Bucket([]byte("items")).Get([]byte(ps.ByName("id"))))
			return nil
		})
		if out == nil {
			http.NotFound(w, req)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(out)
	})
	srv := httptest.NewServer(r)
	defer srv.Close()
	hammer(b, http.StatusOK, func(c *http.Client, i int) (int, error) {
		req, _ := http.NewRequest("GET", srv.URL+"/items/"+ids[i%len(ids)], nil)
		return call(c, req)
	})
}
