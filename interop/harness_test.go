package interop

import (
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"

	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/gofrs/flock"
	_ "github.com/lib/pq"
)

const (
	postgresDatabase = "jobtriage_interop_pg"
	mysqlDatabase    = "jobtriage_interop_my"

	artisanTimeout = 30 * time.Second
	workerTimeout  = 60 * time.Second
	// drainDeadline bounds all worker runs of one scenario: the slowest job
	// (ImportFeed) fails about retry-until-seconds + 2 s after dispatch.
	drainDeadline = 60 * time.Second
)

// requireInterop skips unless JOBTRIAGE_INTEROP=1 or CI is set. Past it,
// anything missing (php, a database) is a failure: CI must not go green by
// skipping.
func requireInterop(t *testing.T) {
	t.Helper()
	if os.Getenv("JOBTRIAGE_INTEROP") != "1" && os.Getenv("CI") == "" {
		t.Skip("interop tests are off: set JOBTRIAGE_INTEROP=1 (or CI) to run them against real Laravel workers")
	}
}

// dialect is one database the Laravel app and jobtriage share.
type dialect struct {
	name       string   // file-name friendly: sqlite, postgres, mysql
	laravelEnv []string // DB_* variables for the PHP side
	dsn        string   // what jobtriage gets with --dsn
	admin      string   // the server DSN the scratch database is (re)created through
}

// dialects returns every configured database, each freshly created.
func dialects(t *testing.T) []dialect {
	t.Helper()
	out := []dialect{sqliteDialect(t)}
	// Unset DSNs mean the local servers, as in the storage tests: the
	// interop run always covers all three databases.
	raw := sqltest.DefaultPostgresDSN
	if v := os.Getenv(sqltest.PostgresEnv); v != "" {
		raw = v
	}
	d, err := postgresDialect(raw)
	if err != nil {
		t.Fatalf("interop prerequisite missing: %s: %v", sqltest.PostgresEnv, err)
	}
	out = append(out, d)
	raw = sqltest.DefaultMySQLDSN
	if v := os.Getenv(sqltest.MySQLEnv); v != "" {
		raw = v
	}
	if d, err = mysqlDialect(raw); err != nil {
		t.Fatalf("interop prerequisite missing: %s: %v", sqltest.MySQLEnv, err)
	}
	return append(out, d)
}

func sqliteDialect(t *testing.T) dialect {
	t.Helper()
	path := filepath.Join(t.TempDir(), "interop.sqlite")
	return dialect{
		name:       "sqlite",
		laravelEnv: []string{"DB_CONNECTION=sqlite", "DB_DATABASE=" + path},
		dsn:        "sqlite:" + path,
	}
}

// postgresDialect turns an admin DSN into a dialect on its own database,
// leaving the admin database untouched.
func postgresDialect(raw string) (dialect, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return dialect{}, fmt.Errorf("not a URL: %w", err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return dialect{}, fmt.Errorf("scheme %q, want postgres://", u.Scheme)
	}
	env, err := laravelEnvFromURL("pgsql", "5432", u, postgresDatabase)
	if err != nil {
		return dialect{}, err
	}
	target := *u
	target.Path = "/" + postgresDatabase
	return dialect{name: "postgres", laravelEnv: env, dsn: target.String(), admin: raw}, nil
}

func mysqlDialect(raw string) (dialect, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return dialect{}, fmt.Errorf("not a URL: %w", err)
	}
	if u.Scheme != "mysql" && u.Scheme != "mariadb" {
		return dialect{}, fmt.Errorf("scheme %q, want mysql://", u.Scheme)
	}
	env, err := laravelEnvFromURL("mysql", "3306", u, mysqlDatabase)
	if err != nil {
		return dialect{}, err
	}
	target := *u
	target.Scheme = "mysql"
	target.Path = "/" + mysqlDatabase
	return dialect{name: "mysql", laravelEnv: env, dsn: target.String(), admin: raw}, nil
}

// laravelEnvFromURL spells a database URL as the DB_* variables the app's
// config/database.php reads.
func laravelEnvFromURL(connection, defaultPort string, u *url.URL, database string) ([]string, error) {
	if u.Hostname() == "" {
		return nil, errors.New("no host in DSN")
	}
	if u.User == nil || u.User.Username() == "" {
		return nil, errors.New("no user in DSN")
	}
	port := u.Port()
	if port == "" {
		port = defaultPort
	}
	password, _ := u.User.Password()
	return []string{
		"DB_CONNECTION=" + connection,
		"DB_HOST=" + u.Hostname(),
		"DB_PORT=" + port,
		"DB_DATABASE=" + database,
		"DB_USERNAME=" + u.User.Username(),
		"DB_PASSWORD=" + password,
	}, nil
}

