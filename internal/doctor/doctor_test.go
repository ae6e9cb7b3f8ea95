package doctor

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/internal/appprofile"
	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/filestore"
)

var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

const secret = "s3cret-pw"

// inspected is a store that reports the facts it is given.
type inspected struct {
	triage.Store
	facts triage.StoreFacts
	err   error
}

func (s inspected) Inspect(context.Context) (triage.StoreFacts, error) { return s.facts, s.err }

// queue is a queue backend whose Stats answer with size jobs, or err.
type queue struct {
	triage.QueueBackend
	size int64
	err  error
}

func (q queue) Describe() string { return "redis://127.0.0.1:6379/0" }
func (q queue) Stats(_ context.Context, p triage.QueueStatsParams) ([]triage.QueueStats, error) {
	if q.err != nil {
		return nil, q.err
	}
	return []triage.QueueStats{{Queue: p.Queues[0], Size: q.size}}, nil
}

// inputs are a configuration outside any app whose store is st.
func inputs(st triage.Store) Inputs {
	return Inputs{
		Config:  appprofile.Config{Target: appprofile.Target{Password: secret}, FailedTable: "failed_jobs", JobsTable: "jobs", BatchesTable: "job_batches"},
		Routes:  func() map[string]triage.Route { return nil },
		Service: func(context.Context) (*triage.Service, error) { return &triage.Service{Store: st}, nil },
		Now:     func() time.Time { return testNow },
	}
}

func build(t *testing.T, in Inputs) Report {
	t.Helper()
	rep, err := Build(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func checks(rep Report) map[string]Check {
	out := map[string]Check{}
	for _, c := range rep.Checks {
		out[c.Name] = c
	}
	return out
}

func database(mut func(*triage.DatabaseFacts)) triage.Store {
	f := &triage.DatabaseFacts{Endpoint: "postgres://app@db/shop", Server: "postgres 16.2", Clock: "UTC", ClockSetting: "TimeZone",
		Schema: triage.Schema{FailedTable: "failed_jobs", JobsTable: "jobs", HasJobs: true, HasBatches: true, IDMode: triage.IDModeUUID},
		Rows:   1200, RowsKnown: true}
	if mut != nil {
		mut(f)
	}
	return inspected{facts: triage.StoreFacts{Database: f}}
}

// TestDatabaseChecks: what a SQL store reports becomes the database,
// jobs and batches checks, index advice and the clock note; a store that
// reports trouble is a failed check or a warning, never an error of Build.
func TestDatabaseChecks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		store  triage.Store
		in     func(*Inputs)
		checks map[string]string // name → status + ": " + a part of the detail
		ok     bool
		clock  bool
	}{
		{name: "healthy", store: database(nil), ok: true, checks: map[string]string{
			"failed-jobs database": "ok: postgres://app@db/shop (postgres 16.2): table failed_jobs present; ids are the uuid column (database-uuids); about 1,200 rows (planner estimate)",
			"jobs table":           "ok: table jobs present", "batches table": "ok: table job_batches present"}},
		{name: "exact count, legacy ids", store: database(func(f *triage.DatabaseFacts) { f.RowsExact, f.Schema.IDMode = true, triage.IDModeInteger }), ok: true,
			checks: map[string]string{"failed-jobs database": "ok: ids are integers (no uuid column: the legacy database driver); 1,200 rows"}},
		{name: "nullable uuid, rows unknown", store: database(func(f *triage.DatabaseFacts) { f.RowsKnown, f.Schema.UUIDNullable = false, true }), ok: true,
			checks: map[string]string{"failed-jobs database": "ok: NULL-uuid rows are addressed by integer id"}},
		{name: "row count fails", store: database(func(f *triage.DatabaseFacts) { f.RowsErr = errors.New("denied for " + secret + "\nmore") }), ok: true,
			checks: map[string]string{"failed-jobs database": "ok: ; row count unavailable: denied for "}},
		{name: "no jobs table outside an app", store: database(func(f *triage.DatabaseFacts) { f.Schema.HasJobs, f.Schema.HasBatches = false, false }), ok: true,
			checks: map[string]string{"jobs table": "warn: outside an app retries go there", "batches table": "warn: not present (only batched jobs need it)"}},
		{name: "no jobs table for a local queue", store: database(func(f *triage.DatabaseFacts) { f.Schema.HasJobs = false }),
			in: func(in *Inputs) {
				in.Config.Queues = []appprofile.QueueConnection{{Name: "database", Driver: triage.DriverDatabase}}
				in.Routes = func() map[string]triage.Route { return map[string]triage.Route{"database": {Local: true}} }
			},
			checks: map[string]string{"jobs table": "fail: a database queue connection puts its jobs there"}},
		{name: "no jobs table, no queue uses it", store: database(func(f *triage.DatabaseFacts) { f.Schema.HasJobs = false }), ok: true,
			in: func(in *Inputs) {
				in.Config.Queues = []appprofile.QueueConnection{{Name: "sync", Driver: triage.DriverSync}}
				in.Routes = func() map[string]triage.Route { return map[string]triage.Route{"sync": {}} }
			},
			checks: map[string]string{"jobs table": "ok: not present; no database queue connection uses it"}},
		{name: "indexes unreadable", store: database(func(f *triage.DatabaseFacts) { f.IndexesErr = errors.New("no catalog") }), ok: true,
			checks: map[string]string{"indexes": "warn: could not read the indexes: no catalog"}},
		{name: "another clock", store: database(func(f *triage.DatabaseFacts) { f.Clock, f.ClockAdvice = "America/New_York", "now() is off" }), ok: true, clock: true},
		{name: "the same clock by offset", store: database(func(f *triage.DatabaseFacts) { f.Clock = "+00:00" }), ok: true},
		{name: "unreachable", store: inspected{err: errors.New("gone: postgres://app:" + secret + "@db")},
			checks: map[string]string{"failed-jobs database": "fail: gone: postgres://app:"}},
		{name: "does not open", in: func(in *Inputs) {
			in.Service = func(context.Context) (*triage.Service, error) { return nil, errors.New("no route") }
		}, checks: map[string]string{"failed-jobs store": "fail: no route"}},
		{name: "knows nothing of itself", store: inspected{}, ok: true, checks: map[string]string{"failed-jobs store": "ok: opened"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := inputs(tc.store)
			if tc.in != nil {
				tc.in(&in)
			}
			rep := build(t, in)
			got := checks(rep)
			for name, want := range tc.checks {
				status, detail, _ := strings.Cut(want, ": ")
				if c, ok := got[name]; !ok || c.Status != status || !strings.Contains(c.Detail, detail) {
					t.Errorf("check %s = %+v, want %s with %q", name, c, status, detail)
				}
			}
			if rep.OK != tc.ok {
				t.Errorf("ok %v, want %v: %+v", rep.OK, tc.ok, rep.Checks)
			}
			var clock bool
			for _, c := range rep.Contradictions {
				clock = clock || c.Kind == appprofile.KindServerTimezone
			}
			if clock != tc.clock {
				t.Errorf("server clock noted %v, want %v: %+v", clock, tc.clock, rep.Contradictions)
			}
			assertClean(t, rep)
		})
	}
}

