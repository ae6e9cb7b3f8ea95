package cmd

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/jobtriage/jobtriage/internal/appprofile"
	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/filestore"
	"github.com/jobtriage/jobtriage/triage/redact"
	"github.com/jobtriage/jobtriage/triage/sanitize"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
)

// doctorCheckTimeout bounds each live check of a queue backend, so that one
// unreachable Redis cannot hold the whole report.
const doctorCheckTimeout = 15 * time.Second

// Check statuses: fail makes doctor exit 1; warn does not.
const (
	checkOK   = "ok"
	checkWarn = "warn"
	checkFail = "fail"
)

// DoctorOptions are the inputs of `jobtriage doctor`.
type DoctorOptions struct {
	IO      *IOStreams
	Now     func() time.Time
	Getenv  func(string) string
	Config  func() (appprofile.Config, error)
	Service func(context.Context) (*triage.Service, error)
	// ResolveOptions are the inputs Config resolves from; doctor evaluates
	// the app again from them without its config cache.
	ResolveOptions func() (appprofile.Options, error)
	// Backends open the queue connections' backends for the live checks.
	Backends backendOpeners
	// TimezoneFlag is --timezone, to say where the timezone came from.
	TimezoneFlag string

	JSON bool
}

// NewCmdDoctor builds `jobtriage doctor`.
func NewCmdDoctor(f *Factory, runF func(context.Context, *DoctorOptions) error) *cobra.Command {
	opts := &DoctorOptions{IO: f.IO, Now: f.Now, Getenv: f.Getenv}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Show how jobtriage sees the app: settings and their sources, coverage, contradictions, live checks",
		Long: heredoc.Doc(`
			Explain what jobtriage reads and why, for the app in the working directory
			(or --dsn, --env …):

			  App              the app root, its Laravel version, which configuration
			                   Laravel uses (the config cache, or config/*.php with .env,
			                   or the built-in defaults), the timezone, the failed-jobs
			                   store and the jobs and batches tables
			  Settings         every value jobtriage uses, with the file:line (and env
			                   variable) it came from; secrets show as (set) or (empty)
			  Queue connections  where each connection's jobs go, whether jobtriage can
			                   retry into it and monitor it, and the artisan command to
			                   use where it cannot (sync, sqs, beanstalkd, null, …)
			  Contradictions   the config cache and .env disagreeing, APP_TIMEZONE set but
			                   not read by config/app.php, values jobtriage could not
			                   evaluate without PHP, the database server's timezone
			  Checks           the failed-jobs database (tables, id mode, rows) and each
			                   Redis or other database a queue connection uses, live
			  Indexes          indexes worth adding, with the statement for this database;
			                   jobtriage never changes the schema itself

			Exit codes: 0 nothing is wrong; 1 a check failed or a contradiction was
			found (an error line). Warnings and notes (a missing index, a connection
			jobtriage cannot write to, the server's timezone, values jobtriage does not
			need) do not fail. 2 usage. The report goes to stdout (--json: one object);
			passwords and keys are never printed.
		`),
		Example: "  $ jobtriage doctor\n  $ jobtriage doctor --json | jq '.contradictions'",
		Args:    noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Config = f.Config
			opts.Service = f.Service
			opts.Backends = f.backendOpeners()
			opts.TimezoneFlag = f.Conn.Timezone
			opts.ResolveOptions = func() (appprofile.Options, error) { return doctorResolveOptions(f) }
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return doctorRun(c.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the report as one JSON object")
	return cmd
}

// doctorResolveOptions are the appprofile.Options the factory resolves
// with: the same flags, directory and environment.
func doctorResolveOptions(f *Factory) (appprofile.Options, error) {
	dir, err := f.Getwd()
	if err != nil {
		return appprofile.Options{}, err
	}
	return appprofile.Options{DSN: f.Conn.DSN, EnvFile: f.Conn.EnvFile, Dir: dir, Cwd: dir,
		FailedTable: f.Conn.FailedTable, JobsTable: f.Conn.JobsTable, Timezone: f.Conn.Timezone, Environ: f.Environ()}, nil
}

// doctorReport is the whole report; --json prints it as is.
type doctorReport struct {
	SchemaVersion  int                        `json:"schema_version"`
	App            doctorApp                  `json:"app"`
	Settings       []appprofile.Setting       `json:"settings"`
	Connections    []doctorConnection         `json:"connections"`
	Contradictions []appprofile.Contradiction `json:"contradictions"`
	Checks         []doctorCheck              `json:"checks"`
	Indexes        []sqlstore.IndexAdvice     `json:"indexes"`
	OK             bool                       `json:"ok"`
}

type doctorApp struct {
	Root                 string   `json:"root"`
	IsApp                bool     `json:"is_app"`
	LaravelVersion       string   `json:"laravel_version"`
	LaravelVersionSource string   `json:"laravel_version_source"`
	Configuration        string   `json:"configuration"`
	ConfigCache          string   `json:"config_cache,omitempty"`
	ConfigFiles          []string `json:"config_files"`
	EnvFile              string   `json:"env_file,omitempty"`
	// ConnectionSource is where the failed-jobs database came from.
	ConnectionSource string             `json:"connection_source"`
	Timezone         string             `json:"timezone"`
	TimezoneSource   string             `json:"timezone_source"`
	FailedStore      doctorFailedStore  `json:"failed_store"`
	JobsTable        string             `json:"jobs_table"`
	BatchesTable     string             `json:"batches_table"`
	Warnings         []string           `json:"warnings"`
	configuration    configurationKinds // for the text report
}

// configurationKinds is what describes the configuration in the text report.
type configurationKinds struct {
	cache   bool
	version int
}

type doctorFailedStore struct {
	Driver     string `json:"driver"`
	Connection string `json:"connection,omitempty"`
	Target     string `json:"target,omitempty"`
	Table      string `json:"table,omitempty"`
	Path       string `json:"path,omitempty"`
	Source     string `json:"source"`
}

type doctorConnection struct {
	Name        string `json:"name"`
	Driver      string `json:"driver"`
	Queue       string `json:"queue"`
	Default     bool   `json:"default"`
	Destination string `json:"destination"`
	Retry       bool   `json:"retry"`
	Monitor     bool   `json:"monitor"`
	Note        string `json:"note,omitempty"`
	Artisan     string `json:"artisan,omitempty"`
	Source      string `json:"source"`
}

type doctorCheck struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}

