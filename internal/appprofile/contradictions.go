package appprofile

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jobtriage/jobtriage/internal/appprofile/phpconf"
)

// Contradiction is where the app's configuration says two things, or what
// jobtriage cannot follow. Message is one line naming both sources, without
// passwords or app keys.
type Contradiction struct {
	Severity string `json:"severity"`
	Kind     string `json:"kind"`
	Key      string `json:"key,omitempty"`
	Message  string `json:"message"`
}

// Severities: an error fails doctor; a warning does not; info explains.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityInfo    = "info"
)

// Kinds of contradiction.
const (
	// KindCacheVsEnv: bootstrap/cache/config.php and .env disagree.
	KindCacheVsEnv = "cache_vs_env"
	// KindTimezoneIgnored: APP_TIMEZONE is set; app.timezone does not read it.
	KindTimezoneIgnored = "timezone_ignored"
	// KindUnknown: a value jobtriage could not evaluate without PHP.
	KindUnknown = "unknown"
	// KindServerTimezone: the database server's zone differs from the app's.
	KindServerTimezone = "server_timezone"
	// KindUnwritable: a queue connection jobtriage cannot write to.
	KindUnwritable = "unwritable_connection"
)

// cacheAdvice ends every cache-vs-.env line.
const cacheAdvice = "Laravel uses the cache; run php artisan config:cache after changing .env"

func cacheVsEnv(key, format string, args ...any) Contradiction {
	return Contradiction{Severity: SeverityError, Kind: KindCacheVsEnv, Key: key, Message: fmt.Sprintf(format, args...) + "; " + cacheAdvice}
}

// ProfileWithoutCache evaluates the app as Laravel would without cached's
// config cache: config/*.php with the environment and the .env Resolve
// would have read (the same --env, app directory and working directory). It
// is nil when cached uses no cache or there is no .env: nothing the cache
// could hide.
func ProfileWithoutCache(cached *Profile) (*Profile, error) {
	if cached == nil || cached.CachePath == "" {
		return nil, nil
	}
	o := cached.resolvedWith
	envPath, _, err := chooseEnvFile(o, cached.environ, cached.Root, o.Cwd)
	if err != nil || envPath == "" {
		return nil, err
	}
	fileVars, err := loadDotenvFile(envPath, cached.environ)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", cached.rel(envPath), err)
	}
	return loadProfile(cached.Root, cached.IsApp, cached.environ, fileVars, envPath, "")
}

func shownValue(p *Profile, key string) (shown, source string) {
	v := p.Get(key)
	switch {
	case v == nil:
		return "(not set)", "not set"
	case v.Kind == phpconf.KindUnknown:
		return "? `" + v.Expr + "`", p.Source(v)
	case v.Kind == phpconf.KindNull:
		return "null", p.Source(v)
	case v.Kind == phpconf.KindArray:
		return "(array)", p.Source(v)
	}
	s, _ := v.String()
	return strconv.Quote(s), p.Source(v)
}

