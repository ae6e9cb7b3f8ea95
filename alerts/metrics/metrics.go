// Package metrics is jobtriage's one Prometheus vocabulary, through the
// official client library: the watcher's endpoint (/metrics in the text
// exposition format, on a registry of its own: nothing is registered
// globally, and /healthz), and WriteText, the same families of a single
// check for node_exporter's textfile collector.
//
// The watcher reports every tick: Succeeded with what it read, or Failed.
// Queue gauges are the last successful check's values, produced at scrape
// time, so a queue that is gone from the database is gone from /metrics too.
// It reads no clock by itself (Options.Now) and never touches a database.
package metrics

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// Namespace prefixes every metric.
const Namespace = "jobtriage"

// Queue states of jobtriage_queue_jobs: every job of a queue is in exactly
// one, so they sum to the queue's size.
const (
	StatePending  = "pending"
	StateDelayed  = "delayed"
	StateReserved = "reserved"
)

// Paths served by Handler.
const (
	PathMetrics = "/metrics"
	PathHealth  = "/healthz"
)

// Build is what jobtriage_build_info says.
type Build struct {
	Version, Commit, GoVersion string
}

// Options configure an Exporter.
type Options struct {
	Build Build
	// Contexts adds a "context" label to every per-app metric (the watcher
	// runs in a context, or watches several).
	Contexts bool
	// Stale is how old the last successful check of an app may be before
	// /healthz answers 503 (the watcher's --blind-after).
	Stale time.Duration
	Now   func() time.Time
}

// Queue is one queue as a check saw it.
type Queue struct {
	Connection, Queue                 string
	Pending, Delayed, Reserved, Stuck int64
	OldestPendingAge                  time.Duration
	FailedWindow                      int64
	// Paused: workers skip the queue (queue:pause), so its backlog is
	// held on purpose.
	Paused bool
}

// Check is what one successful tick read.
type Check struct {
	At time.Time
	// Holding: this watcher holds the notifier lock and read the queues;
	// a watcher standing by reads nothing but the lock.
	Holding bool
	Queues  []Queue
	// Window and FailedWindow: failures of the monitored queues within
	// the window.
	Window       time.Duration
	FailedWindow int64
	// Firing is the number of alerts firing.
	Firing int
}

// app is what the exporter keeps of one app (context).
type app struct {
	since     time.Time // registered: /healthz counts from here until a check succeeds
	lastOK    time.Time
	lastCheck *Check
}

// Exporter serves one or more apps' metrics.
type Exporter struct {
	opts Options
	// check holds the families of a check and the build info, which
	// WriteText writes too; reg the watcher's own. /metrics serves both.
	check, reg *prometheus.Registry

	checkErrors *prometheus.CounterVec
	checks      *prometheus.CounterVec
	failed      *prometheus.CounterVec
	lock        *prometheus.GaugeVec

	mu   sync.Mutex
	apps map[string]*app

	descJobs, descStuck, descAge, descQueueFailed        *prometheus.Desc
	descFailedWindow, descWindow, descLastOK, descFiring *prometheus.Desc
	descPaused                                           *prometheus.Desc
}

