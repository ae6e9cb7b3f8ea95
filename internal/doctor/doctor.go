// Package doctor builds `jobtriage doctor`'s report: how jobtriage sees the
// app (settings and sources, where each queue connection's jobs go,
// contradictions) and what the live checks found from the stores' own facts
// (triage.Inspector). Every text from the configuration or a database is
// made safe to print, and free of the profile's passwords, when added.
package doctor

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/jobtriage/jobtriage/internal/appprofile"
	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/redact"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// checkTimeout bounds each queue backend's check: one unreachable Redis
// cannot hold the report.
const checkTimeout = 15 * time.Second

// Check statuses: fail makes the report not OK; warn does not.
const (
	statusOK   = "ok"
	statusWarn = "warn"
	statusFail = "fail"
)

// Report is what --json prints.
type Report struct {
	SchemaVersion   int                        `json:"schema_version"`
	App             App                        `json:"app"`
	Settings        []appprofile.Setting       `json:"settings"`
	Connections     []Connection               `json:"connections"`
	Contradictions  []appprofile.Contradiction `json:"contradictions"`
	Checks          []Check                    `json:"checks"`
	Indexes         []triage.IndexAdvice       `json:"indexes"`
	OK              bool                       `json:"ok"`
	databaseChecked bool                       // a SQL database answered: empty Indexes means nothing to add
}

// App is how jobtriage sees the app and its failed-jobs store.
type App struct {
	Root                 string      `json:"root"`
	IsApp                bool        `json:"is_app"`
	LaravelVersion       string      `json:"laravel_version"`
	LaravelVersionSource string      `json:"laravel_version_source"`
	Configuration        string      `json:"configuration"`
	ConfigCache          string      `json:"config_cache,omitempty"`
	ConfigFiles          []string    `json:"config_files"`
	EnvFile              string      `json:"env_file,omitempty"`
	ConnectionSource     string      `json:"connection_source"` // where the failed-jobs database came from
	Timezone             string      `json:"timezone"`
	TimezoneSource       string      `json:"timezone_source"`
	FailedStore          FailedStore `json:"failed_store"`
	JobsTable            string      `json:"jobs_table"`
	BatchesTable         string      `json:"batches_table"`
	Warnings             []string    `json:"warnings"`
	defaultsVersion      int         // the Laravel major whose defaults apply
}

// FailedStore is where the app's failed jobs are.
type FailedStore struct {
	Driver     string `json:"driver"`
	Connection string `json:"connection,omitempty"`
	Target     string `json:"target,omitempty"`
	Table      string `json:"table,omitempty"`
	Path       string `json:"path,omitempty"`
	Source     string `json:"source"`
}

// Connection is one queue connection's coverage.
type Connection struct {
	Name        string `json:"name"`
	Driver      string `json:"driver"`
	Queue       string `json:"queue"`
	Default     bool   `json:"default"`
	Destination string `json:"destination"`
	Retry       bool   `json:"retry"`
	Monitor     bool   `json:"monitor"`
	Note        string `json:"note,omitempty"`
	// Failures says where an unwritable connection's failures go
	// (triage.UnwritableDriver); "" when not known.
	Failures string `json:"failures,omitempty"`
	Artisan  string `json:"artisan,omitempty"`
	Source   string `json:"source"`
}

// Check is one live check.
type Check struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}

// Problems counts what makes the report not OK: failed checks and errors.
func (r Report) Problems() (failed, errs int) {
	for _, c := range r.Checks {
		if c.Status == statusFail {
			failed++
		}
	}
	for _, c := range r.Contradictions {
		if c.Severity == appprofile.SeverityError {
			errs++
		}
	}
	return failed, errs
}

// Inputs are what the report examines: the configuration, or ConfigErr
// (then the report holds only that); what set the timezone over the app's
// ("--timezone", "JOBTRIAGE_TIMEZONE", ""); the app's queue routes (nil
// outside an app; the caller closes their backends); the failed-jobs store. Build calls each once, Routes before it lists the
// values the profile could not evaluate (resolving records them).
type Inputs struct {
	Config           appprofile.Config
	ConfigErr        error
	TimezoneOverride string
	Routes           func() map[string]triage.Route
	Service          func(context.Context) (*triage.Service, error)
	Now              func() time.Time
}

// builder gathers the report. localQueue: a queue connection puts its jobs
// in the failed-jobs database's jobs table; noApp: its connections are unknown.
type builder struct {
	in                Inputs
	cfg               appprofile.Config
	rep               Report
	secrets           []string
	localQueue, noApp bool
}

