// Package appconfig finds the Laravel application's queue database the way
// Laravel itself would: flags, then real environment variables, then the
// app's .env file read with phpdotenv's rules, then Laravel's defaults. It
// only reads files and the environment; it never opens a connection.
package appconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	// PHP ships its own timezone database, so an app's APP_TIMEZONE works on
	// hosts without /usr/share/zoneinfo; embedding Go's keeps us equivalent.
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
	AppKey       string // kept for decrypting payloads; never printed
	Source       string // where the connection came from: "--dsn", "JOBTRIAGE_DSN", an env file path, or "environment"
	Warnings     []string
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
func (c Config) GoString() string { return "appconfig.Config(" + c.String() + ")" }

// Laravel 8's skeleton config has no env keys for these tables; 11+ reads
// DB_QUEUE_TABLE for jobs, and failed/batches names are only in config/queue.php.
const (
	defaultFailedTable  = "failed_jobs"
	defaultJobsTable    = "jobs"
	defaultBatchesTable = "job_batches"
	defaultRetryAfter   = 90 * time.Second
)

// Resolve works out the database and queue settings. Precedence: --dsn, then
// JOBTRIAGE_DSN, then the Laravel keys (DB_URL/DATABASE_URL over
// DB_CONNECTION + DB_*), each read from the real environment first and the
// .env file second, exactly as Laravel's immutable env repository does.
func Resolve(o Options) (Config, error) {
	var secrets []string
	cfg, err := resolve(o, &secrets)
	scrub := func(s string) string {
		for _, secret := range secrets {
			s = scrubSecret(s, secret)
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

// resolve records every password it comes across in secrets, so Resolve can
// scrub every message, including those of the error paths, of them.
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

	if cache := configCachePath(environ, dir); isFile(cache) {
		cfg.Warnings = append(cfg.Warnings, fmt.Sprintf(
			"%s exists (php artisan config:cache): Laravel ignores .env and uses that cached config, which jobtriage cannot read; check the result or pass --dsn",
			cache))
	}

	envPath, warnings, err := chooseEnvFile(o, environ, dir, cwd)
	if err != nil {
		return cfg, err
	}
	explicitDSN := o.DSN != "" || environ["JOBTRIAGE_DSN"] != ""
	if envPath != "" || !explicitDSN {
		// With an explicit DSN a missing .env is expected, not news.
		cfg.Warnings = append(cfg.Warnings, warnings...)
	}
	fileVars := map[string]string{}
	if envPath != "" {
		fileVars, err = loadDotenvFile(envPath, environ)
		switch {
		case err != nil && explicitDSN:
			// The DSN is explicit, so a broken .env only costs the extras
			// (timezone, table names); say so instead of refusing to work.
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("ignoring the env file: %v", err))
			fileVars, envPath = map[string]string{}, ""
		case err != nil:
			return cfg, fmt.Errorf("reading the Laravel env file (Laravel would refuse it too): %w", err)
		}
	}
	env := envReader{environ: environ, file: fileVars}
	if pw, _, _ := env.get("DB_PASSWORD"); pw != "" {
		*secrets = append(*secrets, pw)
	}

	switch {
	case o.DSN != "":
		cfg.Target, err = ParseDSN(o.DSN)
		cfg.Source = "--dsn"
	case environ["JOBTRIAGE_DSN"] != "":
		cfg.Target, err = ParseDSN(environ["JOBTRIAGE_DSN"])
		cfg.Source = "JOBTRIAGE_DSN"
	default:
		var warns []string
		cfg.Target, warns, err = laravelTarget(env, dir)
		cfg.Warnings = append(cfg.Warnings, warns...)
		cfg.Source = "environment"
		if envPath != "" {
			cfg.Source = envPath
		}
	}
	*secrets = append(*secrets, cfg.Target.Password)
	if err != nil {
		return cfg, fmt.Errorf("%s: %w", cfg.Source, err)
	}
	if cfg.Target.Driver == "sqlite" {
		if cfg.Target.Path, err = locateSQLite(cfg.Target.Path, cwd, dir); err != nil {
			return cfg, fmt.Errorf("%s: %w", cfg.Source, err)
		}
	}

	if cfg.FailedTable, err = tableName("failed jobs table", o.FailedTable, environ["JOBTRIAGE_FAILED_TABLE"], "", env, defaultFailedTable); err != nil {
		return cfg, err
	}
	if cfg.JobsTable, err = tableName("jobs table", o.JobsTable, environ["JOBTRIAGE_JOBS_TABLE"], "DB_QUEUE_TABLE", env, defaultJobsTable); err != nil {
		return cfg, err
	}
	cfg.BatchesTable = defaultBatchesTable
	if cfg.Location, err = location(o.Timezone, environ["JOBTRIAGE_TIMEZONE"], env); err != nil {
		return cfg, err
	}
	if cfg.RetryAfter, err = retryAfter(o.RetryAfter, env); err != nil {
		return cfg, err
	}
	cfg.AppKey, _, _ = env.get("APP_KEY")
	return cfg, nil
}

// parseEnviron turns KEY=VALUE pairs into a map; the first occurrence of a
// key wins, as it does for getenv(3) and Go's os.Getenv.
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
		return "", "", fmt.Errorf("Laravel app directory %s is not a directory", quoteShort(dir))
	}
	return cwd, filepath.Clean(dir), nil
}

