package cmd

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jobtriage/jobtriage/internal/appprofile"
	"github.com/jobtriage/jobtriage/internal/contexts"
	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/filestore"
	"github.com/jobtriage/jobtriage/triage/redisqueue"
	"github.com/jobtriage/jobtriage/triage/sanitize"
	"github.com/jobtriage/jobtriage/triage/sigindex"
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
	// database: pushes there stay idempotent after a worker ran the job.
	JobsLedger bool
	// DatabaseConnections are --database-connection (retry, tui), for the router.
	DatabaseConnections []string
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
	// Redact is --redact and --redact-keys.
	Redact RedactFlags
	// Args is the command line after the program name, for the audit log; nil when unknown.
	Args []string
	// ConfigFile is --config, ContextName --context ("" = unset).
	ConfigFile  string
	ContextName string
	// NoCache (--no-cache) reads the table, not the local signature index.
	NoCache bool

	// Config resolves the database settings (flags > env > .env).
	Config func() (appprofile.Config, error)
	// Service opens the store and returns the use-cases over it.
	Service func(ctx context.Context) (*triage.Service, error)

	closers []func() error

	// fixed is ForContext's context: it wins over --context and the file's current one.
	fixed *contexts.Context
	// file loads the configuration file once, shared with ForContext's children.
	file func() (*contexts.File, error)
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

// ConfigFileData loads the configuration file (--config, JOBTRIAGE_CONFIG,
// else the XDG one; none is no contexts), once.
func (f *Factory) ConfigFileData() (*contexts.File, error) {
	if f.file == nil {
		f.file = sync.OnceValues(func() (*contexts.File, error) {
			file, err := contexts.Load(contexts.Locate(f.ConfigFile, f.Getenv))
			if err != nil {
				err = fmt.Errorf("%w: %v", errConfig, err)
			}
			return file, err
		})
	}
	return f.file()
}

// Context is the context this command runs in: ForContext's, else --context,
// else JOBTRIAGE_CONTEXT, else the file's current-context; nil for none. A
// name the file lacks exits 2 (flag, environment) or 5 (the file's).
func (f *Factory) Context() (*contexts.Context, error) {
	if f.fixed != nil {
		return f.fixed, nil
	}
	name, from := f.ContextName, "--context"
	if name == "" && f.Getenv != nil {
		name, from = f.Getenv(contexts.EnvContext), contexts.EnvContext
	}
	file, err := f.ConfigFileData()
	if err != nil {
		return nil, err
	}
	if name == "" {
		if file.CurrentContext == "" {
			return nil, nil
		}
		c, _ := file.Context(file.CurrentContext)
		return &c, nil
	}
	c, ok := file.Context(name)
	if !ok {
		return nil, FlagErrorf("%s %q: no such context in %s (have: %s)", from, name, cmp.Or(file.Path, "no configuration file"), contextNames(file))
	}
	return &c, nil
}

// ForContext is a factory for one context (monitor --all-contexts): f's clock
// and flags, its own streams (f's for nil) and connections, closed with f.
// Call it from one goroutine.
func (f *Factory) ForContext(c contexts.Context, ios *IOStreams) *Factory {
	child := &Factory{IO: cmp.Or(ios, f.IO), Now: f.Now, Getenv: f.Getenv, Environ: f.Environ, Getwd: f.Getwd, Conn: f.Conn,
		AuditLog: f.AuditLog, Args: f.Args, ConfigFile: f.ConfigFile, fixed: &c, file: f.file}
	child.Config = child.resolveConfig
	child.Service = child.openService
	f.closers = append(f.closers, func() error { child.Close(); return nil })
	return child
}

