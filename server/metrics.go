package server

import (
	"net/http"
	"time"

	"github.com/julienschmidt/httprouter"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/complybox/complybox/store"
)

// Metrics (SPEC §7): GET /metrics in the Prometheus text format, from a
// registry of the Server's own (two servers in one process never share
// one). It is unauthenticated, as Prometheus scrapers expect; bind the
// listener to a private address, or set [metrics] enabled = false, when
// the listener is public.

// metrics are the Server's Prometheus metrics.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec   // route, method, status class
	latency  *prometheus.HistogramVec // route, method

	attempts        *prometheus.CounterVec   // env, destination, outcome: success, http_error, error
	deliveries      *prometheus.CounterVec   // env, destination, outcome: delivered, retrying, dead
	attemptDuration *prometheus.HistogramVec // destination
	commitGroup     prometheus.Histogram     // operations per bbolt commit
	commitDuration  prometheus.Histogram     // seconds per bbolt commit
	commitPages     prometheus.Histogram     // pages written per bbolt commit
}

// attemptObserver is the dispatcher's hook for recorded delivery attempts
// (dispatch.Dispatcher.OnAttempt).
type attemptObserver interface {
	OnAttempt(fn func(store.Job, store.AttemptResult, string))
}

func newMetrics(st *store.Store, disp Dispatcher) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "complybox_http_requests_total",
			Help: "HTTP requests answered, by route pattern (unmatched for none), method and status class.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "complybox_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route pattern and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "method"}),
	}
	m.attempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "complybox_webhook_attempts_total",
		Help: "Webhook delivery attempts recorded, by environment, destination and outcome (success: 2xx; http_error: any other answer; error: no answer — timeout, connection, URL policy, no destination).",
	}, []string{"env", "destination", "outcome"})
	m.deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "complybox_webhook_deliveries_total",
		Help: "What each recorded attempt left its delivery in, by environment, destination and outcome (delivered, retrying: a next attempt is due, dead).",
	}, []string{"env", "destination", "outcome"})
	m.attemptDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "complybox_webhook_attempt_duration_seconds",
		Help:    "Time from sending a webhook attempt to the end of its answer, by destination.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"destination"})
	m.commitGroup = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "complybox_store_commit_group_size",
		Help:    "Operations carried by one bbolt commit of the group commit.",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256},
	})
	m.commitDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "complybox_store_commit_duration_seconds",
		Help:    "Time of one bbolt commit of the group commit: the operations, page writes and fsync.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
	})
	m.commitPages = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "complybox_store_commit_pages",
		Help:    "Pages one bbolt commit of the group commit wrote, its meta page included.",
		Buckets: []float64{2, 4, 8, 16, 32, 64, 128, 256, 512},
	})
	m.reg.MustRegister(m.requests, m.latency, m.attempts, m.deliveries, m.attemptDuration, m.commitGroup, m.commitDuration,
		m.commitPages, storeCollector{st}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	st.OnCommit(func(c store.CommitStats) {
		m.commitGroup.Observe(float64(c.Group))
		m.commitDuration.Observe(c.Took.Seconds())
		m.commitPages.Observe(float64(c.Pages))
	})
	if o, ok := disp.(attemptObserver); ok {
		o.OnAttempt(m.attempt)
	}
	return m
}

// attempt counts one recorded delivery attempt, which left its delivery
// in status: its effect is what the record committed, not what the
// dispatcher asked for (a manual retry during the round's last attempt
// leaves the delivery pending, retrying).
func (m *metrics) attempt(j store.Job, r store.AttemptResult, status string) {
	dest := ""
	if j.Delivery != nil {
		dest = j.Delivery.Destination
	}
	outcome := "error"
	switch {
	case r.Success:
		outcome = "success"
	case r.StatusCode != 0:
		outcome = "http_error"
	}
	effect := "retrying" // failed or pending: a next attempt is scheduled
	switch status {
	case store.DeliveryDelivered:
		effect = "delivered"
	case store.DeliveryDead:
		effect = "dead"
	}
	m.attempts.WithLabelValues(string(j.Env), dest, outcome).Inc()
	m.deliveries.WithLabelValues(string(j.Env), dest, effect).Inc()
	m.attemptDuration.WithLabelValues(dest).Observe(r.Duration.Seconds())
}

// statusClasses are the status label values, by status / 100.
var statusClasses = [...]string{"0xx", "1xx", "2xx", "3xx", "4xx", "5xx"}

// observe counts one answered request.
func (m *metrics) observe(route, method string, status int, d time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
	default:
		method = "other" // the label set stays bounded whatever clients send
	}
	class := "other"
	if i := status / 100; i >= 0 && i < len(statusClasses) {
		class = statusClasses[i]
	}
	m.requests.WithLabelValues(route, method, class).Inc()
	m.latency.WithLabelValues(route, method).Observe(d.Seconds())
}

// serveMetrics serves GET /metrics.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	return nil
}

// storeCollector reads the store's gauges at each scrape (store.Stats: O(1)).
type storeCollector struct{ st *store.Store }

var (
	descOutbox = prometheus.NewDesc("complybox_outbox_deliveries",
		"Deliveries the outbox holds, by environment, destination and status (pending, failed, delivered, dead).",
		[]string{"env", "destination", "status"}, nil)
	descDBSize      = prometheus.NewDesc("complybox_db_size_bytes", "Bytes of the bbolt db in use: its pages up to the high-water mark (the file itself may be up to one growth step, 16 MiB, larger).", nil, nil)
	descScheduleLag = prometheus.NewDesc("complybox_schedule_lag_seconds",
		"How far the schedule is behind: per environment, its clock minus its earliest due job; the larger of the two; 0 when nothing is overdue. A delivery being attempted stays due until its attempt ends, so a slow receiver shows here, up to attempt_timeout, while the dispatcher waits for it.", nil, nil)
)

func (storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descDBSize
	ch <- descScheduleLag
	ch <- descOutbox
}

func (c storeCollector) Collect(ch chan<- prometheus.Metric) {
	st, err := c.st.Stats()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descDBSize, err)
		return
	}
	lag := 0.0
	if !st.OldestDue.IsZero() && st.Now.After(st.OldestDue) {
		lag = st.Now.Sub(st.OldestDue).Seconds()
	}
	ch <- prometheus.MustNewConstMetric(descDBSize, prometheus.GaugeValue, float64(st.DBBytes))
	ch <- prometheus.MustNewConstMetric(descScheduleLag, prometheus.GaugeValue, lag)
	for _, d := range st.Outbox {
		ch <- prometheus.MustNewConstMetric(descOutbox, prometheus.GaugeValue, float64(d.Count), string(d.Env), d.Destination, d.Status)
	}
}