// recreateDatabase drops and creates the dialect's scratch database through
// the admin DSN. SQLite needs only an empty file.
func recreateDatabase(ctx context.Context, d dialect) error {
	switch d.name {
	case "sqlite":
		path := strings.TrimPrefix(d.dsn, "sqlite:")
		return os.WriteFile(path, nil, 0o644)
	case "postgres":
		db, err := sql.Open("postgres", d.admin)
		if err != nil {
			return err
		}
		defer db.Close()
		// FORCE (PostgreSQL 13+) ends sessions a crashed earlier run left behind.
		if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+postgresDatabase+" WITH (FORCE)"); err != nil {
			if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+postgresDatabase); err != nil {
				return fmt.Errorf("drop %s: %w", postgresDatabase, err)
			}
		}
		if _, err := db.ExecContext(ctx, "CREATE DATABASE "+postgresDatabase); err != nil {
			return fmt.Errorf("create %s: %w", postgresDatabase, err)
		}
		return nil
	case "mysql":
		u, err := url.Parse(d.admin)
		if err != nil {
			return err
		}
		cfg := mysql.NewConfig()
		cfg.Net = "tcp"
		cfg.Addr = u.Host
		if u.Port() == "" {
			cfg.Addr = u.Hostname() + ":3306"
		}
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
		db, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			return err
		}
		defer db.Close()
		if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+mysqlDatabase); err != nil {
			return fmt.Errorf("drop %s: %w", mysqlDatabase, err)
		}
		if _, err := db.ExecContext(ctx, "CREATE DATABASE "+mysqlDatabase+" CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"); err != nil {
			return fmt.Errorf("create %s: %w", mysqlDatabase, err)
		}
		return nil
	}
	return fmt.Errorf("unknown dialect %q", d.name)
}

// holdDatabase serialises interop runs on one machine that share a fixed
// database name (two `go test` processes, or a developer and an editor
// plugin): recreating the database under a running test would kill its
// sessions. The lock is held until the test that took it ends.
func holdDatabase(t *testing.T, d dialect) {
	t.Helper()
	if d.name == "sqlite" {
		return // a private temp file
	}
	lock := flock.New(filepath.Join(os.TempDir(), "jobtriage-interop-"+d.name+".lock"))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	locked, err := lock.TryLockContext(ctx, 250*time.Millisecond)
	if err != nil || !locked {
		t.Fatalf("another interop run holds %s for too long: %v", lock.Path(), err)
	}
	t.Cleanup(func() { _ = lock.Unlock() })
}

// laravelTargetsEnv lists the real Laravels the cases run against, as
// VERSION=PHP items separated by spaces or commas, e.g.
// "8.83=php 10.48=/var/cache/jobtriage-laravel/trixie-php" (the wrappers
// testdata/laravel-chroot/setup.sh installs). Unset means "8.83=php".
const laravelTargetsEnv = "JOBTRIAGE_INTEROP_LARAVEL"

// laravelTarget is one real Laravel: the php that boots it and the app
// directory under testdata written in its shape.
type laravelTarget struct {
	version string // major.minor; the subtest is laravel=VERSION
	php     string
	app     string // absolute path of the app directory
}

// laravelAppDir names the app each supported Laravel boots: 8 and 10 take
// the 8.x skeleton, 13 needs the 11+ one (Application::configure()).
func laravelAppDir(version string) (string, bool) {
	switch version {
	case "8.83", "10.48":
		return "laravel-app", true
	case "13.31":
		return "laravel13-app", true
	}
	return "", false
}

// parseLaravelTargets reads laravelTargetsEnv's value.
func parseLaravelTargets(raw string) ([]laravelTarget, error) {
	if strings.TrimSpace(raw) == "" {
		raw = "8.83=php"
	}
	var out []laravelTarget
	seen := map[string]bool{}
	for _, item := range strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		version, php, ok := strings.Cut(item, "=")
		if !ok || version == "" || php == "" {
			return nil, fmt.Errorf("%s: %q is not VERSION=PHP", laravelTargetsEnv, item)
		}
		dir, ok := laravelAppDir(version)
		if !ok {
			return nil, fmt.Errorf("%s: no app for Laravel %s (known: 8.83, 10.48, 13.31)", laravelTargetsEnv, version)
		}
		if seen[version] {
			return nil, fmt.Errorf("%s: Laravel %s listed twice", laravelTargetsEnv, version)
		}
		seen[version] = true
		abs, err := filepath.Abs(filepath.Join("..", "testdata", dir))
		if err != nil {
			return nil, err
		}
		out = append(out, laravelTarget{version: version, php: php, app: abs})
	}
	return out, nil
}