// resolveConfig settles where the database is: flags > environment > context > the app's profile.
func (f *Factory) resolveConfig() (appprofile.Config, error) {
	dir, err := f.Getwd()
	if err != nil {
		return appprofile.Config{}, fmt.Errorf("%w: %v", errConfig, err)
	}
	c, err := f.Context()
	if err != nil {
		return appprofile.Config{}, err
	}
	m := contexts.Merge(c, contexts.Settings{Dir: dir, EnvFile: f.Conn.EnvFile, DSN: f.Conn.DSN, FailedTable: f.Conn.FailedTable,
		JobsTable: f.Conn.JobsTable, Timezone: f.Conn.Timezone}, f.Getenv)
	o := appprofile.Options{
		DSN:         m.DSN,
		EnvFile:     m.EnvFile,
		Dir:         m.Dir,
		Cwd:         dir,
		FailedTable: m.FailedTable,
		JobsTable:   m.JobsTable,
		Timezone:    m.Timezone,
		Environ:     f.Environ(),
	}
	fromContext, warnings := m.DSNFromContext, m.Warnings
	cfg, err := appprofile.Resolve(o)
	if err != nil {
		if c != nil {
			msg := err.Error()
			if fromContext && strings.HasPrefix(msg, "--dsn") {
				msg = "dsn" + strings.TrimPrefix(msg, "--dsn") // the DSN came from the file, not the flag
			}
			return appprofile.Config{}, fmt.Errorf("%w: %s: %s", errConfig, c.Marker(), msg)
		}
		return appprofile.Config{}, fmt.Errorf("%w: %v", errConfig, err)
	}
	if fromContext {
		cfg.Source = c.Marker()
	}
	if file, err := f.ConfigFileData(); err == nil && file.Exposed {
		cfg.Warnings = append(cfg.Warnings, file.Path+" holds secrets and other users may read it: chmod 600 it")
	}
	cfg.Warnings = append(cfg.Warnings, warnings...)
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
	if on, keys, err := f.redaction(); err != nil {
		return nil, err
	} else if on {
		svc.Redact = &keys
	}
	c, err := f.Context()
	if err != nil {
		return nil, err
	}
	if c != nil {
		svc.TargetMark = contextMark(f.IO, *c)
	}
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
		svc.Router = triage.NewRouter(nil, nonEmpty(f.Conn.DatabaseConnections), nil)
		return svc, nil
	}
	routes, monitorConns := queueRoutes(cfg, f.backendOpeners())
	if err := checkDatabaseConnections(routes, f.Conn.DatabaseConnections); err != nil {
		return nil, err
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
	svc.Index = f.signatureIndex(store)
	for _, r := range routes {
		if r.Backend != nil {
			f.closers = append(f.closers, r.Backend.Close)
		}
	}
	svc.MonitorConnections = monitorConns
	svc.DefaultConnection = cfg.DefaultQueueConnection()
	svc.Pauses = f.pauseReader(cfg)
	// --jobs-dsn > JOBTRIAGE_JOBS_DSN > the context's jobs-dsn.
	jobsDSN := cmp.Or(f.Conn.JobsDSN, f.Getenv(contexts.EnvJobsDSN))
	if jobsDSN == "" && c != nil {
		jobsDSN = c.JobsDSN
	}
	var jobs triage.QueueBackend // nil unless there is a --jobs-dsn
	if jobsDSN != "" {
		jt, err := appprofile.ParseDSN(jobsDSN)
		if err != nil {
			return nil, fmt.Errorf("%w: --jobs-dsn: %v", errConfig, err)
		}
		jb, err := openJobsBackend(ctx, sqlstore.Config{
			Endpoint:         endpointOf(jt, appprofile.DatabaseConnection{}),
			JobsTable:        cfg.JobsTable,
			StatementTimeout: f.Conn.Timeout,
		}, f.Conn.JobsLedger)
		if err != nil {
			return nil, err
		}
		f.closers = append(f.closers, jb.Close)
		jobs = jb
	}
	svc.Router = triage.NewRouter(routes, nonEmpty(f.Conn.DatabaseConnections), jobs)
	return svc, nil
}

// signatureIndex is the table's local signature index, in JOBTRIAGE_CACHE_DIR
// or the user cache directory; nil (read the table) with --no-cache or none.
func (f *Factory) signatureIndex(src triage.IndexSource) triage.SignatureIndex {
	if f.NoCache {
		return nil
	}
	dir := f.Getenv("JOBTRIAGE_CACHE_DIR")
	if dir == "" {
		d, err := sigindex.DefaultDir()
		if err != nil {
			return nil
		}
		dir = d
	}
	return sigindex.New(sigindex.Options{Dir: dir, Source: src, Notice: func(s string) {
		fmt.Fprintln(f.IO.ErrOut, "note: "+sanitize.Line(s))
	}})
}