// New builds an exporter and its registry: the client library's Go runtime
// and process collectors, the build info, and jobtriage's metrics.
func New(o Options) *Exporter {
	e := &Exporter{opts: o, check: prometheus.NewRegistry(), reg: prometheus.NewRegistry(), apps: map[string]*app{}}
	var app []string
	if o.Contexts {
		app = []string{"context"}
	}
	queue := append(append([]string(nil), app...), "connection", "queue")
	name := func(n string) string { return prometheus.BuildFQName(Namespace, "", n) }
	e.descJobs = prometheus.NewDesc(name("queue_jobs"),
		"Jobs in the jobs table by queue and state (pending: ready now; delayed: available later; reserved: taken by a worker). They sum to the queue's size.",
		append(append([]string(nil), queue...), "state"), nil)
	e.descStuck = prometheus.NewDesc(name("queue_stuck_jobs"),
		"Reserved jobs whose retry_after has passed (a worker will be handed them again).", queue, nil)
	e.descAge = prometheus.NewDesc(name("queue_oldest_pending_age_seconds"),
		"Seconds the oldest pending job of the queue has been available (0 when none is pending).", queue, nil)
	e.descQueueFailed = prometheus.NewDesc(name("queue_failed_jobs_window"),
		"Failed jobs of the queue within the window (jobtriage_failed_jobs_window_seconds).", queue, nil)
	e.descPaused = prometheus.NewDesc(name("queue_paused"),
		"1 while workers skip the queue because it is paused (queue:pause, jobtriage pause), else 0.", queue, nil)
	e.descFailedWindow = prometheus.NewDesc(name("failed_jobs_window"),
		"Failed jobs of the monitored queues within the window.", app, nil)
	e.descWindow = prometheus.NewDesc(name("failed_jobs_window_seconds"),
		"The window the *_failed_jobs_window gauges count in.", app, nil)
	e.descLastOK = prometheus.NewDesc(name("last_check_success_timestamp_seconds"),
		"Unix time of the last check that read the database.", app, nil)
	e.lock = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "watch_lock_held",
		Help: "1 when this watcher holds the notifier lock (and reads the queues), 0 when another watcher does."}, app)
	e.descFiring = prometheus.NewDesc(name("alerts_firing"),
		"Alerts firing after the last check (of a single check: the thresholds it crossed).", app, nil)
	e.checkErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "check_errors_total",
		Help: "Checks that could not read the database."}, app)
	e.checks = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "checks_total",
		Help: "Checks run, successful or not."}, app)
	e.failed = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "failed_jobs_total",
		Help: "Failed jobs the watcher has read since it started (new failed_jobs rows, by connection and queue)."},
		queue)
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "build_info",
		Help: "Always 1; the labels say which jobtriage runs."}, []string{"version", "commit", "goversion"})
	build.WithLabelValues(o.Build.Version, o.Build.Commit, o.Build.GoVersion).Set(1)
	e.check.MustRegister(build, snapshotCollector{e})
	e.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		e.checkErrors, e.checks, e.failed, e.lock)
	return e
}

// Registry gathers every family /metrics serves (tests gather from it).
func (e *Exporter) Registry() prometheus.Gatherer { return prometheus.Gatherers{e.check, e.reg} }

// WriteText writes one check in the text exposition format, for
// node_exporter's textfile collector (monitor --format prometheus): the
// families /metrics serves of a check, under the same names, and the build
// info. The watcher's own families (its lock and counters, the Go runtime
// and process) are not there: a single check has none of them. c.Holding
// must be true for the queues to be written.
func WriteText(w io.Writer, b Build, c Check) error {
	e := New(Options{Build: b, Now: func() time.Time { return c.At }})
	e.Succeeded("", c)
	mfs, err := e.check.Gather()
	for _, mf := range mfs {
		if err == nil {
			_, err = expfmt.MetricFamilyToText(w, mf)
		}
	}
	return err
}

// appLabels is the label values of an app's series.
func (e *Exporter) appLabels(context string) []string {
	if !e.opts.Contexts {
		return nil
	}
	return []string{label(context)}
}

