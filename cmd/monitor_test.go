package cmd

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/alerts"
	"github.com/jobtriage/jobtriage/alerts/notify"
	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

func monitorFailure(i int, queue, class string, at time.Time) sqltest.FailedFixture {
	u := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
	c := strings.ReplaceAll(class, `\`, `\\`)
	return sqltest.FailedFixture{UUID: &u, Connection: "database", Queue: queue,
		Payload:   `{"uuid":"` + u + `","displayName":"` + c + `","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"` + c + `"}}`,
		Exception: "RuntimeException: boom in /app/X.php:1\nStack trace:\n#0 {main}",
		FailedAt:  at.UTC().Format("2006-01-02 15:04:05")}
}

// monitorDB: default has 3 jobs (one pending for 10 minutes, one delayed,
// one reserved 5 minutes ago: stuck at retry_after 90 s); the hostile queue
// has one pending job; two failures in the last minute, one an hour ago.
func monitorDB(t *testing.T) (string, *sqlstore.Store) {
	t.Helper()
	s := sqltest.OpenLaravel(t, "sqlite", sqlstore.SchemaLaravel8, time.UTC)
	now := testNow.Unix()
	for _, j := range []struct {
		queue     string
		reserved  any
		available int64
	}{
		{"default", nil, now - 600}, {"default", nil, now + 60}, {"default", now - 300, now - 900}, {"we\"ird\\q\nx", nil, now - 5},
	} {
		if _, err := s.DB().Exec("INSERT INTO jobs (queue, payload, attempts, reserved_at, available_at, created_at) VALUES (?, '{}', 0, ?, ?, ?)",
			j.queue, j.reserved, j.available, j.available); err != nil {
			t.Fatal(err)
		}
	}
	sqltest.InsertFailed(t, s,
		monitorFailure(1, "default", `App\Jobs\A`, testNow.Add(-time.Hour)),
		monitorFailure(2, "default", `App\Jobs\A`, testNow.Add(-50*time.Second)),
		monitorFailure(3, "emails", `App\Jobs\B`, testNow.Add(-10*time.Second)))
	return "sqlite:" + s.Endpoint().Path, s
}

func TestMonitorOneShot(t *testing.T) {
	dsn, _ := monitorDB(t)
	for _, tc := range []struct {
		name   string
		args   []string
		code   ExitCode
		stdout []string
		stderr string
	}{
		{"healthy, TSV when piped", []string{"--max", "4"}, ExitOK,
			[]string{"default\t3\t1\t1\t1\t1\t600\t1", "emails\t0\t0\t0\t0\t0\t\t1"}, ""},
		{"size reaches --max (inclusive)", []string{"--max", "3"}, ExitUnhealthy, nil, "unhealthy: queue default: size 3 ≥ 3"},
		{"oldest pending too old", []string{"--max-age", "10m"}, ExitUnhealthy, nil, "oldest_pending_age 10m0s ≥ 10m0s"},
		{"failures in the window", []string{"--max-failed", "2", "--window", "60s"}, ExitUnhealthy, nil, "failed 2 ≥ 2 in 1m0s"},
		{"failures below the limit", []string{"--max-failed", "2", "--window", "30s"}, ExitOK, nil, ""},
		{"named queues, artisan style", []string{"database:emails,default", "--max-failed", "3", "--window", "2h"}, ExitUnhealthy,
			[]string{"database:emails\t0", "default\t3"}, "failed 3 ≥ 3"},
		{"retry-after flag", []string{"default", "--retry-after", "10m"}, ExitOK, []string{"default\t3\t1\t1\t1\t0\t"}, ""},
		{"bad window", []string{"--window", "1500ms"}, ExitUsage, nil, "--window"},
		{"bad queue", []string{":x"}, ExitUsage, nil, "empty connection"},
		{"bad format", []string{"--format", "xml"}, ExitUsage, nil, "--format"},
		{"watch needs a threshold", []string{"--watch"}, ExitUsage, nil, "--watch needs"},
		{"bad alert-per", []string{"--watch", "--max-failed", "3", "--alert-per", "host"}, ExitUsage, nil, "--alert-per"},
		{"resolve-below at the threshold", []string{"--watch", "--max-failed", "3", "--resolve-below", "3"}, ExitUsage, nil, "resolve-below"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, false)
			code := h.run(append([]string{"monitor", "--dsn", dsn}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, h.errOut.String())
			}
			for _, want := range tc.stdout {
				if !strings.Contains(h.out.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, h.out.String())
				}
			}
			if !strings.Contains(h.errOut.String(), tc.stderr) {
				t.Errorf("stderr %q lacks %q", h.errOut.String(), tc.stderr)
			}
			if strings.Contains(h.out.String(), "\x1b") || strings.Contains(h.out.String(), "ird\\q\nx") {
				t.Errorf("hostile queue name reached stdout raw: %q", h.out.String())
			}
		})
	}
}