// endpointOf is a target's store endpoint, with the connection's search_path and timezone.
func endpointOf(t appprofile.Target, dc appprofile.DatabaseConnection) sqlstore.Endpoint {
	return sqlstore.Endpoint{Driver: t.Driver, Host: t.Host, Port: t.Port, Database: t.Database,
		User: t.User, Password: t.Password, Socket: t.Socket, Path: t.Path, Params: t.Params,
		Schema: dc.Schema, Timezone: dc.Timezone}
}

// backendOpeners are the real queue backends.
func (f *Factory) backendOpeners() backendOpeners {
	return backendOpeners{
		Redis: func(ctx context.Context, rc appprofile.RedisConnection, retryAfter time.Duration) (triage.QueueBackend, error) {
			if c, err := f.Context(); err == nil && c != nil && c.Redis != "" {
				rc = withRedisOverride(rc, c.Redis)
			}
			return redisqueue.Open(ctx, redisOptions(rc))
		},
		Database: func(ctx context.Context, dc appprofile.DatabaseConnection, table string) (triage.QueueBackend, error) {
			return openJobsBackend(ctx, sqlstore.Config{Endpoint: endpointOf(dc.Target, dc), JobsTable: table,
				StatementTimeout: f.Conn.Timeout}, f.Conn.JobsLedger)
		},
	}
}

// redisOptions are the redisqueue options of a Redis connection.
func redisOptions(rc appprofile.RedisConnection) redisqueue.Options {
	return redisqueue.Options{Host: rc.Host, Port: rc.Port, Username: rc.Username, Password: rc.Password,
		DB: rc.Database, TLS: rc.Scheme == "tls", Cluster: rc.Cluster, Prefix: rc.Prefix}
}

// withRedisOverride points a Redis connection where the context's redis URL
// says; its key prefix and cluster mode stay the app's.
func withRedisOverride(rc appprofile.RedisConnection, rawURL string) appprofile.RedisConnection {
	r, err := contexts.ParseRedis(rawURL) // validated when the file was read
	if err != nil {
		return rc
	}
	rc.Host, rc.Port, rc.Username, rc.Password = r.Host, r.Port, r.Username, r.Password
	if r.DB >= 0 {
		rc.Database = r.DB
	}
	rc.Scheme = "tcp"
	if r.TLS {
		rc.Scheme = "tls"
	}
	rc.URL = ""
	return rc
}

// openJobsBackend opens a jobs table outside failed_jobs' database.
func openJobsBackend(ctx context.Context, c sqlstore.Config, ledger bool) (*sqlstore.JobsBackend, error) {
	c.JobsOnly = true
	st, err := sqlstore.Open(ctx, c)
	if err != nil {
		return nil, err
	}
	return &sqlstore.JobsBackend{Store: st, Ledger: ledger}, nil
}

// describeTarget names what a write changes, like a kubectl context: the app, store and table.
func describeTarget(cfg appprofile.Config) string {
	where := cfg.Target.Redacted() + " table " + cfg.FailedTable
	if cfg.Failed.Driver == "file" && cfg.Target.Driver == "" {
		where = "file " + cfg.Failed.Path
	}
	return appTarget(cfg, where)
}

// appTarget is where, after "app shop (production) · " for a real app
// profile (with --dsn alone APP_NAME is Laravel's default and names nothing).
func appTarget(cfg appprofile.Config, where string) string {
	if cfg.AppName == "" || cfg.Profile == nil || !cfg.Profile.IsApp {
		return where
	}
	app := cfg.AppName
	if cfg.AppEnv != "" {
		app += " (" + cfg.AppEnv + ")"
	}
	return "app " + app + " · " + where
}

// PauseStore opens the app's default cache store (database or Redis), where
// the pause keys live; any other store, or workers that do not read the
// keys, is an error naming php artisan queue:pause.
func (f *Factory) PauseStore(ctx context.Context) (triage.CacheStore, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	return f.openCacheStore(ctx, cfg)
}

