// Package appprofile finds the Laravel app's queue database as Laravel
// would: flags, then the real environment, then the app's .env read with
// phpdotenv's rules, then Laravel's defaults. It never opens a connection.
package appprofile

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/jobtriage/jobtriage/triage/redact"

	// PHP ships its own timezone database; so does jobtriage.
	_ "time/tzdata"
)

// Options are the inputs the command line gathers before resolving.
type Options struct {
	DSN         string        // --dsn; beats everything else
	EnvFile     string        // --env PATH; "" means <Dir>/.env (or .env.<APP_ENV>) when present
	AppEnv      string        // like artisan's --env NAME: prefer <Dir>/.env.NAME when it exists
	Dir         string        // Laravel base dir; "" means Cwd
	Cwd         string        // working directory for relative paths; "" means os.Getwd()
	FailedTable string        // --failed-table; "" = unset
	JobsTable   string        // --jobs-table; "" = unset
	Timezone    string        // --timezone; "" = unset
	RetryAfter  time.Duration // --retry-after; 0 = unset
	Environ     []string      // os.Environ()
}

// Config is everything the store and the commands need to know about the app.
type Config struct {
	Target       Target
	FailedTable  string
	JobsTable    string
	BatchesTable string
	Location     *time.Location
	RetryAfter   time.Duration
	AppKey       string   // kept for decrypting payloads; never printed
	AppKeys      []string // APP_KEY then APP_PREVIOUS_KEYS, the encrypter's order
	AppName      string
	AppEnv       string
	Source       string // where the connection came from: "--dsn", "JOBTRIAGE_DSN", the config cache, an env file path, or "environment"
	// Profile is the app as Laravel configures it; Failed its queue.failed;
	// Database the failed_jobs connection (zero with --dsn or the file driver).
	Profile  *Profile
	Failed   FailedStore
	Database DatabaseConnection
	Queues   []QueueConnection
	Warnings []string
}

// String describes the config without the password or the app key.
func (c Config) String() string {
	loc := "UTC"
	if c.Location != nil {
		loc = c.Location.String()
	}
	return fmt.Sprintf("%s (from %s; failed=%s jobs=%s batches=%s tz=%s retry_after=%s)",
		c.Target.Redacted(), c.Source, c.FailedTable, c.JobsTable, c.BatchesTable, loc, c.RetryAfter)
}

// GoString keeps %#v from printing the secrets.
func (c Config) GoString() string { return "appprofile.Config(" + c.String() + ")" }

// Laravel's default table names and retry_after.
const (
	defaultFailedTable  = "failed_jobs"
	defaultJobsTable    = "jobs"
	defaultBatchesTable = "job_batches"
	defaultRetryAfter   = 90 * time.Second
)

// Resolve works out the database and queue settings: --dsn, then
// JOBTRIAGE_DSN, then the app's configuration, whose env() reads the real
// environment before .env, as Laravel's immutable env repository does.
func Resolve(o Options) (Config, error) {
	var secrets []string
	cfg, err := resolve(o, &secrets)
	scrub := func(s string) string {
		for _, secret := range secrets {
			s = redact.Text(s, secret)
		}
		return s
	}
	if err != nil {
		return Config{}, errors.New(scrub(err.Error()))
	}
	for i, w := range cfg.Warnings {
		cfg.Warnings[i] = scrub(w)
	}
	return cfg, nil
}

// ErrNotAnApp: no artisan file, .env, config cache, DB_ environment
// variable or DSN says where the database is.
var ErrNotAnApp = errors.New("not inside a Laravel app")

// hasDatabaseEnv: the environment names a database (DB_*, DATABASE_URL), as
// a container without the app's files may.
func hasDatabaseEnv(environ map[string]string) bool {
	for k := range environ {
		if strings.HasPrefix(k, "DB_") || k == "DATABASE_URL" {
			return true
		}
	}
	return false
}