const configurationCheck = "configuration"

// Build runs the checks and returns the report, contradictions sorted
// errors, warnings, notes (stably); it fails only when ctx ends.
func Build(ctx context.Context, in Inputs) (Report, error) {
	b := &builder{in: in, cfg: in.Config, rep: Report{Settings: []appprofile.Setting{}, Connections: []Connection{},
		Contradictions: []appprofile.Contradiction{}, Checks: []Check{}, Indexes: []triage.IndexAdvice{},
		App: App{ConfigFiles: []string{}, Warnings: []string{}}}}
	if err := b.build(ctx); err != nil {
		return Report{}, err
	}
	failed, errs := b.rep.Problems()
	b.rep.OK = failed == 0 && errs == 0
	rank := map[string]int{appprofile.SeverityError: 0, appprofile.SeverityWarning: 1, appprofile.SeverityInfo: 2}
	slices.SortStableFunc(b.rep.Contradictions, func(x, y appprofile.Contradiction) int { return rank[x.Severity] - rank[y.Severity] })
	return b.rep, nil
}

func (b *builder) build(ctx context.Context) error {
	if b.in.ConfigErr != nil {
		// The check's name already says the CLI's "configuration: " mark.
		msg := strings.TrimPrefix(b.in.ConfigErr.Error(), configurationCheck+": ")
		b.check(configurationCheck, statusFail, msg)
		return nil
	}
	b.collectSecrets()
	b.describeApp()
	routes := b.describeConnections()
	b.configContradictions()
	if err := b.checkStore(ctx); err != nil {
		return err
	}
	if err := b.checkBackends(ctx, routes); err != nil {
		return err
	}
	// Last: resolving connections above recorded what it could not evaluate.
	for _, c := range appprofile.UnknownContradictions(b.cfg.Profile) {
		b.contradiction(c)
	}
	return nil
}

func (b *builder) clean(s string) string {
	return sanitize.Line(redact.Text(s, b.secrets...))
}

func (b *builder) check(name, status, detail string) {
	b.rep.Checks = append(b.rep.Checks, Check{Name: b.clean(name), Status: status, Detail: b.clean(sanitize.FirstLine(detail))})
}

func (b *builder) contradiction(c appprofile.Contradiction) {
	c.Key, c.Message = b.clean(c.Key), b.clean(c.Message)
	b.rep.Contradictions = append(b.rep.Contradictions, c)
}

// collectSecrets gathers the profile's passwords, so no message shows one
// even if a driver echoed it.
func (b *builder) collectSecrets() {
	b.secrets = append(b.secrets, b.cfg.Target.Password, b.cfg.Database.Target.Password, b.cfg.AppKey)
	b.secrets = append(b.secrets, b.cfg.AppKeys...)
	p := b.cfg.Profile
	if p == nil {
		return
	}
	for _, qc := range b.cfg.Queues {
		if qc.Driver == triage.DriverRedis {
			if rc, err := p.Redis(cmp.Or(qc.Connection, "default")); err == nil {
				b.secrets = append(b.secrets, rc.Password)
			}
		}
		if qc.Driver == triage.DriverDatabase && qc.Connection != "" {
			if dc, err := p.DatabaseConnectionNamed(qc.Connection); err == nil {
				b.secrets = append(b.secrets, dc.Target.Password)
			}
		}
	}
}

