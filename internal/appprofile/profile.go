package appprofile

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/jobtriage/jobtriage/internal/appprofile/phpconf"
)

// Profile is the Laravel app as Laravel would configure it, without PHP:
// bootstrap/cache/config.php when it exists (then .env is not read), else
// config/*.php evaluated statically with the environment and .env, over the
// defaults of the app's Laravel version. Every value keeps where it was written.
type Profile struct {
	// Root is the directory holding artisan, or the working directory.
	Root string
	// IsApp: an artisan file was found at Root.
	IsApp bool
	// Version is the Laravel version ("8.83.26"), "" when unknown, read from
	// VersionSource. Major picks the defaults: 8 (the oldest) when unknown.
	Version, VersionSource string
	Major                  int
	// CachePath is the config cache in use, "" when none.
	CachePath string
	// EnvFile is the .env read, "" when none (always "" with a cache).
	EnvFile string
	// Files are the config files evaluated, relative to Root.
	Files []string

	tree     *phpconf.Value
	environ  map[string]string
	dotenv   map[string]string
	unknowns []Unknown // values the resolution needed but could not evaluate
	// cacheErr is why config/cache.php could not be evaluated; CacheStore
	// returns it.
	cacheErr error
	// resolvedWith are the options Resolve read the app with (Cwd absolute),
	// for ProfileWithoutCache to choose the same .env.
	resolvedWith Options
}

// Unknown is a config value jobtriage could not evaluate statically.
type Unknown struct {
	Key   string // dot path, "database.connections.pgsql.host"
	Where string // file:line
	Expr  string // the PHP expression as written
	Hint  string // the flag or variable that overrides it
}

func (u Unknown) String() string {
	s := fmt.Sprintf("%s: %s is `%s`, which jobtriage does not evaluate without PHP", u.Where, u.Key, u.Expr)
	if u.Hint != "" {
		s += "; " + u.Hint
	}
	return s
}

// artisanName marks a Laravel app's base path.
const artisanName = "artisan"

// findAppRoot walks up from dir to the first directory holding artisan, so
// jobtriage works anywhere inside an app; ok is false when there is none.
func findAppRoot(dir string) (root string, ok bool) {
	for d := dir; ; {
		if isFile(filepath.Join(d, artisanName)) {
			return d, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir, false
		}
		d = parent
	}
}

var (
	sqliteTripleSlash    = regexp.MustCompile(`\A(?i:sqlite3?):///`)
	composerFrameworkRE  = regexp.MustCompile(`"name":\s*"laravel/framework",\s*"version":\s*"v?([0-9][0-9A-Za-z.\-]*)"`)
	applicationVersionRE = regexp.MustCompile(`const VERSION = '([0-9][^']*)'`)
)

// laravelVersion reads the framework version from composer.lock, else from
// the installed framework's Application::VERSION.
func laravelVersion(root string) (version, source string) {
	if b, err := readBounded(filepath.Join(root, "composer.lock")); err == nil {
		if m := composerFrameworkRE.FindSubmatch(b); m != nil {
			return string(m[1]), "composer.lock"
		}
	}
	app := filepath.Join("vendor", "laravel", "framework", "src", "Illuminate", "Foundation", "Application.php")
	if b, err := readBounded(filepath.Join(root, app)); err == nil {
		if m := applicationVersionRE.FindSubmatch(b); m != nil {
			return string(m[1]), app
		}
	}
	return "", ""
}

// maxConfigFileBytes bounds every file the profile reads: config files and
// caches are kilobytes.
const maxConfigFileBytes = 16 << 20

func readBounded(path string) ([]byte, error) { return ReadBounded(path, maxConfigFileBytes) }

// ReadBounded reads a regular file of at most limit bytes: a FIFO (looked at
// before opening, which would wait for a writer), a device or a larger file
// is refused before it is read.
func ReadBounded(path string, limit int64) ([]byte, error) {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s is larger than %s", path, byteSize(limit))
	}
	return os.ReadFile(path)
}

