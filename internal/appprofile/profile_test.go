package appprofile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/internal/appprofile/phpconf"
)

// appConfigPHP is a Laravel 8-style config/app.php with a literal timezone,
// the way laravel/laravel 8–10 and 12 write it (APP_TIMEZONE is not read).
func appConfigPHP(tz string) string {
	return `<?php
return [
    'name' => env('APP_NAME', 'Laravel'),
    'env' => env('APP_ENV', 'production'),
    // The timezone is a literal, as the skeleton has it.
    'timezone' => '` + tz + `',
    'key' => env('APP_KEY'),
    'providers' => [
        App\Providers\AppServiceProvider::class,
    ],
];
`
}

const queueConfigPHP = `<?php
return [
    'default' => env('QUEUE_CONNECTION', 'sync'),
    'connections' => [
        'sync' => ['driver' => 'sync'],
        'database' => [
            'driver' => 'database',
            'table' => 'queued_jobs',
            'queue' => 'default',
            'retry_after' => 120,
        ],
        'redis' => [
            'driver' => 'redis',
            'connection' => 'default',
            'queue' => env('REDIS_QUEUE', 'default'),
            'retry_after' => 90,
            'block_for' => null,
        ],
        'sqs' => ['driver' => 'sqs', 'queue' => 'default'],
    ],
    'failed' => [
        'driver' => env('QUEUE_FAILED_DRIVER', 'database-uuids'),
        'database' => env('DB_CONNECTION', 'mysql'),
        'table' => 'dead_jobs',
    ],
];
`

const databaseConfigPHP = `<?php
use Illuminate\Support\Str;
return [
    'default' => env('DB_CONNECTION', 'mysql'),
    'connections' => [
        'pgsql' => [
            'driver' => 'pgsql',
            'url' => env('DATABASE_URL'),
            'host' => env('DB_HOST', '127.0.0.1'),
            'port' => env('DB_PORT', '5432'),
            'database' => env('DB_DATABASE', 'forge'),
            'username' => env('DB_USERNAME', 'forge'),
            'password' => env('DB_PASSWORD', ''),
            'prefix' => 'app_',
            'schema' => 'tenant',
            'sslmode' => 'prefer',
        ],
        'mysql' => [
            'driver' => 'mysql',
            'host' => env('DB_HOST', '127.0.0.1'),
            'port' => env('DB_PORT', '3306'),
            'database' => env('DB_DATABASE', 'forge'),
            'username' => env('DB_USERNAME', 'forge'),
            'password' => env('DB_PASSWORD', ''),
            'unix_socket' => env('DB_SOCKET', ''),
            'timezone' => '+02:00',
            'options' => extension_loaded('pdo_mysql') ? array_filter([
                PDO::MYSQL_ATTR_SSL_CA => env('MYSQL_ATTR_SSL_CA'),
            ]) : [],
        ],
    ],
    'redis' => [
        'client' => env('REDIS_CLIENT', 'phpredis'),
        'options' => [
            'cluster' => env('REDIS_CLUSTER', 'redis'),
            'prefix' => env('REDIS_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_database_'),
        ],
        'default' => [
            'url' => env('REDIS_URL'),
            'host' => env('REDIS_HOST', '127.0.0.1'),
            'password' => env('REDIS_PASSWORD', null),
            'port' => env('REDIS_PORT', '6379'),
            'database' => env('REDIS_DB', '0'),
        ],
    ],
];
`

// realApp is laravelApp with an artisan file, so the directory is an app.
func realApp(t *testing.T, files map[string]string, environ ...string) Options {
	t.Helper()
	files["artisan"] = "#!/usr/bin/env php\n"
	return laravelApp(t, files, environ...)
}