// doctorState gathers the report; clean makes every text that came from the
// configuration or a database safe to print and free of known passwords.
type doctorState struct {
	opts    *DoctorOptions
	cfg     appprofile.Config
	rep     doctorReport
	secrets []string
	// localQueue: a queue connection of the app puts its jobs into the
	// failed-jobs database's jobs table. noApp: there is no app, so its
	// queue connections are unknown.
	localQueue, noApp bool
}

func (d *doctorState) clean(s string) string {
	return sanitize.Line(redact.Text(s, d.secrets...))
}

func (d *doctorState) check(name, status, detail string) {
	d.rep.Checks = append(d.rep.Checks, doctorCheck{Name: d.clean(name), Status: status, Detail: d.clean(oneLine(detail))})
}

func (d *doctorState) contradiction(c appprofile.Contradiction) {
	c.Key, c.Message = d.clean(c.Key), d.clean(c.Message)
	d.rep.Contradictions = append(d.rep.Contradictions, c)
}

func doctorRun(ctx context.Context, opts *DoctorOptions) error {
	d := &doctorState{opts: opts}
	d.rep = doctorReport{SchemaVersion: jsonSchemaVersion, Settings: []appprofile.Setting{}, Connections: []doctorConnection{}, Contradictions: []appprofile.Contradiction{},
		Checks: []doctorCheck{}, Indexes: []sqlstore.IndexAdvice{}}
	d.rep.App.ConfigFiles, d.rep.App.Warnings = []string{}, []string{}
	cfg, err := opts.Config()
	if err != nil {
		d.check("configuration", checkFail, err.Error())
		return d.finish()
	}
	d.cfg = cfg
	d.collectSecrets()
	d.describeApp()
	routes := d.describeConnections()
	defer func() {
		for _, r := range routes {
			if r.Backend != nil {
				_ = r.Backend.Close()
			}
		}
	}()
	d.configContradictions()
	if err := d.checkStore(ctx); err != nil {
		return err
	}
	if err := d.checkBackends(ctx, routes); err != nil {
		return err
	}
	// Last: the checks above resolved Redis and database connections, which
	// records the values they needed but could not evaluate.
	for _, c := range appprofile.UnknownContradictions(cfg.Profile) {
		d.contradiction(c)
	}
	return d.finish()
}

