// Package sqlstore implements triage.Store over a Laravel application's own
// queue tables on PostgreSQL, MySQL/MariaDB and SQLite. It is the only package
// that imports sqlx and the database drivers; per-dialect SQL lives side by
// side in dialect.go.
package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	_ "modernc.org/sqlite" // registers "sqlite" (pure Go, no cgo)

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/redact"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// Endpoint is where the database is. It mirrors appprofile.Target so that this
// package stays independent of how the endpoint was found.
type Endpoint struct {
	Driver string // "postgres", "mysql" or "sqlite"
	// Host is a name or address for TCP. On PostgreSQL a Host starting with
	// "/" is a Unix socket directory (Laravel's pgsql config, libpq); on
	// MySQL "localhost" without a Socket is PDO's default Unix socket
	// (defaultMySQLSockets).
	Host     string
	Port     int
	Database string
	User     string
	Password string
	// Socket is MySQL's Unix socket file (DB_SOCKET, unix_socket); on
	// PostgreSQL a socket directory, as a Host starting with "/".
	Socket string
	Path   string // SQLite file
	Params map[string]string
	// Schema is PostgreSQL's search_path for the session (Laravel pgsql
	// "search_path", "schema" before Laravel 9), along which a table name
	// without a schema is looked up. An entry may hold several names
	// (ParseSearchPath); empty keeps the server's default.
	Schema []string
	// Timezone is the connection config's "timezone": when set, the session
	// time_zone (MySQL) or TimeZone (PostgreSQL) is set to it, as Laravel
	// does, so MySQL TIMESTAMP columns read in the zone the app writes them
	// in. Empty leaves the server's session zone alone.
	Timezone string
	// SocketFallbackTCP: when the Unix socket (Socket, or a PostgreSQL
	// socket directory in Host) does not answer, connect over TCP to
	// 127.0.0.1:Port (or Host:Port when Host names a TCP host). MySQL's
	// implicit "localhost" socket always falls back: PDO's compiled-in
	// default can only be guessed.
	SocketFallbackTCP bool
}

// Redacted names the endpoint for messages; it never contains the password.
func (e Endpoint) Redacted() string {
	if e.Driver == "sqlite" {
		return "sqlite:" + e.Path
	}
	var b strings.Builder
	b.WriteString(e.Driver + "://")
	if e.User != "" {
		b.WriteString(url.PathEscape(e.User) + "@")
	}
	addr := e.address()
	if e.socket() != "" {
		addr = "unix(" + addr + ")"
	}
	b.WriteString(addr + "/" + url.PathEscape(e.Database))
	if len(e.Schema) > 0 {
		b.WriteString("?search_path=" + url.QueryEscape(searchPathValue(e.Schema)))
	}
	return redact.Text(b.String(), e.Password)
}

// socket is the Unix socket the endpoint names explicitly: MySQL's socket
// file, or PostgreSQL's socket file inside the socket directory.
func (e Endpoint) socket() string {
	switch {
	case e.Driver == "postgres" && e.Socket != "":
		return pgSocketFile(e.Socket, e.Port)
	case e.Driver == "postgres" && strings.HasPrefix(e.Host, "/"):
		return pgSocketFile(e.Host, e.Port)
	}
	return e.Socket
}

// pgSocketFile is where a PostgreSQL server listening on port keeps its
// socket inside dir (libpq's naming).
func pgSocketFile(dir string, port int) string {
	if port == 0 {
		port = defaultPostgresPort
	}
	return filepath.Join(dir, ".s.PGSQL."+strconv.Itoa(port))
}

const (
	defaultPostgresPort = 5432
	defaultMySQLPort    = 3306
)

// Config says what to open and how patiently.
type Config struct {
	Endpoint     Endpoint
	FailedTable  string // default failed_jobs
	JobsTable    string // default jobs
	BatchesTable string // default job_batches
	// Location is the app timezone: failed_at is wall-clock time in it.
	Location *time.Location
	// ConnectTimeout bounds dialing; StatementTimeout each statement, on
	// the server where it supports that. Zero picks the defaults.
	ConnectTimeout   time.Duration
	StatementTimeout time.Duration
	// JobsOnly opens the jobs side of a split setup: a database with jobs
	// but no failed_jobs.
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
	// failedName is failed_jobs' name as configured (the index's identity).
	failedName tableName
	ep         Endpoint
	// deleteReturning: the server has DELETE … RETURNING, which takes a
	// retry batch in one pass (takeByDelete).
	deleteReturning bool
	// jobsProblem says why an existing jobs table cannot be used
	// (triage.ErrSchema); requireJobs returns it.
	jobsProblem error
	heard       *silence // whether a client deadline fired (lostConnection)
	// liveIDsConcatMax replaces group_concat_max_len's value in
	// liveIDsPart (tests cut the list with it); "" is the packet size.
	liveIDsConcatMax string
}