// byteSize renders a limit in MiB when it is a whole number of them.
func byteSize(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// configNames are the config files jobtriage reads.
var configNames = [...]string{"app", "database", "queue"}

// loadProfile builds the profile; envFile is chooseEnvFile's ("" for none)
// and fileVars its values.
func loadProfile(root string, isApp bool, environ, fileVars map[string]string, envFile, cachePath string) (*Profile, error) {
	p := &Profile{Root: root, IsApp: isApp, environ: environ, dotenv: fileVars}
	p.Version, p.VersionSource = laravelVersion(root)
	p.Major, _ = strconv.Atoi(strings.SplitN(p.Version, ".", 2)[0])
	p.Major = max(p.Major, 8)
	tree := &phpconf.Value{Kind: phpconf.KindArray}
	if cachePath != "" {
		src, err := readBounded(cachePath)
		if err != nil {
			return nil, fmt.Errorf("reading the config cache: %w", err)
		}
		// Laravel merely requires the file: var_export's output or a
		// hand-written array is evaluated like a config file, without env.
		v, err := phpconf.EvalConfig(p.rel(cachePath), src, phpconf.EvalContext{Root: root, Env: noEnv})
		if err != nil {
			return nil, fmt.Errorf("the config cache %s cannot be read (%v); run php artisan config:cache again, or pass --dsn", p.rel(cachePath), err)
		}
		p.CachePath = cachePath
		p.tree = v
		p.dotenv = nil // Laravel reads nothing else: not .env, not config/*.php
		return p, nil
	}
	p.EnvFile = envFile
	ctx := phpconf.EvalContext{Root: root, Env: p.lookupEnv}
	defaults, merged := versionDefaults(p.Major, isApp)
	for _, name := range append(configNames[:], cacheConfigName) {
		def, err := phpconf.EvalConfig(fmt.Sprintf("(Laravel %d default) config/%s.php", p.Major, name), []byte(defaults[name]), ctx)
		if err != nil {
			return nil, fmt.Errorf("jobtriage's built-in defaults for config/%s.php: %w", name, err)
		}
		file := filepath.Join(root, "config", name+".php")
		var app *phpconf.Value
		if src, err := readBounded(file); err == nil {
			if app, err = phpconf.EvalConfig(p.rel(file), src, ctx); err != nil && name == cacheConfigName {
				// Only pause reads it: a broken one costs that command alone.
				p.cacheErr = fmt.Errorf("%s: %w", p.rel(file), err)
				continue
			} else if err != nil {
				return nil, fmt.Errorf("%s: %w", p.rel(file), err)
			}
			p.Files = append(p.Files, p.rel(file))
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("reading %s: %w", p.rel(file), err)
		}
		v := def
		switch {
		case app != nil && merged:
			v = mergeConfig(def, app, mergeableOptions(name))
		case app != nil:
			v = app
		}
		tree.Entries = append(tree.Entries, phpconf.Entry{Key: name, Value: v})
	}
	p.tree = tree
	return p, nil
}

// mergeConfig is Laravel 11's LoadConfiguration merge: the app's top-level
// keys replace the framework's, except the mergeable ones, merged one level deep.
func mergeConfig(base, app *phpconf.Value, mergeable []string) *phpconf.Value {
	if base == nil || base.Kind != phpconf.KindArray || app.Kind != phpconf.KindArray {
		return app
	}
	out := union(app, base)
	for _, key := range mergeable {
		b, a := base.Get(key), app.Get(key)
		if b == nil || a == nil || b.Kind != phpconf.KindArray || a.Kind != phpconf.KindArray {
			continue
		}
		for i, e := range out.Entries {
			if e.Key == key {
				out.Entries[i].Value = union(a, b)
			}
		}
	}
	return out
}

// union is the array a followed by the entries of b whose keys a lacks.
func union(a, b *phpconf.Value) *phpconf.Value {
	out := &phpconf.Value{Kind: phpconf.KindArray, Pos: a.Pos, Entries: slices.Clone(a.Entries)}
	for _, e := range b.Entries {
		if !slices.ContainsFunc(a.Entries, func(x phpconf.Entry) bool { return x.Key == e.Key }) {
			out.Entries = append(out.Entries, e)
		}
	}
	return out
}

// noEnv is env() while a config cache is in use: Laravel loads no .env.
func noEnv(string) (string, bool) { return "", false }

// lookupEnv is what env() sees: the real environment first, then .env.
func (p *Profile) lookupEnv(name string) (string, bool) {
	if v, ok := p.environ[name]; ok {
		return v, true
	}
	v, ok := p.dotenv[name]
	return v, ok
}

func (p *Profile) rel(path string) string {
	if r, err := filepath.Rel(p.Root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// Get is the value at a dot path ("queue.failed.table"), nil when absent.
func (p *Profile) Get(path string) *phpconf.Value {
	if p == nil || p.tree == nil {
		return nil
	}
	return p.tree.Get(path)
}

// Source says where a value came from: "config/app.php:75 (APP_TIMEZONE
// from .env)", "bootstrap/cache/config.php:12", "(Laravel 8 default) …".
func (p *Profile) Source(v *phpconf.Value) string {
	if v == nil {
		return "not set"
	}
	s := v.Pos.String()
	var envs []string
	for _, k := range v.EnvKeys {
		switch _, inEnv := p.environ[k]; {
		case inEnv:
			envs = append(envs, k+" from the environment")
		case p.dotenv != nil && hasKey(p.dotenv, k):
			envs = append(envs, k+" from "+p.rel(p.EnvFile))
		default:
			envs = append(envs, k+" unset")
		}
	}
	if len(envs) > 0 {
		s += " (" + strings.Join(envs, ", ") + ")"
	}
	return s
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

// str reads a scalar setting as a PHP string; set is false when absent. An
// unevaluated expression is recorded, and its error names file:line and hint.
func (p *Profile) str(path, hint string) (value string, set, isNull bool, err error) {
	v := p.Get(path)
	if v == nil {
		return "", false, false, nil
	}
	switch v.Kind {
	case phpconf.KindNull:
		return "", true, true, nil
	case phpconf.KindUnknown:
		u := Unknown{Key: path, Where: v.Pos.String(), Expr: shownExpr(path, v.Expr), Hint: hint}
		p.noteUnknown(u)
		return "", true, false, errors.New(u.String())
	case phpconf.KindArray:
		return "", true, false, fmt.Errorf("%s: %s is an array, expected a single value", v.Pos, path)
	}
	s, _ := v.String()
	return s, true, false, nil
}

func (p *Profile) noteUnknown(u Unknown) {
	if !slices.ContainsFunc(p.unknowns, func(have Unknown) bool { return have.Key == u.Key }) {
		p.unknowns = append(p.unknowns, u)
	}
}

// Unknowns lists the values resolution needed but could not evaluate.
func (p *Profile) Unknowns() []Unknown { return append([]Unknown(nil), p.unknowns...) }

// AllUnknowns lists every unevaluated value, needed or not (for doctor).
func (p *Profile) AllUnknowns() []Unknown {
	var out []Unknown
	var walk func(prefix string, v *phpconf.Value)
	walk = func(prefix string, v *phpconf.Value) {
		switch v.Kind {
		case phpconf.KindUnknown:
			out = append(out, Unknown{Key: prefix, Where: v.Pos.String(), Expr: shownExpr(prefix, v.Expr)})
		case phpconf.KindArray:
			for _, e := range v.Entries {
				walk(prefix+"."+e.Key, e.Value)
			}
		}
	}
	if p.tree != nil {
		for _, e := range p.tree.Entries {
			walk(e.Key, e.Value)
		}
	}
	return out
}

// keys lists the evaluated entry names of an array setting, in source order.
func (p *Profile) keys(path string) []string {
	v := p.Get(path)
	if v == nil || v.Kind != phpconf.KindArray {
		return nil
	}
	out := make([]string, 0, len(v.Entries))
	for _, e := range v.Entries {
		if !e.KeyUnknown {
			out = append(out, e.Key)
		}
	}
	return out
}

// DatabaseConnection is one entry of config('database.connections').
type DatabaseConnection struct {
	Name   string
	Driver string // Laravel's: pgsql, mysql, mariadb, sqlite, sqlsrv, …
	Target Target
	// Prefix is the connection's table prefix, applied to every table.
	Prefix string
	// Schema is PostgreSQL's search_path (schema in 8–10, search_path 11+).
	Schema []string
	// Timezone is MySQL's session time_zone when the config sets one.
	Timezone string
	Source   string
}

// databaseConnection resolves database.connections.<name> into a target,
// applying its url as ConfigurationUrlParser does.
func (p *Profile) databaseConnection(name string) (DatabaseConnection, []string, error) {
	base := "database.connections." + name
	conn := p.Get(base)
	if conn == nil {
		return DatabaseConnection{}, nil, fmt.Errorf("database connection %s is not configured in config/database.php (Laravel would fail with \"Database connection [%s] not configured\"); add it there, or pass --dsn",
			quoteShort(name), name)
	}
	dc := DatabaseConnection{Name: name, Source: p.Source(conn)}
	fields := map[string]string{}
	for _, key := range []string{"driver", "host", "port", "database", "username", "password", "unix_socket", "prefix", "timezone", "sslmode", "url"} {
		v, set, _, err := p.str(base+"."+key, "pass --dsn")
		if err != nil {
			return dc, nil, err
		}
		if set {
			fields[key] = v
		}
	}
	driver := fields["driver"]
	dc.Prefix, dc.Timezone = fields["prefix"], fields["timezone"]
	for _, key := range []string{"search_path", "schema"} {
		v := p.Get(base + "." + key)
		if v == nil {
			continue
		}
		switch v.Kind {
		case phpconf.KindArray:
			dc.Schema = append(dc.Schema, slices.DeleteFunc(entryStrings(v), func(s string) bool { return s == "" })...)
		case phpconf.KindString:
			for _, s := range strings.Split(v.Str, ",") {
				if s = strings.Trim(strings.TrimSpace(s), `"`); s != "" {
					dc.Schema = append(dc.Schema, s)
				}
			}
		}
		if len(dc.Schema) > 0 {
			break
		}
	}
	var warnings []string
	var params map[string]string
	if rawURL := fields["url"]; rawURL != "" {
		// ConfigurationUrlParser turns sqlite:/// into sqlite://null/ (and
		// the "null" host then drops out), so the path after it is relative.
		if m := sqliteTripleSlash.FindString(rawURL); m != "" {
			rawURL = m[:len(m)-1] + "null/" + rawURL[len(m):]
		}
		parts, err := splitDatabaseURL(rawURL)
		if err != nil {
			return dc, nil, fmt.Errorf("%s.url: %w", base, err)
		}
		if parts.scheme != "" {
			if urlDriver := laravelDriverFor(parts.scheme); urlDriver != driver {
				if !parts.hasPort {
					warnings = append(warnings, fmt.Sprintf(
						"the url of database connection %s switches it to driver %s without a port, so Laravel keeps port %s; add the port to the URL if that is wrong",
						name, quoteShort(urlDriver), fields["port"]))
				}
				driver = urlDriver
			}
		}
		override := func(key, v string, ok bool) {
			if ok {
				fields[key] = v
			}
		}
		override("host", parts.host, parts.hasHost)
		override("port", strconv.Itoa(parts.port), parts.hasPort)
		override("username", parts.user, parts.hasUser)
		override("password", parts.pass, parts.hasPass)
		override("database", parts.database, parts.hasDatabase)
		params = parts.params
		if s := takeSocketParam(params); s != "" {
			fields["unix_socket"] = s
		}
	}
	dc.Driver = driver
	database := fields["database"]
	ours, ok := ourDrivers[driver]
	if !ok {
		return dc, warnings, unsupportedDriverError("database connection "+quoteShort(name), driver)
	}
	if database == "" {
		return dc, warnings, fmt.Errorf("no database name: database connection %s has an empty or null database (%s) and no url names one",
			quoteShort(name), p.Source(p.Get(base+".database")))
	}
	if ours == "sqlite" {
		dc.Target = Target{Driver: ours, Path: database, Params: params}
		return dc, warnings, nil
	}
	if database == "forge" && strings.HasPrefix(p.Get(base+".database").Pos.File, "(Laravel") && !hasKey(p.environ, "DB_DATABASE") && !hasKey(p.dotenv, "DB_DATABASE") {
		warnings = append(warnings, "DB_DATABASE is not set; using Laravel 8's default database name \"forge\"")
	}
	port := defaultPorts[ours]
	if s := strings.TrimSpace(fields["port"]); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 65535 {
			return dc, warnings, fmt.Errorf("%s is not a port number (database connection %s, %s)",
				p.settingName(base+".port", fields["port"]), quoteShort(name), p.Source(p.Get(base+".port")))
		}
		port = n
	}
	// prefer is the store's default too; only another mode is passed on.
	if fields["sslmode"] != "" && fields["sslmode"] != "prefer" && ours == "postgres" {
		if params == nil {
			params = map[string]string{}
		}
		if _, given := params["sslmode"]; !given {
			params["sslmode"] = fields["sslmode"]
		}
	}
	dc.Target = Target{Driver: ours, Host: fields["host"], Port: port, Database: database,
		User: fields["username"], Password: fields["password"], Socket: fields["unix_socket"], Params: params}
	return dc, warnings, nil
}

// settingName names a setting as the operator set it: DB_PORT="nope" when
// an env() key supplied it, else the config key.
func (p *Profile) settingName(path, value string) string {
	if v := p.Get(path); v != nil {
		for _, k := range v.EnvKeys {
			if _, ok := p.lookupEnv(k); ok && p.CachePath == "" {
				return k + "=" + quoteShort(value)
			}
		}
	}
	return path + "=" + quoteShort(value)
}

// QueueConnection is one entry of config('queue.connections').
type QueueConnection struct {
	Name       string
	Driver     string
	Table      string // the database driver's jobs table, with the connection's prefix
	Queue      string // the default queue
	RetryAfter int64  // seconds; 0 when null (never re-reserved)
	// Connection is the database connection (database driver; "" = the
	// default) or the Redis connection (redis driver).
	Connection string
	// Connections are a failover connection's, in the order pushes try them.
	Connections []string
	Source      string
}

// QueueConnections lists queue.connections in source order; unevaluated
// values are left empty and recorded.
func (p *Profile) QueueConnections() []QueueConnection {
	var out []QueueConnection
	for _, name := range p.keys("queue.connections") {
		base := "queue.connections." + name
		qc := QueueConnection{Name: name, Source: p.Source(p.Get(base))}
		qc.Driver, _, _, _ = p.str(base+".driver", "")
		qc.Table, _, _, _ = p.str(base+".table", "pass --jobs-table")
		qc.Queue, _, _, _ = p.str(base+".queue", "")
		qc.Connection, _, _, _ = p.str(base+".connection", "")
		if v := p.Get(base + ".retry_after"); v != nil {
			qc.RetryAfter, _ = v.IntValue()
		}
		qc.Connections = entryStrings(p.Get(base + ".connections"))
		out = append(out, qc)
	}
	return out
}

// RedisConnection is one entry of config('database.redis').
type RedisConnection struct {
	Name     string
	URL      string
	Host     string
	Port     int
	Username string
	Password string
	Database int
	Scheme   string // "tls" (rediss:// URLs, scheme tls) or "tcp"
	Cluster  bool   // one of database.redis.clusters
	// Prefix is applied to every key: the connection's own prefix, else
	// database.redis.options.prefix.
	Prefix string
	Source string
}

// Redacted names the connection without its password.
func (r RedisConnection) Redacted() string {
	scheme := "redis"
	if r.Scheme == "tls" {
		scheme = "rediss"
	}
	s := fmt.Sprintf("%s://%s:%d/%d", scheme, r.Host, r.Port, r.Database)
	if r.Cluster {
		s += " (cluster)"
	}
	return s
}

// Redis resolves database.redis.<name>, or the cluster of that name.
func (p *Profile) Redis(name string) (RedisConnection, error) {
	rc := RedisConnection{Name: name, Scheme: "tcp", Host: "127.0.0.1", Port: 6379}
	base := "database.redis." + name
	conn := p.Get(base)
	if conn == nil || conn.Kind != phpconf.KindArray {
		if c := p.Get("database.redis.clusters." + name); c != nil && c.Kind == phpconf.KindArray {
			base, conn, rc.Cluster = "database.redis.clusters."+name+".0", c.Get("0"), true
		}
	}
	if conn == nil {
		return rc, fmt.Errorf("redis connection %s is not configured in config/database.php (database.redis)", quoteShort(name))
	}
	rc.Source = p.Source(conn)
	hint := "set the REDIS_* variable it reads"
	fields := map[string]string{}
	for _, key := range []string{"url", "host", "port", "username", "password", "database", "scheme", "prefix"} {
		v, set, isNull, err := p.str(base+"."+key, hint)
		if err != nil {
			return rc, err
		}
		if set && !isNull {
			fields[key] = v
		}
	}
	if u := fields["url"]; u != "" {
		rc.URL = u
		parts, err := splitDatabaseURL(u)
		if err != nil {
			return rc, fmt.Errorf("the url of redis connection %s: %w", quoteShort(name), err)
		}
		switch strings.ToLower(parts.scheme) {
		case "rediss", "tls":
			fields["scheme"] = "tls"
		case "redis", "tcp", "":
		default:
			return rc, fmt.Errorf("the url of redis connection %s has scheme %s; want redis:// or rediss://", quoteShort(name), quoteShort(parts.scheme))
		}
		set := func(key, v string, has bool) {
			if has {
				fields[key] = v
			}
		}
		set("host", parts.host, parts.hasHost)
		set("port", strconv.Itoa(parts.port), parts.hasPort)
		set("username", parts.user, parts.hasUser)
		set("password", parts.pass, parts.hasPass)
		set("database", parts.database, parts.hasDatabase)
		// phpredis and Predis take a lone user part (redis://pw@host) as
		// the password.
		if parts.hasUser && !parts.hasPass {
			fields["username"], fields["password"] = "", parts.user
		}
		// The query's options override the url's parts and the keys beside
		// it (?database=2&prefix=app:), as ConfigurationUrlParser merges them last.
		for k, v := range parts.params {
			if v, ok := phpNativeString(v); ok {
				fields[k] = v
			}
		}
	}
	if v := fields["host"]; v != "" {
		rc.Host = v
	}
	if v := fields["port"]; v != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 || n > 65535 {
			return rc, fmt.Errorf("the port of redis connection %s, %s, is not a port number", quoteShort(name), quoteShort(v))
		}
		rc.Port = n
	}
	rc.Username, rc.Password = fields["username"], fields["password"]
	if v := fields["database"]; v != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return rc, fmt.Errorf("the database of redis connection %s, %s, is not a number", quoteShort(name), quoteShort(v))
		}
		rc.Database = n
	}
	if fields["scheme"] == "tls" || fields["scheme"] == "rediss" {
		rc.Scheme = "tls"
	}
	prefix, _, _, err := p.str("database.redis.options.prefix", "set REDIS_PREFIX")
	if err != nil {
		return rc, err
	}
	rc.Prefix = prefix
	if v, ok := fields["prefix"]; ok {
		rc.Prefix = v
	}
	return rc, nil
}