func (b *builder) describeApp() {
	cfg, p, a := b.cfg, b.cfg.Profile, &b.rep.App
	a.ConnectionSource, a.JobsTable, a.BatchesTable, a.Timezone = cfg.Source, cfg.JobsTable, cfg.BatchesTable, "UTC"
	if cfg.Location != nil {
		a.Timezone = cfg.Location.String()
	}
	switch {
	case b.in.TimezoneOverride != "":
		a.TimezoneSource = b.in.TimezoneOverride
	case p != nil && p.Get("app.timezone") != nil:
		a.TimezoneSource = "app.timezone, " + p.Source(p.Get("app.timezone"))
	default:
		a.TimezoneSource = "default"
	}
	fs := &a.FailedStore
	fs.Driver, fs.Source = cfg.Failed.Driver, cfg.Failed.Source
	if cfg.Failed.Driver == "file" && cfg.Target.Driver == "" {
		fs.Path = cfg.Failed.Path
	} else {
		fs.Connection, fs.Target, fs.Table = cfg.Failed.Database, cfg.Target.Redacted(), cfg.FailedTable
		if fs.Connection == "" && p != nil {
			fs.Connection, _ = p.Get("database.default").String()
		}
		if cfg.Source == "--dsn" || cfg.Source == "JOBTRIAGE_DSN" {
			fs.Connection = cfg.Source
		}
	}
	a.Warnings = append(a.Warnings, cfg.Warnings...)
	if p != nil {
		a.Root, a.IsApp, a.LaravelVersion, a.LaravelVersionSource = p.Root, p.IsApp, p.Version, p.VersionSource
		a.defaultsVersion, a.ConfigFiles, a.EnvFile = p.Major, append(a.ConfigFiles, p.Files...), p.EnvFile
		switch {
		case p.CachePath != "":
			a.Configuration, a.ConfigCache = "config_cache", p.CachePath
		case len(p.Files) > 0:
			a.Configuration = "config_files"
		default:
			a.Configuration = "defaults"
		}
		for _, s := range p.Settings() {
			b.rep.Settings = append(b.rep.Settings, appprofile.Setting{Key: b.clean(s.Key), Value: b.clean(s.Value), Source: b.clean(s.Source)})
		}
	}
	for _, s := range []*string{&a.Root, &a.LaravelVersion, &a.LaravelVersionSource, &a.ConfigCache, &a.EnvFile, &a.ConnectionSource,
		&a.Timezone, &a.TimezoneSource, &a.JobsTable, &a.BatchesTable, &fs.Driver, &fs.Connection, &fs.Target, &fs.Table, &fs.Path, &fs.Source} {
		*s = b.clean(*s)
	}
	for _, list := range [][]string{a.Warnings, a.ConfigFiles} {
		for i := range list {
			list[i] = b.clean(list[i])
		}
	}
}

// describeConnections reports each queue connection's coverage and returns
// the routes for the live checks.
func (b *builder) describeConnections() map[string]triage.Route {
	cfg := b.cfg
	routes := b.in.Routes()
	if routes == nil {
		b.noApp = true
		// Outside an app every retry goes to the local jobs table.
		b.rep.Connections = append(b.rep.Connections, Connection{Name: "(every connection)", Driver: triage.DriverDatabase,
			Queue: "(as recorded)", Destination: "table " + b.clean(cfg.JobsTable) + " in the failed-jobs database", Retry: true, Monitor: true,
			Note:   "no Laravel app here (no artisan file), so its queue connections are unknown: jobs go back to the jobs table of the failed-jobs database",
			Source: "no app"})
		return nil
	}
	def := cfg.DefaultQueueConnection()
	for _, qc := range cfg.Queues {
		r := routes[qc.Name]
		queue := queueName(qc)
		c := Connection{Name: qc.Name, Driver: qc.Driver, Queue: queue, Default: qc.Name == def,
			Retry: r.Writable(), Monitor: r.Writable(), Source: qc.Source}
		switch {
		case r.Local:
			b.localQueue = true
			c.Destination = "table " + cfg.Database.Prefix + cmp.Or(qc.Table, "jobs") + " in the failed-jobs database"
		case r.Backend != nil:
			c.Destination = r.Backend.Describe()
		case qc.Driver == triage.DriverSync:
			c.Destination = "none: jobs run inline, in the process that dispatches them"
			c.Note = "sync jobs never reach failed_jobs; there is nothing to retry or monitor"
		case qc.Driver == triage.DriverFailover:
			c.Destination = "the first of " + strings.Join(qc.Connections, ", ") + " that takes the job"
			c.Note = r.Reason
			c.Artisan = "php artisan queue:retry <id> (retry)"
		case qc.Driver == triage.DriverNull:
			c.Destination = "none: jobs are discarded"
			c.Note = "null jobs never run and never fail"
		default:
			driver := cmp.Or(qc.Driver, "(none)")
			c.Destination = "the " + driver + " driver's own store, which jobtriage cannot reach"
			c.Note = cmp.Or(r.Reason, fmt.Sprintf("jobtriage cannot write to or read the %s driver", driver))
			c.Artisan = fmt.Sprintf("php artisan queue:retry <id> (retry), php artisan queue:monitor %s:%s (monitor)", qc.Name, queue)
			if f, ok := triage.UnwritableDriver(qc.Driver); ok {
				c.Destination, c.Failures = f.Jobs, f.Failures
				if !f.Monitor {
					c.Artisan = "php artisan queue:retry <id> (retry); nothing waits in a queue to monitor"
				}
			}
			severity := appprofile.SeverityInfo
			if c.Default {
				severity = appprofile.SeverityWarning
			}
			b.contradiction(appprofile.Contradiction{Severity: severity, Kind: appprofile.KindUnwritable, Key: "queue.connections." + qc.Name,
				Message: fmt.Sprintf("queue connection %s (%s) uses the %s driver: jobtriage cannot retry into it or monitor it; use %s",
					qc.Name, qc.Source, driver, c.Artisan)})
		}
		if r.Via != "" {
			c.Note = r.ViaNote()
		}
		if len(r.Failover) > 0 {
			// A failover connection is monitored through its first.
			first := routes[r.Failover[0]]
			c.Monitor = first.Writable() && len(first.Failover) == 0
		}
		for _, s := range []*string{&c.Name, &c.Driver, &c.Queue, &c.Destination, &c.Note, &c.Failures, &c.Artisan, &c.Source} {
			*s = b.clean(*s)
		}
		b.rep.Connections = append(b.rep.Connections, c)
	}
	return routes
}