var _ triage.Store = (*Store)(nil)

// withDefaults fills in the timeouts left zero and returns the endpoint's
// dialect.
func (cfg *Config) withDefaults() (dialect, error) {
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = defaultConnectTimeout
	}
	if cfg.StatementTimeout <= 0 {
		cfg.StatementTimeout = defaultStatementTimeout
	}
	d, ok := dialectFor(cfg.Endpoint.Driver)
	if !ok {
		return dialect{}, fmt.Errorf("unsupported database driver %q (want postgres, mysql or sqlite)", cfg.Endpoint.Driver)
	}
	return d, nil
}

// Open connects, checks the schema and returns the store. Every error it
// returns names the endpoint without its password.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	cfg.FailedTable = cmp.Or(cfg.FailedTable, "failed_jobs")
	cfg.JobsTable = cmp.Or(cfg.JobsTable, "jobs")
	cfg.BatchesTable = cmp.Or(cfg.BatchesTable, "job_batches")
	var tables [3]tableName
	for i, t := range []string{cfg.FailedTable, cfg.JobsTable, cfg.BatchesTable} {
		var err error
		if tables[i], err = parseTableName(t); err != nil {
			return nil, err
		}
	}
	if cfg.Location == nil {
		cfg.Location = time.UTC
	}
	d, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	heard := &silence{idle: clientDeadline(cfg)}
	db, ep, err := connect(ctx, cfg, heard)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, d: d, loc: cfg.Location, ep: ep, heard: heard,
		failed: tables[0].quoted(d), jobs: tables[1].quoted(d), failedName: tables[0]}
	if s.deleteReturning, err = s.detectServer(ctx); err == nil {
		err = s.detectSchema(ctx, cfg, tables[0], tables[1], tables[2])
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// connect opens and pings the pool. It returns the endpoint it really
// reached (a MySQL "localhost" names the socket it found, a socket that
// fell back to TCP the TCP address), so that messages say where it is.
func connect(ctx context.Context, cfg Config, heard *silence) (*sqlx.DB, Endpoint, error) {
	ep := cfg.Endpoint
	var (
		db  *sqlx.DB
		err error
	)
	switch ep.Driver {
	case "postgres":
		ep = choosePostgresNetwork(ctx, ep, cfg.ConnectTimeout)
		db, err = openPostgres(ep, cfg, heard)
	case "mysql":
		ep = chooseMySQLNetwork(ctx, ep, cfg.ConnectTimeout)
		if ep.Timezone != "" && !mysqlTimezoneRE.MatchString(ep.Timezone) { // sent as SET time_zone text
			return nil, ep, fmt.Errorf("%w: timezone %q is not a MySQL time_zone value such as +00:00 or Europe/Kyiv", triage.ErrUnreachable, ep.Timezone)
		}
		db, err = openMySQL(ctx, ep, cfg, heard)
	case "sqlite":
		if ep.Path == "" {
			return nil, ep, errors.New("sqlite: no database file given")
		}
		if _, statErr := os.Stat(ep.Path); statErr != nil {
			// The driver would silently create an empty database here.
			return nil, ep, fmt.Errorf("%w: sqlite database %s does not exist", triage.ErrUnreachable, ep.Path)
		}
		db, err = sqlx.Open("sqlite", sqliteDSN(ep, cfg))
		if err == nil {
			// One writer at a time is SQLite's model; a single connection
			// avoids SQLITE_BUSY between our own statements.
			db.SetMaxOpenConns(1)
		}
	}
	fail := func(how string, err error) (*sqlx.DB, Endpoint, error) {
		if ctx.Err() != nil { // interrupted (Ctrl-C), not unreachable
			return nil, ep, fmt.Errorf("connecting to %s: %w", ep.Redacted(), ctx.Err())
		}
		return nil, ep, fmt.Errorf("%w: %s%s: %v", triage.ErrUnreachable, how, ep.Redacted(), connectFailure(err, ep, cfg.ConnectTimeout))
	}
	if err != nil {
		return fail("", err)
	}
	db.SetConnMaxIdleTime(time.Minute)
	pctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout+time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return fail("cannot connect to ", err)
	}
	return db, ep, nil
}