func TestMonitorJSONAndPrometheus(t *testing.T) {
	dsn, _ := monitorDB(t)
	h := newHarness(t, false)
	if code := h.run("monitor", "--dsn", dsn, "--json", "--max", "3"); code != ExitUnhealthy {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	var rep struct {
		Healthy  bool
		Failed   int64
		Queues   []map[string]any
		Breaches []triage.Breach
	}
	if err := json.Unmarshal(h.out.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, h.out.String())
	}
	if rep.Healthy || rep.Failed != 2 || len(rep.Queues) != 3 || len(rep.Breaches) != 1 || rep.Breaches[0].Measure != "size" {
		t.Errorf("json report: %+v", rep)
	}
	if q := rep.Queues[0]; q["queue"] != "default" || q["stuck"] != 1.0 || q["oldest_pending_age_seconds"] != 600.0 {
		t.Errorf("first queue: %v", q)
	}
	// The documented conventions (docs/json.md): a schema version, times in
	// RFC 3339 seconds or null, numbers as numbers.
	var raw map[string]any
	if err := json.Unmarshal(h.out.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	if raw["schema_version"] != 1.0 {
		t.Errorf("schema_version %v", raw["schema_version"])
	}
	if at, _ := raw["at"].(string); len(at) != len("2006-01-02T15:04:05Z") {
		t.Errorf("at %q, want RFC 3339 in seconds", at)
	}
	queues := raw["queues"].([]any)
	if at, _ := queues[0].(map[string]any)["oldest_pending_at"].(string); len(at) != len("2006-01-02T15:04:05Z") {
		t.Errorf("oldest_pending_at %v", queues[0].(map[string]any)["oldest_pending_at"])
	}
	if v, ok := queues[1].(map[string]any)["oldest_pending_at"]; !ok || v != nil {
		t.Errorf("oldest_pending_at of an empty queue = %v, want null", v)
	}
	if b := raw["breaches"].([]any)[0].(map[string]any); b["value"] != 3.0 || b["limit"] != 3.0 {
		t.Errorf("breach %v, want numbers", b)
	}

	if code := h.run("monitor", "--dsn", dsn, "--format", "prometheus"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	for _, want := range []string{
		"# TYPE jobtriage_queue_jobs gauge\n",
		`jobtriage_queue_jobs{connection="",queue="default",state="pending"} 1` + "\n",
		`jobtriage_queue_jobs{connection="",queue="default",state="reserved"} 1` + "\n",
		`jobtriage_queue_stuck_jobs{connection="",queue="default"} 1` + "\n",
		`jobtriage_queue_oldest_pending_age_seconds{connection="",queue="default"} 600` + "\n",
		`jobtriage_queue_jobs{connection="",queue="we\"ird\\q\nx",state="pending"} 1` + "\n",
		"jobtriage_failed_jobs_window 2\n",
		"jobtriage_failed_jobs_window_seconds 60\n",
		"jobtriage_alerts_firing 0\n",
	} {
		if !strings.Contains(h.out.String(), want) {
			t.Errorf("prometheus output lacks %q:\n%s", want, h.out.String())
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(h.out.String()), "\n") {
		if !strings.HasPrefix(line, "# ") && !strings.HasPrefix(line, "jobtriage_") {
			t.Errorf("a raw newline split a sample: %q", line)
		}
	}
}

// recorder is a notifier that keeps every notification.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Name() string { return "recorder" }
func (r *recorder) Notify(_ context.Context, d alerts.Digest) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range d.Notifications {
		r.events = append(r.events, n.Event.String()+" "+n.Rule.Key)
	}
	return nil
}

// watchHarness runs `monitor --watch` with a clock that a tick advances and
// a script that runs at each tick; the watch ends after the last step.
func watchHarness(t *testing.T, h *harness, args []string, rec *recorder, steps []func(now time.Time)) ExitCode {
	t.Helper()
	return watchHarnessWith(t, h, args, func(o *MonitorOptions) { o.Notifiers = []notify.Notifier{rec} }, steps)
}

func TestWatchFiresOnceAndResolves(t *testing.T) {
	dsn, s := monitorDB(t)
	h := newHarness(t, false)
	h.f.Conn.DSN = dsn
	rec := &recorder{}
	n := 100
	insert := func(k int) func(time.Time) {
		return func(now time.Time) {
			var fx []sqltest.FailedFixture
			for range k {
				n++
				fx = append(fx, monitorFailure(n, "emails", `App\Jobs\B`, now.Add(-time.Second)))
			}
			sqltest.InsertFailed(t, s, fx...)
		}
	}
	quiet := func(time.Time) {}
	// Threshold 5 in 60 s, a tick every 15 s: 2 in the window at start, 3
	// after the first inserts (ok), 5 after the second (firing, inclusive),
	// 8 (still firing, no repeat), then 7, 5, 3 as the window slides (above
	// the resolve level 2), and 0 at t+105 s: resolved.
	steps := []func(time.Time){insert(2), insert(2), insert(3), quiet, quiet, quiet, quiet, quiet}
	code := watchHarness(t, h, []string{"--watch", "--interval", "15s", "--max-failed", "5", "--window", "60s", "--alert-per", "queue"}, rec, steps)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	want := "firing app|firing queue:emails|resolved app|resolved queue:emails"
	if got := strings.Join(rec.events, "|"); got != want {
		t.Errorf("notifications %q, want %q", got, want)
	}
	if out := h.out.String(); strings.Count(out, "FIRING app: 5 failures in the last 1m") != 1 || strings.Count(out, "RESOLVED") != 2 {
		t.Errorf("log lines on stdout:\n%s", out)
	}
}

func TestWatchStandsByWhileAnotherHoldsTheLock(t *testing.T) {
	dsn, s := monitorDB(t)
	lock, err := s.TryWatchLock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, false)
	h.f.Conn.DSN = dsn
	rec := &recorder{}
	var released bool
	steps := []func(time.Time){
		func(now time.Time) {
			var fx []sqltest.FailedFixture
			for i := range 5 {
				fx = append(fx, monitorFailure(200+i, "default", `App\Jobs\A`, now))
			}
			sqltest.InsertFailed(t, s, fx...)
		},
		func(time.Time) { lock.Release(); released = true },
		func(time.Time) {},
	}
	code := watchHarness(t, h, []string{"--watch", "--max-failed", "3"}, rec, steps)
	if code != ExitOK || !released {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	if !strings.Contains(h.errOut.String(), "standing by") || !strings.Contains(h.errOut.String(), "took over") {
		t.Errorf("stderr: %q", h.errOut.String())
	}
	// The standby sent nothing; once it took over it fired for what the
	// window held.
	if got := strings.Join(rec.events, "|"); got != "firing app" {
		t.Errorf("notifications %q", got)
	}
	// The watcher that stopped left no lock file beside the database.
	if _, err := os.Stat(s.Endpoint().Path + ".jobtriage-watch.lock"); !os.IsNotExist(err) {
		t.Errorf("the lock file is left behind: %v", err)
	}
}

func TestWatchSecretFromDotenvIsUsedNeverPrinted(t *testing.T) {
	dsn, s := monitorDB(t)
	var bodies []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, r.URL.Path+" "+string(b))
		mu.Unlock()
	}))
	defer srv.Close()
	h := newHarness(t, false)
	h.f.Conn.DSN = dsn
	secretURL := srv.URL + "/hooks/s3cr3t-t0ken"
	if err := os.WriteFile(filepath.Join(h.dir, ".env"), []byte("APP_NAME=x\nJOBTRIAGE_WEBHOOK_URL=\""+secretURL+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	steps := []func(time.Time){func(now time.Time) {
		sqltest.InsertFailed(t, s, monitorFailure(300, "default", `App\Jobs\A`, now))
	}}
	code := watchHarness(t, h, []string{"--watch", "--max-failed", "3", "--window", "2m"}, &recorder{}, steps)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 1 || !strings.HasPrefix(bodies[0], "/hooks/s3cr3t-t0ken ") || !strings.Contains(bodies[0], `"firing"`) {
		t.Errorf("webhook got %q", bodies)
	}
	if strings.Contains(h.out.String()+h.errOut.String(), "s3cr3t") {
		t.Error("the webhook secret was printed")
	}
}

// TestWatchAlertsOnQueueSize: --max in watch mode fires through the
// notifiers when a queue reaches the limit, once, and resolves when it drains.
func TestWatchAlertsOnQueueSize(t *testing.T) {
	dsn, s := monitorDB(t) // queue "default" starts with 3 jobs
	h := newHarness(t, false)
	h.f.Conn.DSN = dsn
	rec := &recorder{}
	push := func(n int) func(time.Time) {
		return func(now time.Time) {
			for range n {
				if _, err := s.DB().Exec("INSERT INTO jobs (queue, payload, attempts, reserved_at, available_at, created_at) VALUES ('default', '{}', 0, NULL, ?, ?)",
					now.Unix(), now.Unix()); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	drain := func(time.Time) {
		if _, err := s.DB().Exec("DELETE FROM jobs WHERE queue = 'default'"); err != nil {
			t.Fatal(err)
		}
	}
	quiet := func(time.Time) {}
	// Limit 5: 3 (ok), 5 (firing), 6 (still firing, no repeat), 0 (resolved).
	steps := []func(time.Time){push(2), push(1), drain, quiet}
	code := watchHarness(t, h, []string{"--watch", "--interval", "15s", "--max", "5"}, rec, steps)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	if got, want := strings.Join(rec.events, "|"), "firing size:default|resolved size:default"; got != want {
		t.Errorf("notifications %q, want %q", got, want)
	}
	if out := h.out.String(); !strings.Contains(out, "FIRING size:default: 5 jobs queued (threshold 5)") {
		t.Errorf("log lines on stdout:\n%s", out)
	}
}

// A healthy watch says what it watches on its first tick: the database,
// the thresholds, the channels and that this process notifies.
func TestWatchPrintsAStartLine(t *testing.T) {
	dsn, _ := monitorDB(t)
	h := newHarness(t, false)
	h.f.Conn.DSN = dsn
	code := watchHarness(t, h, []string{"--watch", "--max-failed", "30", "--window", "2m", "--alert-per", "queue", "--max", "100", "--state-file", "none"},
		&recorder{}, []func(time.Time){func(time.Time) {}})
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	line, _, _ := strings.Cut(h.errOut.String(), "\n")
	for _, want := range []string{"watch: sqlite:", "≥ 30 failures in 2m (app, per queue)", "queue size ≥ 100", "every 15s",
		"notifiers: stdout, recorder", "alert state in memory only", "this process holds the notifier lock"} {
		if !strings.Contains(line, want) {
			t.Errorf("start line %q lacks %q", line, want)
		}
	}
	if h.out.Len() != 0 {
		t.Errorf("a healthy watch printed on stdout: %q", h.out.String())
	}
}

// --watch --json prints only JSON on stdout, one object per tick; healthy
// is false while an alert fires, and the transitions ride in the object.
func TestWatchJSONIsNDJSONAndUnhealthyWhileFiring(t *testing.T) {
	dsn, s := monitorDB(t)
	h := newHarness(t, false)
	h.f.Conn.DSN = dsn
	steps := []func(time.Time){
		func(now time.Time) {
			sqltest.InsertFailed(t, s, monitorFailure(400, "emails", `App\Jobs\B`, now), monitorFailure(401, "emails", `App\Jobs\B`, now))
		},
		func(time.Time) {},
	}
	code := watchHarness(t, h, []string{"--watch", "--json", "--max-failed", "3", "--window", "2m"}, &recorder{}, steps)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(h.out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want one per tick:\n%s", len(lines), h.out.String())
	}
	var ticks []struct {
		Healthy       bool
		Firing        []string
		Notifications []notify.BodyNotification
		Holding       bool `json:"holding_lock"`
	}
	for _, l := range lines {
		var v struct {
			Healthy       bool
			Firing        []string
			Notifications []notify.BodyNotification
			Holding       bool `json:"holding_lock"`
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("not JSON: %q: %v", l, err)
		}
		ticks = append(ticks, v)
	}
	if !ticks[0].Healthy || ticks[1].Healthy || ticks[2].Healthy || !ticks[0].Holding {
		t.Errorf("healthy per tick: %+v", ticks)
	}
	if n := ticks[1].Notifications; len(n) != 1 || n[0].Event != "firing" || n[0].Class != `App\Jobs\B` || !strings.Contains(n[0].Command, "jobtriage failed --group --since 2m") {
		t.Errorf("tick 1 notifications: %+v", n)
	}
	if strings.Join(ticks[2].Firing, ",") != "app" || len(ticks[2].Notifications) != 0 {
		t.Errorf("tick 2: %+v", ticks[2])
	}
}

// A restarted watcher (same --state-file) neither fires again what fires
// nor forgets it: it resolves it once the failures age out.
func TestWatchStateSurvivesARestart(t *testing.T) {
	dsn, s := monitorDB(t)
	state := filepath.Join(t.TempDir(), "watch.json")
	args := []string{"--watch", "--max-failed", "3", "--window", "2m", "--state-file", state}
	h := newHarness(t, false)
	h.f.Conn.DSN = dsn
	rec := &recorder{}
	steps := []func(time.Time){func(now time.Time) {
		sqltest.InsertFailed(t, s, monitorFailure(500, "emails", `App\Jobs\B`, now), monitorFailure(501, "emails", `App\Jobs\B`, now))
	}}
	if code := watchHarness(t, h, args, rec, steps); code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	if got := strings.Join(rec.events, "|"); got != "firing app" {
		t.Fatalf("first run: %q", got)
	}
	if _, err := os.Stat(state); err != nil {
		t.Fatal(err)
	}
	h2 := newHarness(t, false)
	h2.f.Conn.DSN = dsn
	rec2 := &recorder{}
	quiet := func(time.Time) {}
	// The harness clock starts at testNow again: 4 failures in the window
	// (the first run's two at +15 s), firing, no new page; at +150 s the
	// window is empty: resolved.
	if code := watchHarness(t, h2, args, rec2, []func(time.Time){quiet, quiet, quiet, quiet, quiet, quiet, quiet, quiet, quiet, quiet, quiet}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, h2.errOut.String())
	}
	if got := strings.Join(rec2.events, "|"); got != "resolved app" {
		t.Errorf("after the restart: %q, want only the resolution", got)
	}
	if !strings.Contains(h2.errOut.String(), "carried on 1 pending or firing alert from") {
		t.Errorf("stderr: %q", h2.errOut.String())
	}
}

// tcpProxy forwards 127.0.0.1:port to a server and can go down (every
// connection cut, new ones refused) and come back on the same port: a
// database restart as the watcher sees it, without touching the real server
// other tests use.
type tcpProxy struct {
	t      *testing.T
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]bool
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	p := &tcpProxy{t: t, target: target, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.stop)
	return p
}

func (p *tcpProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns[c], p.conns[up] = true, true
			p.mu.Unlock()
			go func() { io.Copy(up, c); up.Close(); c.Close() }()
			go func() { io.Copy(c, up); up.Close(); c.Close() }()
		}
	}()
}