// FailedStore is queue.failed.
type FailedStore struct {
	Driver   string // database-uuids, database, file, dynamodb, null
	Database string // the database connection (database drivers)
	Table    string
	Path     string // the file driver's JSON file, absolute
	Source   string
}

func (p *Profile) failedStore() (FailedStore, error) {
	fs := FailedStore{Source: p.Source(p.Get("queue.failed"))}
	var err error
	var set, isNull bool
	if fs.Driver, set, isNull, err = p.str("queue.failed.driver", ""); err != nil {
		return fs, err
	}
	switch {
	case p.Get("queue.failed") == nil || isNull:
		fs.Driver = "null"
	case !set && p.Get("queue.failed.table") != nil:
		fs.Driver = "database" // QueueServiceProvider's legacy integer-id provider
	case !set:
		fs.Driver = "null"
	}
	if fs.Database, _, _, err = p.str("queue.failed.database", "pass --dsn"); err != nil {
		return fs, err
	}
	if fs.Table, _, _, err = p.str("queue.failed.table", "pass --failed-table"); err != nil {
		return fs, err
	}
	if fs.Path, _, _, err = p.str("queue.failed.path", "write it as a literal path in config/queue.php"); err != nil {
		return fs, err
	}
	if fs.Driver == "file" && fs.Path == "" {
		fs.Path = filepath.Join(p.Root, "storage", "framework", "cache", "failed-jobs.json")
	}
	if fs.Path != "" && !filepath.IsAbs(fs.Path) {
		fs.Path = filepath.Join(p.Root, fs.Path)
	}
	return fs, nil
}