// connectFailure says why connecting failed: the driver's words (scrubbed),
// except for the two silences a driver words badly ("context deadline
// exceeded", "i/o timeout", "unexpected EOF", "invalid connection"): a
// server that never answered within the connect timeout, and one that hung
// up before saying anything (not a database server, or one that refuses
// this client before its greeting).
func connectFailure(err error, ep Endpoint, timeout time.Duration) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return fmt.Sprintf("no answer from %s within %s", ep.address(), timeout)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, mysql.ErrInvalidConn):
		server := "MySQL/MariaDB"
		if ep.Driver == "postgres" {
			server = "PostgreSQL"
		}
		return fmt.Sprintf("%s closed the connection without answering (is a %s server listening there?)", ep.address(), server)
	}
	return scrub(err, ep)
}

// address is where the endpoint is dialled: host:port, or the Unix socket.
func (e Endpoint) address() string {
	if sock := e.socket(); sock != "" {
		return sock
	}
	return net.JoinHostPort(e.Host, strconv.Itoa(e.Port))
}

// scrub takes the password out of a driver error (redact.Text), in case a
// driver echoes its connection string back.
func scrub(err error, ep Endpoint) string {
	return redact.Text(err.Error(), ep.Password)
}

// defaultMySQLSockets are the places PDO's compiled-in default socket
// (pdo_mysql.default_socket) usually is: Debian/Ubuntu packages, older
// layouts, and upstream builds (macOS, Homebrew), in that order.
var defaultMySQLSockets = []string{"/run/mysqld/mysqld.sock", "/var/run/mysqld/mysqld.sock", "/tmp/mysql.sock"}

// tcpFallbackHost is where a socket that does not answer falls back to.
const tcpFallbackHost = "127.0.0.1"