// collectSecrets gathers every password the profile knows, so that no
// message can show one even if a driver echoed it.
func (d *doctorState) collectSecrets() {
	d.secrets = append(d.secrets, d.cfg.Target.Password, d.cfg.Database.Target.Password, d.cfg.AppKey)
	d.secrets = append(d.secrets, d.cfg.AppKeys...)
	p := d.cfg.Profile
	if p == nil {
		return
	}
	for _, qc := range d.cfg.Queues {
		if qc.Driver == triage.DriverRedis {
			name := qc.Connection
			if name == "" {
				name = "default"
			}
			if rc, err := p.Redis(name); err == nil {
				d.secrets = append(d.secrets, rc.Password)
			}
		}
		if qc.Driver == triage.DriverDatabase && qc.Connection != "" {
			if dc, err := p.DatabaseConnectionNamed(qc.Connection); err == nil {
				d.secrets = append(d.secrets, dc.Target.Password)
			}
		}
	}
}

func (d *doctorState) describeApp() {
	cfg, p, a := d.cfg, d.cfg.Profile, &d.rep.App
	a.ConnectionSource = d.clean(cfg.Source)
	a.JobsTable, a.BatchesTable = d.clean(cfg.JobsTable), d.clean(cfg.BatchesTable)
	for _, w := range cfg.Warnings {
		a.Warnings = append(a.Warnings, d.clean(w))
	}
	a.Timezone = "UTC"
	if cfg.Location != nil {
		a.Timezone = cfg.Location.String()
	}
	a.TimezoneSource = "default"
	switch {
	case d.opts.TimezoneFlag != "":
		a.TimezoneSource = "--timezone"
	case d.opts.Getenv("JOBTRIAGE_TIMEZONE") != "":
		a.TimezoneSource = "JOBTRIAGE_TIMEZONE"
	case p != nil && p.Get("app.timezone") != nil:
		a.TimezoneSource = "app.timezone, " + d.clean(p.Source(p.Get("app.timezone")))
	}
	fs := doctorFailedStore{Driver: cfg.Failed.Driver, Source: d.clean(cfg.Failed.Source)}
	switch {
	case cfg.Failed.Driver == "file" && cfg.Target.Driver == "":
		fs.Path = d.clean(cfg.Failed.Path)
	default:
		fs.Connection = cfg.Failed.Database
		if fs.Connection == "" && p != nil {
			fs.Connection, _ = p.Get("database.default").String()
		}
		if cfg.Source == "--dsn" || cfg.Source == "JOBTRIAGE_DSN" {
			fs.Connection = cfg.Source
		}
		fs.Connection = d.clean(fs.Connection)
		fs.Target = d.clean(cfg.Target.Redacted())
		fs.Table = d.clean(cfg.FailedTable)
	}
	a.FailedStore = fs
	if p == nil {
		return
	}
	a.Root, a.IsApp = d.clean(p.Root), p.IsApp
	a.LaravelVersion, a.LaravelVersionSource = d.clean(p.Version), d.clean(p.VersionSource)
	a.configuration = configurationKinds{cache: p.CachePath != "", version: p.Major}
	switch {
	case p.CachePath != "":
		a.Configuration = "config_cache"
		a.ConfigCache = d.clean(p.CachePath)
	case len(p.Files) > 0:
		a.Configuration = "config_files"
	default:
		a.Configuration = "defaults"
	}
	for _, f := range p.Files {
		a.ConfigFiles = append(a.ConfigFiles, d.clean(f))
	}
	a.EnvFile = d.clean(p.EnvFile)
	for _, s := range p.Settings() {
		if appprofile.SecretKey(s.Key) && strings.HasPrefix(s.Value, "? ") {
			s.Value = "? (a secret's expression, not shown)"
		}
		d.rep.Settings = append(d.rep.Settings, appprofile.Setting{Key: d.clean(s.Key), Value: d.clean(s.Value), Source: d.clean(s.Source)})
	}
}