// Setting is one resolved value with its source, for doctor.
type Setting struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// shownExpr is an unevaluated expression as messages show it: a secret
// setting's may hold the secret's pieces, so it is hidden.
func shownExpr(key, expr string) string {
	if isSecretSetting(key) {
		return hiddenExpr
	}
	return expr
}

// hiddenExpr stands for a secret setting's expression.
const hiddenExpr = "(a secret's expression, not shown)"

// isSecretSetting reports settings whose values are never shown.
func isSecretSetting(key string) bool {
	k := strings.ToLower(key)
	return strings.HasSuffix(k, ".password") || strings.HasSuffix(k, ".key") || strings.HasSuffix(k, "previous_keys") ||
		strings.HasSuffix(k, ".secret") || strings.HasSuffix(k, ".url") || strings.HasSuffix(k, ".token")
}

// Settings lists the values jobtriage uses with their sources; secrets
// show as "(set)" or "(empty)".
func (p *Profile) Settings() []Setting {
	var out []Setting
	add := func(base string, fields ...string) {
		for _, f := range fields {
			key := base + f
			v := p.Get(key)
			if v == nil {
				continue
			}
			var shown string
			switch {
			case v.Kind == phpconf.KindArray:
				entries := entryStrings(v)
				sort.Strings(entries)
				b, _ := json.Marshal(entries)
				shown = string(b)
			case v.Kind == phpconf.KindUnknown && isSecretSetting(key):
				shown = "? " + hiddenExpr
			case v.Kind == phpconf.KindUnknown:
				shown = "? `" + v.Expr + "`"
			case v.Kind == phpconf.KindNull:
				shown = "null"
			default:
				shown, _ = v.String()
			}
			if isSecretSetting(key) && v.Kind != phpconf.KindUnknown {
				if shown == "" || shown == "null" {
					shown = "(empty)"
				} else {
					shown = "(set)"
				}
			}
			out = append(out, Setting{Key: key, Value: shown, Source: p.Source(v)})
		}
	}
	add("", "app.name", "app.env", "app.timezone", "app.key", "app.previous_keys",
		"queue.default", "queue.failed.driver", "queue.failed.database", "queue.failed.table", "queue.failed.path",
		"queue.batching.database", "queue.batching.table", "database.default")
	for _, qc := range p.keys("queue.connections") {
		add("queue.connections."+qc+".", "driver", "connection", "table", "queue", "retry_after")
	}
	for _, dc := range p.keys("database.connections") {
		add("database.connections."+dc+".", "driver", "url", "host", "port", "database", "username", "password",
			"unix_socket", "prefix", "schema", "search_path", "timezone")
	}
	add("database.redis.", "client", "options.cluster", "options.prefix")
	for _, rc := range p.keys("database.redis") {
		if rc != "client" && rc != "options" && rc != "clusters" {
			add("database.redis."+rc+".", "url", "host", "port", "username", "password", "database", "prefix")
		}
	}
	return out
}

