package cmd

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/appconfig"
	"github.com/jobtriage/jobtriage/triage/filestore"
	"github.com/jobtriage/jobtriage/triage/redisqueue"
	"github.com/jobtriage/jobtriage/triage/sanitize"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
)

// ConnFlags are the persistent flags that say where the database is.
type ConnFlags struct {
	DSN         string
	JobsDSN     string // jobs in another database than failed_jobs
	EnvFile     string
	FailedTable string
	JobsTable   string
	Timezone    string
	Timeout     time.Duration
	// JobsLedger opts in to a jobtriage_pushed table in the --jobs-dsn
	// database, which makes pushes there idempotent even after a worker
	// ran the job.
	JobsLedger bool
}

// Factory is a bag of lazy constructors: building the command tree (and so
// --help or a flag error) never resolves configuration or dials a database.
type Factory struct {
	IO      *IOStreams
	Now     func() time.Time
	Getenv  func(string) string
	Environ func() []string
	Getwd   func() (string, error)
	Conn    ConnFlags
	// AuditLog is where destructive actions are recorded ("" = JOBTRIAGE_AUDIT_LOG or off).
	AuditLog string
	// Args is the command line as typed (without the program name), for
	// the audit log; nil when unknown.
	Args []string

	// Config resolves the database settings (flags > env > .env).
	Config func() (appconfig.Config, error)
	// Service opens the store and returns the use-cases over it.
	Service func(ctx context.Context) (*triage.Service, error)

	closers []func() error
}

// NewFactory wires the real process environment.
func NewFactory() *Factory {
	f := &Factory{
		Now:     time.Now,
		Getenv:  os.Getenv,
		Environ: os.Environ,
		Getwd:   os.Getwd,
	}
	f.IO = System(f.Getenv)
	f.Config = f.resolveConfig
	f.Service = f.openService
	return f
}

func (f *Factory) resolveConfig() (appconfig.Config, error) {
	dir, err := f.Getwd()
	if err != nil {
		return appconfig.Config{}, fmt.Errorf("%w: %v", errConfig, err)
	}
	cfg, err := appconfig.Resolve(appconfig.Options{
		DSN:         f.Conn.DSN,
		EnvFile:     f.Conn.EnvFile,
		Dir:         dir,
		Cwd:         dir,
		FailedTable: f.Conn.FailedTable,
		JobsTable:   f.Conn.JobsTable,
		Timezone:    f.Conn.Timezone,
		Environ:     f.Environ(),
	})
	if err != nil {
		return appconfig.Config{}, fmt.Errorf("%w: %v", errConfig, err)
	}
	return cfg, nil
}

func (f *Factory) openService(ctx context.Context) (*triage.Service, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintln(f.IO.ErrOut, "warning: "+sanitize.Line(w))
	}
	svc := &triage.Service{Now: f.Now, AppKey: cfg.AppKey, Location: cfg.Location, Target: describeTarget(cfg)}
	if len(cfg.AppKeys) > 1 {
		svc.PreviousKeys = cfg.AppKeys[1:]
	}
	if cfg.Failed.Driver == "file" && cfg.Target.Driver == "" {
		fs, err := filestore.Open(cfg.Failed.Path, cfg.Location)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errConfig, err)
		}
		if fs.Missing() {
			fmt.Fprintf(f.IO.ErrOut, "note: %s does not exist yet (Laravel creates it on the first failure)\n", sanitize.Line(cfg.Failed.Path))
		}
		svc.Store = fs
		return svc, nil
	}
	t := cfg.Target
	store, err := sqlstore.Open(ctx, sqlstore.Config{
		Endpoint:         endpointOf(t, cfg.Database),
		FailedTable:      cfg.FailedTable,
		JobsTable:        cfg.JobsTable,
		BatchesTable:     cfg.BatchesTable,
		Location:         cfg.Location,
		StatementTimeout: f.Conn.Timeout,
	})
	if err != nil {
		return nil, err
	}
	f.closers = append(f.closers, store.Close)
	svc.Store = store
	var monitorConns []triage.MonitorConnection
	svc.Routes, monitorConns = queueRoutes(cfg, f.backendOpeners())
	for _, r := range svc.Routes {
		if r.Backend != nil {
			f.closers = append(f.closers, r.Backend.Close)
		}
	}
	svc.MonitorConnections = monitorConns
	svc.DefaultConnection = cfg.DefaultQueueConnection()
	jobsDSN := f.Conn.JobsDSN
	if jobsDSN == "" {
		jobsDSN = f.Getenv("JOBTRIAGE_JOBS_DSN")
	}
	if jobsDSN != "" {
		jt, err := appconfig.ParseDSN(jobsDSN)
		if err != nil {
			return nil, fmt.Errorf("%w: --jobs-dsn: %v", errConfig, err)
		}
		jobs, err := openJobsBackend(ctx, sqlstore.Config{
			Endpoint:         endpointOf(jt, appconfig.DatabaseConnection{}),
			JobsTable:        cfg.JobsTable,
			StatementTimeout: f.Conn.Timeout,
		}, f.Conn.JobsLedger)
		if err != nil {
			return nil, err
		}
		f.closers = append(f.closers, jobs.Close)
		svc.Jobs = jobs
	}
	return svc, nil
}