func TestProfileReadsConfigFiles(t *testing.T) {
	o := realApp(t, map[string]string{
		"config/app.php":      appConfigPHP("America/New_York"),
		"config/queue.php":    queueConfigPHP,
		"config/database.php": databaseConfigPHP,
		".env":                "APP_NAME=\"My Shop\"\nAPP_TIMEZONE=Asia/Tokyo\nDB_CONNECTION=pgsql\nDB_DATABASE=shop\nDB_PASSWORD=s3cret-pw\n",
	})
	cfg := mustResolve(t, o)
	// config/app.php's literal wins: Laravel 8 never reads APP_TIMEZONE.
	if cfg.Location.String() != "America/New_York" {
		t.Errorf("timezone %s, want America/New_York from config/app.php", cfg.Location)
	}
	if cfg.FailedTable != "app_dead_jobs" || cfg.JobsTable != "app_queued_jobs" || cfg.BatchesTable != "app_job_batches" {
		t.Errorf("tables failed=%q jobs=%q batches=%q, want the prefix applied", cfg.FailedTable, cfg.JobsTable, cfg.BatchesTable)
	}
	if got := strings.Join(cfg.Database.Schema, ","); got != "tenant" {
		t.Errorf("schema %q, want tenant", got)
	}
	if cfg.RetryAfter != 120*time.Second {
		t.Errorf("retry_after %s, want the database connection's 120s", cfg.RetryAfter)
	}
	if cfg.Target.Redacted() != "postgres://forge:xxxxx@127.0.0.1:5432/shop" {
		t.Errorf("target %s", cfg.Target.Redacted())
	}
	if cfg.AppName != "My Shop" {
		t.Errorf("app name %q", cfg.AppName)
	}
	rc, err := cfg.Profile.Redis("default")
	if err != nil {
		t.Fatal(err)
	}
	if rc.Prefix != "my_shop_database_" || rc.Host != "127.0.0.1" || rc.Port != 6379 {
		t.Errorf("redis %+v, want prefix my_shop_database_", rc)
	}
	var drivers []string
	for _, q := range cfg.Queues {
		drivers = append(drivers, q.Name+"="+q.Driver)
	}
	if got := strings.Join(drivers, " "); got != "sync=sync database=database redis=redis sqs=sqs" {
		t.Errorf("queue connections %s", got)
	}
	// The MySQL options expression is not evaluated, and nothing needed it.
	if len(cfg.Profile.Unknowns()) != 0 {
		t.Errorf("unknowns %v, want none needed", cfg.Profile.Unknowns())
	}
	if len(cfg.Profile.AllUnknowns()) == 0 {
		t.Error("AllUnknowns lists nothing, want the mysql options expression")
	}
	src := cfg.Profile.Source(cfg.Profile.Get("app.timezone"))
	if !strings.HasPrefix(src, "config/app.php:") {
		t.Errorf("timezone source %q, want config/app.php:LINE", src)
	}
	if src := cfg.Profile.Source(cfg.Profile.Get("database.connections.pgsql.database")); !strings.Contains(src, "DB_DATABASE from .env") {
		t.Errorf("database source %q, want it to name DB_DATABASE from .env", src)
	}
	for _, s := range cfg.Profile.Settings() {
		if strings.Contains(s.Value, "s3cret-pw") {
			t.Errorf("setting %s shows the password", s.Key)
		}
	}
}

func TestProfileMySQLConnectionTimezone(t *testing.T) {
	cfg := mustResolve(t, realApp(t, map[string]string{
		"config/app.php":      appConfigPHP("UTC"),
		"config/queue.php":    queueConfigPHP,
		"config/database.php": databaseConfigPHP,
		".env":                "DB_CONNECTION=mysql\nDB_HOST=localhost\nDB_DATABASE=shop\n",
	}))
	if cfg.Database.Timezone != "+02:00" || cfg.Target.Host != "localhost" {
		t.Errorf("timezone %q host %q", cfg.Database.Timezone, cfg.Target.Host)
	}
}

func TestProfileConfigCacheWinsOverEnv(t *testing.T) {
	cache := `<?php return array (
  'app' => 
  array (
    'name' => 'Cached',
    'timezone' => 'Asia/Tokyo',
    'key' => 'base64:Y2FjaGVkLWtleQ==',
  ),
  'database' => 
  array (
    'default' => 'pgsql',
    'connections' => 
    array (
      'pgsql' => 
      array (
        'driver' => 'pgsql',
        'host' => 'db.internal',
        'port' => '5433',
        'database' => 'prod',
        'username' => 'ops',
        'password' => 'cached-pw',
        'prefix' => '',
        'search_path' => 'public',
      ),
    ),
  ),
  'queue' => 
  array (
    'default' => 'redis',
    'connections' => 
    array (
      'redis' => 
      array (
        'driver' => 'redis',
        'connection' => 'default',
        'queue' => 'default',
        'retry_after' => 90,
        'block_for' => NULL,
      ),
    ),
    'failed' => 
    array (
      'driver' => 'database-uuids',
      'database' => 'pgsql',
      'table' => 'failed_jobs',
    ),
  ),
);
`
	for name, files := range map[string]map[string]string{
		"differing .env": {"bootstrap/cache/config.php": cache, ".env": "DB_CONNECTION=mysql\nDB_HOST=staging\nDB_DATABASE=staging\nAPP_TIMEZONE=UTC\n"},
		"no .env":        {"bootstrap/cache/config.php": cache},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := mustResolve(t, realApp(t, files))
			if got := cfg.Target.Redacted(); got != "postgres://ops:xxxxx@db.internal:5433/prod" {
				t.Errorf("target %s, want the cached connection", got)
			}
			if cfg.Location.String() != "Asia/Tokyo" || cfg.AppKey != "base64:Y2FjaGVkLWtleQ==" {
				t.Errorf("tz %s key %q", cfg.Location, cfg.AppKey)
			}
			if cfg.Profile.CachePath == "" || cfg.Profile.EnvFile != "" {
				t.Errorf("cache %q env %q", cfg.Profile.CachePath, cfg.Profile.EnvFile)
			}
		})
	}
}

