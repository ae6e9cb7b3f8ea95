package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/internal/appprofile"
	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// Secrets the doctor apps hold; none may appear in any output.
const (
	doctorDBPassword    = "Sup3r-s3cret-pw"
	doctorRedisPassword = "redis-s3cret-pw"
	doctorCachePassword = "cached-s3cret-pw"
	doctorAppKey        = "base64:c2VjcmV0LWtleS1zZWNyZXQta2V5LXNlY3JldC0xMg=="
	doctorAWSSecret     = "aws-s3cret-key"
)

// doctorAppPHP writes the timezone literally, as laravel/laravel 8–10 and
// 12 do, so APP_TIMEZONE in .env is ignored.
const doctorAppPHP = `<?php
return [
    'name' => env('APP_NAME', 'Laravel'),
    'timezone' => 'UTC',
    'key' => env('APP_KEY'),
];
`

const doctorQueuePHP = `<?php
return [
    'default' => env('QUEUE_CONNECTION', 'sync'),
    'connections' => [
        'sync' => ['driver' => 'sync'],
        'database' => ['driver' => 'database', 'table' => 'jobs', 'queue' => 'default', 'retry_after' => 90],
        'redis' => ['driver' => 'redis', 'connection' => 'default', 'queue' => env('REDIS_QUEUE', 'default'), 'retry_after' => 90],
        'sqs' => ['driver' => 'sqs', 'key' => env('AWS_ACCESS_KEY_ID'), 'secret' => env('AWS_SECRET_ACCESS_KEY'), 'queue' => 'default'],
    ],
    'failed' => [
        'driver' => env('QUEUE_FAILED_DRIVER', 'database-uuids'),
        'database' => env('DB_CONNECTION', 'mysql'),
        'table' => 'failed_jobs',
    ],
];
`

const doctorDatabasePHP = `<?php
return [
    'default' => env('DB_CONNECTION', 'mysql'),
    'connections' => [
        'sqlite' => ['driver' => 'sqlite', 'database' => env('DB_DATABASE'), 'prefix' => ''],
        'mysql' => [
            'driver' => 'mysql',
            'host' => env('DB_HOST', '127.0.0.1'),
            'database' => env('DB_DATABASE', 'forge'),
            'username' => env('DB_USERNAME', 'forge'),
            'password' => env('DB_PASSWORD', ''),
        ],
    ],
    'redis' => [
        'options' => ['prefix' => 'shop_database_'],
        'default' => [
            'host' => env('REDIS_HOST', '127.0.0.1'),
            'password' => env('REDIS_PASSWORD'),
            'port' => env('REDIS_PORT', '6379'),
        ],
    ],
];
`

// doctorCache is the config cache written before .env changed: the queue
// default was redis then.
func doctorCache(dbPath string) string {
	return `<?php return array (
  'app' => 
  array (
    'name' => 'Shop',
    'timezone' => 'UTC',
    'key' => '` + doctorAppKey + `',
  ),
  'database' => 
  array (
    'default' => 'sqlite',
    'connections' => 
    array (
      'sqlite' => array ('driver' => 'sqlite', 'database' => '` + dbPath + `', 'prefix' => ''),
      'mysql' => array ('driver' => 'mysql', 'host' => 'db', 'database' => 'shop', 'username' => 'shop', 'password' => '` + doctorCachePassword + `'),
    ),
    'redis' => 
    array (
      'options' => array ('prefix' => 'shop_database_'),
      'default' => array ('host' => '127.0.0.1', 'password' => '` + doctorRedisPassword + `', 'port' => '6379'),
    ),
  ),
  'queue' => 
  array (
    'default' => 'redis',
    'connections' => 
    array (
      'sync' => array ('driver' => 'sync'),
      'database' => array ('driver' => 'database', 'table' => 'jobs', 'queue' => 'default', 'retry_after' => 90),
      'redis' => array ('driver' => 'redis', 'connection' => 'default', 'queue' => 'default', 'retry_after' => 90),
      'sqs' => array ('driver' => 'sqs', 'key' => 'AKIAX', 'secret' => '` + doctorAWSSecret + `', 'queue' => 'default'),
    ),
    'failed' => 
    array (
      'driver' => 'database-uuids',
      'database' => 'sqlite',
      'table' => 'failed_jobs',
    ),
  ),
);
`
}

