package cmd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/internal/appprofile"
	"github.com/jobtriage/jobtriage/triage"
)

const routesQueuePHP = `<?php
return [
    'default' => env('QUEUE_CONNECTION', 'redis'),
    'connections' => [
        'database' => ['driver' => 'database', 'table' => 'jobs', 'queue' => 'default', 'retry_after' => 90],
        'reports' => ['driver' => 'database', 'connection' => 'warehouse', 'table' => 'report_jobs', 'queue' => 'reports', 'retry_after' => 600],
        'redis' => ['driver' => 'redis', 'connection' => 'queue', 'queue' => 'high', 'retry_after' => 120],
        'sqs' => ['driver' => 'sqs', 'queue' => 'default'],
    ],
    'failed' => ['driver' => 'database-uuids', 'database' => 'sqlite', 'table' => 'failed_jobs'],
];
`

const routesDatabasePHP = `<?php
return [
    'default' => 'sqlite',
    'connections' => [
        'sqlite' => ['driver' => 'sqlite', 'database' => database_path('app.sqlite'), 'prefix' => ''],
        'warehouse' => ['driver' => 'pgsql', 'host' => 'wh', 'database' => 'wh', 'username' => 'u', 'password' => 'pw-secret-1', 'prefix' => 'w_'],
    ],
    'redis' => [
        'options' => ['prefix' => 'shop_database_'],
        'queue' => ['host' => 'redis.internal', 'port' => 6380, 'database' => 2, 'password' => 'redis-pw-1'],
    ],
];
`

func routesConfig(t *testing.T) appprofile.Config {
	t.Helper()
	return appWithQueues(t, routesQueuePHP)
}

// appWithQueues resolves an app whose config/queue.php is queuePHP, beside
// routesDatabasePHP and an SQLite database file.
func appWithQueues(t *testing.T, queuePHP string) appprofile.Config {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"artisan":             "",
		"config/queue.php":    queuePHP,
		"config/database.php": routesDatabasePHP,
		"database/app.sqlite": "",
	} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := appprofile.Resolve(appprofile.Options{Dir: dir, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestQueueRoutes: each queue connection of the app profile gets the
// backend its driver uses, opened lazily; undriveable ones get a reason.
func TestQueueRoutes(t *testing.T) {
	cfg := routesConfig(t)
	var opened []string
	routes, conns := queueRoutes(cfg, backendOpeners{
		Redis: func(_ context.Context, rc appprofile.RedisConnection, retryAfter time.Duration) (triage.QueueBackend, error) {
			opened = append(opened, "redis "+rc.Host+" "+rc.Prefix+" "+retryAfter.String())
			return nil, context.Canceled
		},
		Database: func(_ context.Context, dc appprofile.DatabaseConnection, table string) (triage.QueueBackend, error) {
			opened = append(opened, "db "+dc.Name+" "+table)
			return nil, context.Canceled
		},
	})
	if len(opened) != 0 {
		t.Fatalf("backends opened while routing: %v", opened)
	}
	if r := routes["database"]; !r.Local || r.Backend != nil {
		t.Errorf("database route %+v, want local", r)
	}
	if r := routes["sqs"]; r.Writable() || !strings.Contains(r.Reason, "sqs") {
		t.Errorf("sqs route %+v, want not writable with a reason", r)
	}
	rd := routes["redis"]
	if rd.Backend == nil || !strings.Contains(rd.Backend.Describe(), "redis.internal:6380/2") || strings.Contains(rd.Backend.Describe(), "redis-pw-1") {
		t.Errorf("redis route describes %q", rd.Backend.Describe())
	}
	rp := routes["reports"]
	if rp.Backend == nil || rp.Local || strings.Contains(rp.Backend.Describe(), "pw-secret-1") {
		t.Errorf("reports route %+v", rp)
	}
	ctx := context.Background()
	_, _ = rd.Backend.Push(ctx, nil, time.Time{})
	_, _ = rp.Backend.Stats(ctx, triage.QueueStatsParams{})
	// An open that failed is tried again: a watcher sees a server that came back.
	_, _ = rd.Backend.Push(ctx, nil, time.Time{})
	if got := strings.Join(opened, "|"); got != "redis redis.internal shop_database_ 2m0s|db warehouse w_report_jobs|redis redis.internal shop_database_ 2m0s" {
		t.Errorf("opened %q", got)
	}
	var names []string
	for _, c := range conns {
		names = append(names, c.Name+":"+c.DefaultQueue)
		if c.Name == "sqs" && c.Blind == "" {
			t.Error("sqs not reported blind")
		}
	}
	if strings.Join(names, " ") != "database:default reports:reports redis:high sqs:default" {
		t.Errorf("monitor connections %v", names)
	}
	if cfg.DefaultQueueConnection() != "redis" {
		t.Errorf("default connection %q", cfg.DefaultQueueConnection())
	}
}

// TestDatabaseConnectionFlagRefusedForRedis: naming a Redis connection a
// database queue would strand its jobs in a table no worker reads.
func TestDatabaseConnectionFlagRefusedForRedis(t *testing.T) {
	routes := map[string]triage.Route{"redis": {Driver: triage.DriverRedis}, "database": {Driver: triage.DriverDatabase, Local: true}}
	if err := checkDatabaseConnections(routes, []string{"database", "custom"}); err != nil {
		t.Errorf("database/custom refused: %v", err)
	}
	err := checkDatabaseConnections(routes, []string{"redis"})
	if err == nil || !strings.Contains(err.Error(), "stranded") || exitCodeFor(err) != ExitUsage {
		t.Errorf("redis: %v (exit %d)", err, exitCodeFor(err))
	}
}

// nilBackend is what a failing opener returns through the interface.
type nilBackend struct{ triage.QueueBackend }

// TestLazyBackendFailedOpenCloses: a backend that could not be opened
// reports the error on use and closes as nothing, even when the opener
// returned a typed nil beside its error (redisqueue.Open does).
func TestLazyBackendFailedOpenCloses(t *testing.T) {
	refused := errors.New("connection refused")
	l := &lazyBackend{lazy[triage.QueueBackend]{open: func(context.Context) (triage.QueueBackend, error) { return (*nilBackend)(nil), refused }}}
	if _, err := l.Stats(context.Background(), triage.QueueStatsParams{}); !errors.Is(err, refused) {
		t.Errorf("Stats: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