func TestProfileWalksUpToArtisan(t *testing.T) {
	o := realApp(t, map[string]string{
		"config/app.php":      appConfigPHP("Europe/Kyiv"),
		".env":                "DB_CONNECTION=sqlite\nDB_DATABASE=database/app.sqlite\n",
		"database/app.sqlite": "",
		"app/Jobs/.keep":      "",
	})
	sub := filepath.Join(o.Dir, "app", "Jobs")
	cfg := mustResolve(t, Options{Cwd: sub, Environ: o.Environ})
	if cfg.Location.String() != "Europe/Kyiv" || cfg.Profile.Root != o.Dir {
		t.Errorf("tz %s root %s, want the app found above %s", cfg.Location, cfg.Profile.Root, sub)
	}
	if cfg.Target.Path != filepath.Join(o.Dir, "database", "app.sqlite") {
		t.Errorf("sqlite path %s", cfg.Target.Path)
	}
}

func TestProfileLaravel11Defaults(t *testing.T) {
	lock := `{"packages": [{"name": "laravel/framework", "version": "v11.31.0"}]}`
	o := realApp(t, map[string]string{"composer.lock": lock, ".env": "APP_TIMEZONE=Asia/Jakarta\nAPP_PREVIOUS_KEYS=base64:b2xkMQ==,base64:b2xkMg==\nAPP_KEY=base64:bmV3\n"})
	if err := os.MkdirAll(filepath.Join(o.Dir, "database"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(o.Dir, "database", "database.sqlite"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := mustResolve(t, o)
	if cfg.Profile.Version != "11.31.0" || cfg.Profile.Major != 11 {
		t.Errorf("version %q major %d", cfg.Profile.Version, cfg.Profile.Major)
	}
	if cfg.Target.Driver != "sqlite" {
		t.Errorf("driver %s, want 11's sqlite default", cfg.Target.Driver)
	}
	if cfg.Location.String() != "Asia/Jakarta" {
		t.Errorf("tz %s, want APP_TIMEZONE (11 reads it)", cfg.Location)
	}
	if strings.Join(cfg.AppKeys, " ") != "base64:bmV3 base64:b2xkMQ== base64:b2xkMg==" {
		t.Errorf("app keys %q", cfg.AppKeys)
	}
}

func TestProfileFailedDrivers(t *testing.T) {
	for driver, want := range map[string]string{
		"null":     "does not store failed jobs",
		"dynamodb": "dynamodb",
		"weird":    `"weird"`,
	} {
		t.Run(driver, func(t *testing.T) {
			o := realApp(t, map[string]string{".env": "DB_DATABASE=a\nQUEUE_FAILED_DRIVER=" + driver + "\n"})
			if _, err := Resolve(o); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v, want %q", err, want)
			}
		})
	}
	t.Run("file", func(t *testing.T) {
		cfg := mustResolve(t, realApp(t, map[string]string{".env": "QUEUE_FAILED_DRIVER=file\n"}))
		if cfg.Failed.Driver != "file" || !strings.HasSuffix(cfg.Failed.Path, filepath.Join("storage", "framework", "cache", "failed-jobs.json")) {
			t.Errorf("failed %+v", cfg.Failed)
		}
	})
	t.Run("explicit DSN reads any driver's table", func(t *testing.T) {
		o := realApp(t, map[string]string{".env": "QUEUE_FAILED_DRIVER=null\n"})
		o.DSN = "postgres://u@h/db"
		mustResolve(t, o)
	})
}

func TestProfileUnknownNeededValueNamesFileAndFlag(t *testing.T) {
	o := realApp(t, map[string]string{
		"config/database.php": `<?php
return [
    'default' => 'pgsql',
    'connections' => [
        'pgsql' => [
            'driver' => 'pgsql',
            'host' => gethostname(),
            'database' => 'x',
        ],
    ],
];
`,
		".env": "DB_CONNECTION=pgsql\n",
	})
	_, err := Resolve(o)
	if err == nil || !strings.Contains(err.Error(), "config/database.php:7") || !strings.Contains(err.Error(), "--dsn") {
		t.Errorf("error %v, want file:line and --dsn", err)
	}
}

func TestSlugPrefixVectors(t *testing.T) {
	// Str::slug(env('APP_NAME'), '_').'_database_' for a few app names.
	for name, want := range map[string]string{"Laravel": "laravel_database_", "My App": "my_app_database_", "shop-api": "shop_api_database_"} {
		o := realApp(t, map[string]string{".env": "DB_DATABASE=a\nAPP_NAME=\"" + name + "\"\n"})
		cfg := mustResolve(t, o)
		rc, err := cfg.Profile.Redis("default")
		if err != nil {
			t.Fatal(err)
		}
		if rc.Prefix != want {
			t.Errorf("APP_NAME=%q: prefix %q, want %q", name, rc.Prefix, want)
		}
	}
}

// TestProfileNeverShowsASecretExpression: an unevaluated password is an
// error naming file and line, without the expression (it may hold the
// secret's pieces).
func TestProfileNeverShowsASecretExpression(t *testing.T) {
	o := realApp(t, map[string]string{
		"config/database.php": `<?php
return [
    'default' => 'pgsql',
    'connections' => [
        'pgsql' => [
            'driver' => 'pgsql',
            'database' => 'x',
            'password' => vault('hunter2-piece'),
        ],
    ],
];
`,
		".env": "DB_CONNECTION=pgsql\n",
	})
	_, err := Resolve(o)
	if err == nil || !strings.Contains(err.Error(), "config/database.php:8") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error %v, want file:line without the expression", err)
	}
}

// TestVersionDefaultsEvaluate: every version's built-in defaults are plain
// enough for the static evaluator (nothing unknown), and differ where the
// versions do.
func TestVersionDefaultsEvaluate(t *testing.T) {
	for _, tc := range []struct {
		name       string
		major      int
		isApp      bool
		db, tz     string
		schemaKey  string
		queueConn  string
		prevKeyKey bool
	}{
		{"laravel 8", 8, true, "mysql", "UTC", "schema", "sync", false},
		{"laravel 11", 11, true, "sqlite", "Asia/Tokyo", "search_path", "database", true},
		{"laravel 12", 12, true, "sqlite", "UTC", "search_path", "database", true},
		{"not an app", 8, false, "mysql", "Asia/Tokyo", "schema", "sync", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, _ := versionDefaults(tc.major, tc.isApp)
			env := map[string]string{"APP_TIMEZONE": "Asia/Tokyo"}
			p := &Profile{Root: t.TempDir(), environ: env}
			for _, name := range []string{"app", "database", "queue"} {
				v, err := phpconf.EvalConfig(name+".php", []byte(files[name]), phpconf.EvalContext{Root: p.Root, Env: p.lookupEnv})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				p.tree = &phpconf.Value{Kind: phpconf.KindArray, Entries: append(treeEntries(p.tree), phpconf.Entry{Key: name, Value: v})}
			}
			if u := p.AllUnknowns(); len(u) != 0 {
				t.Errorf("unknowns %v", u)
			}
			got := func(path string) string { s, _ := p.Get(path).String(); return s }
			if got("database.default") != tc.db || got("app.timezone") != tc.tz || got("queue.default") != tc.queueConn {
				t.Errorf("default db %q tz %q queue %q", got("database.default"), got("app.timezone"), got("queue.default"))
			}
			if p.Get("database.connections.pgsql."+tc.schemaKey) == nil {
				t.Errorf("pgsql has no %s", tc.schemaKey)
			}
			if (p.Get("app.previous_keys") != nil) != tc.prevKeyKey {
				t.Errorf("previous_keys present: %v", p.Get("app.previous_keys") != nil)
			}
		})
	}
}

