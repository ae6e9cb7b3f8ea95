package metrics

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// Scrape fetches /metrics and parses it with the Prometheus text parser.
func Scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mf, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("not the text format: %v", err)
	}
	return mf
}

// value finds the sample of family name whose labels include want.
func value(t *testing.T, mf map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	t.Helper()
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
		switch {
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		}
	}
	return 0, false
}

func TestExporterServesTheLastCheck(t *testing.T) {
	now := t0
	e := New(Options{Build: Build{Version: "1.2.3", Commit: "abc", GoVersion: "go1.26.8"}, Contexts: true,
		Stale: time.Minute, Now: func() time.Time { return now }})
	srv := httptest.NewServer(e.Handler())
	defer srv.Close()

	e.Register("prod")
	e.Register("staging")
	e.Succeeded("prod", Check{At: t0, Holding: true, Window: time.Minute, FailedWindow: 4, Firing: 1, Queues: []Queue{
		{Connection: "database", Queue: "default", Pending: 3, Delayed: 1, Reserved: 2, Stuck: 1, OldestPendingAge: 90 * time.Second, FailedWindow: 4},
		{Connection: "redis", Queue: "we\"ird\nq\x1b", Pending: 1},
	}})
	e.Succeeded("staging", Check{At: t0, Holding: false})
	e.CountFailure("prod", "database", "default")
	e.CountFailure("prod", "database", "default")
	e.Failed("staging")

	mf := Scrape(t, srv.URL+PathMetrics)
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"jobtriage_queue_jobs", map[string]string{"context": "prod", "connection": "database", "queue": "default", "state": "pending"}, 3},
		{"jobtriage_queue_jobs", map[string]string{"context": "prod", "queue": "default", "state": "delayed"}, 1},
		{"jobtriage_queue_jobs", map[string]string{"context": "prod", "queue": "default", "state": "reserved"}, 2},
		{"jobtriage_queue_jobs", map[string]string{"context": "prod", "queue": "we\"ird\nq\uFFFD", "state": "pending"}, 1},
		{"jobtriage_queue_stuck_jobs", map[string]string{"queue": "default"}, 1},
		{"jobtriage_queue_oldest_pending_age_seconds", map[string]string{"queue": "default"}, 90},
		{"jobtriage_queue_failed_jobs_window", map[string]string{"queue": "default"}, 4},
		{"jobtriage_failed_jobs_window", map[string]string{"context": "prod"}, 4},
		{"jobtriage_failed_jobs_window_seconds", map[string]string{"context": "prod"}, 60},
		{"jobtriage_failed_jobs_total", map[string]string{"context": "prod", "connection": "database", "queue": "default"}, 2},
		{"jobtriage_alerts_firing", map[string]string{"context": "prod"}, 1},
		{"jobtriage_watch_lock_held", map[string]string{"context": "prod"}, 1},
		{"jobtriage_watch_lock_held", map[string]string{"context": "staging"}, 0},
		{"jobtriage_last_check_success_timestamp_seconds", map[string]string{"context": "prod"}, float64(t0.Unix())},
		{"jobtriage_check_errors_total", map[string]string{"context": "staging"}, 1},
		{"jobtriage_check_errors_total", map[string]string{"context": "prod"}, 0},
		{"jobtriage_checks_total", map[string]string{"context": "staging"}, 2},
		{"jobtriage_build_info", map[string]string{"version": "1.2.3", "commit": "abc", "goversion": "go1.26.8"}, 1},
	} {
		got, ok := value(t, mf, tc.name, tc.labels)
		if !ok || got != tc.want {
			t.Errorf("%s%v = %v (found %v), want %v", tc.name, tc.labels, got, ok, tc.want)
		}
	}
	// A watcher standing by read no queue: none of its queues is made up.
	if _, ok := value(t, mf, "jobtriage_failed_jobs_window", map[string]string{"context": "staging"}); ok {
		t.Error("staging (standing by) has a failure window")
	}
	if mf["jobtriage_queue_jobs"].GetType() != dto.MetricType_GAUGE || mf["jobtriage_failed_jobs_total"].GetType() != dto.MetricType_COUNTER {
		t.Error("wrong metric types")
	}
	if _, ok := mf["go_goroutines"]; !ok {
		t.Error("no Go runtime metrics")
	}

	// A queue gone from the next check is gone from /metrics.
	e.Succeeded("prod", Check{At: t0.Add(time.Minute), Holding: true, Window: time.Minute})
	mf = Scrape(t, srv.URL+PathMetrics)
	if _, ok := value(t, mf, "jobtriage_queue_jobs", map[string]string{"context": "prod"}); ok {
		t.Error("a queue from an earlier check is still exported")
	}
}