// entryStrings are the scalar entries of an array setting, in source order.
func entryStrings(v *phpconf.Value) []string {
	if v == nil {
		return nil
	}
	var out []string
	for _, e := range v.Entries {
		if s, ok := e.Value.String(); ok {
			out = append(out, s)
		}
	}
	return out
}

// localDatabaseQueue is the database-driver queue connection whose jobs
// table is in the failed_jobs database (the default queue connection when
// it qualifies, else the first), zero when there is none.
func (p *Profile) localDatabaseQueue(failedConn string) QueueConnection {
	def, _, _, _ := p.str("queue.default", "")
	dbDefault, _, _, _ := p.str("database.default", "")
	var first QueueConnection
	for _, qc := range p.QueueConnections() {
		if qc.Driver != "database" {
			continue
		}
		conn := cmp.Or(qc.Connection, dbDefault)
		if conn != failedConn && failedConn != "" {
			continue
		}
		if qc.Name == def {
			return qc
		}
		if first.Name == "" {
			first = qc
		}
	}
	return first
}

// appKeys is APP_KEY then app.previous_keys (11+), the encrypter's order.
// previous_keys is array_filter(explode(',', env('APP_PREVIOUS_KEYS', ”))),
// which is not evaluated: a string (the built-in defaults) is split on
// commas, and an unknown falls back to APP_PREVIOUS_KEYS.
func (p *Profile) appKeys() []string {
	var keys []string
	if k, _, _, _ := p.str("app.key", ""); k != "" {
		keys = append(keys, k)
	}
	var previous []string
	switch v := p.Get("app.previous_keys"); {
	case v == nil:
	case v.Kind == phpconf.KindArray:
		previous = entryStrings(v)
	case v.Kind == phpconf.KindString:
		previous = strings.Split(v.Str, ",")
	case v.Kind == phpconf.KindUnknown && p.CachePath == "":
		if raw, ok := p.lookupEnv("APP_PREVIOUS_KEYS"); ok {
			previous = strings.Split(raw, ",")
		}
	}
	for _, k := range previous {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// DatabaseConnectionNamed resolves one database connection of the app.
func (p *Profile) DatabaseConnectionNamed(name string) (DatabaseConnection, error) {
	dc, _, err := p.databaseConnection(name)
	return dc, err
}