// writeFiles writes path → content under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// makeDoctorApp makes a Laravel app in the harness directory with a SQLite
// database holding Laravel's tables and one failed job; cache adds a config
// cache that disagrees with .env.
func makeDoctorApp(t *testing.T, h *harness, cache bool, env string) *sqlstore.Store {
	t.Helper()
	s := sqltest.OpenLaravel(t, "sqlite", sqlstore.SchemaLaravel8, time.UTC)
	sqltest.InsertFailed(t, s, sqltest.FailedFixture{UUID: ptr("11111111-1111-4111-8111-111111111111"), Connection: "database",
		Queue: "default", Payload: `{"uuid":"11111111-1111-4111-8111-111111111111"}`, Exception: "E", FailedAt: "2026-11-30 10:00:00"})
	files := map[string]string{
		"artisan":             "#!/usr/bin/env php\n",
		"config/app.php":      doctorAppPHP,
		"config/queue.php":    doctorQueuePHP,
		"config/database.php": doctorDatabasePHP,
		".env": "APP_NAME=Shop\nAPP_KEY=" + doctorAppKey + "\nDB_CONNECTION=sqlite\nDB_DATABASE=" + s.Endpoint().Path +
			"\nDB_PASSWORD=" + doctorDBPassword + "\nREDIS_PASSWORD=" + doctorRedisPassword + "\nAWS_SECRET_ACCESS_KEY=" + doctorAWSSecret + "\n" + env,
	}
	if cache {
		files["bootstrap/cache/config.php"] = doctorCache(s.Endpoint().Path)
	}
	writeFiles(t, h.dir, files)
	return s
}

// fakeQueue is a reachable queue backend with one pending job.
type fakeQueue struct{ describe string }

func (f fakeQueue) Describe() string { return f.describe }
func (f fakeQueue) Push(context.Context, []triage.Move, time.Time) (triage.PushResult, error) {
	return triage.PushResult{}, errors.New("doctor never pushes")
}
func (f fakeQueue) Stats(_ context.Context, p triage.QueueStatsParams) ([]triage.QueueStats, error) {
	out := make([]triage.QueueStats, 0, len(p.Queues))
	for _, q := range p.Queues {
		out = append(out, triage.QueueStats{Queue: q, Size: 1, Pending: 1})
	}
	return out, nil
}
func (f fakeQueue) Close() error { return nil }

// fakeOpeners open fakeQueues, or fail with err (which echoes the password
// in a URL, as a careless driver might).
func fakeOpeners(err error) backendOpeners {
	return backendOpeners{
		Redis: func(_ context.Context, rc appprofile.RedisConnection, _ time.Duration) (triage.QueueBackend, error) {
			if err != nil {
				return nil, err
			}
			return fakeQueue{describe: rc.Redacted()}, nil
		},
		Database: func(_ context.Context, dc appprofile.DatabaseConnection, table string) (triage.QueueBackend, error) {
			return fakeQueue{describe: dc.Target.Redacted() + " table " + table}, nil
		},
	}
}

// doctorOpts are the run function's inputs over the harness factory.
func doctorOpts(h *harness, openers backendOpeners, jsonOut bool) *DoctorOptions {
	return &DoctorOptions{IO: h.f.IO, Now: h.f.Now, Getenv: h.f.Getenv, Config: h.f.Config, Service: h.f.Service,
		Backends: openers, JSON: jsonOut}
}

// runDoctor runs the run function and returns its exit code.
func runDoctor(t *testing.T, h *harness, opts *DoctorOptions) ExitCode {
	t.Helper()
	h.out.Reset()
	h.errOut.Reset()
	defer h.f.Close()
	return exitCodeFor(doctorRun(context.Background(), opts))
}

func assertNoSecrets(t *testing.T, outputs ...string) {
	t.Helper()
	for _, out := range outputs {
		for _, secret := range []string{doctorDBPassword, doctorRedisPassword, doctorCachePassword, doctorAppKey, "c2VjcmV0LWtleS1zZWNyZXQta2V5", doctorAWSSecret} {
			if strings.Contains(out, secret) {
				t.Errorf("output shows the secret %q:\n%s", secret, out)
			}
		}
	}
}

func TestDoctorFlags(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		wantJSON bool
		wantErr  string
	}{
		{nil, false, ""},
		{[]string{"--json"}, true, ""},
		{[]string{"extra"}, false, "takes no arguments"},
	} {
		h := newHarness(t, false)
		var got *DoctorOptions
		cmd := NewCmdDoctor(h.f, func(_ context.Context, o *DoctorOptions) error { got = o; return nil })
		cmd.SetArgs(tc.args)
		cmd.SetOut(h.out)
		cmd.SetErr(h.errOut)
		err := cmd.Execute()
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: error %v, want %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got == nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got.JSON != tc.wantJSON || got.Config == nil || got.Service == nil || got.Backends.Redis == nil {
			t.Errorf("%v: options %+v", tc.args, got)
		}
	}
}