// CacheContradictions compares the profile from the config cache with
// ProfileWithoutCache's on what jobtriage depends on: app.timezone,
// queue.default, queue.failed.*, the failed-jobs database's driver, host,
// port, database, username (and password, by equality only), and each queue
// connection's driver, connection and queue.
func CacheContradictions(cached, uncached *Profile) []Contradiction {
	if cached == nil || uncached == nil {
		return nil
	}
	envName := uncached.rel(uncached.EnvFile)
	cacheName := cached.rel(cached.CachePath)
	var out []Contradiction
	compare := func(key string) {
		a, aSrc := shownValue(cached, key)
		b, bSrc := shownValue(uncached, key)
		if a != b {
			out = append(out, cacheVsEnv(key, "%s: the config cache says %s (%s) but %s gives %s (%s)", key, a, aSrc, envName, b, bSrc))
		}
	}
	for _, k := range []string{"app.timezone", "queue.default", "queue.failed.driver", "queue.failed.database", "queue.failed.table", "queue.failed.path"} {
		compare(k)
	}
	out = append(out, compareFailedDatabase(cached, uncached, envName)...)

	names := cached.keys("queue.connections")
	for _, n := range uncached.keys("queue.connections") {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, n := range names {
		base := "queue.connections." + n
		inCache, inEnv := cached.Get(base) != nil, uncached.Get(base) != nil
		switch {
		case inCache && !inEnv:
			out = append(out, cacheVsEnv(base, "%s is in the config cache (%s) but not in config/queue.php", base, cached.Source(cached.Get(base))))
			continue
		case !inCache && inEnv:
			out = append(out, cacheVsEnv(base, "%s is configured (%s) but not in the config cache %s", base, uncached.Source(uncached.Get(base)), cacheName))
			continue
		}
		for _, f := range []string{"driver", "connection", "queue"} {
			compare(base + "." + f)
		}
	}
	return out
}

func failedConnection(p *Profile) string {
	if v, ok := p.Get("queue.failed.database").String(); ok && v != "" {
		return v
	}
	v, _ := p.Get("database.default").String()
	return v
}

// compareFailedDatabase compares where the two profiles put failed_jobs.
func compareFailedDatabase(cached, uncached *Profile, envName string) []Contradiction {
	cn, un := failedConnection(cached), failedConnection(uncached)
	if cn == "" || un == "" {
		return nil
	}
	a, _, aErr := cached.databaseConnection(cn)
	b, _, bErr := uncached.databaseConnection(un)
	if aErr != nil || bErr != nil {
		// Reported where it is resolved; there is no target to compare.
		return nil
	}
	// fieldSource is where a field was written: the url, which overrides
	// the keys, when set.
	fieldSource := func(p *Profile, conn, field string) string {
		base := "database.connections." + conn
		if u, ok := p.Get(base + ".url").String(); ok && u != "" {
			return p.Source(p.Get(base + ".url"))
		}
		if v := p.Get(base + "." + field); v != nil {
			return p.Source(v)
		}
		return p.Source(p.Get(base))
	}
	database := func(dc DatabaseConnection) string {
		if dc.Target.Driver == "sqlite" {
			return dc.Target.Path
		}
		return dc.Target.Database
	}
	var out []Contradiction
	for _, f := range []struct {
		field, a, b string
	}{
		{"driver", a.Driver, b.Driver},
		{"host", a.Target.Host, b.Target.Host},
		{"port", portString(a.Target.Port), portString(b.Target.Port)},
		{"database", database(a), database(b)},
		{"username", a.Target.User, b.Target.User},
	} {
		if f.a == f.b {
			continue
		}
		key := "failed-jobs database " + f.field
		out = append(out, cacheVsEnv(key, "%s: the config cache says %s (%s) but %s gives %s (%s)", key, strconv.Quote(f.a),
			fieldSource(cached, cn, f.field), envName, strconv.Quote(f.b), fieldSource(uncached, un, f.field)))
	}
	if a.Target.Password != b.Target.Password {
		key := "failed-jobs database password"
		out = append(out, cacheVsEnv(key, "%s differs between the config cache (%s) and %s (%s)", key,
			fieldSource(cached, cn, "password"), envName, fieldSource(uncached, un, "password")))
	}
	return out
}

func portString(p int) string {
	if p == 0 {
		return ""
	}
	return strconv.Itoa(p)
}

// TimezoneIgnored reports APP_TIMEZONE set while app.timezone does not read
// it (config/app.php of Laravel 8–10 and 12 writes the zone literally, and
// failed_at is in that zone); nil when there is nothing to say or p is from
// a cache, which no longer says what it read.
func TimezoneIgnored(p *Profile) *Contradiction {
	if p == nil || p.CachePath != "" {
		return nil
	}
	raw, ok := p.lookupEnv("APP_TIMEZONE")
	if !ok {
		return nil
	}
	want, isNull := Cast(raw)
	v := p.Get("app.timezone")
	if isNull || want == "" || v == nil || v.Kind == phpconf.KindUnknown || slices.Contains(v.EnvKeys, "APP_TIMEZONE") {
		return nil
	}
	used, _ := v.String()
	if strings.EqualFold(used, want) {
		return nil
	}
	where := "the environment"
	if _, inEnv := p.environ["APP_TIMEZONE"]; !inEnv {
		where = p.rel(p.EnvFile)
	}
	return &Contradiction{Severity: SeverityError, Kind: KindTimezoneIgnored, Key: "app.timezone",
		Message: fmt.Sprintf("APP_TIMEZONE=%s is set in %s, but app.timezone is %s (%s), which does not read it; Laravel writes failed_at in %s: use env('APP_TIMEZONE') in config/app.php or remove the variable",
			strconv.Quote(want), where, strconv.Quote(used), p.Source(v), strconv.Quote(used))}
}

// relevantRoots are the config subtrees jobtriage reads; an unevaluated
// value elsewhere (providers, aliases, logging) does not concern it.
var relevantRoots = []string{"app.name", "app.env", "app.timezone", "app.key", "app.previous_keys",
	"queue.default", "queue.failed", "queue.batching", "queue.connections", "database.default",
	"database.connections", "database.redis"}

// UnknownContradictions lists the unevaluated values of relevantRoots: an
// error for those the resolution needed (Unknowns), info for the rest.
func UnknownContradictions(p *Profile) []Contradiction {
	if p == nil {
		return nil
	}
	needed := map[string]Unknown{}
	for _, u := range p.Unknowns() {
		needed[u.Key] = u
	}
	relevant := func(key string) bool {
		for _, r := range relevantRoots {
			if key == r || strings.HasPrefix(key, r+".") || strings.HasPrefix(r, key+".") {
				return true
			}
		}
		return false
	}
	var out []Contradiction
	seen := map[string]bool{}
	add := func(u Unknown, severity string) {
		if seen[u.Key] {
			return
		}
		seen[u.Key] = true
		u.Hint = cmp.Or(u.Hint, unknownHint(u.Key))
		msg := u.String()
		if severity == SeverityInfo {
			msg += " (not needed for this app's failed jobs)"
		}
		out = append(out, Contradiction{Severity: severity, Kind: KindUnknown, Key: u.Key, Message: msg})
	}
	for _, u := range p.AllUnknowns() {
		if n, ok := needed[u.Key]; ok {
			add(n, SeverityError)
		} else if relevant(u.Key) {
			add(u, SeverityInfo)
		}
	}
	for _, u := range p.Unknowns() {
		add(u, SeverityError)
	}
	return out
}

func unknownHint(key string) string {
	switch {
	case key == "app.timezone":
		return "pass --timezone"
	case key == "queue.failed.table":
		return "pass --failed-table"
	case strings.HasPrefix(key, "queue.connections.") && strings.HasSuffix(key, ".table"):
		return "pass --jobs-table"
	case strings.HasPrefix(key, "database.connections"), key == "database.default", key == "queue.failed.database":
		return "pass --dsn"
	case strings.HasPrefix(key, "database.redis"):
		return "set the REDIS_* variable it reads"
	}
	return ""
}