// label makes a label value of database text: valid UTF-8, without
// characters a terminal would act on (the text format escapes only
// backslash, quote and newline).
func label(s string) string {
	return strings.Map(func(r rune) rune {
		if _, _, ok := sanitize.Inert(string(r)); ok || r == '\n' {
			return r
		}
		return '\uFFFD'
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

func (e *Exporter) get(context string) *app {
	a, ok := e.apps[context]
	if !ok {
		a = &app{since: e.opts.Now()}
		e.apps[context] = a
		// The counters exist from the start, at 0.
		e.checkErrors.WithLabelValues(e.appLabels(context)...)
		e.checks.WithLabelValues(e.appLabels(context)...)
	}
	return a
}

// Register makes an app known before its first check: /healthz counts its
// blindness from now.
func (e *Exporter) Register(context string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(context)
}

// Succeeded records a check that read the database (or, standing by, the
// lock).
func (e *Exporter) Succeeded(context string, c Check) {
	e.mu.Lock()
	defer e.mu.Unlock()
	a := e.get(context)
	a.lastOK, a.lastCheck = c.At, &c
	e.checks.WithLabelValues(e.appLabels(context)...).Inc()
	e.lock.WithLabelValues(e.appLabels(context)...).Set(boolFloat(c.Holding))
}

// Failed records a check that could not read the database. The last
// successful check's gauges stay; its timestamp says how old they are.
func (e *Exporter) Failed(context string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(context)
	e.checkErrors.WithLabelValues(e.appLabels(context)...).Inc()
	e.checks.WithLabelValues(e.appLabels(context)...).Inc()
}

// CountFailure counts one new failed job.
func (e *Exporter) CountFailure(context, connection, queue string) {
	labels := append(e.appLabels(context), label(connection), label(queue))
	e.failed.WithLabelValues(labels...).Inc()
}

// snapshotCollector produces the gauges of every app's last check at
// scrape time.
type snapshotCollector struct{ e *Exporter }

// Describe sends the descriptors of what Collect produces now: the families
// vary with the checks, so the collector is unchecked until the first one.
func (s snapshotCollector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(s, ch) }

func (s snapshotCollector) Collect(ch chan<- prometheus.Metric) {
	e := s.e
	e.mu.Lock()
	defer e.mu.Unlock()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		if m, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, v, labels...); err == nil {
			ch <- m
		}
	}
	for context, a := range e.apps {
		al := e.appLabels(context)
		if a.lastCheck == nil {
			continue
		}
		c := a.lastCheck
		gauge(e.descLastOK, float64(a.lastOK.UnixMilli())/1e3, al...)
		gauge(e.descFiring, float64(c.Firing), al...)
		if !c.Holding {
			continue // standing by: no queue was read
		}
		gauge(e.descFailedWindow, float64(c.FailedWindow), al...)
		gauge(e.descWindow, c.Window.Seconds(), al...)
		for _, q := range c.Queues {
			ql := append(append([]string(nil), al...), label(q.Connection), label(q.Queue))
			gauge(e.descJobs, float64(q.Pending), append(ql, StatePending)...)
			gauge(e.descJobs, float64(q.Delayed), append(ql, StateDelayed)...)
			gauge(e.descJobs, float64(q.Reserved), append(ql, StateReserved)...)
			gauge(e.descStuck, float64(q.Stuck), ql...)
			gauge(e.descAge, q.OldestPendingAge.Seconds(), ql...)
			gauge(e.descQueueFailed, float64(q.FailedWindow), ql...)
			gauge(e.descPaused, boolFloat(q.Paused), ql...)
		}
	}
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// readHeaderTimeout bounds a scrape's request headers (a client that never
// finishes them must not hold a connection).
const readHeaderTimeout = 5 * time.Second

// Serve listens on addr and serves Handler until stop is called; stop lets
// a scrape in flight finish within grace. It returns the address bound (addr
// may ask for port 0); a port that cannot be bound is an error at once.
func (e *Exporter) Serve(ctx context.Context, addr string, grace time.Duration) (bound string, stop func(), err error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: e.Handler(), ReadHeaderTimeout: readHeaderTimeout}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln) // ends with http.ErrServerClosed
	}()
	return ln.Addr().String(), func() {
		sctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-done
	}, nil
}

// Handler serves PathMetrics, and PathHealth: a line per app, 503 unless
// every app's last successful check (or its registration, before the
// first) is within Stale.
func (e *Exporter) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(PathMetrics, promhttp.HandlerFor(e.Registry(), promhttp.HandlerOpts{Registry: e.reg}))
	mux.HandleFunc(PathHealth, func(w http.ResponseWriter, _ *http.Request) {
		now := e.opts.Now()
		healthy := true
		var b strings.Builder
		e.mu.Lock()
		for _, name := range slices.Sorted(maps.Keys(e.apps)) {
			since, what := e.apps[name].lastOK, "last successful check"
			if since.IsZero() {
				since, what = e.apps[name].since, "no successful check yet, started"
			}
			age, state := max(now.Sub(since), 0), "ok"
			if age >= e.opts.Stale {
				state, healthy = "blind", false
			}
			if e.opts.Contexts {
				b.WriteString("context " + label(name) + ": ")
			}
			fmt.Fprintf(&b, "%s: %s %s ago\n", state, what, age.Truncate(time.Second))
		}
		if len(e.apps) == 0 {
			b.WriteString("starting\n")
		}
		e.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !healthy {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_, _ = w.Write([]byte(b.String()))
	})
	return mux
}