// stop closes the listener and cuts every connection.
func (p *tcpProxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]bool{}
}

// start listens on the same port again.
func (p *tcpProxy) start() {
	var ln net.Listener
	var err error
	for range 50 { // the port may linger for a moment
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		p.t.Fatal(err)
	}
	p.serve(ln)
}

// syncBuffer is an io.Writer safe for the watcher's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// The watcher's fault test, on real PostgreSQL, in real time: the watcher
// survives pg_terminate_backend of its sessions and a server that refuses
// connections for a while; it alerts about its blindness, reconnects,
// resumes after the last id it saw, and a webhook that never answers
// changes none of it: ticks keep their interval.
func TestWatchSurvivesALostPostgresSession(t *testing.T) {
	watchSurvivesLostSessions(t, "postgres", func(t *testing.T, s *sqlstore.Store) {
		if _, err := s.DB().Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
			t.Fatal(err)
		}
	})
}

// The same on MariaDB/MySQL, whose lock is GET_LOCK on the watcher's session:
// KILL every session of the watcher's database.
func TestWatchSurvivesALostMySQLSession(t *testing.T) {
	watchSurvivesLostSessions(t, "mysql", func(t *testing.T, s *sqlstore.Store) {
		var ids []int64
		if err := s.DB().Select(&ids, `SELECT id FROM information_schema.processlist WHERE db = DATABASE() AND id <> CONNECTION_ID()`); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if _, err := s.DB().Exec(fmt.Sprintf("KILL %d", id)); err != nil {
				t.Logf("KILL %d: %v", id, err)
			}
		}
	})
}

