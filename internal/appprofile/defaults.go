package appprofile

import "strings"

// Laravel's configuration defaults, per major version, written as the PHP
// config files jobtriage evaluates statically when an app has no file of its
// own (or, from 11 on, underneath the app's files, as the framework merges
// them). Only the keys jobtriage reads are listed; each value follows
// ../shared/laravel/queue-spec.md §6.4 and §7.
//
// Two deliberate extensions keep older behaviour: the database url reads
// DB_URL before DATABASE_URL on every version (an .env written for either
// naming works), and the connection list always has mariadb.

// versionTraits are what differs between the versions' default files.
type versionTraits struct {
	// timezone is app.timezone's expression: a literal in the 8–10 and 12
	// skeletons, env('APP_TIMEZONE') in 11's framework config.
	timezone string
	// previousKeys: 11+ has app.previous_keys (APP_PREVIOUS_KEYS).
	previousKeys bool
	// defaultConnection, database and username are the DB_CONNECTION,
	// DB_DATABASE and DB_USERNAME defaults.
	defaultConnection, database, username string
	// pgsqlSchemaKey is "schema" (8–10) or "search_path" (11+).
	pgsqlSchemaKey string
	// redisUsername: 11+ reads REDIS_USERNAME.
	redisUsername bool
	// queueDefault is QUEUE_CONNECTION's default; queueEnvKeys adds 11's
	// DB_QUEUE_CONNECTION, DB_QUEUE, REDIS_QUEUE_CONNECTION and
	// REDIS_QUEUE_RETRY_AFTER.
	queueDefault string
	queueEnvKeys bool
	// cacheStore is cache.default's expression (CACHE_DRIVER 'file' in
	// 8–10, CACHE_STORE 'database' from 11); cachePrefix and redisPrefix
	// are cache.prefix's and database.redis.options.prefix's defaults,
	// slugged with underscores until 12 and with dashes from 13.
	cacheStore, cachePrefix, redisPrefix string
	// cacheEnvKeys: 11+ reads DB_CACHE_CONNECTION, DB_CACHE_TABLE and
	// REDIS_CACHE_CONNECTION.
	cacheEnvKeys bool
}

// laravel8 is the laravel/laravel 8.x skeleton (also 9 and 10).
func laravel8() versionTraits {
	return versionTraits{timezone: "'UTC'", defaultConnection: "mysql", database: "forge", username: "forge",
		pgsqlSchemaKey: "schema", queueDefault: "sync",
		cacheStore:  "env('CACHE_DRIVER', 'file')",
		cachePrefix: "env('CACHE_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_cache')",
		redisPrefix: "env('REDIS_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_database_')"}
}

// laravel11 is the framework's own config of 11.
func laravel11() versionTraits {
	return versionTraits{timezone: "env('APP_TIMEZONE', 'UTC')", previousKeys: true, defaultConnection: "sqlite",
		database: "laravel", username: "root", pgsqlSchemaKey: "search_path", redisUsername: true,
		queueDefault: "database", queueEnvKeys: true,
		cacheStore: "env('CACHE_STORE', 'database')", cacheEnvKeys: true,
		cachePrefix: "env('CACHE_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_cache_')",
		redisPrefix: "env('REDIS_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_database_')"}
}

// laravel12 is 11 without APP_TIMEZONE.
func laravel12() versionTraits {
	t := laravel11()
	t.timezone = "'UTC'"
	return t
}

// laravel13 is 12 with the prefixes slugged with dashes.
func laravel13() versionTraits {
	t := laravel12()
	t.cachePrefix = "env('CACHE_PREFIX', Str::slug(env('APP_NAME', 'laravel')).'-cache-')"
	t.redisPrefix = "env('REDIS_PREFIX', Str::slug(env('APP_NAME', 'laravel')).'-database-')"
	return t
}

// generic serves a directory that is not a Laravel app (no artisan): only
// an .env and the environment describe it, so every variable an operator
// may have set is read, APP_TIMEZONE and APP_PREVIOUS_KEYS included, over
// Laravel 8's defaults.
func generic() versionTraits {
	t := laravel8()
	t.timezone, t.previousKeys = "env('APP_TIMEZONE', 'UTC')", true
	return t
}

