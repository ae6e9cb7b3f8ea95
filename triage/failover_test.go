package triage_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

func failoverFixture(uuid string) sqltest.FailedFixture {
	return sqltest.FailedFixture{UUID: &uuid, Connection: "failover", Queue: "default", Payload: payloadOf(uuid, ""),
		Exception: "RuntimeException: boom in /app/x.php:1", FailedAt: "2026-11-30 23:00:00"}
}

// TestRetryFailoverPushesToFirstWritableConnection: a row recorded on a
// failover connection goes where FailoverQueue pushes first, the first
// listed connection jobtriage can write to; the run names it, and the
// queue it lands on is that connection's (pause, workers).
func TestRetryFailoverPushesToFirstWritableConnection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		listed []string
		via    string
		note   string
	}{
		{"first is writable", []string{"redis", "database", "deferred"}, "redis", "jobs go to redis, the first"},
		{"first is not", []string{"sqs", "redis"}, "redis", "would try sqs first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const uuid = "66666666-6666-4666-8666-666666666666"
			svc, store := newFakeService(failoverFixture(uuid))
			redis := &fakeBackend{}
			svc.Router = triage.NewRouter(map[string]triage.Route{
				"database": {Driver: triage.DriverDatabase, Local: true},
				"redis":    {Driver: triage.DriverRedis, Backend: redis},
				"sqs":      {Driver: triage.DriverSQS, Reason: "no"},
				"deferred": {Driver: "deferred", Reason: "no"},
				"failover": {Driver: triage.DriverFailover, Failover: tc.listed},
			}, nil, nil)
			if r := svc.Router.For("failover"); r.Via != tc.via || r.Driver != triage.DriverRedis || r.Backend != redis {
				t.Fatalf("failover route %+v, want via %s", r, tc.via)
			}
			dry, err := svc.Retry(ctx, triage.RetryParams{All: true, DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			if dry.Retried != 1 || len(dry.FailsOver) != 1 || !strings.Contains(dry.FailsOver[0], tc.note) {
				t.Fatalf("dry run: retried %d, fails over %q; want 1 and a note with %q", dry.Retried, dry.FailsOver, tc.note)
			}
			res, err := svc.Retry(ctx, triage.RetryParams{All: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Retried != 1 || len(redis.pushed) != 1 || redis.pushed[0].UUID != uuid || len(store.Jobs()) != 0 {
				t.Fatalf("retried %d, redis got %+v, jobs table %v", res.Retried, redis.pushed, store.Jobs())
			}
			if len(res.Targets) != 1 || res.Targets[0] != (triage.QueueRef{Connection: tc.via, Queue: "default"}) {
				t.Errorf("targets %v, want %s:default", res.Targets, tc.via)
			}
		})
	}
}

// TestRetryFailoverToLocalJobsTable: the skeleton's failover (database,
// deferred) puts the job in the failed_jobs database's jobs table, in the
// batch's transaction.
func TestRetryFailoverToLocalJobsTable(t *testing.T) {
	t.Parallel()
	const uuid = "77777777-7777-4777-8777-777777777777"
	svc, store := newFakeService(failoverFixture(uuid))
	svc.Router = triage.NewRouter(map[string]triage.Route{
		"database": {Driver: triage.DriverDatabase, Local: true},
		"deferred": {Driver: "deferred", Reason: "no"},
		"failover": {Driver: triage.DriverFailover, Failover: []string{"database", "deferred"}},
	}, nil, nil)
	res, err := svc.Retry(context.Background(), triage.RetryParams{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if jobs := store.Jobs(); res.Retried != 1 || len(jobs) != 1 || jobs[0].UUID != uuid {
		t.Fatalf("retried %d, jobs table %v", res.Retried, jobs)
	}
}

// TestRetryFailoverNothingWritable: a failover connection none of whose
// connections jobtriage can write to is skipped, naming them and artisan.
func TestRetryFailoverNothingWritable(t *testing.T) {
	t.Parallel()
	svc, _ := newFakeService(failoverFixture("88888888-8888-4888-8888-888888888888"))
	svc.Router = triage.NewRouter(map[string]triage.Route{
		"sqs":      {Driver: triage.DriverSQS, Reason: "no"},
		"failover": {Driver: triage.DriverFailover, Failover: []string{"sqs", "failover", "gone"}},
	}, nil, nil)
	res, err := svc.Retry(context.Background(), triage.RetryParams{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Code != triage.SkipNotDatabase ||
		!strings.Contains(res.Skipped[0].Reason, `fails over to "sqs", "failover", "gone"`) ||
		!strings.Contains(res.Skipped[0].Reason, "php artisan queue:retry") {
		t.Fatalf("skipped %+v", res.Skipped)
	}
}

// TestMonitorFailoverFollowsFirstConnection: a failover connection is
// counted through its first connection, as FailoverQueue's size and
// pending delegate to it, and lists no queue of its own twice.
func TestMonitorFailoverFollowsFirstConnection(t *testing.T) {
	ctx := context.Background()
	_, store := newService(t, "sqlite")
	now := time.Date(2026, 11, 30, 23, 5, 0, 0, time.UTC)
	sqltest.InsertFailed(t, store, failoverFixture("99999999-9999-4999-8999-999999999999"))
	redis := &fakeBackend{stats: map[string]triage.QueueStats{"default": {Size: 7, Pending: 7}}}
	conns := triage.FollowFailover([]triage.MonitorConnection{
		{Name: "failover", Via: "redis"},
		{Name: "redis", DefaultQueue: "default", Backend: redis},
		{Name: "deferred", Blind: "the deferred driver cannot be read by jobtriage", Unsupported: true},
		{Name: "later", Via: "deferred"},
	})
	rep, err := triage.Monitor(ctx, store, triage.MonitorParams{Now: now, Window: time.Hour, Connections: conns})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, q := range rep.Queues {
		got = append(got, q.Connection+":"+q.Queue+"="+itoa(q.Size)+"/"+itoa(q.Failed))
	}
	if want := "failover:default=7/1 redis:default=7/0"; strings.Join(got, " ") != want {
		t.Errorf("queues %s\nwant   %s", strings.Join(got, " "), want)
	}
	if len(rep.Blind) != 2 || !strings.Contains(rep.Blind[1], "later: counted through its first connection, deferred") {
		t.Errorf("blind %q", rep.Blind)
	}
}
