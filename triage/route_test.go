package triage_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
	"github.com/jobtriage/jobtriage/triage/triagetest"
)

// fakeBackend records what it was asked to push and answers Stats from a
// fixed table: a stand-in for Redis in service tests (the real backends
// prove the contract in triage/backendtest).
type fakeBackend struct {
	mu     sync.Mutex
	pushed []triage.Move
	stats  map[string]triage.QueueStats
	asked  []string
	down   error // what Stats answers, when set
}

func (f *fakeBackend) Describe() string { return "fake://redis" }
func (f *fakeBackend) Close() error     { return nil }

func (f *fakeBackend) Push(_ context.Context, moves []triage.Move, _ time.Time) (triage.PushResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pushed = append(f.pushed, moves...)
	return triage.PushResult{Pushed: len(moves)}, nil
}

func (f *fakeBackend) Stats(_ context.Context, p triage.QueueStatsParams) ([]triage.QueueStats, error) {
	f.asked = append(f.asked, p.Queues...)
	if f.down != nil {
		return nil, f.down
	}
	var out []triage.QueueStats
	for _, q := range p.Queues {
		s := f.stats[q]
		s.Queue = q
		out = append(out, s)
	}
	return out, nil
}

// newFakeService is a service over the in-memory store holding rows: for
// tests of what the service decides, not of how a database stores it.
func newFakeService(rows ...sqltest.FailedFixture) (*triage.Service, *triagetest.Store) {
	store := triagetest.New(triage.IDModeUUID, time.UTC)
	for _, r := range rows {
		store.Add(triagetest.Row{UUID: *r.UUID, Connection: r.Connection, Queue: r.Queue, Payload: r.Payload,
			Exception: r.Exception, FailedAt: r.FailedAt})
	}
	return &triage.Service{Store: store, Now: fixedNow, AppKey: laravelAppKey, Location: time.UTC}, store
}

func routedFixtures() []sqltest.FailedFixture {
	fx := func(uuid, conn, queue, payload string) sqltest.FailedFixture {
		u := uuid
		return sqltest.FailedFixture{UUID: &u, Connection: conn, Queue: queue, Payload: payload,
			Exception: "RuntimeException: boom in /app/x.php:1", FailedAt: "2026-11-30 23:00:00"}
	}
	return []sqltest.FailedFixture{
		fx("11111111-1111-4111-8111-111111111111", "database", "default", payloadOf("11111111-1111-4111-8111-111111111111", "")),
		// A Redis payload as the list held it: attempts present.
		fx("22222222-2222-4222-8222-222222222222", "redis", "emails", `{"uuid":"22222222-2222-4222-8222-222222222222","displayName":"App\\Jobs\\SendMail","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\SendMail","command":"O:16:\"App\\Jobs\\SendMail\":0:{}"},"id":"r1","attempts":3,"tags":["a"],"pushedAt":"1796086800.1"}`),
		// A Redis payload without attempts: the pop script would lose it.
		fx("33333333-3333-4333-8333-333333333333", "redis", "default", `{"uuid":"33333333-3333-4333-8333-333333333333","displayName":"App\\Jobs\\X","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\X","command":"O:9:\"App\\Jobs\\X\":0:{}"},"id":"r2"}`),
		fx("44444444-4444-4444-8444-444444444444", "sqs", "default", payloadOf("44444444-4444-4444-8444-444444444444", "")),
		fx("55555555-5555-4555-8555-555555555555", "gone", "default", payloadOf("55555555-5555-4555-8555-555555555555", "")),
	}
}