// forEachLaravel runs body once per listed Laravel as subtest
// laravel=VERSION, one version after the other (the cases parallelise
// over databases inside). A listed Laravel whose php is missing fails.
func forEachLaravel(t *testing.T, body func(t *testing.T, lv laravelTarget)) {
	t.Helper()
	forEachLaravelWhere(t, func(laravelTarget) bool { return true }, body)
}

// forEachLaravelWhere is forEachLaravel for a case that exists only on some
// Laravels (keep says which); the others get no subtest at all.
func forEachLaravelWhere(t *testing.T, keep func(laravelTarget) bool, body func(t *testing.T, lv laravelTarget)) {
	t.Helper()
	targets, err := parseLaravelTargets(os.Getenv(laravelTargetsEnv))
	if err != nil {
		t.Fatal(err)
	}
	for _, lv := range targets {
		if !keep(lv) {
			continue
		}
		t.Run("laravel="+lv.version, func(t *testing.T) {
			if _, err := exec.LookPath(lv.php); err != nil {
				t.Fatalf("interop prerequisite missing: php for Laravel %s (%s): %v (testdata/laravel-app/install-deps.sh, testdata/laravel-chroot/setup.sh)", lv.version, lv.php, err)
			}
			body(t, lv)
		})
	}
}

// laravel8Skeleton: the target boots testdata/laravel-app, whose
// interop:reset can also build the 7.x failed_jobs table of an app upgraded
// from Laravel 7 (INTEROP_FAILED_SCHEMA=legacy); the 11+ skeleton never had it.
func laravel8Skeleton(lv laravelTarget) bool { return filepath.Base(lv.app) == "laravel-app" }

// laravelApp runs artisan in a Laravel app directory for one dialect.
type laravelApp struct {
	phpCmd  string // the php command of its laravelTarget
	dir     string
	env     []string
	flag    string // INTEROP_FLAG_FILE: jobs fail while it is missing
	results string // INTEROP_RESULTS_FILE: one JSON line per successful job
	scratch string
}

// newLaravelApp prepares the app for one dialect; extraEnv (e.g.
// QUEUE_CONNECTION=redis and the REDIS_* of redisEnv) is added last, so it
// wins over the defaults set here.
func newLaravelApp(t *testing.T, lv laravelTarget, d dialect, extraEnv ...string) *laravelApp {
	t.Helper()
	scratch := t.TempDir()
	app := &laravelApp{
		phpCmd:  lv.php,
		dir:     lv.app,
		flag:    filepath.Join(scratch, "flag"),
		results: filepath.Join(scratch, "results.jsonl"),
		scratch: scratch,
	}
	app.env = append(withoutLaravelEnv(os.Environ()),
		"APP_ENV=testing",
		"INTEROP_STORAGE="+filepath.Join(scratch, "storage"),
		"INTEROP_FLAG_FILE="+app.flag,
		"INTEROP_RESULTS_FILE="+app.results,
	)
	app.env = append(append(app.env, d.laravelEnv...), extraEnv...)
	return app
}

// withoutLaravelEnv drops variables a developer's shell may export that would
// point the app somewhere else (real env beats config defaults in Laravel).
func withoutLaravelEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "DB_") || strings.HasPrefix(name, "APP_") || strings.HasPrefix(name, "QUEUE_") || strings.HasPrefix(name, "INTEROP_") || strings.HasPrefix(name, "REDIS_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// artisan runs one command and returns its combined output.
func (a *laravelApp) artisan(timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.phpCmd, append([]string{"artisan"}, args...)...)
	cmd.Dir = a.dir
	cmd.Env = a.env
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("php artisan %s: timed out after %s", strings.Join(args, " "), timeout)
	}
	return out.String(), err
}

func (a *laravelApp) mustArtisan(t *testing.T, args ...string) string {
	t.Helper()
	out, err := a.artisan(artisanTimeout, args...)
	if err != nil {
		t.Fatalf("php artisan %s: %v\n%s\nlaravel.log:\n%s", strings.Join(args, " "), err, out, a.log())
	}
	return out
}