func TestHealthz(t *testing.T) {
	now := t0
	e := New(Options{Stale: time.Minute, Now: func() time.Time { return now }})
	srv := httptest.NewServer(e.Handler())
	defer srv.Close()
	get := func() (int, string) {
		resp, err := http.Get(srv.URL + PathHealth)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	e.Register("")
	if code, body := get(); code != http.StatusOK || body != "ok: no successful check yet, started 0s ago\n" {
		t.Errorf("just started: %d %q", code, body)
	}
	now = t0.Add(59 * time.Second)
	if code, _ := get(); code != http.StatusOK {
		t.Errorf("within the bound before any check: %d", code)
	}
	now = t0.Add(time.Minute)
	if code, body := get(); code != http.StatusServiceUnavailable || !strings.HasPrefix(body, "blind: no successful check yet, started 1m0s ago") {
		t.Errorf("never checked for a minute: %d %q", code, body)
	}
	e.Succeeded("", Check{At: now, Holding: true})
	now = now.Add(30 * time.Second)
	e.Failed("")
	if code, _ := get(); code != http.StatusOK {
		t.Errorf("a failure within the bound of a success: %d", code)
	}
	now = now.Add(31 * time.Second)
	if code, _ := get(); code != http.StatusServiceUnavailable {
		t.Errorf("blind past the bound: %d", code)
	}
	// Without contexts, no context label anywhere.
	mf := Scrape(t, srv.URL+PathMetrics)
	for name, f := range mf {
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if l.GetName() == "context" {
					t.Errorf("%s has a context label", name)
				}
			}
		}
	}
}

func TestHealthzNamesEachContext(t *testing.T) {
	now := t0
	e := New(Options{Contexts: true, Stale: time.Minute, Now: func() time.Time { return now }})
	e.Register("a")
	e.Register("b")
	now = t0.Add(2 * time.Minute)
	e.Succeeded("a", Check{At: now, Holding: true})
	rec := httptest.NewRecorder()
	e.Handler().ServeHTTP(rec, httptest.NewRequest("GET", PathHealth, nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Body.String() != "context a: ok: last successful check 0s ago\ncontext b: blind: no successful check yet, started 2m0s ago\n" {
		t.Errorf("%d %q", rec.Code, rec.Body.String())
	}
}

// TestWriteText: one check in the text format, parsed back, with the values
// and escaped labels /metrics would serve, the build info, and none of the
// watcher's own families.
func TestWriteText(t *testing.T) {
	var b strings.Builder
	err := WriteText(&b, Build{Version: "1.2.3", Commit: "abc", GoVersion: "go1.26.8"}, Check{At: t0, Holding: true,
		Window: time.Minute, FailedWindow: 4, Firing: 2, Queues: []Queue{
			{Connection: "database", Queue: "default", Pending: 3, Delayed: 1, Reserved: 2, Stuck: 1, OldestPendingAge: 90 * time.Second, FailedWindow: 4},
			{Queue: "we\"ird\nq\x1b", Pending: 1},
			{Connection: "database", Queue: "emails", Pending: 5, Paused: true},
		}})
	if err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mf, err := p.TextToMetricFamilies(strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("not the text format: %v\n%s", err, b.String())
	}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"jobtriage_queue_jobs", map[string]string{"connection": "database", "queue": "default", "state": "pending"}, 3},
		{"jobtriage_queue_jobs", map[string]string{"queue": "default", "state": "delayed"}, 1},
		{"jobtriage_queue_jobs", map[string]string{"queue": "default", "state": "reserved"}, 2},
		{"jobtriage_queue_jobs", map[string]string{"connection": "", "queue": "we\"ird\nq\uFFFD", "state": "pending"}, 1},
		{"jobtriage_queue_stuck_jobs", map[string]string{"queue": "default"}, 1},
		{"jobtriage_queue_oldest_pending_age_seconds", map[string]string{"queue": "default"}, 90},
		{"jobtriage_queue_failed_jobs_window", map[string]string{"queue": "default"}, 4},
		{"jobtriage_queue_paused", map[string]string{"queue": "emails"}, 1},
		{"jobtriage_queue_paused", map[string]string{"queue": "default"}, 0},
		{"jobtriage_failed_jobs_window", nil, 4},
		{"jobtriage_failed_jobs_window_seconds", nil, 60},
		{"jobtriage_alerts_firing", nil, 2},
		{"jobtriage_last_check_success_timestamp_seconds", nil, float64(t0.Unix())},
		{"jobtriage_build_info", map[string]string{"version": "1.2.3"}, 1},
	} {
		if got, ok := value(t, mf, tc.name, tc.labels); !ok || got != tc.want {
			t.Errorf("%s%v = %v (found %v), want %v", tc.name, tc.labels, got, ok, tc.want)
		}
	}
	for _, name := range []string{"jobtriage_watch_lock_held", "jobtriage_checks_total", "jobtriage_check_errors_total", "go_goroutines"} {
		if _, ok := mf[name]; ok {
			t.Errorf("a single check writes %s", name)
		}
	}
	for _, f := range mf {
		for _, m := range f.Metric {
			if m.TimestampMs != nil {
				t.Errorf("%s has a timestamp (the textfile collector refuses them)", f.GetName())
			}
		}
	}
}

// TestServe: the exporter on a port of its own until stop, which closes it;
// a port that is taken is an error at once.
func TestServe(t *testing.T) {
	e := New(Options{Stale: time.Minute, Now: func() time.Time { return t0 }})
	addr, stop, err := e.Serve(context.Background(), "127.0.0.1:0", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := Scrape(t, "http://"+addr+PathMetrics)["jobtriage_build_info"]; !ok {
		t.Error("no build info served")
	}
	if _, _, err := e.Serve(context.Background(), addr, time.Second); err == nil {
		t.Error("a second server bound the same port")
	}
	stop()
	if resp, err := http.Get("http://" + addr + PathHealth); err == nil {
		resp.Body.Close()
		t.Error("still serving after stop")
	}
}