// watchSurvivesLostSessions runs a watcher through a TCP proxy to a real
// server, kills its sessions with kill, then stops the proxy for longer than
// --blind-after, with a webhook that never answers throughout.
func watchSurvivesLostSessions(t *testing.T, driver string, kill func(*testing.T, *sqlstore.Store)) {
	if testing.Short() {
		t.Skip("real-time fault test")
	}
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	ep := s.Endpoint()
	proxy := newTCPProxy(t, net.JoinHostPort(ep.Host, strconv.Itoa(ep.Port)))
	viaProxy := ep
	host, port, _ := net.SplitHostPort(proxy.addr)
	viaProxy.Host, viaProxy.Port = host, mustAtoi(t, port)

	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // never answers while the test runs
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hung.Close)
	t.Cleanup(func() { close(release) })

	h := newHarness(t, false)
	h.f.Now = time.Now
	h.f.Conn.DSN = sqltest.DSN(viaProxy)
	var stdout, stderr syncBuffer
	h.f.IO.Out, h.f.IO.ErrOut = &stdout, &stderr
	rec := &recorder{}
	const interval = time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan ExitCode, 1)
	cmd := NewCmdMonitor(h.f, func(ctx context.Context, o *MonitorOptions) error {
		o.Notifiers = []notify.Notifier{rec}
		return monitorRun(ctx, o)
	})
	cmd.SetArgs([]string{"--watch", "--json", "--interval", interval.String(), "--max-failed", "1", "--window", "5m", "--blind-after", "3s",
		"--webhook-url", hung.URL + "/hook", "--state-file", filepath.Join(t.TempDir(), "state.json")})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	go func() { done <- exitCodeFor(cmd.ExecuteContext(ctx)) }()

	n := 600
	fail := func() {
		n++
		sqltest.InsertFailed(t, s, monitorFailure(n, "default", `App\Jobs\A`, time.Now().UTC()))
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			select {
			case code := <-done:
				t.Fatalf("the watcher exited (%d) while waiting for %s; stderr:\n%s", code, what, stderr.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; events %q; stderr:\n%s", what, rec.got(), stderr.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	time.Sleep(1500 * time.Millisecond)
	fail()
	waitFor("the first alert", func() bool { return rec.got() == "firing app" })

	// Kill every session of the watcher's database but ours.
	kill(t, s)
	fail() // id 2, seen after the watcher reconnects
	lastTick := func() (failed int64, ok bool) {
		out := strings.TrimSpace(stdout.String())
		var v struct {
			Error  string
			Failed int64
		}
		if json.Unmarshal([]byte(out[strings.LastIndex(out, "\n")+1:]), &v) != nil || v.Error != "" {
			return 0, false
		}
		return v.Failed, true
	}
	reconnected := time.Now()
	waitFor("a tick that reads after the sessions were killed", func() bool { n, ok := lastTick(); return ok && n == 2 })
	if d := time.Since(reconnected); d > 3*interval {
		t.Errorf("reading again took %s after pg_terminate_backend", d)
	}

	// The server refuses connections for 5 s (> --blind-after 3s); a
	// failure arrives meanwhile.
	proxy.stop()
	fail()
	waitFor("the blindness alert", func() bool { return strings.Contains(rec.got(), "firing watcher:blind") })
	proxy.start()
	waitFor("the blindness to resolve", func() bool { return strings.Contains(rec.got(), "resolved watcher:blind") })
	time.Sleep(2 * interval)
	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the watcher did not stop")
	}

	if got := rec.got(); got != "firing app|firing watcher:blind|resolved watcher:blind" {
		t.Errorf("notifications %q: the app alert must fire once and stay firing", got)
	}
	errs := stderr.String()
	if !strings.Contains(errs, "cannot read the database") || !strings.Contains(errs, "resuming after failure id 2") {
		t.Errorf("stderr does not tell the outage:\n%s", errs)
	}
	if strings.Contains(errs, "postgres@") && strings.Contains(errs, ":"+ep.Password+"@") && ep.Password != "" {
		t.Errorf("a password reached stderr:\n%s", errs)
	}
	// Every tick printed one JSON object; the ticks kept their interval
	// although every send to the webhook hung, and a tick that read saw
	// every failure: the three of the outage and after, with the first.
	var lastFailed int64
	var prev time.Time
	ticks := 0
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var v struct {
			At     time.Time
			Error  string
			Failed int64
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("stdout line is not JSON: %q", l)
		}
		ticks++
		// Slack for a loaded CI machine; a hanging send used to cost ~20 s.
		if !prev.IsZero() && v.At.Sub(prev) > 2*interval+500*time.Millisecond {
			t.Errorf("%s between ticks at %s (interval %s)", v.At.Sub(prev), v.At.Format(time.TimeOnly), interval)
		}
		prev = v.At
		if v.Error == "" {
			lastFailed = v.Failed
		}
	}
	if lastFailed != 3 {
		t.Errorf("the last tick counted %d failures in the window, want 3", lastFailed)
	}
	if ticks < 10 {
		t.Errorf("only %d ticks", ticks)
	}
	if testing.Verbose() {
		t.Logf("%d ticks; stderr:\n%s", ticks, errs)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (r *recorder) got() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.events, "|")
}