// php runs code after booting the app as artisan does (config, database,
// facades), in the app's environment.
func (a *laravelApp) php(t *testing.T, code string) string {
	t.Helper()
	const boot = `require 'bootstrap/autoload.php'; $app = require 'bootstrap/app.php'; $app->make(Illuminate\Contracts\Console\Kernel::class)->bootstrap(); `
	ctx, cancel := context.WithTimeout(context.Background(), artisanTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.phpCmd, "-r", boot+code)
	cmd.Dir = a.dir
	cmd.Env = a.env
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("php -r %s: %v\n%s\nlaravel.log:\n%s", code, err, out, a.log())
	}
	return string(out)
}

func (a *laravelApp) log() string {
	b, err := os.ReadFile(filepath.Join(a.scratch, "storage", "logs", "laravel.log"))
	if err != nil {
		return "(none)"
	}
	const keep = 4000
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return string(b)
}

type queueStatus struct {
	Jobs            int `json:"jobs"`
	Failed          int `json:"failed"`
	NextAvailableIn int `json:"next_available_in"`
}

func (a *laravelApp) status(t *testing.T) queueStatus {
	t.Helper()
	out := a.mustArtisan(t, "interop:status")
	var st queueStatus
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &st); err != nil {
		t.Fatalf("interop:status printed %q: %v", out, err)
	}
	return st
}

// drain runs `queue:work --stop-when-empty` until the jobs table is empty. A
// worker that a timed-out job killed (SIGKILL from Laravel's own timeout
// handler) is expected; so is waiting for a released job to become due.
func (a *laravelApp) drain(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(drainDeadline)
	var transcript strings.Builder
	for {
		out, err := a.artisan(workerTimeout, "queue:work", "--stop-when-empty", "--tries=1", "--queue=default,emails")
		fmt.Fprintf(&transcript, "--- worker (err=%v)\n%s", err, out)
		st := a.status(t)
		if st.Jobs == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs still queued after %s of workers\n%s\nlaravel.log:\n%s", st.Jobs, drainDeadline, transcript.String(), a.log())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func (a *laravelApp) setFlag(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(a.flag, []byte("go\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// jobResult is what a successful interop job appends to the results file.
type jobResult struct {
	Class string         `json:"class"`
	Args  map[string]any `json:"args"`
}

func (a *laravelApp) readResults(t *testing.T) []jobResult {
	t.Helper()
	b, err := os.ReadFile(a.results)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []jobResult
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var r jobResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("results line %d %q: %v", i+1, line, err)
		}
		out = append(out, r)
	}
	return out
}

// manifest is what interop:dispatch wrote: the jobs it queued and what a
// triage tool must report once the worker has failed them.
type manifest struct {
	LaravelVersion string            `json:"laravel_version"`
	DBConnection   string            `json:"db_connection"`
	Timezone       string            `json:"timezone"`
	Failures       []expectedFailure `json:"failures"`
}

type expectedFailure struct {
	Key               string    `json:"key"`
	UUID              string    `json:"uuid"`
	Class             string    `json:"class"`
	Queue             string    `json:"queue"`
	Connection        string    `json:"connection"`
	ExceptionClass    string    `json:"exception_class"`
	ExceptionMessage  string    `json:"exception_message"`
	Result            jobResult `json:"result"`
	RetryUntilExpires bool      `json:"retry_until_expires"`
	// Job is the payload's job string when it is not a command (a
	// Queue::push('Class@method') string job).
	Job string `json:"job"`
	// The payload keys of Laravel 12–13 interop:dispatch-recent expects in
	// the row: nil/false/"" where the running Laravel writes none.
	DeleteWhenMissingModels *bool  `json:"delete_when_missing_models"`
	CreatedAt               bool   `json:"created_at"`
	Delay                   *int64 `json:"delay"`
	BatchID                 string `json:"batch_id"`
	// UniqueID is a unique job's uniqueId; CustomerID the model a job carries.
	UniqueID   string `json:"unique_id"`
	CustomerID int64  `json:"customer_id"`
}

// scenario is one dialect after the Laravel side has produced failed_jobs.
type scenario struct {
	dialect      dialect
	app          *laravelApp
	manifest     manifest
	manifestPath string
	started      time.Time // before dispatch
	finished     time.Time // after the last worker
}

// failEverything builds a fresh database, dispatches the interop jobs and
// runs workers until every one of them sits in failed_jobs.
func failEverything(t *testing.T, lv laravelTarget, d dialect) *scenario {
	t.Helper()
	return failScenario(t, lv, d, "interop:dispatch")
}

