package cmd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/internal/appprofile"
	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// driversQueuePHP has the Laravel 12.34+ skeleton's failover and deferred
// connections, and the other drivers jobtriage names but cannot write to.
const driversQueuePHP = `<?php
return [
    'default' => env('QUEUE_CONNECTION', 'failover'),
    'connections' => [
        'database' => ['driver' => 'database', 'table' => 'jobs', 'queue' => 'default', 'retry_after' => 90],
        'redis' => ['driver' => 'redis', 'connection' => 'queue', 'queue' => 'high', 'retry_after' => 120],
        'deferred' => ['driver' => 'deferred'],
        'background' => ['driver' => 'background'],
        'cloud' => ['driver' => 'cloud'],
        'sqs' => ['driver' => 'sqs', 'queue' => 'default'],
        'beanstalkd' => ['driver' => 'beanstalkd', 'queue' => 'default'],
        'failover' => ['driver' => 'failover', 'connections' => ['database', 'deferred']],
        'to-redis' => ['driver' => 'failover', 'connections' => ['sqs', 'redis']],
    ],
    'failed' => ['driver' => 'database-uuids', 'database' => 'sqlite', 'table' => 'failed_jobs'],
];
`

func driversConfig(t *testing.T) appprofile.Config {
	t.Helper()
	return appWithQueues(t, driversQueuePHP)
}

// TestQueueRoutesFailoverAndNamedDrivers: a failover connection routes
// where FailoverQueue pushes first (the first listed connection jobtriage
// can write to) and monitor counts it through its first connection; the
// drivers jobtriage cannot write to are named with where their jobs wait.
func TestQueueRoutesFailoverAndNamedDrivers(t *testing.T) {
	cfg := driversConfig(t)
	redis := &lazyBackend{lazy[triage.QueueBackend]{describe: "fake"}}
	routes, conns := queueRoutes(cfg, backendOpeners{
		Redis: func(context.Context, appprofile.RedisConnection, time.Duration) (triage.QueueBackend, error) {
			return redis, nil
		},
	})
	if r := routes["failover"]; !r.Local || r.Via != "database" || r.Driver != triage.DriverDatabase {
		t.Errorf("failover route %+v, want the local jobs table via database", r)
	}
	if r := routes["to-redis"]; r.Via != "redis" || r.Backend == nil || r.Backend != routes["redis"].Backend ||
		!strings.Contains(r.ViaNote(), "would try sqs first") {
		t.Errorf("to-redis route %+v (%s), want redis's backend", r, r.ViaNote())
	}
	for name, want := range map[string]string{
		"deferred":   "runs in the dispatching process",
		"background": "PHP process spawned",
		"cloud":      "Laravel Cloud",
		"sqs":        "Amazon SQS",
		"beanstalkd": "beanstalkd, a broker",
	} {
		if r := routes[name]; r.Writable() || !strings.Contains(r.Reason, want) || strings.Contains(r.Reason, "\n") {
			t.Errorf("%s route reason %q, want one line with %q", name, r.Reason, want)
		}
	}
	byName := map[string]triage.MonitorConnection{}
	for _, c := range conns {
		byName[c.Name] = c
	}
	if c := byName["failover"]; !c.Local || c.Blind != "" || c.Via != "database" || c.DefaultQueue != "" {
		t.Errorf("failover monitor connection %+v, want database's jobs table", c)
	}
	if c := byName["cloud"]; !strings.Contains(c.Blind, "Laravel Cloud's managed queue") || !c.Unsupported {
		t.Errorf("cloud monitor connection %+v, want blind naming where its jobs wait", c)
	}
	// FailoverQueue's size is its first connection's, sqs here: unseen.
	if c := byName["to-redis"]; c.Blind == "" || c.Backend != nil {
		t.Errorf("to-redis monitor connection %+v, want blind as sqs is", c)
	}
}

// TestRetryFailoverDryRunNamesWhereJobsGo: from an app whose failover
// connection lists database then deferred, a failed row of failover is
// retried into the jobs table, and the dry run says it goes to database;
// a row of the sqs connection is skipped naming SQS and artisan.
func TestRetryFailoverDryRunNamesWhereJobsGo(t *testing.T) {
	h := newHarness(t, false)
	s := sqltest.OpenLaravel(t, "sqlite", sqlstore.SchemaLaravel8, time.UTC)
	for _, row := range [][2]string{{"11111111-1111-4111-8111-111111111111", "failover"}, {"22222222-2222-4222-8222-222222222222", "sqs"}} {
		sqltest.InsertFailed(t, s, sqltest.FailedFixture{UUID: ptr(row[0]), Connection: row[1], Queue: "default",
			Payload:   `{"uuid":"` + row[0] + `","displayName":"App\\Jobs\\X","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\X","command":"O:9:\"App\\Jobs\\X\":0:{}"}}`,
			Exception: "E", FailedAt: "2026-11-30 10:00:00"})
	}
	writeFiles(t, h.dir, map[string]string{
		"artisan":          "#!/usr/bin/env php\n",
		"config/queue.php": driversQueuePHP,
		"config/database.php": `<?php
return [
    'default' => 'sqlite',
    'connections' => ['sqlite' => ['driver' => 'sqlite', 'database' => '` + s.Endpoint().Path + `', 'prefix' => '']],
];
`,
	})
	if code := h.run("retry", "all", "--dry-run"); code != ExitPartial {
		t.Fatalf("exit %d, want %d (one skipped); stderr %s", code, ExitPartial, h.errOut.String())
	}
	errOut := h.errOut.String()
	for _, want := range []string{
		"note: connection failover fails over to database, deferred: jobs go to database, the first, as Laravel's FailoverQueue pushes them\n",
		`connection "sqs" uses the sqs queue driver (Amazon SQS, a broker jobtriage does not read), which jobtriage cannot write to; retry such jobs with php artisan queue:retry instead`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if !strings.Contains(h.out.String(), "Would retry 1 job") {
		t.Errorf("stdout %q", h.out.String())
	}
	if code := h.run("retry", "all", "--yes"); code != ExitPartial {
		t.Fatalf("retry exit %d; stderr %s", code, h.errOut.String())
	}
	var n int
	if err := s.DB().QueryRow(`SELECT count(*) FROM jobs WHERE payload LIKE '%11111111-1111-4111-8111-111111111111%'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("jobs rows of the failover job: %d, %v", n, err)
	}
}