// describeConnections reports each queue connection's coverage and returns
// the routes (the live checks use them; the caller closes their backends).
func (d *doctorState) describeConnections() map[string]triage.Route {
	cfg := d.cfg
	routes, _ := queueRoutes(cfg, d.opts.Backends)
	if routes == nil {
		d.noApp = true
		// Outside an app the connections listed are jobtriage's defaults,
		// not the app's; every retry goes to the local jobs table.
		d.rep.Connections = append(d.rep.Connections, doctorConnection{Name: "(every connection)", Driver: triage.DriverDatabase,
			Queue: "(as recorded)", Destination: "table " + d.clean(cfg.JobsTable) + " in the failed-jobs database", Retry: true, Monitor: true,
			Note:   "no Laravel app here (no artisan file), so its queue connections are unknown: jobs go back to the jobs table of the failed-jobs database",
			Source: "no app"})
		return nil
	}
	def := cfg.DefaultQueueConnection()
	for _, qc := range cfg.Queues {
		r := routes[qc.Name]
		queue := qc.Queue
		if queue == "" {
			queue = "default"
		}
		c := doctorConnection{Name: qc.Name, Driver: qc.Driver, Queue: queue, Default: qc.Name == def,
			Retry: r.Writable(), Monitor: r.Writable(), Source: qc.Source}
		switch {
		case r.Local:
			d.localQueue = true
			table := qc.Table
			if table == "" {
				table = "jobs"
			}
			c.Destination = "table " + cfg.Database.Prefix + table + " in the failed-jobs database"
		case r.Backend != nil:
			c.Destination = r.Backend.Describe()
		case qc.Driver == triage.DriverSync:
			c.Destination = "none: jobs run inline, in the process that dispatches them"
			c.Note = "sync jobs never reach failed_jobs; there is nothing to retry or monitor"
		case qc.Driver == triage.DriverNull:
			c.Destination = "none: jobs are discarded"
			c.Note = "null jobs never run and never fail"
		default:
			c.Destination = "the " + driverName(qc.Driver) + " driver's own store, which jobtriage cannot reach"
			c.Note = r.Reason
			if c.Note == "" {
				c.Note = fmt.Sprintf("jobtriage cannot write to or read the %s driver", driverName(qc.Driver))
			}
			c.Artisan = fmt.Sprintf("php artisan queue:retry <id> (retry), php artisan queue:monitor %s:%s (monitor)", qc.Name, queue)
			severity := appprofile.SeverityInfo
			if c.Default {
				severity = appprofile.SeverityWarning
			}
			d.contradiction(appprofile.Contradiction{Severity: severity, Kind: appprofile.KindUnwritable, Key: "queue.connections." + qc.Name,
				Message: fmt.Sprintf("queue connection %s (%s) uses the %s driver: jobtriage cannot retry into it or monitor it; use %s",
					qc.Name, qc.Source, driverName(qc.Driver), c.Artisan)})
		}
		for _, s := range []*string{&c.Name, &c.Driver, &c.Queue, &c.Destination, &c.Note, &c.Artisan, &c.Source} {
			*s = d.clean(*s)
		}
		d.rep.Connections = append(d.rep.Connections, c)
	}
	return routes
}

