package appprofile

import (
	"cmp"
	"fmt"
)

// cacheConfigName is config/cache.php, read for the queue pause keys only.
const cacheConfigName = "cache"

// CacheStore is the app's default cache store, config('cache.default'),
// where Laravel keeps the queue pause keys.
type CacheStore struct {
	Name, Driver string // the name in cache.stores and its driver
	// Prefix is the store's own prefix, else cache.prefix (CacheManager::getPrefix).
	Prefix string
	// Table is the database store's table, without the connection's prefix.
	Table string
	// Connection is the database store's database connection (default:
	// database.default) or the Redis store's Redis connection.
	Connection string
	Source     string
}

// What CacheManager uses when a store omits table and connection.
const (
	defaultCacheTable           = "cache"
	defaultRedisCacheConnection = "default"
)

// CacheStore resolves the default cache store (the version's default
// without a config/cache.php).
func (p *Profile) CacheStore() (CacheStore, error) {
	if p.cacheErr != nil {
		return CacheStore{}, p.cacheErr
	}
	hint := "set CACHE_STORE, or use php artisan queue:pause"
	name, set, isNull, err := p.str("cache.default", hint)
	if err != nil {
		return CacheStore{}, err
	}
	if !set || isNull || name == "" {
		return CacheStore{}, fmt.Errorf("cache.default is not set (%s): the app has no default cache store", p.Source(p.Get("cache.default")))
	}
	base := "cache.stores." + name
	cs := CacheStore{Name: name, Source: p.Source(p.Get(base))}
	if p.Get(base) == nil {
		return cs, fmt.Errorf("cache store %s is not configured in config/cache.php (Laravel would fail with \"Cache store [%s] is not defined\")", quoteShort(name), name)
	}
	// read stops at the first value it cannot evaluate: that error is the answer.
	read := func(key, hint string) (v string, set bool) {
		if err == nil {
			v, set, _, err = p.str(key, hint)
		}
		return v, set
	}
	cs.Driver, _ = read(base+".driver", hint)
	cs.Prefix, set = read(base+".prefix", hint)
	if !set {
		cs.Prefix, _ = read("cache.prefix", "set CACHE_PREFIX")
	}
	switch cs.Driver {
	case "database":
		table, _ := read(base+".table", "set DB_CACHE_TABLE")
		cs.Table = cmp.Or(table, defaultCacheTable)
		if cs.Connection, _ = read(base+".connection", "set DB_CACHE_CONNECTION"); cs.Connection == "" {
			cs.Connection, _ = read("database.default", "pass --dsn")
		}
	case "redis":
		conn, _ := read(base+".connection", "set REDIS_CACHE_CONNECTION")
		cs.Connection = cmp.Or(conn, defaultRedisCacheConnection)
	}
	return cs, err
}
