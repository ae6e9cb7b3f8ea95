package cmd

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// scrape fetches a URL: /metrics parsed by the Prometheus text-format
// parser, or the body of anything else.
func scrape(t *testing.T, url string) (int, map[string]*dto.MetricFamily, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if !strings.HasSuffix(url, "/metrics") {
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, nil, string(b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mf, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics is not the Prometheus text format: %v", err)
	}
	return resp.StatusCode, mf, ""
}

// sample is the value of family name's series whose labels include want.
func sample(mf map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f, ok := mf[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		if m.Counter != nil {
			return m.Counter.GetValue(), true
		}
		return m.Gauge.GetValue(), true
	}
	return 0, false
}

// dbCounts is what the jobs table holds for a queue at now, counted here
// with SQL of the test's own: the reference /metrics is checked against.
func dbCounts(t *testing.T, s *sqlstore.Store, queue string, now time.Time) (pending, delayed, reserved int64) {
	t.Helper()
	db := s.DB()
	count := func(where string, args ...any) int64 {
		var n int64
		if err := db.Get(&n, db.Rebind("SELECT COUNT(*) FROM jobs WHERE queue = ? AND "+where), append([]any{queue}, args...)...); err != nil {
			t.Fatal(err)
		}
		return n
	}
	return count("reserved_at IS NULL AND available_at <= ?", now.Unix()),
		count("reserved_at IS NULL AND available_at > ?", now.Unix()),
		count("reserved_at IS NOT NULL")
}

// TestWatchServesMetrics: monitor --watch --listen serves /metrics, which
// the Prometheus text parser reads, with the values in the database; and
// /healthz.
func TestWatchServesMetrics(t *testing.T) {
	dsn, s := monitorDB(t)
	h := newHarness(t, false)
	h.f.Conn.DSN = dsn
	var addr string
	var mf map[string]*dto.MetricFamily
	var health string
	var healthCode int
	var pending, delayed, reserved int64
	steps := []func(now time.Time){
		func(now time.Time) {
			// Two new failures: read by the next tick, counted by
			// jobtriage_failed_jobs_total.
			sqltest.InsertFailed(t, s, monitorFailure(10, "emails", `App\Jobs\B`, now.Add(-time.Second)),
				monitorFailure(11, "emails", `App\Jobs\B`, now.Add(-time.Second)))
		},
		quietStep,
		func(now time.Time) {
			// After the tick at +30 s.
			pending, delayed, reserved = dbCounts(t, s, "default", testNow.Add(30*time.Second))
			_, mf, _ = scrape(t, "http://"+addr+"/metrics")
			healthCode, _, health = scrape(t, "http://"+addr+"/healthz")
		},
	}
	code := watchHarnessWith(t, h, []string{"--watch", "--interval", "15s", "--window", "60s", "--listen", "127.0.0.1:0"},
		func(o *MonitorOptions) { o.Listening = func(a string) { addr = a } }, steps)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	if pending != 1 || delayed != 1 || reserved != 1 {
		t.Fatalf("the fixture changed: %d %d %d", pending, delayed, reserved)
	}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"jobtriage_queue_jobs", map[string]string{"queue": "default", "state": "pending"}, float64(pending)},
		{"jobtriage_queue_jobs", map[string]string{"queue": "default", "state": "delayed"}, float64(delayed)},
		{"jobtriage_queue_jobs", map[string]string{"queue": "default", "state": "reserved"}, float64(reserved)},
		{"jobtriage_queue_jobs", map[string]string{"queue": "we\"ird\\q\nx", "state": "pending"}, 1},
		{"jobtriage_queue_stuck_jobs", map[string]string{"queue": "default"}, 1},
		// Available 600 s before the start, read 30 s later.
		{"jobtriage_queue_oldest_pending_age_seconds", map[string]string{"queue": "default"}, 630},
		// In the 60 s window at +30 s: the failure 10 s before the start
		// and the two new ones (the one 50 s before has left it).
		{"jobtriage_failed_jobs_window", nil, 3},
		{"jobtriage_queue_failed_jobs_window", map[string]string{"queue": "emails"}, 3},
		{"jobtriage_failed_jobs_window_seconds", nil, 60},
		{"jobtriage_failed_jobs_total", map[string]string{"connection": "database", "queue": "emails"}, 2},
		{"jobtriage_check_errors_total", nil, 0},
		{"jobtriage_checks_total", nil, 3},
		{"jobtriage_watch_lock_held", nil, 1},
		{"jobtriage_alerts_firing", nil, 0},
		{"jobtriage_last_check_success_timestamp_seconds", nil, float64(testNow.Add(30 * time.Second).Unix())},
		{"jobtriage_build_info", nil, 1},
	} {
		if got, ok := sample(mf, tc.name, tc.labels); !ok || got != tc.want {
			t.Errorf("%s%v = %v (found %v), want %v", tc.name, tc.labels, got, ok, tc.want)
		}
	}
	for name, f := range mf {
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if l.GetName() == "context" {
					t.Errorf("%s has a context label outside any context", name)
				}
			}
		}
	}
	var sum float64
	for _, m := range mf["jobtriage_queue_jobs"].Metric {
		for _, l := range m.Label {
			if l.GetName() == "queue" && l.GetValue() == "default" {
				sum += m.Gauge.GetValue()
			}
		}
	}
	if sum != 3 {
		t.Errorf("the states of default sum to %v, want its size 3", sum)
	}
	if healthCode != http.StatusOK || health != "ok: last successful check 15s ago\n" {
		t.Errorf("/healthz %d %q", healthCode, health)
	}
	if !strings.Contains(h.errOut.String(), "watch: serving http://"+addr+"/metrics and /healthz") {
		t.Errorf("stderr %q", h.errOut.String())
	}
	if !strings.Contains(h.errOut.String(), "no alert rules (metrics only)") {
		t.Errorf("start line: %q", h.errOut.String())
	}
}