// socketAnswers reports whether something accepts connections on path.
func socketAnswers(ctx context.Context, path string, timeout time.Duration) bool {
	d := net.Dialer{Timeout: timeout}
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// chooseMySQLNetwork applies PDO's rule: Host "localhost" without a socket
// means the default Unix socket. The first default socket that answers is
// used; when none does, TCP to 127.0.0.1:Port. An explicit Socket that does
// not answer falls back to TCP only with SocketFallbackTCP.
func chooseMySQLNetwork(ctx context.Context, ep Endpoint, timeout time.Duration) Endpoint {
	if ep.Port == 0 {
		ep.Port = defaultMySQLPort
	}
	switch {
	case ep.Socket != "":
		if ep.SocketFallbackTCP && !socketAnswers(ctx, ep.Socket, timeout) {
			ep.Socket = ""
			if ep.Host == "" || ep.Host == "localhost" {
				ep.Host = tcpFallbackHost
			}
		}
	case ep.Host == "localhost":
		for _, path := range defaultMySQLSockets {
			if socketAnswers(ctx, path, timeout) {
				ep.Socket = path
				return ep
			}
		}
		ep.Host = tcpFallbackHost
	}
	return ep
}

// choosePostgresNetwork falls back from a socket directory that does not
// answer to TCP when SocketFallbackTCP asks for it. libpq's "localhost" is
// TCP already, so there is nothing to guess.
func choosePostgresNetwork(ctx context.Context, ep Endpoint, timeout time.Duration) Endpoint {
	if ep.Port == 0 {
		ep.Port = defaultPostgresPort
	}
	if sock := ep.socket(); sock != "" && ep.SocketFallbackTCP && !socketAnswers(ctx, sock, timeout) {
		if ep.Socket == "" || strings.HasPrefix(ep.Host, "/") || ep.Host == "" {
			ep.Host = tcpFallbackHost
		}
		ep.Socket = ""
	}
	return ep
}

// postgresDSN builds lib/pq's key=value connection string: every value is
// quoted (conninfoQuote), so unlike a URL no byte of a password or socket
// directory can make it fail to parse and echo itself.
func postgresDSN(ep Endpoint, cfg Config) string {
	kv := map[string]string{}
	maps.Copy(kv, ep.Params)
	kv["sslmode"] = cmp.Or(kv["sslmode"], "prefer") // Laravel's default for pgsql
	kv["connect_timeout"] = strconv.Itoa(int(cfg.ConnectTimeout.Round(time.Second) / time.Second))
	kv["application_name"] = cmp.Or(kv["application_name"], "jobtriage")
	// Runtime parameters bound every statement and idle transaction on the
	// server, so a lost client never leaves a lock behind for long.
	kv["statement_timeout"] = strconv.FormatInt(cfg.StatementTimeout.Milliseconds(), 10)
	kv["idle_in_transaction_session_timeout"] = strconv.FormatInt((2 * cfg.StatementTimeout).Milliseconds(), 10)
	if len(ep.Schema) > 0 {
		kv["search_path"] = searchPathValue(ep.Schema)
	}
	if ep.Timezone != "" {
		kv["TimeZone"] = ep.Timezone
	}
	// No host leaves libpq's default (PGHOST, else localhost).
	if host := cmp.Or(ep.Socket, ep.Host); host != "" {
		kv["host"] = host
	}
	kv["port"] = strconv.Itoa(ep.Port)
	kv["dbname"] = ep.Database
	if ep.User != "" {
		kv["user"] = ep.User
	}
	if ep.Password != "" {
		kv["password"] = ep.Password
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		if !conninfoKeyRE.MatchString(k) {
			continue // a key that could not be written unquoted is no libpq key
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k + "=" + conninfoQuote(kv[k]))
	}
	return b.String()
}

var conninfoKeyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// clientDeadlineMargin is how long past the statement timeout the client
// waits for a silent server (deadlineConn): time for the server's own
// timeout error to arrive.
const clientDeadlineMargin = 3 * time.Second

// clientDeadline bounds how long one read or write may wait on the server.
func clientDeadline(cfg Config) time.Duration { return cfg.StatementTimeout + clientDeadlineMargin }

// openPostgres dials through deadlineDialer: a server that stops answering
// (a frozen backend, a dead network path) holds a call no longer than
// clientDeadline, where statement_timeout cannot fire.
func openPostgres(ep Endpoint, cfg Config, heard *silence) (*sqlx.DB, error) {
	conn, err := pq.NewConnector(postgresDSN(ep, cfg))
	if err != nil {
		return nil, err
	}
	conn.Dialer(deadlineDialer{idle: clientDeadline(cfg), heard: heard})
	return sqlx.NewDb(sql.OpenDB(conn), "postgres"), nil
}

// deadlineDialer dials connections wrapped in deadlineConn.
type deadlineDialer struct {
	idle  time.Duration
	d     net.Dialer
	heard *silence // when set, records that a deadline ended a call
}

func (d deadlineDialer) Dial(network, address string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, address)
}

func (d deadlineDialer) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return d.DialContext(ctx, network, address)
}

func (d deadlineDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := d.d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	dc := &deadlineConn{Conn: c, idle: d.idle, heard: d.heard}
	if sc, ok := c.(syscall.Conn); ok {
		// go-sql-driver/mysql checks a pooled connection's socket before
		// reusing it (CheckConnLiveness) only through syscall.Conn.
		return &rawDeadlineConn{deadlineConn: dc, raw: sc}, nil
	}
	return dc, nil
}

// rawDeadlineConn is a deadlineConn whose socket can be reached.
type rawDeadlineConn struct {
	*deadlineConn
	raw syscall.Conn
}

func (c *rawDeadlineConn) SyscallConn() (syscall.RawConn, error) { return c.raw.SyscallConn() }

// silence is what a pool's connections share: whether a deadlineConn's
// own deadline ended a call. go-sql-driver/mysql returns its own
// ErrInvalidConn instead of the read error, so the store learns it from
// here (lostConnection).
type silence struct {
	idle  time.Duration
	fired atomic.Bool
}

// deadlineConn gives every Read and Write a deadline of idle from its start,
// or the sooner one the driver set itself (while connecting). A pooled
// connection reads only while a call waits for the server, so idle bounds
// the silence within one call, never the time between calls. A call that
// hits it fails with ErrServerSilent and the driver discards the connection.
type deadlineConn struct {
	net.Conn
	idle          time.Duration
	heard         *silence // nil: nobody listens
	mu            sync.Mutex
	read, written time.Time // deadlines the driver set; zero: none
	dead          atomic.Bool
}