func driverName(driver string) string {
	if driver == "" {
		return "(none)"
	}
	return driver
}

// configContradictions compares the config cache with .env and checks
// APP_TIMEZONE.
func (d *doctorState) configContradictions() {
	p := d.cfg.Profile
	if p == nil {
		return
	}
	files := p
	if p.CachePath != "" {
		files = nil
		o, err := d.opts.ResolveOptions()
		if err == nil {
			files, err = appprofile.ProfileWithoutCache(p, o)
		}
		if err != nil {
			d.contradiction(appprofile.Contradiction{Severity: appprofile.SeverityWarning, Kind: appprofile.KindCacheVsEnv,
				Message: "could not evaluate config/*.php with .env to compare with the config cache: " + oneLine(err.Error())})
		}
		for _, c := range appprofile.CacheContradictions(p, files) {
			d.contradiction(c)
		}
	}
	if c := appprofile.TimezoneIgnored(files); c != nil {
		d.contradiction(*c)
	}
}

// checkStore opens the failed-jobs store through the factory, as every
// command does, and reports what it found.
func (d *doctorState) checkStore(ctx context.Context) error {
	svc, err := d.opts.Service(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		d.check("failed-jobs store", checkFail, err.Error())
		return nil
	}
	switch st := svc.Store.(type) {
	case *sqlstore.Store:
		return d.checkSQL(ctx, st)
	case *filestore.Store:
		detail := fmt.Sprintf("file %s: %d failed jobs (the file driver keeps at most queue.failed.limit, default 100)", st.Path(), st.Len())
		if st.Missing() {
			detail = fmt.Sprintf("file %s does not exist yet (Laravel creates it on the first failure)", st.Path())
		}
		d.check("failed-jobs store", checkOK, detail)
	default:
		d.check("failed-jobs store", checkOK, "opened")
	}
	return nil
}

func (d *doctorState) checkSQL(ctx context.Context, st *sqlstore.Store) error {
	sc := st.Schema()
	info, err := st.ServerInfo(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		d.check("failed-jobs database", checkFail, err.Error())
		return nil
	}
	server := info.Dialect + " " + info.Version
	if info.Dialect == "sqlite" {
		server = "SQLite " + info.Version
	}
	ids := "ids are the uuid column (database-uuids)"
	if sc.IDMode == triage.IDModeInteger {
		ids = "ids are integers (no uuid column: the legacy database driver)"
	} else if sc.UUIDNullable {
		ids += "; uuid is nullable (upgraded from Laravel 7), NULL-uuid rows are addressed by integer id"
	}
	rows := ""
	switch n, exact, ok, err := st.RowEstimate(ctx, sc.FailedTable); {
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		rows = "; row count unavailable: " + oneLine(err.Error())
	case ok && exact:
		rows = "; " + countNoun(n, "row")
	case ok:
		rows = "; about " + countNoun(n, "row") + " (planner estimate)"
	}
	d.check("failed-jobs database", checkOK, fmt.Sprintf("%s (%s): table %s present; %s%s", st.Endpoint().Redacted(), server, sc.FailedTable, ids, rows))

	// The jobs table matters where a queue connection of the app puts
	// jobs into it; outside an app it is only where retries would go.
	switch {
	case sc.HasJobs:
		d.check("jobs table", checkOK, "table "+sc.JobsTable+" present")
	case d.localQueue:
		d.check("jobs table", checkFail, "table "+sc.JobsTable+" is missing or unusable, but a database queue connection puts its jobs there: retry and monitor cannot work (php artisan queue:table && php artisan migrate; Laravel 11+: make:queue-table)")
	case d.noApp:
		d.check("jobs table", checkWarn, "table "+sc.JobsTable+" is missing or unusable: outside an app retries go there (pass --jobs-dsn or --jobs-table, or run jobtriage in the app's directory)")
	default:
		d.check("jobs table", checkOK, "table "+sc.JobsTable+" not present; no database queue connection uses it")
	}
	if sc.HasBatches {
		d.check("batches table", checkOK, "table "+d.cfg.BatchesTable+" present")
	} else {
		d.check("batches table", checkWarn, "table "+d.cfg.BatchesTable+" not present (only batched jobs need it)")
	}

	advice, err := st.MissingIndexes(ctx)
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		d.check("indexes", checkWarn, "could not read the indexes: "+err.Error())
	default:
		for _, a := range advice {
			a.Table, a.Why, a.SQL = d.clean(a.Table), d.clean(a.Why), d.clean(a.SQL)
			d.rep.Indexes = append(d.rep.Indexes, a)
		}
	}
	d.serverTimezone(info)
	return nil
}