func quietStep(time.Time) {}

// watchHarnessWith is watchHarness with a hook on the options.
func watchHarnessWith(t *testing.T, h *harness, args []string, hook func(*MonitorOptions), steps []func(now time.Time)) ExitCode {
	t.Helper()
	now := testNow
	var mu sync.Mutex
	h.f.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tick := 0
	cmd := NewCmdMonitor(h.f, func(ctx context.Context, o *MonitorOptions) error {
		hook(o)
		o.Sleep = func(ctx context.Context, d time.Duration) error {
			if tick == len(steps) {
				cancel()
				return ctx.Err()
			}
			mu.Lock()
			now = now.Add(d)
			cur := now
			mu.Unlock()
			steps[tick](cur)
			tick++
			return nil
		}
		return monitorRun(ctx, o)
	})
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	return exitCodeFor(cmd.ExecuteContext(ctx))
}

// Watching several contexts: one watcher per app, their lines apart, one
// /metrics with a context label, /healthz naming each, and a context that
// cannot be opened reported and blind.
func TestWatchSeveralContextsWithMetrics(t *testing.T) {
	aDSN, _ := queueDB(t, "sqlite", 2, time.Minute, 1)
	bDSN, _ := queueDB(t, "sqlite", 5, 2*time.Minute, 0)
	path := writeContexts(t, map[string]string{"a": aDSN, "b": bDSN, "gone": "sqlite:/nonexistent/x.sqlite"}, nil)
	h := newHarness(t, false)
	withEnv(h, map[string]string{"JOBTRIAGE_CONFIG": path})
	h.f.Now = func() time.Time { return testNow }
	out := &syncBuffer{}
	errOut := &syncBuffer{}
	h.f.IO.Out, h.f.IO.ErrOut = out, errOut
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrC := make(chan string, 1)
	ticked := make(chan struct{}, 2)
	cmd := NewCmdMonitor(h.f, func(ctx context.Context, o *MonitorOptions) error {
		o.Listening = func(a string) { addrC <- a }
		o.Sleep = func(ctx context.Context, _ time.Duration) error {
			ticked <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		}
		return monitorRun(ctx, o)
	})
	cmd.SetArgs([]string{"--watch", "--all-contexts", "--max", "5", "--listen", "127.0.0.1:0", "--state-file", "none"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	addr := <-addrC
	for range 2 {
		select {
		case <-ticked:
		case err := <-done:
			t.Fatalf("ended early: %v\n%s", err, errOut.String())
		}
	}
	// The context that cannot be opened reports itself once it failed.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(errOut.String(), "[gone] error"); {
		if time.Now().After(deadline) {
			t.Fatalf("no error for the context gone:\n%s", errOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, mf, _ := scrape(t, "http://"+addr+"/metrics")
	code, _, health := scrape(t, "http://"+addr+"/healthz")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("exit %v: %s", err, errOut.String())
	}
	for _, tc := range []struct {
		labels map[string]string
		want   float64
	}{
		{map[string]string{"context": "a", "queue": "default", "state": "pending"}, 2},
		{map[string]string{"context": "b", "queue": "default", "state": "pending"}, 5},
		{map[string]string{"context": "b", "queue": "default", "state": "reserved"}, 1},
	} {
		if got, ok := sample(mf, "jobtriage_queue_jobs", tc.labels); !ok || got != tc.want {
			t.Errorf("jobtriage_queue_jobs%v = %v (%v), want %v", tc.labels, got, ok, tc.want)
		}
	}
	if _, ok := sample(mf, "jobtriage_last_check_success_timestamp_seconds", map[string]string{"context": "gone"}); ok {
		t.Error("the context that never opened has a successful check")
	}
	// Blindness counts from the start: within --blind-after, all is well.
	if v, ok := sample(mf, "jobtriage_check_errors_total", map[string]string{"context": "gone"}); !ok || v != 1 {
		t.Errorf("the context that never opened: check errors %v (%v), want 1", v, ok)
	}
	if code != http.StatusOK || !strings.Contains(health, "context gone: ok: no successful check yet, started 0s ago") ||
		!strings.Contains(health, "context a: ok") {
		t.Errorf("/healthz %d %q", code, health)
	}
	o := out.String()
	if !strings.Contains(o, "[b] ") || !strings.Contains(o, "UNHEALTHY queue default: size 6 ≥ 5") || strings.Contains(o, "[a] ") {
		t.Errorf("stdout:\n%s", o)
	}
	e := errOut.String()
	if !strings.Contains(e, "[gone] error (exit 5), not watched: configuration: context gone: dsn:") ||
		!strings.Contains(e, "[a] watch: context a · sqlite:") || !strings.Contains(e, "[b] watch: context b · sqlite:") {
		t.Errorf("stderr:\n%s", e)
	}
}

// A port that cannot be bound stops the watcher before it starts.
func TestWatchListenOnABusyPort(t *testing.T) {
	dsn, _ := monitorDB(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	h := newHarness(t, false)
	if code := h.run("monitor", "--dsn", dsn, "--watch", "--listen", ln.Addr().String(), "--state-file", "none"); code != ExitError ||
		!strings.Contains(h.errOut.String(), "jobtriage: --listen: listen tcp "+ln.Addr().String()) {
		t.Errorf("exit %d: %q", code, h.errOut.String())
	}
}

// monitor --watch --all-contexts --json: every line names its context.
func TestWatchSeveralContextsJSON(t *testing.T) {
	aDSN, _ := queueDB(t, "sqlite", 1, time.Minute, 0)
	bDSN, _ := queueDB(t, "sqlite", 2, time.Minute, 0)
	path := writeContexts(t, map[string]string{"a": aDSN, "b": bDSN}, nil)
	h := newHarness(t, false)
	withEnv(h, map[string]string{"JOBTRIAGE_CONFIG": path})
	h.f.Now = func() time.Time { return testNow }
	out := &syncBuffer{}
	h.f.IO.Out, h.f.IO.ErrOut = out, &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ticked := make(chan struct{}, 2)
	cmd := NewCmdMonitor(h.f, func(ctx context.Context, o *MonitorOptions) error {
		o.Sleep = func(ctx context.Context, _ time.Duration) error {
			ticked <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		}
		return monitorRun(ctx, o)
	})
	cmd.SetArgs([]string{"--watch", "--all-contexts", "--max", "3", "--json", "--state-file", "none"})
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	<-ticked
	<-ticked
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	sizes := map[string]float64{}
	for _, line := range lines {
		var doc struct {
			Context string
			Healthy bool
			Queues  []struct{ Size float64 }
		}
		if err := json.Unmarshal([]byte(line), &doc); err != nil || len(doc.Queues) != 1 {
			t.Fatalf("line %q: %v", line, err)
		}
		sizes[doc.Context] = doc.Queues[0].Size
		if doc.Healthy != (doc.Context == "a") {
			t.Errorf("%s healthy %v", doc.Context, doc.Healthy)
		}
	}
	if len(lines) != 2 || sizes["a"] != 2 || sizes["b"] != 3 {
		t.Errorf("lines %q", lines)
	}
}

// TestPrometheusFormatMatchesMetrics: monitor --format prometheus writes
// the families /metrics serves of a check, under the same names and with
// the same series, and leaves out only the watcher's own (its lock, its
// counters, the Go runtime, process and HTTP handler); unhealthy, it still exits 8 and
// counts the breaches as firing.
func TestPrometheusFormatMatchesMetrics(t *testing.T) {
	dsn, _ := monitorDB(t)
	h := newHarness(t, false)
	h.f.Now = func() time.Time { return testNow }
	if code := h.run("monitor", "--dsn", dsn, "--window", "60s", "--format", "prometheus"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	oneShot, err := p.TextToMetricFamilies(strings.NewReader(h.out.String()))
	if err != nil {
		t.Fatalf("--format prometheus is not the text format: %v\n%s", err, h.out.String())
	}

	w := newHarness(t, false)
	w.f.Conn.DSN = dsn
	var addr string
	var served map[string]*dto.MetricFamily
	code := watchHarnessWith(t, w, []string{"--watch", "--window", "60s", "--listen", "127.0.0.1:0"},
		func(o *MonitorOptions) { o.Listening = func(a string) { addr = a } },
		[]func(time.Time){func(time.Time) { _, served, _ = scrape(t, "http://"+addr+"/metrics") }})
	if code != ExitOK {
		t.Fatalf("watch exit %d: %s", code, w.errOut.String())
	}
	watcherOnly := map[string]bool{"jobtriage_watch_lock_held": true, "jobtriage_checks_total": true,
		"jobtriage_check_errors_total": true, "jobtriage_failed_jobs_total": true}
	for name, f := range served {
		if watcherOnly[name] || strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") || strings.HasPrefix(name, "promhttp_") {
			if _, ok := oneShot[name]; ok {
				t.Errorf("--format prometheus writes the watcher's own %s", name)
			}
			continue
		}
		g, ok := oneShot[name]
		if !ok {
			t.Errorf("/metrics serves %s, --format prometheus does not", name)
			continue
		}
		// The same check at the same time: the same series.
		if want, got := expfmtText(t, f), expfmtText(t, g); want != got {
			t.Errorf("%s differs:\n/metrics:\n%s--format prometheus:\n%s", name, want, got)
		}
	}
	for name := range oneShot {
		if _, ok := served[name]; !ok {
			t.Errorf("--format prometheus writes %s, /metrics does not serve it", name)
		}
	}
	if len(oneShot) < 9 || oneShot["jobtriage_queue_jobs"] == nil {
		t.Fatalf("too few families: %v", slices.Collect(maps.Keys(oneShot)))
	}

	if code := h.run("monitor", "--dsn", dsn, "--max", "3", "--max-age", "5m", "--format", "prometheus"); code != ExitUnhealthy {
		t.Fatalf("unhealthy: exit %d: %s", code, h.errOut.String())
	}
	if !strings.Contains(h.out.String(), "\njobtriage_alerts_firing 2\n") {
		t.Errorf("two breaches, not two firing:\n%s", h.out.String())
	}
}

// expfmtText is one family in the text format.
func expfmtText(t *testing.T, f *dto.MetricFamily) string {
	t.Helper()
	var b strings.Builder
	if _, err := expfmt.MetricFamilyToText(&b, f); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
