package appprofile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixtureApp resolves a fixture app under testdata with extra environment.
func fixtureApp(t *testing.T, dir string, environ ...string) Config {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return mustResolve(t, Options{Dir: abs, Cwd: abs, Environ: environ})
}

func mustCacheStore(t *testing.T, cfg Config) CacheStore {
	t.Helper()
	cs, err := cfg.Profile.CacheStore()
	if err != nil {
		t.Fatalf("CacheStore: %v", err)
	}
	return cs
}

// laravel13App resolves the Laravel 13 interop app, whose config/cache.php
// is the framework's own 13.31 file (config:publish), with extra environment.
func laravel13App(t *testing.T, environ ...string) Config {
	t.Helper()
	return fixtureApp(t, "../../testdata/laravel13-app", append([]string{"APP_NAME=Harness 13", "DB_CONNECTION=pgsql"}, environ...)...)
}

// TestCacheStoreLaravel13Fixture reads the framework's own 13.31
// config/cache.php: the database store, the dashed prefix of APP_NAME, the
// default database connection.
func TestCacheStoreLaravel13Fixture(t *testing.T) {
	cfg := laravel13App(t)
	cs := mustCacheStore(t, cfg)
	want := CacheStore{Name: "database", Driver: "database", Prefix: "harness-13-cache-", Table: "cache", Connection: "pgsql"}
	cs.Source = ""
	if cs != want {
		t.Errorf("got %+v\nwant %+v", cs, want)
	}
	for _, f := range cfg.Profile.Files {
		if f == "config/cache.php" {
			return
		}
	}
	t.Errorf("files %v do not name config/cache.php", cfg.Profile.Files)
}

func TestCacheStoreEnvOverrides(t *testing.T) {
	for _, tc := range []struct {
		name    string
		environ []string
		want    CacheStore
	}{
		{"CACHE_PREFIX", []string{"CACHE_PREFIX=shared_"},
			CacheStore{Name: "database", Driver: "database", Prefix: "shared_", Table: "cache", Connection: "pgsql"}},
		{"table and connection", []string{"DB_CACHE_TABLE=app_cache", "DB_CACHE_CONNECTION=mysql"},
			CacheStore{Name: "database", Driver: "database", Prefix: "harness-13-cache-", Table: "app_cache", Connection: "mysql"}},
		{"redis", []string{"CACHE_STORE=redis"},
			CacheStore{Name: "redis", Driver: "redis", Prefix: "harness-13-cache-", Connection: "cache"}},
		{"redis connection", []string{"CACHE_STORE=redis", "REDIS_CACHE_CONNECTION=default"},
			CacheStore{Name: "redis", Driver: "redis", Prefix: "harness-13-cache-", Connection: "default"}},
		{"file", []string{"CACHE_STORE=file"}, CacheStore{Name: "file", Driver: "file", Prefix: "harness-13-cache-"}},
		{"failover", []string{"CACHE_STORE=failover"}, CacheStore{Name: "failover", Driver: "failover", Prefix: "harness-13-cache-"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := mustCacheStore(t, laravel13App(t, tc.environ...))
			cs.Source = ""
			if cs != tc.want {
				t.Errorf("got %+v\nwant %+v", cs, tc.want)
			}
		})
	}
}