// ErrServerSilent is the error of a call whose server sent nothing for the
// statement timeout plus clientDeadlineMargin. It is triage.ErrUnreachable.
var ErrServerSilent = fmt.Errorf("%w: the database server stopped answering", triage.ErrUnreachable)

func (c *deadlineConn) deadline(set time.Time) time.Time {
	d := time.Now().Add(c.idle)
	if !set.IsZero() && set.Before(d) {
		return set
	}
	return d
}

func (c *deadlineConn) Read(p []byte) (int, error) {
	if c.dead.Load() {
		return 0, c.silent("read")
	}
	c.mu.Lock()
	err := c.Conn.SetReadDeadline(c.deadline(c.read))
	c.mu.Unlock()
	if err != nil {
		return 0, err
	}
	n, err := c.Conn.Read(p)
	return n, c.explain("read", err)
}

func (c *deadlineConn) Write(p []byte) (int, error) {
	if c.dead.Load() {
		return 0, c.silent("write")
	}
	c.mu.Lock()
	err := c.Conn.SetWriteDeadline(c.deadline(c.written))
	c.mu.Unlock()
	if err != nil {
		return 0, err
	}
	n, err := c.Conn.Write(p)
	return n, c.explain("write", err)
}

// explain names a deadline we set; a deadline the driver set stays its own.
// Once ours fired the connection is done: what else waits on it is woken
// and fails too, and the error is a *net.OpError, which lib/pq takes for a
// broken connection, so database/sql discards it rather than give a later
// call a connection that waits its own deadline again.
func (c *deadlineConn) explain(op string, err error) error {
	var ne net.Error
	if err == nil || !errors.As(err, &ne) || !ne.Timeout() {
		return err
	}
	c.mu.Lock()
	own := c.read.IsZero() && c.written.IsZero()
	c.mu.Unlock()
	if !own {
		return err
	}
	if c.heard != nil {
		c.heard.fired.Store(true)
	}
	c.dead.Store(true)
	c.Conn.SetDeadline(time.Unix(1, 0)) //nolint:errcheck // wakes the other direction
	return c.silent(op)
}

func (c *deadlineConn) silent(op string) error {
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Addr: c.RemoteAddr(), Err: silentError(c.idle)}
}

func silentError(idle time.Duration) error {
	return fmt.Errorf("%w (nothing for %s: statement timeout + %s)", ErrServerSilent, idle, clientDeadlineMargin)
}

func (c *deadlineConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.read, c.written = t, t
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}

func (c *deadlineConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.read = t
	c.mu.Unlock()
	return c.Conn.SetReadDeadline(t)
}

func (c *deadlineConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.written = t
	c.mu.Unlock()
	return c.Conn.SetWriteDeadline(t)
}

// mysqlLogger writes the driver's log lines as one prefixed, sanitised
// warning each. The driver logs some errors ("packets.go: unexpected EOF")
// before returning them; unprefixed, they broke the one-line error
// contract. A silence the store reports itself (lostConnection) is not
// logged twice.
type mysqlLogger struct{ w io.Writer }

func (l mysqlLogger) Print(v ...any) {
	for _, x := range v {
		if err, ok := x.(error); ok && errors.Is(err, ErrServerSilent) {
			return
		}
	}
	msg := strings.TrimSpace(fmt.Sprint(v...))
	msg = strings.Join(strings.Fields(msg), " ")
	fmt.Fprintln(l.w, "jobtriage: warning: mysql driver: "+sanitize.Line(msg))
}