// resolve records every password it meets in secrets, for Resolve to scrub
// from every message.
func resolve(o Options, secrets *[]string) (Config, error) {
	var cfg Config
	environ := parseEnviron(o.Environ)
	if pw, isNull := Cast(environ["DB_PASSWORD"]); !isNull {
		*secrets = append(*secrets, pw)
	}
	cwd, dir, err := workingDirs(o)
	if err != nil {
		return cfg, err
	}
	root, isApp := dir, isFile(filepath.Join(dir, artisanName))
	if o.Dir == "" || o.Dir == o.Cwd {
		root, isApp = findAppRoot(dir)
	}
	explicitDSN := o.DSN != "" || environ["JOBTRIAGE_DSN"] != ""

	// Laravel reads only the config cache when it exists (not .env). Its
	// is_file passes over a cache that is no regular file; jobtriage refuses
	// one (a device, a FIFO, a directory, unreadable), naming it.
	cache := configCachePath(environ, root)
	if _, err := os.Stat(cache); errors.Is(err, fs.ErrNotExist) {
		cache = ""
	}
	var envPath string
	fileVars := map[string]string{}
	if cache == "" {
		var warnings []string
		envPath, warnings, err = chooseEnvFile(o, environ, root, cwd)
		switch {
		case err != nil && explicitDSN && o.EnvFile == "":
			// With an explicit DSN an unreadable .env costs only the extras.
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("ignoring the env file: %v", err))
			envPath, warnings = "", nil
		case err != nil:
			return cfg, err
		}
		if !isApp && !explicitDSN && envPath == "" && !hasDatabaseEnv(environ) {
			// Nothing names a database: Laravel's defaults (forge on
			// 127.0.0.1) would only earn an access-denied error.
			return cfg, fmt.Errorf("%w (no %s file above %s): cd into the app or pass --dsn", ErrNotAnApp, artisanName, dir)
		}
		if envPath != "" || !explicitDSN {
			// With an explicit DSN a missing .env is expected, not news.
			cfg.Warnings = append(cfg.Warnings, warnings...)
		}
		if envPath != "" {
			fileVars, err = loadDotenvFile(envPath, environ)
			switch {
			case err != nil && explicitDSN:
				// The DSN is explicit: a broken .env costs only the extras.
				cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("ignoring the env file: %v", err))
				fileVars, envPath = map[string]string{}, ""
			case err != nil:
				return cfg, fmt.Errorf("reading the Laravel env file (Laravel would refuse it too): %w", err)
			}
		}
	} else if o.EnvFile != "" {
		cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("--env is ignored: %s exists, and Laravel reads only that cached config", cache))
	}
	for _, k := range []string{"DB_PASSWORD", "REDIS_PASSWORD"} {
		if v, isNull := Cast(fileVars[k]); !isNull && v != "" {
			*secrets = append(*secrets, v)
		}
	}

	profile, err := loadProfile(root, isApp, environ, fileVars, envPath, cache)
	if err != nil {
		if !explicitDSN {
			return cfg, err
		}
		cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("ignoring the app's configuration: %v", err))
		if profile, err = loadProfile(root, false, environ, nil, "", ""); err != nil {
			return cfg, err
		}
	}
	o.Cwd = cwd
	profile.resolvedWith = o
	cfg.Profile = profile
	cfg.Source = "environment"
	switch {
	case cache != "":
		cfg.Source = profile.rel(cache)
	case envPath != "":
		cfg.Source = envPath
	}

	if cfg.Failed, err = profile.failedStore(); err != nil {
		return cfg, err
	}
	if !explicitDSN {
		switch cfg.Failed.Driver {
		case "database-uuids", "database", "file":
		case "null":
			return cfg, fmt.Errorf("queue.failed.driver is null (%s): this app does not store failed jobs, so there is nothing to triage", cfg.Failed.Source)
		case "dynamodb":
			return cfg, fmt.Errorf("queue.failed.driver is dynamodb (%s): jobtriage reads failed jobs from SQL databases and the file driver only; use php artisan queue:failed", cfg.Failed.Source)
		default:
			return cfg, fmt.Errorf("queue.failed.driver is %s (%s), which jobtriage does not know; pass --dsn to read a failed_jobs table anyway", quoteShort(cfg.Failed.Driver), cfg.Failed.Source)
		}
	}

	failedConn := cfg.Failed.Database
	if failedConn == "" {
		if failedConn, _, _, err = profile.str("database.default", "pass --dsn"); err != nil && !explicitDSN {
			return cfg, err
		}
	}
	switch {
	case o.DSN != "":
		cfg.Target, err = ParseDSN(o.DSN)
		cfg.Source = "--dsn"
	case environ["JOBTRIAGE_DSN"] != "":
		cfg.Target, err = ParseDSN(environ["JOBTRIAGE_DSN"])
		cfg.Source = "JOBTRIAGE_DSN"
	case cfg.Failed.Driver == "file":
		// The failed jobs are a JSON file.
	default:
		if failedConn == "" {
			return cfg, errors.New("no default database connection: database.default is empty or null (DB_CONNECTION is empty or null)")
		}
		var warns []string
		cfg.Database, warns, err = profile.databaseConnection(failedConn)
		cfg.Warnings = append(cfg.Warnings, warns...)
		cfg.Target = cfg.Database.Target
	}
	*secrets = append(*secrets, cfg.Target.Password)
	if err != nil {
		return cfg, fmt.Errorf("%s: %w", cfg.Source, err)
	}
	if cfg.Target.Driver == "sqlite" {
		if cfg.Target.Path, err = locateSQLite(cfg.Target.Path, cwd, root); err != nil {
			return cfg, fmt.Errorf("%s: %w", cfg.Source, err)
		}
	}

	prefix := cfg.Database.Prefix
	if cfg.FailedTable, err = tableName("failed jobs table", o.FailedTable, environ["JOBTRIAGE_FAILED_TABLE"],
		prefix+cmp.Or(cfg.Failed.Table, defaultFailedTable), "queue.failed.table"); err != nil {
		return cfg, err
	}
	jobsConn := profile.localDatabaseQueue(failedConn)
	if cfg.JobsTable, err = tableName("jobs table", o.JobsTable, environ["JOBTRIAGE_JOBS_TABLE"],
		prefix+cmp.Or(jobsConn.Table, defaultJobsTable), "queue.connections."+jobsConn.Name+".table"); err != nil {
		return cfg, err
	}
	batches, _, _, _ := profile.str("queue.batching.table", "")
	if cfg.BatchesTable, err = tableName("batches table", "", "", prefix+cmp.Or(batches, defaultBatchesTable), "queue.batching.table"); err != nil {
		return cfg, err
	}
	if cfg.Location, err = location(o.Timezone, environ["JOBTRIAGE_TIMEZONE"], profile); err != nil {
		return cfg, err
	}
	if cfg.RetryAfter, err = retryAfter(o.RetryAfter, jobsConn); err != nil {
		return cfg, err
	}
	cfg.AppKey, _, _, _ = profile.str("app.key", "")
	cfg.AppKeys = profile.appKeys()
	cfg.AppName, _, _, _ = profile.str("app.name", "")
	cfg.AppEnv, _, _, _ = profile.str("app.env", "")
	cfg.Queues = profile.QueueConnections()
	return cfg, nil
}