// TestCacheStoreVersionDefaults: without config/cache.php the prefix is
// slugged with underscores on 11 and 12 and with dashes on 13, as is the
// Redis prefix on 13.
func TestCacheStoreVersionDefaults(t *testing.T) {
	for _, tc := range []struct {
		version, prefix, redisPrefix, store string
	}{
		{"v8.83.26", "my_app_cache", "my_app_database_", "file"},
		{"v11.31.0", "my_app_cache_", "my_app_database_", "database"},
		{"v12.40.2", "my_app_cache_", "my_app_database_", "database"},
		{"v13.31.0", "my-app-cache-", "my-app-database-", "database"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			lock := `{"packages": [{"name": "laravel/framework", "version": "` + tc.version + `"}]}`
			cfg := mustResolve(t, realApp(t, map[string]string{"composer.lock": lock, ".env": "APP_NAME=\"My App\"\nDB_CONNECTION=pgsql\nDB_DATABASE=x\n"}))
			cs := mustCacheStore(t, cfg)
			if cs.Prefix != tc.prefix || cs.Name != tc.store {
				t.Errorf("store %q prefix %q, want %q %q", cs.Name, cs.Prefix, tc.store, tc.prefix)
			}
			rc, err := cfg.Profile.Redis("cache")
			if err != nil {
				t.Fatal(err)
			}
			if rc.Prefix != tc.redisPrefix || rc.Database != 1 {
				t.Errorf("redis cache prefix %q db %d, want %q 1", rc.Prefix, rc.Database, tc.redisPrefix)
			}
		})
	}
}

// TestCacheStoreAppFileMergesStores: 11+ merges an app's cache.stores
// over the framework's, and a store's own prefix beats cache.prefix.
func TestCacheStoreAppFileMergesStores(t *testing.T) {
	lock := `{"packages": [{"name": "laravel/framework", "version": "v12.40.2"}]}`
	app := `<?php
return [
    'default' => env('CACHE_STORE', 'database'),
    'stores' => [
        'tenant' => ['driver' => 'redis', 'connection' => 'default', 'prefix' => 'tenant1:'],
    ],
    'prefix' => 'app_',
];
`
	o := realApp(t, map[string]string{"composer.lock": lock, "config/cache.php": app, ".env": "DB_CONNECTION=pgsql\nDB_DATABASE=x\n"})
	cs := mustCacheStore(t, mustResolve(t, o))
	if cs.Driver != "database" || cs.Prefix != "app_" || cs.Table != "cache" || cs.Connection != "pgsql" {
		t.Errorf("database store from the framework's stores: %+v", cs)
	}
	o.Environ = []string{"CACHE_STORE=tenant"}
	cs = mustCacheStore(t, mustResolve(t, o))
	if cs.Driver != "redis" || cs.Prefix != "tenant1:" || cs.Connection != "default" {
		t.Errorf("the app's store: %+v", cs)
	}
	o.Environ = []string{"CACHE_STORE=nope"}
	if _, err := mustResolve(t, o).Profile.CacheStore(); err == nil || !strings.Contains(err.Error(), `Cache store [nope] is not defined`) {
		t.Errorf("error %v, want the undefined store named", err)
	}
}

// TestCacheStoreFromConfigCache: a config cache is authoritative, and the
// interop app's caches an array store.
func TestCacheStoreFromConfigCache(t *testing.T) {
	cfg := fixtureApp(t, "../../testdata/configcache/base")
	if cfg.Profile.CachePath == "" {
		t.Fatal("the fixture's config cache was not used")
	}
	cs := mustCacheStore(t, cfg)
	if cs.Driver != "array" || cs.Prefix != "interop_cache" {
		t.Errorf("got %+v", cs)
	}
}

// TestCacheConfigErrorCostsOnlyTheCacheStore: a config/cache.php the
// evaluator refuses leaves every other setting readable.
func TestCacheConfigErrorCostsOnlyTheCacheStore(t *testing.T) {
	o := realApp(t, map[string]string{"config/cache.php": "<?php echo 'hi';", ".env": "DB_CONNECTION=pgsql\nDB_DATABASE=x\n"})
	cfg := mustResolve(t, o)
	if cfg.Target.Database != "x" {
		t.Errorf("target %+v", cfg.Target)
	}
	if _, err := cfg.Profile.CacheStore(); err == nil || !strings.Contains(err.Error(), "config/cache.php") {
		t.Errorf("error %v, want config/cache.php named", err)
	}
	if _, err := os.Stat(filepath.Join(o.Dir, "config", "cache.php")); err != nil {
		t.Fatal(err)
	}
}
