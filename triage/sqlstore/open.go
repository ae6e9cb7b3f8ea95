// Package sqlstore implements triage.Store over a Laravel application's own
// queue tables on PostgreSQL, MySQL/MariaDB and SQLite. It is the only package
// that imports sqlx and the database drivers; per-dialect SQL lives side by
// side in dialect.go.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"  // registers "postgres"
	_ "modernc.org/sqlite" // registers "sqlite" (pure Go, no cgo)

	"github.com/jobtriage/jobtriage/triage"
)

// Endpoint is where the database is. It mirrors appconfig.Target so that this
// package stays independent of how the endpoint was found.
type Endpoint struct {
	Driver   string // "postgres", "mysql" or "sqlite"
	Host     string
	Port     int
	Database string
	User     string
	Password string
	Socket   string
	Path     string // SQLite file
	Params   map[string]string
}

// Redacted names the endpoint for messages; it never contains the password.
func (e Endpoint) Redacted() string {
	switch e.Driver {
	case "sqlite":
		return "sqlite:" + e.Path
	default:
		u := url.URL{Scheme: e.Driver, Path: "/" + e.Database}
		if e.User != "" {
			u.User = url.User(e.User)
		}
		if e.Socket != "" {
			u.Host = "unix(" + e.Socket + ")"
		} else {
			u.Host = net.JoinHostPort(e.Host, strconv.Itoa(e.Port))
		}
		return u.String()
	}
}

// Config says what to open and how patiently.
type Config struct {
	Endpoint     Endpoint
	FailedTable  string // default failed_jobs
	JobsTable    string // default jobs
	BatchesTable string // default job_batches
	// Location is the app timezone: failed_at is wall-clock time in it.
	Location *time.Location
	// ConnectTimeout bounds dialing; StatementTimeout bounds each statement
	// on the server where the server supports it. Zero picks the defaults.
	ConnectTimeout   time.Duration
	StatementTimeout time.Duration
	// JobsOnly opens the jobs side of a split setup: the database holds
	// jobs but not failed_jobs.
	JobsOnly bool
}

const (
	defaultConnectTimeout   = 5 * time.Second
	defaultStatementTimeout = 60 * time.Second
)

// Store is a triage.Store over one database.
type Store struct {
	db     *sqlx.DB
	d      dialect
	schema triage.Schema
	loc    *time.Location
	failed string // quoted table names
	jobs   string
	ep     Endpoint
	// skipLocked: the server knows FOR UPDATE SKIP LOCKED (PostgreSQL,
	// MySQL >= 8.0.1, MariaDB >= 10.6).
	skipLocked bool
	// deleteReturning: the server has DELETE … RETURNING (MariaDB >= 10.0.5),
	// which moves a retry batch in one pass (moveByDelete).
	deleteReturning bool
}