// DefaultQueueConnection is queue.default, "" when unknown.
func (c Config) DefaultQueueConnection() string {
	if c.Profile == nil {
		return ""
	}
	v, _, _, _ := c.Profile.str("queue.default", "")
	return v
}

// parseEnviron maps KEY=VALUE pairs; the first of a key wins, as in getenv(3).
func parseEnviron(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if _, seen := m[k]; !seen {
			m[k] = v
		}
	}
	return m
}

func workingDirs(o Options) (cwd, dir string, err error) {
	cwd = o.Cwd
	if cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return "", "", fmt.Errorf("finding the working directory: %w", err)
		}
	}
	if cwd, err = filepath.Abs(cwd); err != nil {
		return "", "", fmt.Errorf("finding the working directory: %w", err)
	}
	dir = o.Dir
	if dir == "" {
		dir = cwd
	} else if !filepath.IsAbs(dir) {
		dir = filepath.Join(cwd, dir)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		//lint:ignore ST1005 the message starts with a proper noun, Laravel
		return "", "", fmt.Errorf("Laravel app directory %s is not a directory", quoteShort(dir))
	}
	return cwd, filepath.Clean(dir), nil
}

// configCachePath is Application::getCachedConfigPath: APP_CONFIG_CACHE
// (only from the real environment: .env is not loaded yet) is absolute when
// it starts with / or \, else relative to the base dir.
func configCachePath(environ map[string]string, dir string) string {
	if raw, ok := environ["APP_CONFIG_CACHE"]; ok {
		if v, isNull := Cast(raw); !isNull {
			if strings.HasPrefix(v, "/") || strings.HasPrefix(v, `\`) {
				return v
			}
			return filepath.Join(dir, v)
		}
	}
	return filepath.Join(dir, "bootstrap", "cache", "config.php")
}

// chooseEnvFile is LoadEnvironmentVariables::checkForSpecificEnvironmentFile:
// only a real APP_ENV (or artisan's --env) selects .env.<APP_ENV>; one set
// inside .env cannot, and a warning says so when that looks intended.
func chooseEnvFile(o Options, environ map[string]string, dir, cwd string) (string, []string, error) {
	if o.EnvFile != "" {
		path := o.EnvFile
		if !filepath.IsAbs(path) {
			path = filepath.Join(cwd, path)
		}
		if ok, err := DotenvPresent(path); err != nil {
			return "", nil, err
		} else if !ok {
			return "", nil, fmt.Errorf("env file %s does not exist", quoteShort(path))
		}
		return path, nil, nil
	}
	base := filepath.Join(dir, ".env")
	if o.AppEnv != "" && isFile(base+"."+o.AppEnv) {
		return base + "." + o.AppEnv, nil, nil
	}
	if raw, ok := environ["APP_ENV"]; ok {
		if appEnv, isNull := Cast(raw); !isNull && appEnv != "" && appEnv != "0" && isFile(base+"."+appEnv) {
			return base + "." + appEnv, nil, nil
		}
	}
	if ok, err := DotenvPresent(base); err != nil {
		return "", nil, err // an unreadable .env is not "no .env"
	} else if !ok {
		return "", []string{fmt.Sprintf("no .env file in %s; env() reads the real environment only", dir)}, nil
	}
	var warnings []string
	if _, fromEnv := environ["APP_ENV"]; !fromEnv {
		if vars, err := loadDotenvFile(base, environ); err == nil {
			if appEnv, isNull := Cast(vars["APP_ENV"]); !isNull && appEnv != "" && isFile(base+"."+appEnv) {
				warnings = append(warnings, fmt.Sprintf(
					".env sets APP_ENV=%s but Laravel only reads .env.%s when APP_ENV is a real environment variable; using .env",
					quoteShort(appEnv), appEnv))
			}
		}
	}
	return base, warnings, nil
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// locateSQLite resolves a relative SQLite path as Laravel does: from the
// working directory (8.x), then the base dir (11+). The file must exist:
// opening a missing one would create it.
func locateSQLite(path, cwd, dir string) (string, error) {
	if path == ":memory:" || strings.HasPrefix(path, "file::memory:") {
		return "", errors.New("an in-memory SQLite database has no failed jobs to triage; point at the app's database file")
	}
	if filepath.IsAbs(path) {
		if !isFile(path) {
			return "", fmt.Errorf("SQLite database %s does not exist: fix the path (jobtriage never creates a database)", quoteShort(path))
		}
		return path, nil
	}
	for _, base := range []string{cwd, dir} {
		if candidate := filepath.Join(base, path); isFile(candidate) {
			return candidate, nil
		}
	}
	where := quoteShort(cwd)
	if filepath.Clean(cwd) != filepath.Clean(dir) {
		where = fmt.Sprintf("the working directory %s or the app's base path %s", quoteShort(cwd), quoteShort(dir))
	}
	return "", fmt.Errorf("SQLite database %s does not exist in %s: fix the path (jobtriage never creates a database)", quoteShort(path), where)
}

// tableNamePattern admits plain and schema-qualified identifiers: table
// names reach SQL text, so anything else is refused.
var tableNamePattern = regexp.MustCompile(`\A[A-Za-z_][A-Za-z0-9_$]{0,62}(\.[A-Za-z_][A-Za-z0-9_$]{0,62})?\z`)

func tableName(what, flag, jobtriageEnv, def, configKey string) (string, error) {
	name, from := def, configKey
	switch {
	case flag != "":
		name, from = flag, "flag"
	case jobtriageEnv != "":
		name, from = jobtriageEnv, "environment"
	}
	if !tableNamePattern.MatchString(name) {
		return "", fmt.Errorf("%s %s (from %s) is not a valid table name: use letters, digits, '_' and an optional schema. prefix",
			what, quoteShort(name), from)
	}
	return name, nil
}

func location(flag, jobtriageEnv string, p *Profile) (*time.Location, error) {
	name, from := "UTC", "default"
	switch {
	case flag != "":
		name, from = flag, "--timezone"
	case jobtriageEnv != "":
		name, from = jobtriageEnv, "JOBTRIAGE_TIMEZONE"
	default:
		v, set, isNull, err := p.str("app.timezone", "pass --timezone")
		if err != nil {
			return nil, err
		}
		if set && !isNull && v != "" {
			name, from = v, "app.timezone ("+p.Source(p.Get("app.timezone"))+")"
		}
	}
	loc, err := loadPHPTimezone(name)
	if err != nil {
		return nil, fmt.Errorf("%s=%s is not a timezone name such as UTC or Europe/Kyiv", from, quoteShort(name))
	}
	return loc, nil
}

// loadPHPTimezone accepts, like date_default_timezone_set, IANA names in
// any case ("utc", "europe/kyiv"); Go's "Local" is no PHP zone.
func loadPHPTimezone(name string) (*time.Location, error) {
	name = strings.TrimSpace(name)
	if name == "" || strings.EqualFold(name, "local") || strings.ContainsAny(name, "\x00\\") || strings.Contains(name, "..") {
		return nil, errors.New("invalid timezone")
	}
	if loc, err := time.LoadLocation(name); err == nil {
		return loc, nil
	}
	if loc, err := time.LoadLocation(strings.ToUpper(name)); err == nil {
		return loc, nil
	}
	return time.LoadLocation(titleTimezone(name))
}

// titleTimezone capitalises each word of a zone name: "america/new_york" →
// "America/New_York".
func titleTimezone(name string) string {
	b := []byte(strings.ToLower(name))
	upper := true
	for i, c := range b {
		if upper && 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
		upper = c == '/' || c == '_' || c == '-'
	}
	return string(b)
}

// maxRetryAfter bounds retry_after to something a queue could mean.
const maxRetryAfter = 10 * 365 * 24 * time.Hour

func retryAfter(flag time.Duration, qc QueueConnection) (time.Duration, error) {
	if flag < 0 {
		return 0, errors.New("--retry-after must not be negative")
	}
	if flag > 0 {
		return flag, nil
	}
	if qc.Name == "" {
		return defaultRetryAfter, nil
	}
	d := time.Duration(qc.RetryAfter) * time.Second
	if qc.RetryAfter < 0 || d > maxRetryAfter {
		return 0, fmt.Errorf("queue.connections.%s.retry_after is %d (%s): not a usable number of seconds", qc.Name, qc.RetryAfter, qc.Source)
	}
	if qc.RetryAfter == 0 {
		return defaultRetryAfter, nil
	}
	return d, nil
}
