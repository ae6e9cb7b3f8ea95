package cmd

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/appconfig"
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
		fmt.Fprintln(f.IO.ErrOut, "warning: "+w)
	}
	t := cfg.Target
	store, err := sqlstore.Open(ctx, sqlstore.Config{
		Endpoint: sqlstore.Endpoint{Driver: t.Driver, Host: t.Host, Port: t.Port, Database: t.Database,
			User: t.User, Password: t.Password, Socket: t.Socket, Path: t.Path, Params: t.Params},
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
	svc := &triage.Service{Store: store, Now: f.Now, AppKey: cfg.AppKey, Location: cfg.Location}
	jobsDSN := f.Conn.JobsDSN
	if jobsDSN == "" {
		jobsDSN = f.Getenv("JOBTRIAGE_JOBS_DSN")
	}
	if jobsDSN != "" {
		jt, err := appconfig.ParseDSN(jobsDSN)
		if err != nil {
			return nil, fmt.Errorf("%w: --jobs-dsn: %v", errConfig, err)
		}
		jobs, err := sqlstore.Open(ctx, sqlstore.Config{
			Endpoint: sqlstore.Endpoint{Driver: jt.Driver, Host: jt.Host, Port: jt.Port, Database: jt.Database,
				User: jt.User, Password: jt.Password, Socket: jt.Socket, Path: jt.Path, Params: jt.Params},
			JobsTable:        cfg.JobsTable,
			StatementTimeout: f.Conn.Timeout,
			JobsOnly:         true,
		})
		if err != nil {
			return nil, err
		}
		f.closers = append(f.closers, jobs.Close)
		svc.Jobs = jobs
	}
	return svc, nil
}

// Close releases whatever the constructors opened.
func (f *Factory) Close() {
	for _, c := range f.closers {
		_ = c()
	}
	f.closers = nil
}