func TestDoctorCacheContradictsEnv(t *testing.T) {
	h := newHarness(t, false)
	makeDoctorApp(t, h, true, "QUEUE_CONNECTION=database\nAPP_TIMEZONE=Europe/Kyiv\n")
	code := runDoctor(t, h, doctorOpts(h, fakeOpeners(nil), false))
	out := h.out.String()
	if code != ExitError {
		t.Fatalf("exit %d, want %d (contradictions); stderr %s\n%s", code, ExitError, h.errOut.String(), out)
	}
	for _, want := range []string{
		"App\n", "\nSettings\n", "\nQueue connections\n", "\nContradictions\n", "\nChecks\n", "\nIndexes\n",
		"the config cache " + filepath.Join(h.dir, "bootstrap", "cache", "config.php"),
		"queue.default                           redis",
		`error  queue.default: the config cache says "redis" (bootstrap/cache/config.php:`,
		`but .env gives "database" (config/queue.php:3 (QUEUE_CONNECTION from .env)); Laravel uses the cache; run php artisan config:cache after changing .env`,
		`error  APP_TIMEZONE="Europe/Kyiv" is set in .env, but app.timezone is "UTC" (config/app.php:4), which does not read it`,
		`redis (default): redis driver, queue default → redis://127.0.0.1:6379/0 (prefix "shop_database_")`,
		"sqs: sqs driver, queue default → Amazon SQS, a broker jobtriage does not read",
		"      failures: failed_jobs\n",
		"retry: no · monitor: no",
		"use: php artisan queue:retry <id> (retry), php artisan queue:monitor sqs:default (monitor)",
		"ok    failed-jobs database: sqlite:",
		"table failed_jobs present; ids are the uuid column (database-uuids); 1 row",
		`ok queue connection redis: redis://127.0.0.1:6379/0 (prefix "shop_database_") reachable; queue default holds 1 job`,
		`CREATE INDEX "failed_jobs_failed_at_index" ON "failed_jobs" ("failed_at");`,
		"app.key                                 (set)",
	} {
		if !hasText(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(h.errOut.String(), "doctor: 0 failed check(s), 2 contradiction(s)") {
		t.Errorf("stderr %q", h.errOut.String())
	}
	assertNoSecrets(t, out, h.errOut.String())

	h.f.Close()
	code = runDoctor(t, h, doctorOpts(h, fakeOpeners(nil), true))
	if code != ExitError {
		t.Fatalf("--json exit %d", code)
	}
	var rep struct {
		App            map[string]any
		Settings       []appprofile.Setting
		Connections    []doctorConnection
		Contradictions []appprofile.Contradiction
		Checks         []doctorCheck
		Indexes        []sqlstore.IndexAdvice
		OK             *bool
	}
	if err := json.Unmarshal(h.out.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, h.out.String())
	}
	if rep.OK == nil || *rep.OK || rep.App["configuration"] != "config_cache" || len(rep.Settings) == 0 || len(rep.Checks) == 0 || len(rep.Indexes) != 1 {
		t.Errorf("report %+v", rep)
	}
	kinds := map[string]string{}
	for _, c := range rep.Contradictions {
		kinds[c.Kind+" "+c.Key] = c.Severity
	}
	if kinds["cache_vs_env queue.default"] != "error" || kinds["timezone_ignored app.timezone"] != "error" || kinds["unwritable_connection queue.connections.sqs"] != "info" {
		t.Errorf("contradictions %v", kinds)
	}
	var sqs *doctorConnection
	for i, c := range rep.Connections {
		if c.Name == "sqs" {
			sqs = &rep.Connections[i]
		}
	}
	if sqs == nil || sqs.Retry || sqs.Monitor || !strings.Contains(sqs.Artisan, "queue:retry") {
		t.Errorf("sqs connection %+v, want it not covered, with the artisan command", sqs)
	}
	assertNoSecrets(t, h.out.String(), h.errOut.String())
}

func TestDoctorHealthyAppExitsZero(t *testing.T) {
	h := newHarness(t, false)
	s := makeDoctorApp(t, h, false, "QUEUE_CONNECTION=database\n")
	if _, err := s.DB().Exec(`CREATE INDEX failed_jobs_failed_at_index ON failed_jobs (failed_at)`); err != nil {
		t.Fatal(err)
	}
	code := runDoctor(t, h, doctorOpts(h, fakeOpeners(nil), false))
	out := h.out.String()
	if code != ExitOK {
		t.Fatalf("exit %d; stderr %s\n%s", code, h.errOut.String(), out)
	}
	for _, want := range []string{
		"config/app.php, config/database.php, config/queue.php (over jobtriage's built-in Laravel 8 defaults) with the environment and " + filepath.Join(h.dir, ".env"),
		"queue.default                           database  config/queue.php:3 (QUEUE_CONNECTION from .env)",
		"database (default): database driver, queue default → table jobs in the failed-jobs database",
		"note   queue connection sqs",
		"Indexes\n  nothing to add\n",
	} {
		if !hasText(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "  error  ") || strings.Contains(out, "  FAIL  ") || h.errOut.Len() != 0 {
		t.Errorf("a healthy app reported a problem:\n%s\nstderr %s", out, h.errOut.String())
	}
	assertNoSecrets(t, out)
}

func TestDoctorUnreachableRedisFails(t *testing.T) {
	h := newHarness(t, false)
	makeDoctorApp(t, h, false, "QUEUE_CONNECTION=database\n")
	openErr := errors.New("database unreachable: cannot connect to redis://:" + doctorRedisPassword + "@127.0.0.1:6379/0: connection refused\nsecond line")
	code := runDoctor(t, h, doctorOpts(h, fakeOpeners(openErr), false))
	out := h.out.String()
	if code != ExitError {
		t.Fatalf("exit %d, want %d", code, ExitError)
	}
	if !strings.Contains(out, `FAIL  queue connection redis: redis://127.0.0.1:6379/0 (prefix "shop_database_"): database unreachable: cannot connect to redis://`) ||
		!strings.Contains(out, "connection refused …") {
		t.Errorf("report lacks the one-line Redis failure:\n%s", out)
	}
	if !strings.Contains(h.errOut.String(), "doctor: 1 failed check(s), 0 contradiction(s)") {
		t.Errorf("stderr %q", h.errOut.String())
	}
	assertNoSecrets(t, out, h.errOut.String())
}

func TestDoctorConfigurationErrorFails(t *testing.T) {
	h := newHarness(t, false)
	writeFiles(t, h.dir, map[string]string{"artisan": "", ".env": "QUEUE_FAILED_DRIVER=null\nDB_PASSWORD=" + doctorDBPassword + "\n"})
	code := runDoctor(t, h, doctorOpts(h, fakeOpeners(nil), false))
	out := h.out.String()
	if code != ExitError || !strings.Contains(out, "FAIL  configuration:") || !strings.Contains(out, "does not store failed jobs") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	assertNoSecrets(t, out, h.errOut.String())
}

// TestDoctorCommand runs the real command tree on a database outside any
// app: only the index advice (a warning) is reported, and it exits 0.
func TestDoctorCommand(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, false)
	if code := h.run("doctor", "--dsn", dsn); code != ExitOK {
		t.Fatalf("exit %d; stderr %s\n%s", code, h.errOut.String(), h.out.String())
	}
	for _, want := range []string{"no Laravel app here", "ok    failed-jobs database: " + dsn + " (SQLite ", "Contradictions\n  none\n", "warn  failed_jobs(failed_at) is not indexed"} {
		if !strings.Contains(h.out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, h.out.String())
		}
	}
	if code := h.run("doctor", "--dsn", "sqlite:"+filepath.Join(h.dir, "missing.sqlite"), "--json"); code != ExitError {
		t.Fatalf("missing database: exit %d", code)
	}
	var rep map[string]any
	if err := json.Unmarshal(h.out.Bytes(), &rep); err != nil || rep["ok"] != false {
		t.Errorf("%v: %s", err, h.out.String())
	}
}