var _ triage.Store = (*Store)(nil)

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]{0,63}$`)

// Open connects, checks the schema and returns the store. Every error it
// returns names the endpoint without its password.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.FailedTable == "" {
		cfg.FailedTable = "failed_jobs"
	}
	if cfg.JobsTable == "" {
		cfg.JobsTable = "jobs"
	}
	if cfg.BatchesTable == "" {
		cfg.BatchesTable = "job_batches"
	}
	for _, t := range []string{cfg.FailedTable, cfg.JobsTable, cfg.BatchesTable} {
		if !identRE.MatchString(t) {
			return nil, fmt.Errorf("invalid table name %q: use letters, digits and underscores", t)
		}
	}
	if cfg.Location == nil {
		cfg.Location = time.UTC
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = defaultConnectTimeout
	}
	if cfg.StatementTimeout <= 0 {
		cfg.StatementTimeout = defaultStatementTimeout
	}
	d, ok := dialectFor(cfg.Endpoint.Driver)
	if !ok {
		return nil, fmt.Errorf("unsupported database driver %q (want postgres, mysql or sqlite)", cfg.Endpoint.Driver)
	}
	db, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, d: d, loc: cfg.Location, ep: cfg.Endpoint,
		failed: d.quote(cfg.FailedTable), jobs: d.quote(cfg.JobsTable)}
	if s.skipLocked, s.deleteReturning, err = s.detectServer(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.detectSchema(ctx, cfg); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func connect(ctx context.Context, cfg Config) (*sqlx.DB, error) {
	ep := cfg.Endpoint
	var (
		db  *sqlx.DB
		err error
	)
	switch ep.Driver {
	case "postgres":
		db, err = sqlx.Open("postgres", postgresDSN(ep, cfg))
	case "mysql":
		db, err = openMySQL(ctx, ep, cfg)
	case "sqlite":
		if ep.Path == "" {
			return nil, errors.New("sqlite: no database file given")
		}
		if _, statErr := os.Stat(ep.Path); statErr != nil {
			// The driver would silently create an empty database here.
			return nil, fmt.Errorf("%w: sqlite database %s does not exist", triage.ErrUnreachable, ep.Path)
		}
		db, err = sqlx.Open("sqlite", sqliteDSN(ep, cfg))
		if err == nil {
			// One writer at a time is SQLite's model; a single connection
			// avoids SQLITE_BUSY between our own statements.
			db.SetMaxOpenConns(1)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connecting to %s: %w", ep.Redacted(), ctx.Err())
		}
		return nil, fmt.Errorf("%w: %s: %v", triage.ErrUnreachable, ep.Redacted(), scrub(err, ep))
	}
	db.SetConnMaxIdleTime(time.Minute)
	pctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout+time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		if ctx.Err() != nil {
			// Interrupted (Ctrl-C), not unreachable.
			return nil, fmt.Errorf("connecting to %s: %w", ep.Redacted(), ctx.Err())
		}
		return nil, fmt.Errorf("%w: cannot connect to %s: %v", triage.ErrUnreachable, ep.Redacted(), scrub(err, ep))
	}
	return db, nil
}

// scrub removes the password from a driver error, in case a driver echoes
// its DSN back.
func scrub(err error, ep Endpoint) string {
	msg := err.Error()
	if ep.Password != "" {
		msg = strings.ReplaceAll(msg, ep.Password, "****")
		msg = strings.ReplaceAll(msg, url.QueryEscape(ep.Password), "****")
		msg = strings.ReplaceAll(msg, url.PathEscape(ep.Password), "****")
	}
	return msg
}

func postgresDSN(ep Endpoint, cfg Config) string {
	q := url.Values{}
	for k, v := range ep.Params {
		q.Set(k, v)
	}
	if q.Get("sslmode") == "" {
		q.Set("sslmode", "prefer") // Laravel's default for pgsql
	}
	q.Set("connect_timeout", strconv.Itoa(int(cfg.ConnectTimeout.Round(time.Second)/time.Second)))
	if q.Get("application_name") == "" {
		q.Set("application_name", "jobtriage")
	}
	// Runtime parameters bound every statement and idle transaction on the
	// server, so a lost client never leaves a lock behind for long.
	q.Set("statement_timeout", strconv.FormatInt(cfg.StatementTimeout.Milliseconds(), 10))
	q.Set("idle_in_transaction_session_timeout", strconv.FormatInt((2*cfg.StatementTimeout).Milliseconds(), 10))
	host := net.JoinHostPort(ep.Host, strconv.Itoa(ep.Port))
	if ep.Socket != "" {
		q.Set("host", ep.Socket)
		host = ""
	}
	u := url.URL{Scheme: "postgres", Host: host, Path: "/" + ep.Database, RawQuery: q.Encode()}
	if ep.User != "" {
		if ep.Password != "" {
			u.User = url.UserPassword(ep.User, ep.Password)
		} else {
			u.User = url.User(ep.User)
		}
	}
	return u.String()
}

func mysqlConfig(ep Endpoint, cfg Config) *mysql.Config {
	mc := mysql.NewConfig()
	mc.User = ep.User
	mc.Passwd = ep.Password
	mc.DBName = ep.Database
	if ep.Socket != "" {
		mc.Net, mc.Addr = "unix", ep.Socket
	} else {
		mc.Net, mc.Addr = "tcp", net.JoinHostPort(ep.Host, strconv.Itoa(ep.Port))
	}
	mc.Timeout = cfg.ConnectTimeout
	// Read/write timeouts catch a server that stops answering mid-statement.
	mc.ReadTimeout = cfg.StatementTimeout + 5*time.Second
	mc.WriteTimeout = cfg.StatementTimeout + 5*time.Second
	// Laravel's default connection charset and collation.
	mc.Collation = "utf8mb4_unicode_ci"
	if c := ep.Params["collation"]; c != "" {
		mc.Collation = c
	}
	mc.Params = map[string]string{}
	return mc
}

// openMySQL asks the server what it is first: MariaDB and MySQL name their
// statement timeout differently, and an unknown variable fails the connection.
func openMySQL(ctx context.Context, ep Endpoint, cfg Config) (*sqlx.DB, error) {
	mc := mysqlConfig(ep, cfg)
	probe, err := mysql.NewConnector(mc)
	if err != nil {
		return nil, err
	}
	pdb := sql.OpenDB(probe)
	defer pdb.Close()
	pctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout+time.Second)
	defer cancel()
	var version string
	if err := pdb.QueryRowContext(pctx, "SELECT VERSION()").Scan(&version); err != nil {
		return nil, err
	}
	if strings.Contains(strings.ToLower(version), "mariadb") {
		mc.Params["max_statement_time"] = strconv.FormatFloat(cfg.StatementTimeout.Seconds(), 'f', -1, 64)
	} else {
		mc.Params["max_execution_time"] = strconv.FormatInt(cfg.StatementTimeout.Milliseconds(), 10)
	}
	conn, err := mysql.NewConnector(mc)
	if err != nil {
		return nil, err
	}
	return sqlx.NewDb(sql.OpenDB(conn), "mysql"), nil
}

// detectServer finds what the server can do: FOR UPDATE SKIP LOCKED, and
// DELETE … RETURNING.
func (s *Store) detectServer(ctx context.Context) (skipLocked, deleteReturning bool, err error) {
	switch s.d.name {
	case "postgres":
		return true, false, nil
	case "mysql":
		var v string
		if err := s.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v); err != nil {
			return false, false, s.queryError(err)
		}
		return mysqlHasSkipLocked(v), mariadbHasDeleteReturning(v), nil
	}
	return false, false, nil
}

// mariadbHasDeleteReturning: MariaDB 10.0.5 added DELETE … RETURNING; MySQL
// has none.
func mariadbHasDeleteReturning(version string) bool {
	maria, major, minor, patch := parseMySQLVersion(version)
	return maria && (major > 10 || (major == 10 && (minor > 0 || patch >= 5)))
}

// mysqlHasSkipLocked applies Laravel's rule (MySqlGrammar): MariaDB >= 10.6,
// MySQL >= 8.0.1.
func mysqlHasSkipLocked(version string) bool {
	maria, major, minor, patch := parseMySQLVersion(version)
	if maria {
		return major > 10 || (major == 10 && minor >= 6)
	}
	return major > 8 || (major == 8 && (minor > 0 || patch >= 1))
}

// parseMySQLVersion reads SELECT VERSION() of MySQL or MariaDB (which some
// proxies report as "5.5.5-10.11.6-MariaDB").
func parseMySQLVersion(version string) (mariadb bool, major, minor, patch int) {
	v := strings.TrimPrefix(version, "5.5.5-")
	fmt.Sscanf(v, "%d.%d.%d", &major, &minor, &patch)
	return strings.Contains(strings.ToLower(v), "mariadb"), major, minor, patch
}

func sqliteDSN(ep Endpoint, cfg Config) string {
	q := url.Values{}
	// Take the write lock at BEGIN so that two writers serialise instead of
	// failing with SQLITE_BUSY half-way through a batch.
	q.Add("_txlock", "immediate")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", cfg.StatementTimeout.Milliseconds()))
	return "file:" + ep.Path + "?" + q.Encode()
}

// OpenRaw connects without checking any schema: for creating the demo
// database and test fixtures.
func OpenRaw(ctx context.Context, ep Endpoint) (*sqlx.DB, error) {
	if ep.Driver == "sqlite" && ep.Path != "" {
		if _, err := os.Stat(ep.Path); err != nil {
			if f, cerr := os.OpenFile(ep.Path, os.O_CREATE|os.O_WRONLY, 0o644); cerr == nil {
				f.Close()
			}
		}
	}
	return connect(ctx, Config{Endpoint: ep, ConnectTimeout: defaultConnectTimeout, StatementTimeout: defaultStatementTimeout})
}

// Close releases the connection pool.
func (s *Store) Close() error { return s.db.Close() }

// Schema reports what Open found.
func (s *Store) Schema() triage.Schema { return s.schema }

// Endpoint is where this store is connected.
func (s *Store) Endpoint() Endpoint { return s.ep }

// DB exposes the pool to tests and benchmarks in this module.
func (s *Store) DB() *sqlx.DB { return s.db }