// endpointOf is the store endpoint of a target, with the connection's
// PostgreSQL search_path and MySQL session timezone.
func endpointOf(t appconfig.Target, dc appconfig.DatabaseConnection) sqlstore.Endpoint {
	return sqlstore.Endpoint{Driver: t.Driver, Host: t.Host, Port: t.Port, Database: t.Database,
		User: t.User, Password: t.Password, Socket: t.Socket, Path: t.Path, Params: t.Params,
		Schema: dc.Schema, Timezone: dc.Timezone}
}

// backendOpeners are the real queue backends.
func (f *Factory) backendOpeners() backendOpeners {
	return backendOpeners{
		Redis: func(ctx context.Context, rc appconfig.RedisConnection, retryAfter time.Duration) (triage.QueueBackend, error) {
			return redisqueue.Open(ctx, redisqueue.Options{Host: rc.Host, Port: rc.Port, Username: rc.Username, Password: rc.Password,
				DB: rc.Database, TLS: rc.Scheme == "tls", Cluster: rc.Cluster, Prefix: rc.Prefix, RetryAfter: retryAfter})
		},
		Database: func(ctx context.Context, dc appconfig.DatabaseConnection, table string) (triage.QueueBackend, error) {
			return openJobsBackend(ctx, sqlstore.Config{Endpoint: endpointOf(dc.Target, dc), JobsTable: table,
				StatementTimeout: f.Conn.Timeout}, f.Conn.JobsLedger)
		},
	}
}

// openJobsBackend opens the jobs table of a database other than
// failed_jobs' as a queue backend.
func openJobsBackend(ctx context.Context, c sqlstore.Config, ledger bool) (*sqlstore.JobsBackend, error) {
	c.JobsOnly = true
	st, err := sqlstore.Open(ctx, c)
	if err != nil {
		return nil, err
	}
	return &sqlstore.JobsBackend{Store: st, Ledger: ledger}, nil
}

// describeTarget names what a write changes, like a kubectl context: the
// app, and the failed-jobs store with its table.
func describeTarget(cfg appconfig.Config) string {
	var where string
	switch {
	case cfg.Failed.Driver == "file" && cfg.Target.Driver == "":
		where = "file " + cfg.Failed.Path
	default:
		where = cfg.Target.Redacted() + " table " + cfg.FailedTable
	}
	if cfg.AppName == "" || cfg.Profile == nil || !cfg.Profile.IsApp {
		return where
	}
	app := cfg.AppName
	if cfg.AppEnv != "" {
		app += " (" + cfg.AppEnv + ")"
	}
	return "app " + app + " · " + where
}

// Close releases whatever the constructors opened.
func (f *Factory) Close() {
	for _, c := range f.closers {
		_ = c()
	}
	f.closers = nil
}