// serverTimezone notes a database whose clock zone differs from the app's:
// Laravel and jobtriage both write and compare failed_at as wall-clock text
// in app.timezone, so it changes nothing for them, but it does for MySQL
// TIMESTAMP storage and for anyone's ad-hoc SQL.
func (d *doctorState) serverTimezone(info sqlstore.ServerInfo) {
	app := d.cfg.Location
	if app == nil {
		app = time.UTC
	}
	now := d.opts.Now()
	server := info.Timezone
	setting := info.TimezoneSetting
	if info.Dialect == "sqlite" {
		server, setting = "UTC", "SQLite's datetime('now') and CURRENT_TIMESTAMP"
	}
	if server == "" || sameZone(server, app, now) {
		return
	}
	var affects string
	switch info.Dialect {
	case "mysql":
		affects = "failed_at is a TIMESTAMP column, which MySQL stores converted from the session time_zone (pin it with 'timezone' on the database connection, as Laravel then sets it too); ad-hoc SQL comparing failed_at with NOW() is off by the difference"
	case "postgres":
		affects = "failed_at (timestamp without time zone) stores the text as given; ad-hoc SQL comparing it with now() or CURRENT_TIMESTAMP is off by the difference"
	default:
		affects = "ad-hoc SQL comparing failed_at with datetime('now') is off by the difference"
	}
	d.contradiction(appprofile.Contradiction{Severity: appprofile.SeverityInfo, Kind: appprofile.KindServerTimezone, Key: "app.timezone",
		Message: fmt.Sprintf("the database's timezone is %s (%s) but the app writes failed_at in %s (%s): Laravel and jobtriage agree with each other; %s",
			server, setting, app, d.rep.App.TimezoneSource, affects)})
}

// sameZone reports whether a server's zone name (IANA, an abbreviation
// MySQL reports for SYSTEM, or an offset such as +02:00) has the app zone's
// offset now and half a year from now (either side of a DST change).
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
	if err1 != nil || err2 != nil || hh > 14 || mm > 59 {
		return 0, false
	}
	off := hh*3600 + mm*60
	if s[0] == '-' {
		off = -off
	}
	return off, true
}