// configCachePath is Application::getCachedConfigPath: APP_CONFIG_CACHE (read
// before .env is loaded, so only from the real environment) is absolute when
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

// chooseEnvFile is LoadEnvironmentVariables::checkForSpecificEnvironmentFile.
// Laravel reads APP_ENV before loading any file, so only a real environment
// variable (or artisan's --env) selects .env.<APP_ENV>; APP_ENV inside .env
// cannot, and we warn when that looks intended.
func chooseEnvFile(o Options, environ map[string]string, dir, cwd string) (string, []string, error) {
	if o.EnvFile != "" {
		path := o.EnvFile
		if !filepath.IsAbs(path) {
			path = filepath.Join(cwd, path)
		}
		if !isFile(path) {
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
	if !isFile(base) {
		return "", []string{fmt.Sprintf("no .env file in %s; using the real environment and Laravel's defaults", dir)}, nil
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

// envReader is Laravel's env(): the real environment beats the .env file.
type envReader struct {
	environ map[string]string
	file    map[string]string
}

// get returns the env()-cast value; set is false when the key is absent and
// isNull is true for null/(null), both of which Laravel treats differently
// (absent takes the config default, null does not).
func (e envReader) get(name string) (value string, set, isNull bool) {
	raw, ok := e.environ[name]
	if !ok {
		raw, ok = e.file[name]
	}
	if !ok {
		return "", false, false
	}
	value, isNull = Cast(raw)
	return value, true, isNull
}

// withDefault is env(name, def) for a string context: null reads as "".
func (e envReader) withDefault(name, def string) string {
	v, set, _ := e.get(name)
	if !set {
		return def
	}
	return v
}

// laravelTarget reproduces config/database.php for the DB_CONNECTION the app
// selects. The fallback connection is mysql because that is Laravel 8's
// skeleton default ('default' => env('DB_CONNECTION', 'mysql')), the oldest
// version we support; 11+ skeletons default to sqlite but always write
// DB_CONNECTION into .env, so the fallback only matters for older apps.
func laravelTarget(env envReader, dir string) (Target, []string, error) {
	var warnings []string
	conn, set, isNull := env.get("DB_CONNECTION")
	switch {
	case !set:
		conn = "mysql"
	case isNull || conn == "":
		return Target{}, nil, errors.New("DB_CONNECTION is empty or null, so Laravel has no default connection")
	}
	driver := conn
	if _, known := ourDriver(driver); !known {
		if driver == "sqlsrv" {
			return Target{}, nil, unsupportedDriverError("DB_CONNECTION", driver)
		}
		return Target{}, nil, fmt.Errorf("DB_CONNECTION=%s is not one of Laravel's stock connections (pgsql, mysql, mariadb, sqlite); a custom connection in config/database.php cannot be read without PHP, so pass --dsn",
			quoteShort(conn))
	}

	// config/database.php defaults for this connection (Laravel 8 skeleton).
	cfg := map[string]string{
		"host":     env.withDefault("DB_HOST", "127.0.0.1"),
		"port":     env.withDefault("DB_PORT", strconv.Itoa(defaultPortForLaravel(driver))),
		"username": env.withDefault("DB_USERNAME", "forge"),
		"password": env.withDefault("DB_PASSWORD", ""),
	}
	if driver == "mysql" || driver == "mariadb" {
		cfg["unix_socket"] = env.withDefault("DB_SOCKET", "")
	}
	database, dbSet, dbNull := env.get("DB_DATABASE")
	switch {
	case !dbSet && driver == "sqlite":
		database = filepath.Join(dir, "database", "database.sqlite")
	case !dbSet:
		database = "forge"
		warnings = append(warnings, "DB_DATABASE is not set; using Laravel 8's default database name \"forge\"")
	case dbNull:
		database = ""
	}
	hasDatabase := database != ""

	var params map[string]string
	urlKey := "DB_URL"
	rawURL, _, _ := env.get(urlKey)
	if rawURL == "" {
		urlKey = "DATABASE_URL"
		rawURL, _, _ = env.get(urlKey)
	}
	if rawURL != "" {
		// ConfigurationUrlParser turns sqlite:/// into sqlite://null/ (and
		// the "null" host then drops out), so the path after it is relative.
		if m := sqliteTripleSlash.FindString(rawURL); m != "" {
			rawURL = m[:len(m)-1] + "null/" + rawURL[len(m):]
		}
		parts, err := splitDatabaseURL(rawURL)
		if err != nil {
			return Target{}, nil, fmt.Errorf("%s: %w", urlKey, err)
		}
		if parts.scheme != "" {
			if urlDriver := laravelDriverFor(parts.scheme); urlDriver != driver {
				if !parts.hasPort {
					warnings = append(warnings, fmt.Sprintf(
						"%s switches the %s connection to driver %s without a port, so Laravel keeps port %s from DB_PORT or the %s default; add the port to the URL if that is wrong",
						urlKey, driver, quoteShort(urlDriver), cfg["port"], driver))
				}
				driver = urlDriver
			}
		}
		if parts.hasHost {
			cfg["host"] = parts.host
		}
		if parts.hasPort {
			cfg["port"] = strconv.Itoa(parts.port)
		}
		if parts.hasUser {
			cfg["username"] = parts.user
		}
		if parts.hasPass {
			cfg["password"] = parts.pass
		}
		if parts.hasDatabase {
			database, hasDatabase = parts.database, true
		}
		params = parts.params
		if s := takeSocketParam(params); s != "" {
			cfg["unix_socket"] = s
		}
	}
	ours, ok := ourDriver(driver)
	if !ok {
		return Target{}, nil, unsupportedDriverError(urlKey, driver)
	}
	if !hasDatabase || database == "" {
		return Target{}, nil, errors.New("no database name: DB_DATABASE is empty or null and the URL names none")
	}
	if ours == "sqlite" {
		return Target{Driver: ours, Path: database, Params: params}, warnings, nil
	}
	port := defaultPort(ours)
	if p := strings.TrimSpace(cfg["port"]); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Target{}, nil, fmt.Errorf("DB_PORT=%s is not a port number", quoteShort(cfg["port"]))
		}
		port = n
	}
	return Target{
		Driver: ours, Host: cfg["host"], Port: port, Database: database,
		User: cfg["username"], Password: cfg["password"], Socket: cfg["unix_socket"], Params: params,
	}, warnings, nil
}

var sqliteTripleSlash = regexp.MustCompile(`\A(?i:sqlite3?):///`)

func defaultPortForLaravel(laravelDriver string) int {
	d, _ := ourDriver(laravelDriver)
	return defaultPort(d)
}

// locateSQLite resolves a relative SQLite path the way Laravel does: realpath
// from the working directory (8.x), then from the base dir (11+). The file
// must exist, because opening a missing one would silently create it.
func locateSQLite(path, cwd, dir string) (string, error) {
	if path == ":memory:" || strings.HasPrefix(path, "file::memory:") {
		return "", errors.New("an in-memory SQLite database has no failed jobs to triage; point at the app's database file")
	}
	if filepath.IsAbs(path) {
		if !isFile(path) {
			return "", fmt.Errorf("SQLite database %s does not exist", quoteShort(path))
		}
		return path, nil
	}
	for _, base := range []string{cwd, dir} {
		if candidate := filepath.Join(base, path); isFile(candidate) {
			return candidate, nil
		}
	}
	return "", fmt.Errorf("SQLite database %s does not exist in %s or %s", quoteShort(path), quoteShort(cwd), quoteShort(dir))
}

// tableNamePattern admits plain and schema-qualified identifiers only: table
// names reach SQL text, so anything else is refused rather than quoted.
var tableNamePattern = regexp.MustCompile(`\A[A-Za-z_][A-Za-z0-9_$]{0,62}(\.[A-Za-z_][A-Za-z0-9_$]{0,62})?\z`)

func tableName(what, flag, jobtriageEnv, laravelKey string, env envReader, def string) (string, error) {
	name, from := def, "default"
	switch {
	case flag != "":
		name, from = flag, "flag"
	case jobtriageEnv != "":
		name, from = jobtriageEnv, "environment"
	case laravelKey != "":
		if v, set, isNull := env.get(laravelKey); set && !isNull && v != "" {
			name, from = v, laravelKey
		}
	}
	if !tableNamePattern.MatchString(name) {
		return "", fmt.Errorf("%s %s (from %s) is not a valid table name: use letters, digits, '_' and an optional schema. prefix",
			what, quoteShort(name), from)
	}
	return name, nil
}

func location(flag, jobtriageEnv string, env envReader) (*time.Location, error) {
	name, from := "UTC", "default"
	switch {
	case flag != "":
		name, from = flag, "--timezone"
	case jobtriageEnv != "":
		name, from = jobtriageEnv, "JOBTRIAGE_TIMEZONE"
	default:
		if v, set, isNull := env.get("APP_TIMEZONE"); set && !isNull && v != "" {
			name, from = v, "APP_TIMEZONE"
		}
	}
	loc, err := loadPHPTimezone(name)
	if err != nil {
		return nil, fmt.Errorf("%s=%s is not a timezone name such as UTC or Europe/Kyiv", from, quoteShort(name))
	}
	return loc, nil
}

// loadPHPTimezone accepts what date_default_timezone_set accepts for the
// common cases: IANA names matched case-insensitively ("utc", "europe/kyiv").
// Go's "Local" is not a PHP zone and is refused.
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

func retryAfter(flag time.Duration, env envReader) (time.Duration, error) {
	if flag < 0 {
		return 0, errors.New("--retry-after must not be negative")
	}
	if flag > 0 {
		return flag, nil
	}
	v, set, isNull := env.get("DB_QUEUE_RETRY_AFTER")
	if !set || isNull || strings.TrimSpace(v) == "" {
		return defaultRetryAfter, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 || n > 10*365*24*3600 {
		return 0, fmt.Errorf("DB_QUEUE_RETRY_AFTER=%s is not a whole number of seconds", quoteShort(v))
	}
	return time.Duration(n) * time.Second, nil
}