// On a terminal the watcher says it is alive every heartbeatEvery, on
// stderr; piped, it does not.
func TestWatchHeartbeatOnATerminal(t *testing.T) {
	dsn, _ := monitorDB(t)
	for _, tty := range []bool{true, false} {
		h := newHarness(t, false)
		h.f.Conn.DSN = dsn
		h.f.IO.SetStderrTTY(tty)
		quiet := func(time.Time) {}
		code := watchHarness(t, h, []string{"--watch", "--max-failed", "30", "--state-file", "none"}, &recorder{},
			[]func(time.Time){quiet, quiet, quiet, quiet, quiet})
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, h.errOut.String())
		}
		errs := h.errOut.String()
		beats := strings.Count(errs, " watching: ")
		if tty && (beats != 2 || !strings.Contains(errs, "watching: 2 failures in the last 1m, 0 firing, last failure id 3") ||
			!strings.Contains(errs, "watching: 0 failures in the last 1m, 0 firing")) {
			t.Errorf("tty: %d heartbeats:\n%s", beats, errs)
		}
		if !tty && beats != 0 {
			t.Errorf("piped: %d heartbeats:\n%s", beats, errs)
		}
	}
}

// What a failing channel answers reaches stderr without the
// secrets it echoes — a webhook echoing the Basic credentials Go sends for
// https://user:password@…, a --notify-command echoing its --token.
func TestWatchChannelErrorsNeverPrintEchoedSecrets(t *testing.T) {
	dsn, s := monitorDB(t)
	const password, token = "hunter2-pw-Secret", "tok-9f8e7d6c5b4a"
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "bad credentials: Authorization: %s", r.Header.Get("Authorization"))
	}))
	defer echo.Close()
	script := filepath.Join(t.TempDir(), "notify.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"refused: $*\" >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, false)
	h.f.Conn.DSN = dsn
	steps := []func(time.Time){func(now time.Time) {
		sqltest.InsertFailed(t, s, monitorFailure(700, "default", `App\Jobs\A`, now))
	}}
	hook := strings.Replace(echo.URL, "http://", "http://ops:"+password+"@", 1) + "/hook"
	code := watchHarness(t, h, []string{"--watch", "--max-failed", "3", "--window", "2m", "--state-file", "none",
		"--webhook-url", hook, "--notify-command", script + " --token " + token}, &recorder{}, steps)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	errs := h.errOut.String()
	for _, want := range []string{"watch: webhook: not delivered after 1 attempt", "HTTP 401", "watch: command:notify.sh: not delivered", "refused:"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	basic := base64.StdEncoding.EncodeToString([]byte("ops:" + password))
	for _, secret := range []string{password, token, basic} {
		if strings.Contains(errs+h.out.String(), secret) {
			t.Errorf("%q was printed:\n%s", secret, errs)
		}
	}
}

// A watcher whose Redis queue connection is down read failed_jobs but
// printed "failed": 0 on every tick, and only watcher:blind fired, never
// the failure rate. The failures count (the JSON line's "failed" is
// failed_jobs'), the rule fires, the line names the connection blind and
// says why; and a Redis that comes back is read again.
func TestWatchWithRedisDownCountsFailures(t *testing.T) {
	dsn, s := monitorDB(t)
	h := newHarness(t, false)
	h.f.Conn.DSN = dsn
	var redisUp atomic.Bool
	opens := 0
	redis := &lazyBackend{lazy[triage.QueueBackend]{describe: "redis://127.0.0.1:6399/0", open: func(context.Context) (triage.QueueBackend, error) {
		opens++
		if !redisUp.Load() {
			return nil, fmt.Errorf("%w: cannot connect to redis://127.0.0.1:6399/0: connection refused", triage.ErrUnreachable)
		}
		return &statsBackend{}, nil
	}}}
	open := h.f.Service
	h.f.Service = func(ctx context.Context) (*triage.Service, error) {
		svc, err := open(ctx)
		if err == nil {
			svc.DefaultConnection = "database"
			svc.MonitorConnections = []triage.MonitorConnection{
				{Name: "database", DefaultQueue: "default", Local: true},
				{Name: "redis", DefaultQueue: "default", Backend: redis},
			}
		}
		return svc, err
	}
	rec := &recorder{}
	steps := []func(time.Time){
		func(now time.Time) {
			sqltest.InsertFailed(t, s, monitorFailure(400, "emails", `App\Jobs\B`, now), monitorFailure(401, "emails", `App\Jobs\B`, now))
		},
		func(time.Time) { redisUp.Store(true) },
		func(time.Time) {},
	}
	code := watchHarness(t, h, []string{"--watch", "--json", "--max-failed", "3", "--window", "2m", "--interval", "15s"}, rec, steps)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(h.out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want one per tick:\n%s", len(lines), h.out.String())
	}
	type tick struct {
		Failed  int64
		Blind   []string
		Error   string
		Healthy bool
		Firing  []string
	}
	var ticks []tick
	for _, l := range lines {
		var v tick
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("not JSON: %q: %v", l, err)
		}
		ticks = append(ticks, v)
	}
	if tk := ticks[0]; tk.Failed != 2 || tk.Healthy || !strings.Contains(tk.Error, "connection refused") ||
		len(tk.Blind) != 1 || !strings.HasPrefix(tk.Blind[0], "redis: ") {
		t.Errorf("tick 0, Redis down: %+v; want failed_jobs' 2 failures, the error and redis blind", tk)
	}
	if tk := ticks[1]; tk.Failed != 4 || strings.Join(tk.Firing, ",") != "app" {
		t.Errorf("tick 1, Redis down: %+v; want 4 failures and the app rule firing", tk)
	}
	if tk := ticks[3]; tk.Error != "" || len(tk.Blind) != 0 || tk.Failed != 4 {
		t.Errorf("tick 3, Redis back: %+v; want it read again", tk)
	}
	if got := strings.Join(rec.events, "|"); !strings.HasPrefix(got, "firing app") {
		t.Errorf("notifications %q, want the failure rate firing", got)
	}
	if opens < 2 {
		t.Errorf("the Redis backend was opened %d times: a failed open was never tried again", opens)
	}
}

// statsBackend is a reachable queue backend with empty queues.
type statsBackend struct{ triage.QueueBackend }

func (statsBackend) Stats(_ context.Context, p triage.QueueStatsParams) ([]triage.QueueStats, error) {
	out := make([]triage.QueueStats, 0, len(p.Queues))
	for _, q := range p.Queues {
		out = append(out, triage.QueueStats{Queue: q})
	}
	return out, nil
}

func (statsBackend) Close() error { return nil }