// checkBackends asks each queue connection's Redis (or other database) for
// the size of its default queue: the cheapest call that proves jobtriage
// can reach it with the app's settings.
func (d *doctorState) checkBackends(ctx context.Context, routes map[string]triage.Route) error {
	if routes == nil {
		return nil
	}
	for _, qc := range d.cfg.Queues {
		r := routes[qc.Name]
		if qc.Driver != triage.DriverRedis && (qc.Driver != triage.DriverDatabase || r.Local) {
			continue
		}
		name := "queue connection " + qc.Name
		if r.Backend == nil {
			d.check(name, checkFail, r.Reason)
			continue
		}
		queue := qc.Queue
		if queue == "" {
			queue = "default"
		}
		cctx, cancel := context.WithTimeout(ctx, doctorCheckTimeout)
		stats, err := r.Backend.Stats(cctx, triage.QueueStatsParams{Queues: []string{queue}, Now: d.opts.Now(), RetryAfter: time.Duration(qc.RetryAfter) * time.Second})
		cancel()
		switch {
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			d.check(name, checkFail, r.Backend.Describe()+": "+err.Error())
		default:
			var size int64
			for _, s := range stats {
				size += s.Size
			}
			d.check(name, checkOK, fmt.Sprintf("%s reachable; queue %s holds %s", r.Backend.Describe(), queue, countNoun(size, "job")))
		}
	}
	return nil
}

// finish decides the outcome and prints the report.
func (d *doctorState) finish() error {
	failed, errs := 0, 0
	for _, c := range d.rep.Checks {
		if c.Status == checkFail {
			failed++
		}
	}
	for _, c := range d.rep.Contradictions {
		if c.Severity == appprofile.SeverityError {
			errs++
		}
	}
	d.rep.OK = failed == 0 && errs == 0
	// Errors first, then warnings, then notes; each group in the order found.
	rank := map[string]int{appprofile.SeverityError: 0, appprofile.SeverityWarning: 1, appprofile.SeverityInfo: 2}
	slices.SortStableFunc(d.rep.Contradictions, func(a, b appprofile.Contradiction) int { return rank[a.Severity] - rank[b.Severity] })
	var err error
	if d.opts.JSON {
		err = writeJSON(d.opts.IO.Out, d.rep)
	} else {
		err = d.printText(d.opts.IO.Out)
	}
	if err != nil {
		return err
	}
	if d.rep.OK {
		return nil
	}
	fmt.Fprintf(d.opts.IO.ErrOut, "doctor: %d failed check(s), %d contradiction(s)\n", failed, errs)
	return silentExit(ExitError)
}

