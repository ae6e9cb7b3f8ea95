package appprofile

import (
	"fmt"
)

// cacheConfigName is config/cache.php, read for the queue pause keys only.
const cacheConfigName = "cache"

// CacheStore is the app's default cache store, config('cache.default'),
// where Laravel keeps the queue pause keys.
type CacheStore struct {
	// Name is the store's name in cache.stores; Driver its driver
	// (database, redis, file, memcached, dynamodb, array, null, …).
	Name, Driver string
	// Prefix is the store's key prefix: the store's own prefix, else
	// cache.prefix, as CacheManager::getPrefix does.
	Prefix string
	// Table is the database store's table (default cache), without the
	// database connection's table prefix.
	Table string
	// Connection is the database store's database connection (the default
	// database connection when the store names none) or the Redis store's
	// Redis connection (default cache).
	Connection string
	Source     string
}

// defaultCacheTable and defaultRedisCacheConnection are what
// CacheManager uses when a store omits table and connection.
const (
	defaultCacheTable           = "cache"
	defaultRedisCacheConnection = "default"
)

// CacheStore resolves the default cache store. An app without a cache
// config gets its Laravel version's default store.
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
	if cs.Driver, _, _, err = p.str(base+".driver", hint); err != nil {
		return cs, err
	}
	prefix, set, _, err := p.str(base+".prefix", hint)
	if err != nil {
		return cs, err
	}
	if !set {
		if prefix, _, _, err = p.str("cache.prefix", "set CACHE_PREFIX"); err != nil {
			return cs, err
		}
	}
	cs.Prefix = prefix
	switch cs.Driver {
	case "database":
		if cs.Table, _, _, err = p.str(base+".table", "set DB_CACHE_TABLE"); err != nil {
			return cs, err
		}
		if cs.Table == "" {
			cs.Table = defaultCacheTable
		}
		if cs.Connection, _, _, err = p.str(base+".connection", "set DB_CACHE_CONNECTION"); err != nil {
			return cs, err
		}
		if cs.Connection == "" {
			if cs.Connection, _, _, err = p.str("database.default", "pass --dsn"); err != nil {
				return cs, err
			}
		}
	case "redis":
		if cs.Connection, _, _, err = p.str(base+".connection", "set REDIS_CACHE_CONNECTION"); err != nil {
			return cs, err
		}
		if cs.Connection == "" {
			cs.Connection = defaultRedisCacheConnection
		}
	}
	return cs, nil
}