// hasText reports whether out contains want, comparing runs of blanks as
// one space (column widths depend on the longest cell).
func hasText(out, want string) bool {
	norm := func(s string) string {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			lines[i] = strings.Join(strings.Fields(l), " ")
		}
		return strings.Join(lines, "\n")
	}
	return strings.Contains(norm(out), norm(want))
}

// Under a context, doctor compares the config cache with the .env that
// context names (its app directory, its env-file), as every other command
// resolves it, not with the working directory's.
func TestDoctorReadsTheContextsApp(t *testing.T) {
	appH := newHarness(t, false)
	makeDoctorApp(t, appH, true, "QUEUE_CONNECTION=redis\n") // .env agrees with the cache
	envFile := filepath.Join(appH.dir, ".env.ctx")
	writeFiles(t, appH.dir, map[string]string{".env.ctx": "APP_KEY=" + doctorAppKey + "\nQUEUE_CONNECTION=database\n"})
	path := filepath.Join(t.TempDir(), "config.toml")
	doc := "[contexts.shop]\napp = " + strconv.Quote(appH.dir) + "\nenv-file = " + strconv.Quote(envFile) + "\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, false) // another working directory
	withEnv(h, map[string]string{"JOBTRIAGE_CONFIG": path})
	h.f.ContextName = "shop"
	runDoctor(t, h, doctorOpts(h, fakeOpeners(nil), false))
	if out := h.out.String(); !hasText(out, `error  queue.default: the config cache says "redis"`) || !hasText(out, `.env.ctx gives "database"`) {
		t.Errorf("doctor did not compare the cache with the context's env file:\n%s\n%s", out, h.errOut.String())
	}
}
