package appprofile

import (
	"embed"
	"strings"
)

// Laravel's configuration defaults per major version, as the PHP config
// files evaluated where an app has none (from 11 on, under the app's files,
// as the framework merges them). Only the keys jobtriage reads are listed,
// each per ../shared/laravel/queue-spec.md §6.4 and §7. Two deliberate
// extensions: the database url reads DB_URL before DATABASE_URL on every
// version, and the connection list always has mariadb.

// laravel8Defaults fills the default files' placeholders as the
// laravel/laravel 8.x skeleton (also 9 and 10) does.
func laravel8Defaults() map[string]string {
	return map[string]string{
		"TIMEZONE": "'UTC'", "PREVIOUS_KEYS": "", "DB_CONNECTION": "mysql", "DB_DATABASE": "forge", "DB_USERNAME": "forge",
		"PGSQL_SCHEMA_KEY": "schema", "REDIS_USERNAME": "", "QUEUE_CONNECTION": "sync",
		"DB_QUEUE_CONNECTION": "", "DB_QUEUE": "'default'", "REDIS_CONNECTION": "'default'", "REDIS_RETRY_AFTER": "90",
		"CACHE_STORE": "env('CACHE_DRIVER', 'file')", "DB_CACHE_CONNECTION": "null", "DB_CACHE_TABLE": "'cache'",
		"REDIS_CACHE_CONNECTION": "'cache'",
		// cache.prefix and database.redis.options.prefix are slugged with
		// underscores until 12 and with dashes from 13.
		"CACHE_PREFIX": "env('CACHE_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_cache')",
		"REDIS_PREFIX": "env('REDIS_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_database_')",
	}
}

// previousKeysDefault is app.previous_keys (11+, and outside an app).
const previousKeysDefault = "\n    'previous_keys' => env('APP_PREVIOUS_KEYS', ''),"

// versionPlaceholders fill a version's default files. Outside an app (no
// artisan) every variable an operator may set is read, APP_TIMEZONE and
// APP_PREVIOUS_KEYS included, over Laravel 8's defaults.
func versionPlaceholders(major int, isApp bool) map[string]string {
	ph := laravel8Defaults()
	set := func(kv ...string) {
		for i := 0; i < len(kv); i += 2 {
			ph[kv[i]] = kv[i+1]
		}
	}
	switch {
	case !isApp:
		set("TIMEZONE", "env('APP_TIMEZONE', 'UTC')", "PREVIOUS_KEYS", previousKeysDefault)
	case major >= 11:
		// The framework's own config of 11: APP_TIMEZONE, APP_PREVIOUS_KEYS,
		// REDIS_USERNAME and the DB_QUEUE_*, REDIS_QUEUE_*, DB_CACHE_* and
		// REDIS_CACHE_CONNECTION keys.
		set("TIMEZONE", "env('APP_TIMEZONE', 'UTC')", "PREVIOUS_KEYS", previousKeysDefault,
			"DB_CONNECTION", "sqlite", "DB_DATABASE", "laravel", "DB_USERNAME", "root", "PGSQL_SCHEMA_KEY", "search_path",
			"REDIS_USERNAME", "\n            'username' => env('REDIS_USERNAME'),", "QUEUE_CONNECTION", "database",
			"DB_QUEUE_CONNECTION", "\n            'connection' => env('DB_QUEUE_CONNECTION'),", "DB_QUEUE", "env('DB_QUEUE', 'default')",
			"REDIS_CONNECTION", "env('REDIS_QUEUE_CONNECTION', 'default')", "REDIS_RETRY_AFTER", "(int) env('REDIS_QUEUE_RETRY_AFTER', 90)",
			"CACHE_STORE", "env('CACHE_STORE', 'database')", "DB_CACHE_CONNECTION", "env('DB_CACHE_CONNECTION')",
			"DB_CACHE_TABLE", "env('DB_CACHE_TABLE', 'cache')", "REDIS_CACHE_CONNECTION", "env('REDIS_CACHE_CONNECTION', 'cache')",
			"CACHE_PREFIX", "env('CACHE_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_cache_')")
		if major >= 12 { // 12 writes the zone literally again
			set("TIMEZONE", "'UTC'")
		}
		if major >= 13 {
			set("CACHE_PREFIX", "env('CACHE_PREFIX', Str::slug(env('APP_NAME', 'laravel')).'-cache-')",
				"REDIS_PREFIX", "env('REDIS_PREFIX', Str::slug(env('APP_NAME', 'laravel')).'-database-')")
		}
	}
	return ph
}

// defaultFiles are the default app, database, queue and cache files (only
// the stores pause writes or names artisan for) with %NAME% placeholders.
// They hold no comments: messages and doctor show their line numbers.
//
//go:embed defaults/*.php.tmpl
var defaultFiles embed.FS

// versionDefaults returns a major version's default config files by name;
// merged: the framework merges an app's files over them (11+).
func versionDefaults(major int, isApp bool) (files map[string]string, merged bool) {
	var pairs []string
	for k, v := range versionPlaceholders(major, isApp) {
		pairs = append(pairs, "%"+k+"%", v)
	}
	r := strings.NewReplacer(pairs...)
	files = map[string]string{}
	for _, name := range append(configNames[:], cacheConfigName) {
		b, _ := defaultFiles.ReadFile("defaults/" + name + ".php.tmpl") // embedded: it is there
		files[name] = r.Replace(string(b))
	}
	return files, isApp && major >= 11
}

// mergeableOptions are the keys Laravel 11+'s LoadConfiguration merges one
// level deep; every other top-level key replaces the framework's.
func mergeableOptions(file string) []string {
	switch file {
	case "database", "queue":
		return []string{"connections"}
	case "cache":
		return []string{"stores"}
	}
	return nil
}
