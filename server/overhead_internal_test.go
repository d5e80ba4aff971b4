package server

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// The per-request work the request log and the metrics add, measured
// alone: compare with BenchmarkReadInProcess (the whole of a read).

func overheadServer(b *testing.B) *Server {
	st, err := store.Open(filepath.Join(b.TempDir(), "o.db"), store.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return New(st, nil, Config{}, slog.New(slog.DiscardHandler))
}

// BenchmarkOverheadRequestLog: marking a call, keeping a 700-byte answer
// as it is written and recording the entry.
func BenchmarkOverheadRequestLog(b *testing.B) {
	s := overheadServer(b)
	body := bytes.Repeat([]byte("x"), 700)
	r := httptest.NewRequest("GET", "/vaults/0190c1d2-aaaa-7bbb-8ccc-123456789abc", nil)
	cred := store.Credential{Key: "sbx_key", Environment: store.Sandbox}
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK, start: time.Now()}
		capture(rec, r, cred)
		rec.keepResponse(body)
		s.recordRequest(rec, r, "GET", "0190c1d2-aaaa-7bbb-8ccc-123456789abd")
	}
}

// BenchmarkOverheadMetrics: counting a request and observing its latency.
func BenchmarkOverheadMetrics(b *testing.B) {
	s := overheadServer(b)
	b.ReportAllocs()
	for b.Loop() {
		s.metrics.observe("/vaults/:id", "GET", 200, 150*time.Microsecond)
	}
}
