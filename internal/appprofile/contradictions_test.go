package appprofile

import (
	"strings"
	"testing"
)

// contraApp writes a Laravel app (with artisan) for the contradiction tests.
func contraApp(t *testing.T, files map[string]string, environ ...string) Options {
	t.Helper()
	files["artisan"] = "#!/usr/bin/env php\n"
	return laravelApp(t, files, environ...)
}

// contraAppPHP writes the timezone literally, as laravel/laravel 8–10 and
// 12 do.
const contraAppPHP = `<?php
return [
    'name' => env('APP_NAME', 'Laravel'),
    'timezone' => 'UTC',
    'key' => env('APP_KEY'),
];
`

const contraDatabasePHP = `<?php
return [
    'default' => env('DB_CONNECTION', 'pgsql'),
    'connections' => [
        'pgsql' => [
            'driver' => 'pgsql',
            'host' => env('DB_HOST', '127.0.0.1'),
            'port' => env('DB_PORT', '5432'),
            'database' => env('DB_DATABASE', 'forge'),
            'username' => env('DB_USERNAME', 'forge'),
            'password' => env('DB_PASSWORD', ''),
        ],
        'mysql' => [
            'driver' => 'mysql',
            'host' => env('DB_HOST', '127.0.0.1'),
            'database' => env('DB_DATABASE', 'forge'),
            'password' => my_vault('db-password-secret'),
            'options' => extension_loaded('pdo_mysql') ? [1 => 2] : [],
        ],
    ],
];
`

const contraQueuePHP = `<?php
return [
    'default' => env('QUEUE_CONNECTION', 'sync'),
    'connections' => [
        'sync' => ['driver' => 'sync'],
        'redis' => ['driver' => 'redis', 'connection' => 'default', 'queue' => env('REDIS_QUEUE', 'default')],
        'weird' => ['driver' => 'database', 'queue' => tenant_queue()],
    ],
    'failed' => [
        'driver' => env('QUEUE_FAILED_DRIVER', 'database-uuids'),
        'database' => env('DB_CONNECTION', 'pgsql'),
        'table' => 'failed_jobs',
    ],
];
`