// queueName is a connection's default queue, Laravel's when unset.
func queueName(qc appprofile.QueueConnection) string { return cmp.Or(qc.Queue, "default") }

// configContradictions compares the config cache with .env and checks APP_TIMEZONE.
func (b *builder) configContradictions() {
	p := b.cfg.Profile
	if p == nil {
		return
	}
	files := p
	if p.CachePath != "" {
		var err error
		if files, err = appprofile.ProfileWithoutCache(p); err != nil {
			b.contradiction(appprofile.Contradiction{Severity: appprofile.SeverityWarning, Kind: appprofile.KindCacheVsEnv,
				Message: "could not evaluate config/*.php with .env to compare with the config cache: " + sanitize.FirstLine(err.Error())})
		}
		for _, c := range appprofile.CacheContradictions(p, files) {
			b.contradiction(c)
		}
	}
	if c := appprofile.TimezoneIgnored(files); c != nil {
		b.contradiction(*c)
	}
}

// checkStore opens the failed-jobs store and reports what it says of itself.
func (b *builder) checkStore(ctx context.Context) error {
	svc, err := b.in.Service(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		b.check("failed-jobs store", statusFail, err.Error())
		return nil
	}
	facts, err := svc.Inspect(ctx)
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		b.check("failed-jobs database", statusFail, err.Error())
	case facts.Database != nil:
		b.checkDatabase(*facts.Database)
	case facts.File != "" && facts.FileMissing:
		b.check("failed-jobs store", statusOK, fmt.Sprintf("file %s does not exist yet (Laravel creates it on the first failure)", facts.File))
	case facts.File != "":
		b.check("failed-jobs store", statusOK, fmt.Sprintf("file %s: %d failed jobs (the file driver keeps at most queue.failed.limit, default 100)", facts.File, facts.FileJobs))
	default:
		b.check("failed-jobs store", statusOK, "opened")
	}
	return nil
}

func (b *builder) checkDatabase(f triage.DatabaseFacts) {
	sc := f.Schema
	ids := "ids are the uuid column (database-uuids)"
	if sc.IDMode == triage.IDModeInteger {
		ids = "ids are integers (no uuid column: the legacy database driver)"
	} else if sc.UUIDNullable {
		ids += "; uuid is nullable (upgraded from Laravel 7), NULL-uuid rows are addressed by integer id"
	}
	rows := ""
	switch {
	case f.RowsErr != nil:
		rows = "; row count unavailable: " + sanitize.FirstLine(f.RowsErr.Error())
	case f.RowsKnown && f.RowsExact:
		rows = "; " + countNoun(f.Rows, "row")
	case f.RowsKnown:
		rows = "; about " + countNoun(f.Rows, "row") + " (planner estimate)"
	}
	b.rep.databaseChecked = true
	b.check("failed-jobs database", statusOK, fmt.Sprintf("%s (%s): table %s present; %s%s", f.Endpoint, f.Server, sc.FailedTable, ids, rows))

	// The jobs table matters where a queue connection puts jobs in it;
	// outside an app it is where retries would go.
	switch {
	case sc.HasJobs:
		b.check("jobs table", statusOK, "table "+sc.JobsTable+" present")
	case b.localQueue:
		b.check("jobs table", statusFail, "table "+sc.JobsTable+" is missing or unusable, but a database queue connection puts its jobs there: retry and monitor cannot work (php artisan queue:table && php artisan migrate; Laravel 11+: make:queue-table)")
	case b.noApp:
		b.check("jobs table", statusWarn, "table "+sc.JobsTable+" is missing or unusable: outside an app retries go there (pass --jobs-dsn or --jobs-table, or run jobtriage in the app's directory)")
	default:
		b.check("jobs table", statusOK, "table "+sc.JobsTable+" not present; no database queue connection uses it")
	}
	if sc.HasBatches {
		b.check("batches table", statusOK, "table "+b.cfg.BatchesTable+" present")
	} else {
		b.check("batches table", statusWarn, "table "+b.cfg.BatchesTable+" not present (only batched jobs need it)")
	}

	if f.IndexesErr != nil {
		b.check("indexes", statusWarn, "could not read the indexes: "+f.IndexesErr.Error())
	}
	for _, a := range f.Indexes {
		a.Table, a.Why, a.SQL = b.clean(a.Table), b.clean(a.Why), b.clean(a.SQL)
		b.rep.Indexes = append(b.rep.Indexes, a)
	}
	b.serverClock(f)
}