// phpReplacer fills a default file's placeholders.
func (v versionTraits) phpReplacer() *strings.Replacer {
	previousKeys, redisUsername := "", ""
	if v.previousKeys {
		previousKeys = "\n    'previous_keys' => env('APP_PREVIOUS_KEYS', ''),"
	}
	if v.redisUsername {
		redisUsername = "\n            'username' => env('REDIS_USERNAME'),"
	}
	dbQueueConnection, dbQueue, redisConnection, redisRetryAfter := "", "'default'", "'default'", "90"
	dbCacheConnection, dbCacheTable, redisCacheConnection := "null", "'cache'", "'cache'"
	if v.cacheEnvKeys {
		dbCacheConnection, dbCacheTable = "env('DB_CACHE_CONNECTION')", "env('DB_CACHE_TABLE', 'cache')"
		redisCacheConnection = "env('REDIS_CACHE_CONNECTION', 'cache')"
	}
	if v.queueEnvKeys {
		dbQueueConnection = "\n            'connection' => env('DB_QUEUE_CONNECTION'),"
		dbQueue = "env('DB_QUEUE', 'default')"
		redisConnection = "env('REDIS_QUEUE_CONNECTION', 'default')"
		redisRetryAfter = "(int) env('REDIS_QUEUE_RETRY_AFTER', 90)"
	}
	return strings.NewReplacer(
		"%TIMEZONE%", v.timezone, "%PREVIOUS_KEYS%", previousKeys,
		"%DB_CONNECTION%", v.defaultConnection, "%DB_DATABASE%", v.database, "%DB_USERNAME%", v.username,
		"%PGSQL_SCHEMA_KEY%", v.pgsqlSchemaKey, "%REDIS_USERNAME%", redisUsername,
		"%QUEUE_CONNECTION%", v.queueDefault, "%DB_QUEUE_CONNECTION%", dbQueueConnection, "%DB_QUEUE%", dbQueue,
		"%REDIS_CONNECTION%", redisConnection, "%REDIS_RETRY_AFTER%", redisRetryAfter,
		"%CACHE_STORE%", v.cacheStore, "%CACHE_PREFIX%", v.cachePrefix, "%REDIS_PREFIX%", v.redisPrefix,
		"%DB_CACHE_CONNECTION%", dbCacheConnection, "%DB_CACHE_TABLE%", dbCacheTable, "%REDIS_CACHE_CONNECTION%", redisCacheConnection,
	)
}

const defaultsApp = `<?php
return [
    'name' => env('APP_NAME', 'Laravel'),
    'env' => env('APP_ENV', 'production'),
    'timezone' => %TIMEZONE%,
    'key' => env('APP_KEY'),%PREVIOUS_KEYS%
];
`

// defaultsMySQL is one MySQL-family connection; %DRIVER% is mysql or
// mariadb.
const defaultsMySQL = `
        '%DRIVER%' => [
            'driver' => '%DRIVER%',
            'url' => env('DB_URL', env('DATABASE_URL')),
            'host' => env('DB_HOST', '127.0.0.1'),
            'port' => env('DB_PORT', '3306'),
            'database' => env('DB_DATABASE', '%DB_DATABASE%'),
            'username' => env('DB_USERNAME', '%DB_USERNAME%'),
            'password' => env('DB_PASSWORD', ''),
            'unix_socket' => env('DB_SOCKET', ''),
            'prefix' => '',
        ],`

// defaultsRedisConnection is one database.redis connection.
const defaultsRedisConnection = `
        '%NAME%' => [
            'url' => env('REDIS_URL'),
            'host' => env('REDIS_HOST', '127.0.0.1'),%REDIS_USERNAME%
            'password' => env('REDIS_PASSWORD'),
            'port' => env('REDIS_PORT', '6379'),
            'database' => env('%DB_KEY%', '%DB%'),
        ],`

const defaultsDatabase = `<?php
use Illuminate\Support\Str;
return [
    'default' => env('DB_CONNECTION', '%DB_CONNECTION%'),
    'connections' => [
        'sqlite' => [
            'driver' => 'sqlite',
            'url' => env('DB_URL', env('DATABASE_URL')),
            'database' => env('DB_DATABASE', database_path('database.sqlite')),
            'prefix' => '',
        ],%MYSQL%%MARIADB%
        'pgsql' => [
            'driver' => 'pgsql',
            'url' => env('DB_URL', env('DATABASE_URL')),
            'host' => env('DB_HOST', '127.0.0.1'),
            'port' => env('DB_PORT', '5432'),
            'database' => env('DB_DATABASE', '%DB_DATABASE%'),
            'username' => env('DB_USERNAME', '%DB_USERNAME%'),
            'password' => env('DB_PASSWORD', ''),
            'prefix' => '',
            '%PGSQL_SCHEMA_KEY%' => 'public',
            'sslmode' => 'prefer',
        ],
        'sqlsrv' => [
            'driver' => 'sqlsrv',
            'url' => env('DB_URL', env('DATABASE_URL')),
            'host' => env('DB_HOST', 'localhost'),
            'port' => env('DB_PORT', '1433'),
            'database' => env('DB_DATABASE', '%DB_DATABASE%'),
        ],
    ],
    'redis' => [
        'client' => env('REDIS_CLIENT', 'phpredis'),
        'options' => [
            'cluster' => env('REDIS_CLUSTER', 'redis'),
            'prefix' => %REDIS_PREFIX%,
        ],%REDIS_DEFAULT%%REDIS_CACHE%
    ],
];
`