// contraCache is what php artisan config:cache wrote on another day.
const contraCache = `<?php return array (
  'app' => 
  array (
    'name' => 'Shop',
    'timezone' => 'UTC',
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
        'username' => 'forge',
        'password' => 'cached-pw-1234',
      ),
    ),
  ),
  'queue' => 
  array (
    'default' => 'redis',
    'connections' => 
    array (
      'sync' => array ('driver' => 'sync'),
      'redis' => 
      array (
        'driver' => 'redis',
        'connection' => 'default',
        'queue' => 'default',
      ),
      'weird' => array ('driver' => 'database', 'queue' => 'default'),
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

func TestCacheContradictions(t *testing.T) {
	o := contraApp(t, map[string]string{
		"bootstrap/cache/config.php": contraCache,
		"config/app.php":             contraAppPHP,
		"config/database.php":        contraDatabasePHP,
		"config/queue.php":           contraQueuePHP,
		".env":                       "DB_HOST=staging\nDB_DATABASE=prod\nDB_PORT=5433\nDB_PASSWORD=env-pw-5678\nQUEUE_CONNECTION=database\nREDIS_QUEUE=high\n",
	})
	cfg := mustResolve(t, o)
	uncached, err := ProfileWithoutCache(cfg.Profile)
	if err != nil || uncached == nil {
		t.Fatalf("ProfileWithoutCache: %v, %v", uncached, err)
	}
	if uncached.CachePath != "" || !strings.HasSuffix(uncached.EnvFile, ".env") {
		t.Errorf("uncached profile reads cache %q env %q", uncached.CachePath, uncached.EnvFile)
	}
	got := map[string]Contradiction{}
	for _, c := range CacheContradictions(cfg.Profile, uncached) {
		got[c.Key] = c
		if c.Severity != SeverityError || c.Kind != KindCacheVsEnv || !strings.Contains(c.Message, cacheAdvice) {
			t.Errorf("contradiction %+v", c)
		}
		if strings.Contains(c.Message, "cached-pw-1234") || strings.Contains(c.Message, "env-pw-5678") {
			t.Errorf("a password leaked: %s", c.Message)
		}
		if strings.ContainsAny(c.Message, "\n") {
			t.Errorf("not one line: %q", c.Message)
		}
	}
	want := map[string][]string{
		"queue.default":                     {`the config cache says "redis" (bootstrap/cache/config.php:`, `.env gives "database" (config/queue.php:3 (QUEUE_CONNECTION from .env))`},
		"failed-jobs database host":         {`"db.internal"`, `"staging"`, "DB_HOST from .env"},
		"failed-jobs database password":     {"differs between the config cache"},
		"queue.connections.redis.queue":     {`"default"`, `"high"`},
		"queue.connections.weird.queue":     {"? `tenant_queue()`"},
		"failed-jobs database port":         nil, // absent: both say 5433
		"failed-jobs database database":     nil,
		"queue.connections.redis.driver":    nil,
		"app.timezone":                      nil,
		"queue.connections.sync.connection": nil,
	}
	for key, parts := range want {
		c, ok := got[key]
		if parts == nil {
			if ok {
				t.Errorf("%s reported although both agree: %s", key, c.Message)
			}
			continue
		}
		if !ok {
			t.Errorf("no contradiction on %s; got %v", key, got)
			continue
		}
		for _, p := range parts {
			if !strings.Contains(c.Message, p) {
				t.Errorf("%s: %q lacks %q", key, c.Message, p)
			}
		}
	}

	t.Run("no .env, nothing to compare", func(t *testing.T) {
		o := contraApp(t, map[string]string{"bootstrap/cache/config.php": contraCache})
		cfg := mustResolve(t, o)
		if p, err := ProfileWithoutCache(cfg.Profile); p != nil || err != nil {
			t.Errorf("got %v, %v; want nothing", p, err)
		}
	})
	t.Run("no cache, nothing to compare", func(t *testing.T) {
		o := contraApp(t, map[string]string{"config/database.php": contraDatabasePHP, ".env": "DB_CONNECTION=pgsql\nDB_DATABASE=x\n"})
		cfg := mustResolve(t, o)
		if p, err := ProfileWithoutCache(cfg.Profile); p != nil || err != nil {
			t.Errorf("got %v, %v; want nothing", p, err)
		}
	})
}

func TestTimezoneIgnored(t *testing.T) {
	t.Run("literal in config/app.php, set in .env", func(t *testing.T) {
		cfg := mustResolve(t, contraApp(t, map[string]string{"config/app.php": contraAppPHP, ".env": "DB_DATABASE=x\nAPP_TIMEZONE=Europe/Kyiv\n"}))
		c := TimezoneIgnored(cfg.Profile)
		if c == nil {
			t.Fatal("no contradiction")
		}
		for _, p := range []string{`APP_TIMEZONE="Europe/Kyiv" is set in .env`, `app.timezone is "UTC" (config/app.php:4)`} {
			if !strings.Contains(c.Message, p) {
				t.Errorf("%q lacks %q", c.Message, p)
			}
		}
	})
	t.Run("set in the environment", func(t *testing.T) {
		cfg := mustResolve(t, contraApp(t, map[string]string{"config/app.php": contraAppPHP, ".env": "DB_DATABASE=x\n"}, "APP_TIMEZONE=Asia/Tokyo"))
		if c := TimezoneIgnored(cfg.Profile); c == nil || !strings.Contains(c.Message, "set in the environment") {
			t.Errorf("got %+v", c)
		}
	})
	for name, files := range map[string]map[string]string{
		"Laravel 11 reads it": {"composer.lock": `{"packages": [{"name": "laravel/framework", "version": "v11.31.0"}]}`,
			".env": "DB_CONNECTION=pgsql\nDB_DATABASE=x\nAPP_TIMEZONE=Europe/Kyiv\n"},
		"same zone":      {"config/app.php": contraAppPHP, ".env": "DB_DATABASE=x\nAPP_TIMEZONE=utc\n"},
		"not set":        {"config/app.php": contraAppPHP, ".env": "DB_DATABASE=x\n"},
		"a config cache": {"bootstrap/cache/config.php": contraCache, ".env": "APP_TIMEZONE=Europe/Kyiv\n"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := mustResolve(t, contraApp(t, files))
			if c := TimezoneIgnored(cfg.Profile); c != nil {
				t.Errorf("got %s", c.Message)
			}
		})
	}
}

func TestUnknownContradictions(t *testing.T) {
	o := contraApp(t, map[string]string{
		"config/app.php":      contraAppPHP + "\n",
		"config/database.php": contraDatabasePHP,
		"config/queue.php":    contraQueuePHP,
		".env":                "DB_DATABASE=x\n",
	})
	cfg := mustResolve(t, o)
	got := map[string]Contradiction{}
	for _, c := range UnknownContradictions(cfg.Profile) {
		got[c.Key] = c
		if strings.Contains(c.Message, "db-password-secret") {
			t.Errorf("a secret's expression is shown: %s", c.Message)
		}
	}
	// QueueConnections needed weird's queue; the mysql connection is not
	// the failed-jobs database, so its unknowns are only explained.
	for key, severity := range map[string]string{
		"queue.connections.weird.queue":       SeverityError,
		"database.connections.mysql.password": SeverityInfo,
		"database.connections.mysql.options":  SeverityInfo,
	} {
		c, ok := got[key]
		if !ok || c.Severity != severity || c.Kind != KindUnknown {
			t.Errorf("%s: got %+v, want severity %s", key, c, severity)
		}
	}
	if c := got["database.connections.mysql.password"]; !strings.Contains(c.Message, "config/database.php:17") || !strings.Contains(c.Message, "--dsn") {
		t.Errorf("password unknown %q lacks file:line or the flag", c.Message)
	}
}
