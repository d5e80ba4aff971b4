package server_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// scrape reads GET /metrics (no credential) and returns the samples by
// their name and labels as written.
func (in *instance) scrape() map[string]float64 {
	in.t.Helper()
	r := doRequest(in.t, "GET", in.URL+"/metrics", nil)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
		in.t.Fatalf("GET /metrics: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(r.Body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			in.t.Fatalf("metrics line %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

// TestMetrics: after real traffic, /metrics counts requests by route
// pattern (never the raw path), method and status class, with latency
// histograms, and reports the db size, the schedule lag and Go runtime
// metrics.
func TestMetrics(t *testing.T) {
	t.Parallel()
	in := boot(t, func(o *bootOptions) { o.parked = true }).instance // the schedule keeps what falls due
	in.createApplicant("m-1", "Lovelace")
	in.createApplicant("m-2", "Hopper")
	in.expect(404, "GET", "/v1/applicants/nobody", nil)
	in.expect(200, "GET", "/v1/applicants/m-1", nil)
	in.expect(200, "GET", "/v1/applicants/m-2", nil)
	in.expect(404, "GET", "/no/such/route", nil)
	w := in.wallet(in.vault("m"), "ETH")
	in.expect(201, "POST", "/sandbox/deposits", map[string]any{"walletId": w.WalletID, "amount": "1"}) // its next step falls due in 3s
	in.Clock.Advance(stepDelay + 10*time.Second)

	m := in.scrape()
	for series, want := range map[string]float64{
		`complybox_http_requests_total{method="POST",route="/v1/applicants",status="2xx"}`:                  2,
		`complybox_http_requests_total{method="GET",route="/v1/applicants/:id",status="2xx"}`:               2,
		`complybox_http_requests_total{method="GET",route="/v1/applicants/:id",status="4xx"}`:               1,
		`complybox_http_requests_total{method="GET",route="unmatched",status="4xx"}`:                        1,
		`complybox_http_request_duration_seconds_count{method="GET",route="/v1/applicants/:id"}`:            3,
		`complybox_http_request_duration_seconds_bucket{method="GET",route="/v1/applicants/:id",le="+Inf"}`: 3,
		`complybox_http_requests_total{method="POST",route="/vaults/:id/wallets",status="2xx"}`:             1,
		`complybox_schedule_lag_seconds`: 10,
	} {
		if got, ok := m[series]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
	for name := range m {
		if strings.Contains(name, "m-1") || strings.Contains(name, "nobody") {
			t.Errorf("a raw path is a label: %s", name)
		}
	}
	if m["complybox_db_size_bytes"] < 32<<10 {
		t.Errorf("complybox_db_size_bytes = %v", m["complybox_db_size_bytes"])
	}
	for _, re := range []string{`^go_goroutines$`, `^go_memstats_heap_alloc_bytes$`, `^process_cpu_seconds_total$`} {
		found := false
		for name := range m {
			found = found || regexp.MustCompile(re).MatchString(name)
		}
		if !found {
			t.Errorf("no series %s", re)
		}
	}
	// The scrape itself is counted at the next scrape.
	if got := in.scrape()[`complybox_http_requests_total{method="GET",route="/metrics",status="2xx"}`]; got != 1 {
		t.Errorf("GET /metrics counted %v times", got)
	}
}