// openMySQL asks the server what it is first: MariaDB and MySQL name their
// statement timeout differently, and an unknown variable fails the connection.
func openMySQL(ctx context.Context, ep Endpoint, cfg Config, heard *silence) (*sqlx.DB, error) {
	mc := mysql.NewConfig()
	mc.Logger = mysqlLogger{w: os.Stderr}
	mc.User, mc.Passwd, mc.DBName = ep.User, ep.Password, ep.Database
	if ep.Socket != "" {
		mc.Net, mc.Addr = "unix", ep.Socket
	} else {
		mc.Net, mc.Addr = "tcp", net.JoinHostPort(ep.Host, strconv.Itoa(ep.Port))
	}
	mc.Timeout = cfg.ConnectTimeout
	// Every read and write has the client deadline (deadlineConn); the
	// driver's own ReadTimeout would hide which deadline fired.
	mc.DialFunc = deadlineDialer{idle: clientDeadline(cfg), heard: heard}.DialContext
	// Laravel's default connection charset and collation.
	mc.Collation = "utf8mb4_unicode_ci"
	if c := ep.Params["collation"]; c != "" {
		mc.Collation = c
	}
	mc.Params = map[string]string{}
	if ep.Timezone != "" {
		// The driver runs SET time_zone=<value> on every new connection,
		// as Laravel's MySqlConnector does; connect vetted it.
		mc.Params["time_zone"] = "'" + ep.Timezone + "'"
	}
	// The first contact's driver log lines ("unexpected EOF" of a server
	// that hung up) would be a second line beside the error connectFailure
	// words; later connections keep them.
	pc := mc.Clone()
	pc.Logger = mysqlLogger{w: io.Discard}
	probe, err := mysql.NewConnector(pc)
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

// detectServer finds whether the server has DELETE … RETURNING, where the
// dialect asks (dialect.deleteReturning).
func (s *Store) detectServer(ctx context.Context) (deleteReturning bool, err error) {
	if s.d.deleteReturning == nil {
		return false, nil
	}
	var v string
	if err := s.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v); err != nil {
		return false, s.queryError(err)
	}
	return s.d.deleteReturning(v), nil
}

// mariadbHasDeleteReturning reads SELECT VERSION() (which some proxies
// report as "5.5.5-10.11.6-MariaDB"): MariaDB 10.0.5 added DELETE …
// RETURNING; MySQL has none.
func mariadbHasDeleteReturning(version string) bool {
	v := strings.TrimPrefix(version, "5.5.5-")
	var major, minor, patch int
	fmt.Sscanf(v, "%d.%d.%d", &major, &minor, &patch)
	return strings.Contains(strings.ToLower(v), "mariadb") && (major > 10 || (major == 10 && (minor > 0 || patch >= 5)))
}

// sqliteDSN is the file: URI the driver hands to sqlite3_open_v2. SQLite
// decodes %XX in a URI's path and ends the path at '?' or '#', so the path is
// escaped (sqliteURIPath): the file opened is exactly the file named and
// checked, never "xA.sqlite" for "x%41.sqlite" nor "h" for "h#1.sqlite".
// mode=rw makes SQLite refuse to create a missing file, so a file removed
// after the existence check is an error, not a new empty database.
func sqliteDSN(ep Endpoint, cfg Config) string {
	q := url.Values{}
	// Take the write lock at BEGIN so that two writers serialise instead of
	// failing with SQLITE_BUSY half-way through a batch.
	q.Add("_txlock", "immediate")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", cfg.StatementTimeout.Milliseconds()))
	// SQLite's transient files (sorts, statement journals of large
	// batches) go to memory, not TMPDIR: a full TMPDIR once failed a
	// retry part-way with "database or disk is full".
	q.Add("_pragma", "temp_store(memory)")
	q.Add("mode", "rw")
	return "file:" + sqliteURIPath(ep.Path) + "?" + q.Encode()
}

// sqliteURIPath escapes path for a file: URI as SQLite parses one
// (https://sqlite.org/uri.html): '%' (which it decodes), '?' and '#' (which
// end the path) are percent-encoded; every other byte is taken as it is. An
// absolute path gets the empty authority ("file:///…"), so that a path
// starting with "//" is never read as a host.
func sqliteURIPath(path string) string {
	var b strings.Builder
	if strings.HasPrefix(path, "/") {
		b.WriteString("//")
	}
	for i := 0; i < len(path); i++ {
		switch c := path[i]; c {
		case '%', '?', '#':
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
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
	db, _, err := connect(ctx, Config{Endpoint: ep, ConnectTimeout: defaultConnectTimeout, StatementTimeout: defaultStatementTimeout}, nil)
	return db, err
}

// Close releases the connection pool.
func (s *Store) Close() error { return s.db.Close() }

// Schema reports what Open found.
func (s *Store) Schema() triage.Schema { return s.schema }

// Endpoint is where this store is connected.
func (s *Store) Endpoint() Endpoint { return s.ep }

// Location is the app timezone failed_at is read in.
func (s *Store) Location() *time.Location { return s.loc }

// DB exposes the pool to tests and benchmarks in this module.
func (s *Store) DB() *sqlx.DB { return s.db }