// printText writes the report in sections. Every string in the report was
// cleaned when it was added.
func (d *doctorState) printText(w io.Writer) error {
	var b strings.Builder
	rep, a := d.rep, d.rep.App
	section := func(title string) {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(title + "\n")
	}
	pairs := func(rows [][2]string) {
		width := 0
		for _, r := range rows {
			width = max(width, sanitize.Width(r[0]))
		}
		for _, r := range rows {
			b.WriteString("  " + r[0] + strings.Repeat(" ", width-sanitize.Width(r[0])+2) + r[1] + "\n")
		}
	}

	section("App")
	if a.Root != "" || a.Configuration != "" {
		root := a.Root
		if !a.IsApp {
			root += " (no artisan file: not a Laravel app root)"
		}
		version := "unknown (Laravel " + strconv.Itoa(a.configuration.version) + " defaults assumed)"
		if a.LaravelVersion != "" {
			version = a.LaravelVersion + " (" + a.LaravelVersionSource + ")"
		}
		pairs([][2]string{
			{"root", root},
			{"laravel", version},
			{"configuration", d.configurationText()},
			{"timezone", a.Timezone + " (" + a.TimezoneSource + ")"},
			{"failed jobs", d.failedStoreText()},
			{"jobs table", a.JobsTable},
			{"batches table", a.BatchesTable},
		})
		for _, wn := range a.Warnings {
			b.WriteString("  warning: " + wn + "\n")
		}
	} else {
		b.WriteString("  (the configuration could not be resolved; see Checks)\n")
	}

	if len(rep.Settings) > 0 {
		section("Settings")
		rows := make([][3]string, 0, len(rep.Settings))
		for _, s := range rep.Settings {
			rows = append(rows, [3]string{s.Key, s.Value, s.Source})
		}
		writeColumns(&b, rows)
	}

	if len(rep.Connections) > 0 {
		section("Queue connections")
		for _, c := range rep.Connections {
			name := c.Name
			if c.Default {
				name += " (default)"
			}
			b.WriteString(fmt.Sprintf("  %s: %s driver, queue %s → %s\n", name, c.Driver, c.Queue, c.Destination))
			switch {
			case c.Retry:
				b.WriteString("      retry: yes · monitor: yes")
				if c.Note != "" {
					b.WriteString(" — " + c.Note)
				}
				b.WriteString("\n")
			default:
				b.WriteString("      retry: no · monitor: no")
				if c.Note != "" {
					b.WriteString(" — " + c.Note)
				}
				b.WriteString("\n")
				if c.Artisan != "" {
					b.WriteString("      use: " + c.Artisan + "\n")
				}
			}
		}
	}

	section("Contradictions")
	if len(rep.Contradictions) == 0 {
		b.WriteString("  none\n")
	}
	for _, c := range rep.Contradictions {
		b.WriteString("  " + severityLabel(c.Severity) + "  " + c.Message + "\n")
	}

	section("Checks")
	for _, c := range rep.Checks {
		b.WriteString("  " + checkLabel(c.Status) + "  " + c.Name + ": " + c.Detail + "\n")
	}

	section("Indexes")
	if len(rep.Indexes) == 0 {
		if d.hasSQLCheck() {
			b.WriteString("  nothing to add\n")
		} else {
			b.WriteString("  not checked (no SQL failed-jobs database was opened)\n")
		}
	}
	for _, ix := range rep.Indexes {
		b.WriteString("  " + checkLabel(checkWarn) + "  " + ix.Table + "(" + strings.Join(ix.Columns, ", ") + ") is not indexed: " + ix.Why + "\n")
		b.WriteString("        " + ix.SQL + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (d *doctorState) hasSQLCheck() bool {
	for _, c := range d.rep.Checks {
		if c.Name == "failed-jobs database" && c.Status == checkOK {
			return true
		}
	}
	return false
}

func (d *doctorState) configurationText() string {
	a := d.rep.App
	switch a.Configuration {
	case "config_cache":
		return "the config cache " + a.ConfigCache + " (php artisan config:cache); Laravel reads neither .env nor config/*.php while it exists"
	}
	env := "no .env file"
	if a.EnvFile != "" {
		env = a.EnvFile
	}
	defaults := "jobtriage's built-in Laravel " + strconv.Itoa(a.configuration.version) + " defaults"
	if a.Configuration == "defaults" {
		return defaults + " with the environment and " + env
	}
	return strings.Join(a.ConfigFiles, ", ") + " (over " + defaults + ") with the environment and " + env
}

func (d *doctorState) failedStoreText() string {
	fs := d.rep.App.FailedStore
	if fs.Path != "" && fs.Target == "" {
		return fs.Driver + " driver: file " + fs.Path
	}
	return fmt.Sprintf("%s driver on connection %s: %s, table %s", fs.Driver, fs.Connection, fs.Target, fs.Table)
}

func severityLabel(s string) string {
	switch s {
	case appprofile.SeverityError:
		return "error"
	case appprofile.SeverityWarning:
		return "warn "
	}
	return "note "
}

func checkLabel(s string) string {
	switch s {
	case checkFail:
		return "FAIL"
	case checkWarn:
		return "warn"
	}
	return "ok  "
}

// writeColumns aligns three columns; the last one is not padded.
func writeColumns(b *strings.Builder, rows [][3]string) {
	var w [2]int
	for _, r := range rows {
		w[0] = max(w[0], sanitize.Width(r[0]))
		w[1] = max(w[1], sanitize.Width(r[1]))
	}
	for _, r := range rows {
		b.WriteString("  " + r[0] + strings.Repeat(" ", w[0]-sanitize.Width(r[0])+2) +
			r[1] + strings.Repeat(" ", w[1]-sanitize.Width(r[1])+2) + r[2] + "\n")
	}
}