// minPauseVersion is the first Laravel whose workers read the pause keys.
var minPauseVersion = [2]int{12, 40}

func (f *Factory) openCacheStore(ctx context.Context, cfg appprofile.Config) (triage.CacheStore, error) {
	p := cfg.Profile
	if p == nil || (!p.IsApp && p.CachePath == "") {
		return nil, fmt.Errorf("%w: no Laravel app here (no artisan file), so no cache store to pause queues in: run jobtriage pause in the app's directory", errConfig)
	}
	if p.Version != "" && !versionAtLeast(p.Version, minPauseVersion) {
		return nil, fmt.Errorf("%w: Laravel %s workers do not read queue pause keys (queue:pause came in %d.%d)",
			triage.ErrPauseUnsupported, p.Version, minPauseVersion[0], minPauseVersion[1])
	}
	cs, err := p.CacheStore()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errConfig, err)
	}
	switch cs.Driver {
	case "database":
		dc, err := p.DatabaseConnectionNamed(cs.Connection)
		if err != nil {
			return nil, fmt.Errorf("%w: cache store %s: %v", errConfig, cs.Name, err)
		}
		st, err := sqlstore.OpenCache(ctx, sqlstore.Config{Endpoint: endpointOf(dc.Target, dc), StatementTimeout: f.Conn.Timeout},
			dc.Prefix+cs.Table, cs.Prefix)
		if err != nil {
			return nil, err
		}
		f.closers = append(f.closers, st.Close)
		return st, nil
	case "redis":
		rc, err := p.Redis(cs.Connection)
		if err != nil {
			return nil, fmt.Errorf("%w: cache store %s: %v", errConfig, cs.Name, err)
		}
		st, err := redisqueue.OpenCache(ctx, redisOptions(rc), cs.Prefix)
		if err != nil {
			return nil, err
		}
		f.closers = append(f.closers, st.Close)
		return st, nil
	}
	return nil, fmt.Errorf("%w: the app's cache store %q uses the %q driver, which jobtriage cannot write (%s); use php artisan queue:pause and queue:resume",
		triage.ErrPauseUnsupported, sanitize.Line(cs.Name), sanitize.Line(cs.Driver), sanitize.Line(cs.Source))
}

// pauseReader is the cache store monitor and retry read the pause keys
// from, opened on first use; nil when the app has none jobtriage reads.
func (f *Factory) pauseReader(cfg appprofile.Config) triage.CacheStore {
	p := cfg.Profile
	if p == nil || (p.Version != "" && !versionAtLeast(p.Version, minPauseVersion)) {
		return nil
	}
	cs, err := p.CacheStore()
	if err != nil || (cs.Driver != "database" && cs.Driver != "redis") {
		return nil
	}
	return &lazyCacheStore{lazy[triage.CacheStore]{describe: cs.Driver + " cache store " + cs.Name,
		open: func(ctx context.Context) (triage.CacheStore, error) { return f.openCacheStore(ctx, cfg) }}}
}

// pauseTarget names the app (and context) a pause changes, as retry's confirmations do.
func (f *Factory) pauseTarget(store string) string {
	svc := &triage.Service{Target: store}
	if cfg, err := f.Config(); err == nil {
		svc.Target = appTarget(cfg, store)
	}
	if c, err := f.Context(); err == nil && c != nil {
		svc.TargetMark = contextMark(f.IO, *c)
	}
	return onTarget(svc)
}

// versionAtLeast compares a Laravel version ("12.40.2", "13.x-dev") with
// major.minor; a part that is not a number counts as 0.
func versionAtLeast(version string, min [2]int) bool {
	parts := strings.SplitN(version, ".", 3)
	var got [2]int
	for i := 0; i < 2 && i < len(parts); i++ {
		got[i], _ = strconv.Atoi(parts[i])
	}
	return got[0] > min[0] || (got[0] == min[0] && got[1] >= min[1])
}

// Close releases whatever the constructors opened.
func (f *Factory) Close() {
	for _, c := range f.closers {
		_ = c()
	}
	f.closers = nil
}