// serverClock notes a database clock zone other than the app's: Laravel
// and jobtriage both write failed_at as wall-clock text in app.timezone, so
// it matters only for what the dialect's ClockAdvice says.
func (b *builder) serverClock(f triage.DatabaseFacts) {
	app := b.cfg.Location
	if app == nil {
		app = time.UTC
	}
	if f.Clock == "" || sameZone(f.Clock, app, b.in.Now()) {
		return
	}
	b.contradiction(appprofile.Contradiction{Severity: appprofile.SeverityInfo, Kind: appprofile.KindServerTimezone, Key: "app.timezone",
		Message: fmt.Sprintf("the database's timezone is %s (%s) but the app writes failed_at in %s (%s): Laravel and jobtriage agree with each other; %s",
			f.Clock, f.ClockSetting, app, b.rep.App.TimezoneSource, f.ClockAdvice)})
}

// sameZone reports whether a server's zone (IANA, MySQL's abbreviation for
// SYSTEM, or an offset such as +02:00) has the app zone's offset now and in
// half a year (either side of a DST change).
func sameZone(server string, app *time.Location, now time.Time) bool {
	if strings.EqualFold(server, app.String()) {
		return true
	}
	loc, err := time.LoadLocation(server)
	if err != nil {
		off, ok := parseOffset(server)
		if !ok {
			return false
		}
		loc = time.FixedZone(server, off)
	}
	for _, t := range []time.Time{now, now.AddDate(0, 6, 0)} {
		_, a := t.In(app).Zone()
		_, b := t.In(loc).Zone()
		if a != b {
			return false
		}
	}
	return true
}

// maxOffsetHours is the largest UTC offset in use (Line Islands).
const maxOffsetHours = 14

// parseOffset reads "+02:00" or "-5:30" as seconds east of UTC.
func parseOffset(s string) (int, bool) {
	if len(s) < 2 || (s[0] != '+' && s[0] != '-') {
		return 0, false
	}
	h, m, ok := strings.Cut(s[1:], ":")
	hh, err1 := strconv.Atoi(h)
	mm := 0
	var err2 error
	if ok {
		mm, err2 = strconv.Atoi(m)
	}
	if err1 != nil || err2 != nil || hh > maxOffsetHours || mm > 59 {
		return 0, false
	}
	off := hh*3600 + mm*60
	if s[0] == '-' {
		off = -off
	}
	return off, true
}

// checkBackends asks each queue connection's Redis (or other database) for
// its default queue's size: the cheapest proof of reach with the app's settings.
func (b *builder) checkBackends(ctx context.Context, routes map[string]triage.Route) error {
	if routes == nil {
		return nil
	}
	for _, qc := range b.cfg.Queues {
		r := routes[qc.Name]
		if qc.Driver != triage.DriverRedis && (qc.Driver != triage.DriverDatabase || r.Local) {
			continue
		}
		name := "queue connection " + qc.Name
		if r.Backend == nil {
			b.check(name, statusFail, r.Reason)
			continue
		}
		queue := queueName(qc)
		cctx, cancel := context.WithTimeout(ctx, checkTimeout)
		stats, err := r.Backend.Stats(cctx, triage.QueueStatsParams{Queues: []string{queue}, Now: b.in.Now(), RetryAfter: time.Duration(qc.RetryAfter) * time.Second})
		cancel()
		switch {
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			b.check(name, statusFail, r.Backend.Describe()+": "+err.Error())
		default:
			var size int64
			for _, s := range stats {
				size += s.Size
			}
			b.check(name, statusOK, fmt.Sprintf("%s reachable; queue %s holds %s", r.Backend.Describe(), queue, countNoun(size, "job")))
		}
	}
	return nil
}

func countNoun(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return humanize.Comma(n) + " " + noun + "s"
}