// failScenario builds a fresh database, runs the app's dispatch command
// (interop:dispatch or interop:dispatch-redis) with extraEnv (e.g. a Redis
// queue connection) and runs workers until every dispatched job sits in
// failed_jobs, as the manifest says.
func failScenario(t *testing.T, lv laravelTarget, d dialect, dispatch string, extraEnv ...string) *scenario {
	t.Helper()
	holdDatabase(t, d)
	ctx, cancel := context.WithTimeout(context.Background(), artisanTimeout)
	defer cancel()
	if err := recreateDatabase(ctx, d); err != nil {
		t.Fatalf("interop prerequisite missing: %s database: %v", d.name, err)
	}
	app := newLaravelApp(t, lv, d, extraEnv...)
	if out, err := app.artisan(artisanTimeout, "--version"); err != nil {
		t.Fatalf("interop prerequisite missing: the Laravel %s app does not boot (install-deps.sh, setup.sh?): %v\n%s", lv.version, err, out)
	}
	app.mustArtisan(t, "interop:reset")

	manifestPath := filepath.Join(app.scratch, "manifest.json")
	s := &scenario{dialect: d, app: app, manifestPath: manifestPath, started: time.Now().Truncate(time.Second)}
	app.mustArtisan(t, dispatch, "--manifest="+manifestPath)
	b, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s.manifest); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	// The php asked for must be the Laravel asked for: a wrapper pointing
	// at the wrong chroot would pass every case on the wrong version.
	if !strings.HasPrefix(s.manifest.LaravelVersion, lv.version+".") {
		t.Fatalf("%s booted Laravel %s, want %s.x", lv.php, s.manifest.LaravelVersion, lv.version)
	}
	if len(s.manifest.Failures) == 0 {
		t.Fatal("manifest lists no failures")
	}
	app.drain(t)
	s.finished = time.Now()

	if st := app.status(t); st.Failed != len(s.manifest.Failures) {
		t.Fatalf("workers left %d failed_jobs rows, manifest expects %d\nlaravel.log:\n%s", st.Failed, len(s.manifest.Failures), app.log())
	}
	t.Logf("%s: Laravel %s (%s) wrote %d failed_jobs rows in %s", d.name, s.manifest.LaravelVersion, dispatch, len(s.manifest.Failures), s.finished.Sub(s.started).Round(time.Millisecond))
	return s
}

// jobtriage is the binary under test, built once per top-level test.
type jobtriage struct{ path string }

// buildJobtriage compiles the module's main package into a temp dir.
// JOBTRIAGE_INTEROP_BIN names a prebuilt binary instead (CI may build once).
func buildJobtriage(t *testing.T) jobtriage {
	t.Helper()
	if prebuilt := os.Getenv("JOBTRIAGE_INTEROP_BIN"); prebuilt != "" {
		abs, err := filepath.Abs(prebuilt)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(abs); err != nil {
			t.Fatalf("JOBTRIAGE_INTEROP_BIN: %v", err)
		}
		return jobtriage{path: abs}
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go not on PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "jobtriage")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", bin, "github.com/jobtriage/jobtriage")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build jobtriage: %v\n%s", err, out)
	}
	return jobtriage{path: bin}
}

// run returns stdout and stderr separately: stdout must stay pure JSON.
func (j jobtriage) run(args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), artisanTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, j.path, args...)
	cmd.Env = append(withoutLaravelEnv(os.Environ()), "NO_COLOR=1")
	var out, errOut bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errOut
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("jobtriage %s: timed out", strings.Join(args, " "))
	}
	return out.String(), errOut.String(), err
}

// reportedJob is one of the "jobs" of `jobtriage failed --json`
// (docs/json.md); a job is addressed by its uuid.
type reportedJob struct {
	UUID             string    `json:"uuid"`
	RowID            int64     `json:"row_id"`
	Connection       string    `json:"connection"`
	Queue            string    `json:"queue"`
	Class            string    `json:"class"`
	ExceptionClass   string    `json:"exception_class"`
	ExceptionMessage string    `json:"exception_message"`
	FailedAt         time.Time `json:"failed_at"`
}

func (j jobtriage) failed(t *testing.T, dsn string) []reportedJob {
	t.Helper()
	stdout, stderr, err := j.run("failed", "--json", "--dsn", dsn)
	if err != nil {
		t.Fatalf("jobtriage failed --json --dsn %s: %v\nstderr: %s\nstdout: %s", dsn, err, stderr, stdout)
	}
	var doc struct {
		Jobs []reportedJob `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("jobtriage failed --json: stdout is not a JSON object with jobs: %v\n%s", err, stdout)
	}
	return doc.Jobs
}