func treeEntries(v *phpconf.Value) []phpconf.Entry {
	if v == nil {
		return nil
	}
	return v.Entries
}

// TestRedisURLQueryOptions: the url's query overrides its parts and the keys
// beside it, as Laravel's ConfigurationUrlParser merges the query last.
func TestRedisURLQueryOptions(t *testing.T) {
	for _, c := range []struct {
		url                string
		db                 int
		prefix, user, pass string
		host               string
		port               int
	}{
		{"redis://cache:6380/1", 1, "app_database_", "", "", "cache", 6380},
		{"redis://cache:6380/1?database=3&prefix=tenant%3A", 3, "tenant:", "", "", "cache", 6380},
		{"redis://u:pw@cache?password=other&host=backup&port=6390", 5, "app_database_", "u", "other", "backup", 6390},
	} {
		o := realApp(t, map[string]string{".env": "DB_DATABASE=a\nAPP_NAME=app\nREDIS_DB=5\nREDIS_URL=\"" + c.url + "\"\n"})
		cfg := mustResolve(t, o)
		rc, err := cfg.Profile.Redis("default")
		if err != nil {
			t.Fatal(err)
		}
		if rc.Database != c.db || rc.Prefix != c.prefix || rc.Username != c.user || rc.Password != c.pass || rc.Host != c.host || rc.Port != c.port {
			t.Errorf("%s: got db %d prefix %q user %q pass %q at %s:%d; want db %d prefix %q user %q pass %q at %s:%d", c.url,
				rc.Database, rc.Prefix, rc.Username, rc.Password, rc.Host, rc.Port, c.db, c.prefix, c.user, c.pass, c.host, c.port)
		}
	}
}