const defaultsQueue = `<?php
return [
    'default' => env('QUEUE_CONNECTION', '%QUEUE_CONNECTION%'),
    'connections' => [
        'sync' => ['driver' => 'sync'],
        'database' => [
            'driver' => 'database',%DB_QUEUE_CONNECTION%
            'table' => env('DB_QUEUE_TABLE', 'jobs'),
            'queue' => %DB_QUEUE%,
            'retry_after' => (int) env('DB_QUEUE_RETRY_AFTER', 90),
        ],
        'redis' => [
            'driver' => 'redis',
            'connection' => %REDIS_CONNECTION%,
            'queue' => env('REDIS_QUEUE', 'default'),
            'retry_after' => %REDIS_RETRY_AFTER%,
            'block_for' => null,
        ],
    ],
    'batching' => [
        'database' => env('DB_CONNECTION', '%DB_CONNECTION%'),
        'table' => 'job_batches',
    ],
    'failed' => [
        'driver' => env('QUEUE_FAILED_DRIVER', 'database-uuids'),
        'database' => env('DB_CONNECTION', '%DB_CONNECTION%'),
        'table' => 'failed_jobs',
    ],
];
`

// defaultsCache is config/cache.php: the stores whose driver pause must
// know (the ones it writes and the ones it names artisan for).
const defaultsCache = `<?php
use Illuminate\Support\Str;
return [
    'default' => %CACHE_STORE%,
    'stores' => [
        'array' => ['driver' => 'array', 'serialize' => false],
        'database' => [
            'driver' => 'database',
            'connection' => %DB_CACHE_CONNECTION%,
            'table' => %DB_CACHE_TABLE%,
        ],
        'file' => ['driver' => 'file'],
        'memcached' => ['driver' => 'memcached'],
        'redis' => [
            'driver' => 'redis',
            'connection' => %REDIS_CACHE_CONNECTION%,
        ],
        'dynamodb' => ['driver' => 'dynamodb'],
    ],
    'prefix' => %CACHE_PREFIX%,
];
`

// files renders the version's default config files, keyed by config name.
func (v versionTraits) files() map[string]string {
	r := v.phpReplacer()
	mysql := func(driver string) string { return strings.ReplaceAll(defaultsMySQL, "%DRIVER%", driver) }
	redis := func(name, dbKey, db string) string {
		return strings.NewReplacer("%NAME%", name, "%DB_KEY%", dbKey, "%DB%", db).Replace(defaultsRedisConnection)
	}
	database := strings.NewReplacer("%MYSQL%", mysql("mysql"), "%MARIADB%", mysql("mariadb"),
		"%REDIS_DEFAULT%", redis("default", "REDIS_DB", "0"), "%REDIS_CACHE%", redis("cache", "REDIS_CACHE_DB", "1")).Replace(defaultsDatabase)
	return map[string]string{"app": r.Replace(defaultsApp), "database": r.Replace(database), "queue": r.Replace(defaultsQueue),
		"cache": r.Replace(defaultsCache)}
}

// versionDefaults returns the default config files of a Laravel major
// version, keyed by config name; merged reports whether the framework
// merges an app's files over them (11+) or the app's files replace them.
func versionDefaults(major int, isApp bool) (files map[string]string, merged bool) {
	switch {
	case !isApp:
		return generic().files(), false
	case major >= 13:
		return laravel13().files(), true
	case major == 12:
		return laravel12().files(), true
	case major == 11:
		return laravel11().files(), true
	}
	return laravel8().files(), false
}

// mergeableOptions are the keys Laravel 11+'s LoadConfiguration merges one
// level deep (base connections kept unless the app names them); every other
// top-level key of an app's file replaces the framework's.
func mergeableOptions(file string) []string {
	switch file {
	case "database", "queue":
		return []string{"connections"}
	case "cache":
		return []string{"stores"}
	}
	return nil
}
