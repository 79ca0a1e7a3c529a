package daemon

import (
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are one process's Prometheus metrics; each role fills those
// that are its own.
type Metrics struct {
	// Registry holds them (served at /metrics).
	Registry *prometheus.Registry
	// Dispatchers is the dispatcher count per broker (node).
	Dispatchers *prometheus.GaugeVec
	// Refused counts the registrations the event service did not take
	// (node).
	Refused prometheus.Counter
	// DrainsStarted and DrainsCompleted count drain sessions
	// (coordinator).
	DrainsStarted, DrainsCompleted prometheus.Counter
	// DrainSeconds is the drain latency, session start to completion
	// (coordinator).
	DrainSeconds prometheus.Histogram
}

// NewMetrics returns the metrics, registered in a new registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		Dispatchers: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "drainproof_dispatchers",
			Help: "Dispatchers counted by each event broker (the early count)."}, []string{"broker"}),
		Refused: prometheus.NewCounter(prometheus.CounterOpts{Name: "drainproof_registrations_refused_total",
			Help: "Registrations the event service did not take (admission closed, not reusable)."}),
		DrainsStarted: prometheus.NewCounter(prometheus.CounterOpts{Name: "drainproof_drains_started_total",
			Help: "Drain sessions started."}),
		DrainsCompleted: prometheus.NewCounter(prometheus.CounterOpts{Name: "drainproof_drains_completed_total",
			Help: "Drain sessions completed (C8)."}),
		DrainSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "drainproof_drain_seconds",
			Help: "Drain latency, from the session's start to its completion.", Buckets: prometheus.ExponentialBuckets(0.05, 2, 12)}),
	}
	m.Registry.MustRegister(m.Dispatchers, m.Refused, m.DrainsStarted, m.DrainsCompleted, m.DrainSeconds)
	return m
}

// HTTP serves /metrics and /healthz (200 "ok" while healthy() is true,
// 503 otherwise) on l until Close.
type HTTP struct {
	srv  *http.Server
	done chan struct{}
}

// ServeHTTP starts the metrics and health endpoint on l.
func ServeHTTP(l net.Listener, m *Metrics, healthy func() bool) *HTTP {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if healthy() {
			_, _ = w.Write([]byte("ok\n"))
			return
		}
		http.Error(w, "not ready", http.StatusServiceUnavailable)
	})
	h := &HTTP{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		_ = h.srv.Serve(l)
	}()
	return h
}

// Close stops the endpoint and waits for it.
func (h *HTTP) Close() {
	_ = h.srv.Close()
	<-h.done
}

// clock is a role's clock: its protocol tick, milliseconds since it
// started (now), and the time of day (time). wall is time.Now but in a
// test, which sets its own (and start) to pin a time limit down.
type clock struct {
	start time.Time
	wall  func() time.Time
}

func newClock() clock { return clock{start: time.Now(), wall: time.Now} }

func (c clock) now() int64 { return c.wall().Sub(c.start).Milliseconds() }

func (c clock) time() time.Time { return c.wall() }

// flag is a one-way boolean.
type flag struct{ v atomic.Bool }

func (f *flag) set()      { f.v.Store(true) }
func (f *flag) get() bool { return f.v.Load() }