// TestRetryRoutesEachConnectionToItsBackend: with the app's routes, a
// database job goes into the jobs table in the batch's transaction, a Redis
// job to the Redis backend (attempts 0 and always present, every other byte
// kept), and jobs of connections jobtriage cannot write to stay in
// failed_jobs with the artisan hint.
func TestRetryRoutesEachConnectionToItsBackend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, store := newFakeService(routedFixtures()...)
	redis := &fakeBackend{}
	svc.Router = triage.NewRouter(map[string]triage.Route{
		"database": {Driver: triage.DriverDatabase, Local: true},
		"redis":    {Driver: triage.DriverRedis, Backend: redis},
		"sqs":      {Driver: triage.DriverSQS, Reason: `connection "sqs" uses the sqs queue driver, which jobtriage cannot write to`},
	}, nil, nil)
	res, err := svc.Retry(ctx, triage.RetryParams{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Retried != 3 || len(res.Skipped) != 2 {
		t.Fatalf("retried %d, skipped %+v", res.Retried, res.Skipped)
	}
	for _, s := range res.Skipped {
		if s.Code != triage.SkipNotDatabase || !strings.Contains(s.Reason, "php artisan queue:retry") {
			t.Errorf("skip %+v, want not writable with the artisan hint", s)
		}
	}
	if jobs := store.Jobs(); len(jobs) != 1 || jobs[0].UUID != "11111111-1111-4111-8111-111111111111" || jobs[0].Queue != "default" {
		t.Errorf("jobs table %v, want only the database job", jobs)
	}
	if len(redis.pushed) != 2 {
		t.Fatalf("redis got %d jobs, want 2", len(redis.pushed))
	}
	for _, m := range redis.pushed {
		if m.Local || m.Connection != "redis" {
			t.Errorf("move %+v: not routed as a redis move", m)
		}
		a := gjson.GetBytes(m.Payload, "attempts")
		if a.Type != gjson.Number || a.Int() != 0 {
			t.Errorf("%s: attempts %s, want 0 always present", m.UUID, a.Raw)
		}
		if gjson.GetBytes(m.Payload, "id").String() == "" || gjson.GetBytes(m.Payload, "pushedAt").String() == "" && m.UUID == "22222222-2222-4222-8222-222222222222" {
			t.Errorf("%s: id or Horizon keys lost: %s", m.UUID, m.Payload)
		}
	}
	if got := string(redis.pushed[0].Payload); !strings.Contains(got, `"tags":["a"],"pushedAt":"1796086800.1"`) {
		t.Errorf("payload bytes changed beyond attempts: %s", got)
	}
	if n, _ := store.Count(ctx, triage.Filter{}); n != 2 {
		t.Errorf("failed_jobs keeps %d rows, want the two skipped", n)
	}
}

// TestRetryWithoutJobsTableSkipsLocalJobs: an app that queues on Redis may
// have no jobs table; its database-connection jobs are skipped, not an error,
// while its Redis jobs still go.
func TestRetryWithoutJobsTableSkipsLocalJobs(t *testing.T) {
	ctx := context.Background()
	svc, store := newService(t, "sqlite")
	if _, err := store.DB().Exec("DROP TABLE jobs"); err != nil {
		t.Fatal(err)
	}
	reopened, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: store.Endpoint()})
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	svc.Store = reopened
	sqltest.InsertFailed(t, reopened, routedFixtures()[:2]...)
	redis := &fakeBackend{}
	svc.Router = triage.NewRouter(map[string]triage.Route{
		"database": {Driver: triage.DriverDatabase, Local: true},
		"redis":    {Driver: triage.DriverRedis, Backend: redis},
	}, nil, nil)
	res, err := svc.Retry(ctx, triage.RetryParams{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Retried != 1 || len(redis.pushed) != 1 || len(res.Skipped) != 1 || res.Skipped[0].Code != triage.SkipNoJobsTable {
		t.Errorf("retried %d, pushed %d, skipped %+v", res.Retried, len(redis.pushed), res.Skipped)
	}
}

// TestMonitorPerConnection: queues are counted in their connection's
// backend and reported as connection:queue; connections jobtriage cannot
// see are named; a queue named without a connection is the default one's.
func TestMonitorPerConnection(t *testing.T) {
	ctx := context.Background()
	_, store := newService(t, "sqlite")
	now := time.Date(2026, 11, 30, 23, 5, 0, 0, time.UTC)
	sqltest.InsertFailed(t, store, routedFixtures()...)
	addJob(t, store, "reports", nil, now.Add(-time.Minute)) // a queue only the jobs table knows
	redis := &fakeBackend{stats: map[string]triage.QueueStats{
		"default": {Size: 7, Pending: 4, Delayed: 1, Reserved: 2, Stuck: 1, OldestPendingAt: now.Add(-time.Minute)},
		"emails":  {Size: 1, Pending: 1},
	}}
	p := triage.MonitorParams{Now: now, Window: time.Hour, RetryAfter: 90 * time.Second, DefaultConnection: "redis",
		Connections: []triage.MonitorConnection{
			{Name: "database", DefaultQueue: "default", Local: true, RetryAfter: 90 * time.Second},
			// A second database connection on the same jobs table lists
			// nothing of its own: its queues are database's.
			{Name: "database2", DefaultQueue: "", Local: true, RetryAfter: 90 * time.Second},
			{Name: "redis", DefaultQueue: "default", Backend: redis},
			{Name: "sqs", Blind: "the sqs driver cannot be read by jobtriage"},
		}}
	rep, err := triage.Monitor(ctx, store, p)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, q := range rep.Queues {
		got = append(got, q.Connection+":"+q.Queue+"="+itoa(q.Size)+"/"+itoa(q.Failed))
	}
	want := "database:default=0/1 database:reports=1/0 gone:default=0/1 redis:default=7/1 redis:emails=1/1 sqs:default=0/1"
	if strings.Join(got, " ") != want {
		t.Errorf("queues %s\nwant   %s", strings.Join(got, " "), want)
	}
	if len(rep.Blind) != 1 || !strings.HasPrefix(rep.Blind[0], "sqs:") {
		t.Errorf("blind %v", rep.Blind)
	}
	if b := rep.Check(triage.Thresholds{MaxSize: 5}); len(b) != 1 || b[0].Queue != "redis:default" {
		t.Errorf("breaches %+v, want redis:default", b)
	}
	// A bare queue name is the default connection's.
	p.Queues = []triage.QueueRef{{Queue: "default"}}
	rep, err = triage.Monitor(ctx, store, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Queues) != 1 || rep.Queues[0].Connection != "redis" || rep.Queues[0].Size != 7 || rep.Failed != 1 {
		t.Errorf("bare default: %+v failed %d", rep.Queues, rep.Failed)
	}
}

// TestMonitorPartialCountsFailuresWithABackendDown: a queue connection
// whose backend cannot be read fails a check (monitor's exit 5), but with
// Partial (the watcher) the check counts failed_jobs all the same, names
// the connection blind and keeps the error: the watcher reported "failed:
// 0" on every tick while Redis was down.
func TestMonitorPartialCountsFailuresWithABackendDown(t *testing.T) {
	ctx := context.Background()
	_, store := newService(t, "sqlite")
	now := time.Date(2026, 11, 30, 23, 5, 0, 0, time.UTC)
	sqltest.InsertFailed(t, store, routedFixtures()...)
	down := fmt.Errorf("%w: cannot connect to redis://127.0.0.1:6399/0: connection refused", triage.ErrUnreachable)
	p := triage.MonitorParams{Now: now, Window: time.Hour, DefaultConnection: "redis",
		Connections: []triage.MonitorConnection{
			{Name: "database", DefaultQueue: "default", Local: true, RetryAfter: 90 * time.Second},
			{Name: "redis", DefaultQueue: "default", Backend: &fakeBackend{down: down}},
		}}
	if _, err := triage.Monitor(ctx, store, p); !errors.Is(err, triage.ErrUnreachable) {
		t.Errorf("a check with a backend down: %v, want ErrUnreachable", err)
	}
	whole, err := triage.Monitor(ctx, store, triage.MonitorParams{Now: now, Window: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	p.Partial = true
	rep, err := triage.Monitor(ctx, store, p)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed == 0 || rep.Failed != whole.Failed {
		t.Errorf("partial check counts %d failures, want failed_jobs' %d", rep.Failed, whole.Failed)
	}
	if !errors.Is(rep.Unread, triage.ErrUnreachable) || len(rep.Blind) != 1 || !strings.HasPrefix(rep.Blind[0], "redis: counting the queues of connection redis") {
		t.Errorf("unread %v, blind %q; want the redis connection named with its error", rep.Unread, rep.Blind)
	}
	for _, q := range rep.Queues {
		if q.Connection == "redis" && q.Queue == "default" && q.Failed == 0 {
			t.Errorf("redis:default counts no failures: %+v", q)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestRouterPrecedence: a connection named a database queue wins over the
// app profile's route of that name and goes to the other database's jobs
// table when there is one; without a profile only the default connection
// is a database queue; unknown connections say which source to fix.
func TestRouterPrecedence(t *testing.T) {
	redis, jobs := &fakeBackend{}, &fakeBackend{}
	profile := map[string]triage.Route{
		"redis":    {Driver: triage.DriverRedis, Backend: redis},
		"database": {Driver: triage.DriverDatabase, Local: true},
	}
	var zero triage.Router
	if r := zero.For(triage.DefaultDatabaseConnection); !r.Local || r.Driver != triage.DriverDatabase {
		t.Errorf("zero router, default connection: %+v", r)
	}
	if r := zero.For("redis"); r.Writable() || !strings.Contains(r.Reason, "--database-connection") {
		t.Errorf("zero router, redis: %+v", r)
	}
	rt := triage.NewRouter(profile, []string{"redis"}, jobs)
	if r := rt.For("redis"); r.Driver != triage.DriverDatabase || r.Local || r.Backend != jobs || r.Connection != "redis" {
		t.Errorf("--database-connection redis with --jobs-dsn: %+v", r)
	}
	if r := rt.For("database"); !r.Local || r.Connection != "database" {
		t.Errorf("the profile's database route: %+v", r)
	}
	if r := rt.For("sqs"); r.Writable() || !strings.Contains(r.Reason, "config/queue.php") {
		t.Errorf("unknown to the profile: %+v", r)
	}
	if r := triage.NewRouter(nil, []string{"db1"}, nil).For(triage.DefaultDatabaseConnection); r.Writable() {
		t.Errorf("named connections replace the default: %+v", r)
	}
}