func assertClean(t *testing.T, rep Report) {
	t.Helper()
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), secret) || strings.Contains(b.String(), "more") {
		t.Errorf("the report shows a password or a second line:\n%s", b.String())
	}
}

// TestIndexAdviceAndClockNote: the advice is listed with its statement,
// and the note names both zones, the app's source and the dialect's
// advice.
func TestIndexAdviceAndClockNote(t *testing.T) {
	in := inputs(database(func(f *triage.DatabaseFacts) {
		f.Clock, f.ClockSetting, f.ClockAdvice = "CET", "time_zone=SYSTEM, system_time_zone", "TIMESTAMP converts"
		f.Indexes = []triage.IndexAdvice{{Table: "failed_jobs", Columns: []string{"failed_at"}, Why: "prune scans", SQL: "CREATE INDEX x ON failed_jobs (failed_at);"}}
	}))
	in.TimezoneOverride = "--timezone"
	rep := build(t, in)
	if len(rep.Indexes) != 1 || len(rep.Contradictions) != 1 {
		t.Fatalf("indexes %+v, contradictions %+v", rep.Indexes, rep.Contradictions)
	}
	want := "the database's timezone is CET (time_zone=SYSTEM, system_time_zone) but the app writes failed_at in UTC (--timezone): Laravel and jobtriage agree with each other; TIMESTAMP converts"
	if c := rep.Contradictions[0]; c.Severity != appprofile.SeverityInfo || c.Message != want {
		t.Errorf("note %+v, want %q", c, want)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"App\n  (the configuration could not be resolved; see Checks)\n", // no profile and no configuration kind
		"\nContradictions\n  note   the database's timezone is CET",
		"\nChecks\n  ok    failed-jobs database: ",
		"\nIndexes\n  warn  failed_jobs(failed_at) is not indexed: prune scans\n        CREATE INDEX x ON failed_jobs (failed_at);\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}

// TestFileStore: the file driver's store reports its file, missing or
// with its entries, and no index is checked.
func TestFileStore(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "failed-jobs.json")
	for path, want := range map[string]string{
		missing: "file " + missing + " does not exist yet (Laravel creates it on the first failure)",
		filepath.Join("..", "..", "triage", "filestore", "testdata", "failed-jobs.json"): "failed-jobs.json: 12 failed jobs (the file driver keeps at most queue.failed.limit, default 100)",
	} {
		st, err := filestore.Open(path, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		rep := build(t, inputs(st))
		if c := checks(rep)["failed-jobs store"]; c.Status != statusOK || !strings.HasSuffix(c.Detail, want) {
			t.Errorf("%s: %+v, want %q", path, c, want)
		}
		var b strings.Builder
		_ = rep.WriteText(&b)
		if !strings.Contains(b.String(), "Indexes\n  not checked (no SQL failed-jobs database was opened)\n") {
			t.Errorf("index section:\n%s", b.String())
		}
	}
}

// TestQueueChecks: each Redis or other-database queue connection is
// asked for its default queue's size; one that cannot be opened or does
// not answer fails the report, one whose jobs stay local is not asked.
func TestQueueChecks(t *testing.T) {
	in := inputs(database(nil))
	in.Config.Queues = []appprofile.QueueConnection{
		{Name: "redis", Driver: triage.DriverRedis}, {Name: "busy", Driver: triage.DriverRedis, Queue: "mail"},
		{Name: "down", Driver: triage.DriverRedis}, {Name: "unopened", Driver: triage.DriverDatabase}, {Name: "database", Driver: triage.DriverDatabase},
	}
	in.Routes = func() map[string]triage.Route {
		return map[string]triage.Route{"redis": {Backend: queue{size: 1}}, "busy": {Backend: queue{size: 1234}},
			"down": {Backend: queue{err: errors.New("refused\nmore")}}, "unopened": {Reason: "no such database connection"}, "database": {Local: true}}
	}
	rep := build(t, in)
	got := checks(rep)
	for name, want := range map[string]string{
		"redis":    "ok redis://127.0.0.1:6379/0 reachable; queue default holds 1 job",
		"busy":     "ok redis://127.0.0.1:6379/0 reachable; queue mail holds 1,234 jobs",
		"down":     "fail redis://127.0.0.1:6379/0: refused …",
		"unopened": "fail no such database connection",
	} {
		if c := got["queue connection "+name]; c.Status+" "+c.Detail != want {
			t.Errorf("%s: %+v, want %q", name, c, want)
		}
	}
	if _, asked := got["queue connection database"]; asked || rep.OK {
		t.Errorf("ok %v, checks %+v", rep.OK, rep.Checks)
	}
	if failed, errs := rep.Problems(); failed != 2 || errs != 0 {
		t.Errorf("problems %d, %d", failed, errs)
	}
}

// TestBuildStopsWithItsContext: a store or backend that fails because the
// context ended ends the report with the context's error.
func TestBuildStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	in := inputs(inspected{err: context.Canceled})
	if _, err := Build(ctx, in); !errors.Is(err, context.Canceled) {
		t.Errorf("store: %v", err)
	}
	in = inputs(database(nil))
	in.Config.Queues = []appprofile.QueueConnection{{Name: "redis", Driver: triage.DriverRedis}}
	in.Routes = func() map[string]triage.Route {
		return map[string]triage.Route{"redis": {Backend: queue{err: context.Canceled}}}
	}
	if _, err := Build(ctx, in); !errors.Is(err, context.Canceled) {
		t.Errorf("backend: %v", err)
	}
}

// TestContradictionOrder: errors first, then warnings, then notes, each
// group in the order found; an error makes the report not OK.
func TestContradictionOrder(t *testing.T) {
	in := inputs(database(func(f *triage.DatabaseFacts) { f.Clock = "Asia/Tokyo" }))
	in.Config.Queues = []appprofile.QueueConnection{{Name: "sqs", Driver: "sqs", Source: "config/queue.php:9"}, {Name: "beanstalk", Driver: "beanstalkd"}}
	in.Routes = func() map[string]triage.Route {
		return map[string]triage.Route{"sqs": {}, "beanstalk": {Reason: "beanstalkd is not supported"}}
	}
	rep := build(t, in)
	var got []string
	for _, c := range rep.Contradictions {
		got = append(got, c.Severity+" "+c.Kind+" "+c.Key)
	}
	want := []string{"info unwritable_connection queue.connections.sqs", "info unwritable_connection queue.connections.beanstalk", "info server_timezone app.timezone"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("contradictions %v, want %v", got, want)
	}
	if c := rep.Connections[1]; c.Note != "beanstalkd is not supported" || c.Retry || !strings.Contains(c.Artisan, "queue:monitor beanstalk:default") {
		t.Errorf("beanstalk %+v", c)
	}
	if c := rep.Connections[0]; c.Note != "jobtriage cannot write to or read the sqs driver" || c.Destination != "Amazon SQS, a broker jobtriage does not read" || c.Failures != "failed_jobs" {
		t.Errorf("sqs %+v", c)
	}
	rep.Contradictions = append(rep.Contradictions, appprofile.Contradiction{Severity: appprofile.SeverityError, Message: "x"})
	if _, errs := rep.Problems(); errs != 1 {
		t.Errorf("problems: %d errors", errs)
	}
}

// TestWriteText: sections, aligned columns and each connection's
// coverage line.
func TestWriteText(t *testing.T) {
	rep := Report{
		App: App{Root: "/srv/shop", IsApp: true, Configuration: "defaults", Timezone: "UTC", TimezoneSource: "default", defaultsVersion: 11,
			FailedStore: FailedStore{Driver: "database-uuids", Connection: "mysql", Target: "mysql://shop@db/shop", Table: "failed_jobs"},
			JobsTable:   "jobs", BatchesTable: "job_batches", Warnings: []string{"config.toml holds secrets"}},
		Settings: []appprofile.Setting{{Key: "queue.default", Value: "redis", Source: ".env:3"}, {Key: "app.timezone", Value: "UTC", Source: "default"}},
		Connections: []Connection{
			{Name: "redis", Driver: "redis", Queue: "default", Default: true, Destination: "redis://r/0", Retry: true, Monitor: true},
			{Name: "sqs", Driver: "sqs", Queue: "default", Destination: "elsewhere", Note: "cannot", Artisan: "php artisan queue:retry <id>"},
		},
		Checks:          []Check{{Name: "failed-jobs database", Status: statusOK, Detail: "fine"}, {Name: "jobs table", Status: statusFail, Detail: "gone"}},
		databaseChecked: true,
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `App
  root           /srv/shop
  laravel        unknown (Laravel 11 defaults assumed)
  configuration  jobtriage's built-in Laravel 11 defaults with the environment and no .env file
  timezone       UTC (default)
  failed jobs    database-uuids driver on connection mysql: mysql://shop@db/shop, table failed_jobs
  jobs table     jobs
  batches table  job_batches
  warning: config.toml holds secrets

Settings
  queue.default  redis  .env:3
  app.timezone   UTC    default

Queue connections
  redis (default): redis driver, queue default → redis://r/0
      retry: yes · monitor: yes
  sqs: sqs driver, queue default → elsewhere
      retry: no · monitor: no — cannot
      use: php artisan queue:retry <id>

Contradictions
  none

Checks
  ok    failed-jobs database: fine
  FAIL  jobs table: gone

Indexes
  nothing to add
`
	if b.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestParseOffsetAndSameZone(t *testing.T) {
	for in, want := range map[string]int{"+02:00": 7200, "-5:30": -19800, "+14": 14 * 3600, "-00:00": 0} {
		if got, ok := parseOffset(in); !ok || got != want {
			t.Errorf("parseOffset(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "+", "02:00", "+15:00", "+02:60", "+a:00", "+02:x"} {
		if _, ok := parseOffset(in); ok {
			t.Errorf("parseOffset(%q) accepted", in)
		}
	}
	berlin := mustLoad(t, "Europe/Berlin")
	if !sameZone("+01:00", mustLoad(t, "Africa/Lagos"), testNow) || sameZone("+01:00", berlin, testNow) {
		t.Error("an offset is the same zone only when it holds on both sides of a DST change")
	}
	if !sameZone("CET", berlin, testNow) || !sameZone("europe/berlin", berlin, testNow) || sameZone("UTC", berlin, testNow) || sameZone("Nowhere/Else", berlin, testNow) {
		t.Error("sameZone by name")
	}
}

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skip(err)
	}
	return loc
}

// TestConfigurationErrorSaysItsNameOnce: the CLI marks configuration
// errors "configuration: …"; under the check of that name the word is not
// said twice.
func TestConfigurationErrorSaysItsNameOnce(t *testing.T) {
	in := inputs(database(nil))
	in.ConfigErr = fmt.Errorf("%w: not inside a Laravel app (no artisan file above /srv/ops): cd into the app or pass --dsn", errors.New("configuration"))
	rep, err := Build(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Checks {
		if c.Name == configurationCheck {
			if want := "not inside a Laravel app (no artisan file above /srv/ops): cd into the app or pass --dsn"; c.Detail != want {
				t.Errorf("detail %q, want %q", c.Detail, want)
			}
			return
		}
	}
	t.Fatalf("no %s check in %+v", configurationCheck, rep.Checks)
}
